// Breaks well-formed bodies in the ways clients get them wrong: a value replaced by one of the
// wrong type or range, a field dropped (required ones included), an unknown field added, a value
// buried under nesting at or past the depth limit. Each mutation picks its spot by index among the
// body's nodes, so fast-check can replay and shrink it.

import fc from 'fast-check';
import { nested, oddString, oddValue } from './fuzz-values.js';

export type Mutation =
  | { kind: 'replace'; at: number; value: unknown }
  | { kind: 'drop'; at: number; key: number }
  | { kind: 'add'; at: number; key: string; value: unknown }
  | { kind: 'bury'; at: number; depth: number };

// Unbiased: fast-check favours small numbers, which would pick the body's root nearly always.
const spot = fc.noBias(fc.nat(1 << 20));

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('replace' as const), at: spot, value: oddValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drop' as const), at: spot, key: spot }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('add' as const), at: spot, key: oddString, value: oddValue }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('bury' as const), at: spot, depth: fc.integer({ min: 100, max: 140 }) }) },
);

type Slot = { parent: Record<string, unknown> | unknown[] | null; key: string | number; value: unknown };

// Every node of the body with where it hangs, the root first.
function slots(root: unknown): Slot[] {
  const out: Slot[] = [];
  const walk = (parent: Slot['parent'], key: string | number, value: unknown) => {
    out.push({ parent, key, value });
    if (Array.isArray(value)) value.forEach((v, i) => walk(value, i, v));
    else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(value as Record<string, unknown>, k, v);
  };
  walk(null, '', root);
  return out;
}

function define(target: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  // defineProperty: a "__proto__" key must become a field, as JSON.parse makes it.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `body` with the mutations applied in order (the body itself is left as it was). */
export function mutate(body: unknown, mutations: readonly Mutation[]): unknown {
  let root: unknown = body === undefined ? undefined : structuredClone(body);
  for (const original of mutations) {
    // Its own copy: the odd values are shared constants, and a later mutation may change what this one put.
    const m = 'value' in original ? { ...original, value: structuredClone(original.value) } : original;
    const all = slots(root);
    const slot = all[m.at % all.length];
    const set = (value: unknown) => {
      if (slot.parent === null) root = value;
      else define(slot.parent, slot.key, value);
    };
    if (m.kind === 'replace') set(m.value);
    else if (m.kind === 'bury') set(nested(m.depth, slot.value, m.at % 2 === 0 ? 'array' : 'object'));
    else {
      const container = slot.value;
      if (container === null || typeof container !== 'object') continue;
      if (m.kind === 'add') {
        if (Array.isArray(container)) container.push(m.value);
        else define(container as Record<string, unknown>, m.key, m.value);
      } else {
        const keys = Object.keys(container);
        if (keys.length === 0) continue;
        if (Array.isArray(container)) container.splice(m.key % container.length, 1);
        else delete (container as Record<string, unknown>)[keys[m.key % keys.length]];
      }
    }
  }
  return root;
}
