// Integers in JSON values (payloads, filter values, group ids, order values) as Quiver holds them.
// serde_json, which reads Qdrant's JSON, keeps an integer literal as an i64 or u64, exactly, and
// reads one beyond both as a float; JavaScript's numbers hold integers exactly only up to 2^53.
// So an integer beyond 2^53 (in magnitude) and within -2^63..2^64-1 is a bigint, and every other
// value a number: one form per value, as point ids have (src/model.ts), so that equal values are
// === and key Maps and Sets alike. `<` and `>` compare a bigint and a number exactly; arithmetic
// never mixes them, so code that subtracts or sums values converts first (Number(), as Qdrant's
// as_f64 does).

import { setOwnField } from '../own-fields.js';
import { pointerStep } from './integer-literals.js';

export const I64_MIN = -(2n ** 63n);
export const I64_MAX = 2n ** 63n - 1n;
export const U64_MAX = 2n ** 64n - 1n;

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** 2^63 and 2^64 as doubles: a whole double in [-2^63, 2^63) is an i64; 2^64 is also what u64s near their maximum round to. */
const I64_LIMIT = 2 ** 63;
const U64_LIMIT = 2 ** 64;

/**
 * The value of an integer literal in its one form: a number up to 2^53-1 in magnitude, a bigint
 * beyond it within i64/u64, and past those the double serde_json reads it as.
 */
export function integerValue(exact: bigint): number | bigint {
  if (exact >= -SAFE && exact <= SAFE) return Number(exact);
  return exact >= I64_MIN && exact <= U64_MAX ? exact : Number(exact);
}

/** A double whose form may be a bigint: a whole value beyond 2^53 that is, or may be the rounding of, an i64 or u64. */
function beyondSafe(value: number): boolean {
  return Number.isInteger(value) && Math.abs(value) > Number.MAX_SAFE_INTEGER && value >= -I64_LIMIT && value <= U64_LIMIT;
}

/** Whether `value` is an integer of Qdrant's integer payload type (i64): what integer matches, indexes and facets see. */
export function isI64(value: unknown): value is number | bigint {
  if (typeof value === 'number') return Number.isInteger(value) && value >= -I64_LIMIT && value < I64_LIMIT;
  return typeof value === 'bigint' && value >= I64_MIN && value <= I64_MAX;
}

/** Orders two numeric values exactly, whatever their forms. */
export function compareNumeric(a: number | bigint, b: number | bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Where the exact digits of long integer literals are found, by JSON pointer (undefined: none there). */
export type LiteralAt = (pointer: string) => bigint | undefined;

/**
 * `value`, as JSON.parse read it from a text in which it stands at the JSON pointer `place`, with
 * every integer in its one form: a whole number beyond 2^53 becomes the exact value of the literal
 * written there (`literalAt`), or the bigint of the double itself where none was (a float literal
 * such as 1e18, which Quiver counts as the integer it equals). Objects and lists are changed in
 * place; the (possibly replaced) value is returned. The text is consulted only for such numbers.
 */
export function withExactIntegers<T>(value: T, place: string, literalAt: LiteralAt): T {
  // The way down, as member names and item indexes; made a pointer only for a number that needs it.
  const steps: (string | number)[] = [];
  const pointer = () => place + steps.map((s) => `/${typeof s === 'number' ? s : pointerStep(s)}`).join('');
  const visit = (v: unknown): unknown => {
    if (typeof v === 'number') return beyondSafe(v) ? integerValue(literalAt(pointer()) ?? BigInt(v)) : v;
    if (typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (typeof item !== 'object' && typeof item !== 'number') continue;
        steps.push(i);
        const exact = visit(item);
        steps.pop();
        if (exact !== item) v[i] = exact;
      }
    } else {
      const members = v as Record<string, unknown>;
      for (const key of Object.keys(members)) {
        const member = members[key];
        if (typeof member !== 'object' && typeof member !== 'number') continue;
        steps.push(key);
        const exact = visit(member);
        steps.pop();
        if (exact !== member) setOwnField(members, key, exact);
      }
    }
    return v;
  };
  return visit(value) as T;
}
