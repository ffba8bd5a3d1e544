// Qdrant's payload key paths ("a.b", "a[].b", "a[0]", "\"a.b\".c") and how values are read
// through them. Qdrant's grammar: a first key, then any of `.key`, `."quoted key"`, `[N]`, `[]`.
// An unquoted key is one or more alphanumeric characters (Unicode), `_` or `-`; a quoted key is
// anything without `"` or `\`.
//
// Reading follows Qdrant's JsonPath::value_get: `.key` descends into objects only, `[N]` picks an
// element, `[]` visits every element; anything else yields nothing. A value that is an array is
// returned whole (conditions then look at its elements, one level deep).

import type { JsonValue, Payload } from '../../model.js';

export type PathItem = { key: string } | { index: number } | { wildcard: true };

/** A parsed key path; never empty, and its first item is always a key. */
export type JsonPath = readonly PathItem[];

export type JsonObject = { [key: string]: JsonValue };

const RAW_KEY = /^[\p{Alphabetic}\p{Nd}\p{Nl}\p{No}_-]+/u;

/** Parses a key path, or returns undefined when Qdrant would reject it. */
export function parseJsonPath(text: string): JsonPath | undefined {
  const items: PathItem[] = [];
  let rest = text;
  const first = readKey(rest);
  if (!first) return undefined;
  items.push({ key: first.key });
  rest = rest.slice(first.length);
  while (rest.length > 0) {
    if (rest.startsWith('[]')) {
      items.push({ wildcard: true });
      rest = rest.slice(2);
      continue;
    }
    const index = /^\[(\d+)\]/.exec(rest);
    if (index) {
      const n = Number(index[1]);
      if (!Number.isSafeInteger(n)) return undefined;
      items.push({ index: n });
      rest = rest.slice(index[0].length);
      continue;
    }
    if (!rest.startsWith('.')) return undefined;
    const key = readKey(rest.slice(1));
    if (!key) return undefined;
    items.push({ key: key.key });
    rest = rest.slice(1 + key.length);
  }
  return items;
}

function readKey(text: string): { key: string; length: number } | undefined {
  const raw = RAW_KEY.exec(text);
  if (raw) return { key: raw[0], length: raw[0].length };
  const quoted = /^"([^"\\]*)"/.exec(text);
  if (quoted) return { key: quoted[1], length: quoted[0].length };
  return undefined;
}

/** The canonical text of a path (keys quoted only when they must be), as Qdrant prints it. */
export function formatJsonPath(path: JsonPath): string {
  let out = '';
  for (const [i, item] of path.entries()) {
    if ('key' in item) {
      const fits = RAW_KEY.exec(item.key)?.[0].length === item.key.length;
      out += (i === 0 ? '' : '.') + (fits ? item.key : `"${item.key}"`);
    } else if ('index' in item) {
      out += `[${item.index}]`;
    } else {
      out += '[]';
    }
  }
  return out;
}

/** `a.b` -> `a.b[]`: a nested condition always walks the elements of the array at its key. */
export function arrayPath(path: JsonPath): JsonPath {
  const last = path[path.length - 1];
  return 'wildcard' in last ? path : [...path, { wildcard: true }];
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own property only: payloads are plain JSON, so "constructor" or "__proto__" are ordinary keys. */
export function ownValue(object: JsonObject, key: string): JsonValue | undefined {
  const value = object[key];
  // A JSON value is never a function, so only these may be inherited (Object.prototype's
  // methods, its __proto__ accessor); the plain read alone is several times faster.
  if (value === undefined || typeof value === 'function' || key === '__proto__') return Object.hasOwn(object, key) ? object[key] : undefined;
  return value;
}

/** Every value found at `path` in `root` (missing parts contribute nothing). */
export function valuesAt(path: JsonPath, root: Payload): JsonValue[] {
  // A top-level key, the common case, without the walk (filters read keys once per point).
  if (path.length === 1) {
    const item = path[0];
    if ('key' in item) {
      const value = ownValue(root, item.key);
      return value === undefined ? [] : [value];
    }
  }
  const out: JsonValue[] = [];
  collect(path, 0, root, out);
  return out;
}

function collect(path: JsonPath, at: number, value: JsonValue | undefined, out: JsonValue[]): void {
  if (value === undefined) return;
  if (at === path.length) {
    out.push(value);
    return;
  }
  const item = path[at];
  if ('key' in item) {
    if (isJsonObject(value)) collect(path, at + 1, ownValue(value, item.key), out);
  } else if (Array.isArray(value)) {
    if ('index' in item) collect(path, at + 1, value[item.index], out);
    else for (const element of value) collect(path, at + 1, element, out);
  }
}

/** The values at a key, one level of arrays opened: what match/range/geo conditions test. */
export function flatten(values: readonly JsonValue[]): JsonValue[] {
  const out: JsonValue[] = [];
  for (const v of values) {
    if (Array.isArray(v)) out.push(...v);
    else out.push(v);
  }
  return out;
}
