// Writes into payloads by Qdrant key paths (set_payload with `key`, delete_payload of nested
// keys) and the include/exclude selectors of with_payload, as Qdrant's JsonPath value_set,
// value_remove and value_filter do them. Paths arrive parsed (src/shard/filter/json-path.ts).

import type { JsonValue, Payload } from '../model.js';
import { ownField, setOwnField } from '../own-fields.js';
import { isJsonObject, type JsonObject, type JsonPath, type PathItem } from './filter/json-path.js';

/**
 * Merges `values` into what `path` names in `payload`. Along the way a key makes its value an
 * object (replacing a non-object), `[N]` makes it an array and enters element N only if it
 * exists, `[]` enters every element (and makes a non-array an empty array); the merge target is
 * made an object if it is not one. So `a.b[0].c` changes exactly that element's `c`.
 */
export function setAtPath(payload: Payload, path: JsonPath, values: Payload): void {
  setIn(payload, path, 0, values);
}

function setIn(object: JsonObject, path: JsonPath, at: number, values: Payload): void {
  const key = (path[at] as { key: string }).key;
  const current = ownField(object, key);
  setOwnField(object, key, setValue(current === undefined ? null : current, path, at + 1, values));
}

/** The value `current` becomes; arrays and objects are changed in place and returned. */
function setValue(current: JsonValue, path: JsonPath, at: number, values: Payload): JsonValue {
  if (at === path.length) {
    const target = isJsonObject(current) ? current : {};
    for (const [key, value] of Object.entries(values)) setOwnField(target, key, value);
    return target;
  }
  const item: PathItem = path[at];
  if ('key' in item) {
    const target = isJsonObject(current) ? current : {};
    setIn(target, path, at, values);
    return target;
  }
  if (!Array.isArray(current)) return [];
  if ('index' in item) {
    if (item.index < current.length) current[item.index] = setValue(current[item.index], path, at + 1, values);
  } else {
    for (let i = 0; i < current.length; i++) current[i] = setValue(current[i], path, at + 1, values);
  }
  return current;
}

/**
 * Removes what `path` names: a key from its object, every element of an array for a final `[]`
 * (the array stays, empty). A final `[N]` removes nothing, as in Qdrant (removing by index is
 * not idempotent).
 */
export function deleteAtPath(payload: Payload, path: JsonPath): void {
  removeIn(payload, path, 0);
}

function removeIn(value: JsonValue | undefined, path: JsonPath, at: number): void {
  const item = path[at];
  const last = at === path.length - 1;
  if ('key' in item) {
    if (!isJsonObject(value)) return;
    if (last) {
      if (Object.hasOwn(value, item.key)) delete value[item.key];
    } else {
      removeIn(ownField(value, item.key), path, at + 1);
    }
    return;
  }
  if (!Array.isArray(value)) return;
  if ('index' in item) {
    if (!last) removeIn(value[item.index], path, at + 1);
  } else if (last) {
    value.length = 0;
  } else {
    for (const element of value) removeIn(element, path, at + 1);
  }
}

/**
 * Keeps the parts of `value` whose path `keep` accepts, walking objects by key and arrays with
 * `[]` (Qdrant's value_filter): a rejected key or element is left out, an accepted one is
 * filtered further.
 */
function filterValue(value: JsonValue, visited: PathItem[], keep: (visited: PathItem[]) => boolean): JsonValue {
  if (Array.isArray(value)) {
    visited.push({ wildcard: true });
    const out = keep(visited) ? value.map((element) => filterValue(element, visited, keep)) : [];
    visited.pop();
    return out;
  }
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    visited.push({ key });
    if (keep(visited)) setOwnField(out, key, filterValue(child, visited, keep));
    visited.pop();
  }
  return out;
}

function sameItem(a: PathItem, b: PathItem): boolean {
  if ('key' in a) return 'key' in b && a.key === b.key;
  if ('index' in a) return 'index' in b && a.index === b.index;
  return 'wildcard' in b;
}

/** One path is a prefix of the other (Qdrant's check_include_pattern). */
function compatible(a: readonly PathItem[], b: readonly PathItem[]): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (!sameItem(a[i], b[i])) return false;
  return true;
}

/** `prefix` starts `path` (Qdrant's check_exclude_pattern). */
function startsWith(path: readonly PathItem[], prefix: readonly PathItem[]): boolean {
  return prefix.length <= path.length && compatible(path, prefix);
}

/** The payload restricted to the parts on the way to, or under, one of `paths`. */
export function includePaths(payload: Payload, paths: JsonPath[]): Payload {
  return filterValue(payload, [], (visited) => paths.some((p) => compatible(p, visited))) as Payload;
}

/** The payload without the parts under any of `paths`. */
export function excludePaths(payload: Payload, paths: JsonPath[]): Payload {
  return filterValue(payload, [], (visited) => !paths.some((p) => startsWith(visited, p))) as Payload;
}
