// Writes into payloads by Qdrant key paths ("a.b", "a[0].b"): set_payload with `key`,
// delete_payload of nested keys, and include/exclude selectors of with_payload.

import type { JsonValue, Payload } from '../model.js';
import { ownField, setOwnField } from '../own-fields.js';

type Step = string | number;

/** "a.b[2].c" -> ["a", "b", 2, "c"]. */
export function parsePath(path: string): Step[] {
  const steps: Step[] = [];
  for (const part of path.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) {
      steps.push(part);
      continue;
    }
    if (m[1] !== '') steps.push(m[1]);
    for (const index of m[2].matchAll(/\[(\d+)\]/g)) steps.push(Number(index[1]));
  }
  return steps;
}

type JsonObject = { [key: string]: JsonValue };

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object at `key` of `object`, made (or replacing what is there) when it is not one. */
function objectAt(object: JsonObject, key: string): JsonObject {
  const value = ownField(object, key);
  if (isObject(value)) return value;
  const made: JsonObject = {};
  setOwnField(object, key, made);
  return made;
}

/** Merges `values` into the object at `path` of `payload`, creating objects on the way. */
export function setAtPath(payload: Payload, path: string, values: Payload): void {
  let node: JsonObject | JsonValue[] = payload;
  for (const step of parsePath(path)) {
    if (typeof step === 'number') {
      if (!Array.isArray(node) || step >= node.length) return; // Qdrant leaves payloads without that element unchanged
      if (!isObject(node[step])) node[step] = {};
      node = node[step] as JsonObject;
    } else {
      if (Array.isArray(node)) return;
      node = objectAt(node, step);
    }
  }
  if (Array.isArray(node)) return;
  for (const [key, value] of Object.entries(values)) setOwnField(node, key, value);
}

/** Removes the value at `path` (a top-level key or a nested one). */
export function deleteAtPath(payload: Payload, path: string): void {
  const steps = parsePath(path);
  let node: JsonValue | undefined = payload;
  for (const step of steps.slice(0, -1)) {
    if (typeof step === 'number') node = Array.isArray(node) ? node[step] : undefined;
    else node = isObject(node) ? ownField(node, step) : undefined;
    if (node === undefined) return;
  }
  const last = steps[steps.length - 1];
  if (typeof last === 'number' && Array.isArray(node)) node.splice(last, 1);
  else if (typeof last === 'string' && isObject(node) && Object.hasOwn(node, last)) delete node[last];
}

function getAtPath(payload: Payload, steps: Step[]): JsonValue | undefined {
  let node: JsonValue | undefined = payload;
  for (const step of steps) {
    if (typeof step === 'number') node = Array.isArray(node) ? node[step] : undefined;
    else node = isObject(node) ? ownField(node, step) : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** The payload restricted to the given paths, nested structure kept. */
export function includePaths(payload: Payload, paths: string[]): Payload {
  const out: Payload = {};
  for (const path of paths) {
    const steps = parsePath(path).filter((s): s is string => typeof s === 'string');
    const value = getAtPath(payload, steps);
    if (value === undefined) continue;
    let node: JsonObject = out;
    for (const step of steps.slice(0, -1)) node = objectAt(node, step);
    setOwnField(node, steps[steps.length - 1], structuredClone(value));
  }
  return out;
}

export function excludePaths(payload: Payload, paths: string[]): Payload {
  const out = structuredClone(payload);
  for (const path of paths) deleteAtPath(out, path);
  return out;
}
