// Point ids between Qdrant's JSON and Quiver's model: UUIDs in canonical form, integers from 0 to
// 2^64-1 (a number up to 2^53-1, a bigint above). Its own module so that what needs only ids (the
// filter conversion, which the browser demo bundles) does not pull in vector conversion.

import type { PointId } from '../model.js';
import { canonicalUuid } from '../shard/filter/uuid.js';
import type { WirePointId } from './types.js';

/** The largest numeric id Qdrant takes (u64::MAX). */
export const MAX_NUMERIC_ID = 2n ** 64n - 1n;

/**
 * Whether `value` is an id Quiver can hold: a UUID, a non-negative integer a number holds exactly,
 * or a bigint up to 2^64-1 (ids past 2^53 arrive as bigints from the id keyword, see validator.ts).
 */
export function isPointId(value: unknown): value is WirePointId {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0;
  if (typeof value === 'bigint') return value >= 0n && value <= MAX_NUMERIC_ID;
  return typeof value === 'string' && canonicalUuid(value) !== undefined;
}

/** A numeric id in its one form: a number up to 2^53-1, a bigint above (see PointId). */
export function numericId(value: bigint): number | bigint {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** The id in Quiver's form: UUIDs in any form the uuid crate reads become lowercase hyphenated. */
export function toPointId(id: WirePointId): PointId {
  if (typeof id === 'number') return id;
  if (typeof id === 'bigint') return numericId(id);
  return canonicalUuid(id) as string;
}

/** The id in a URL path (always text): digits are a numeric id, anything else must be a UUID. */
export function pointIdFromPath(raw: string): PointId | undefined {
  if (/^\d+$/.test(raw)) {
    const value = BigInt(raw);
    return value <= MAX_NUMERIC_ID ? numericId(value) : undefined;
  }
  return isPointId(raw) ? toPointId(raw) : undefined;
}
