// Reads of one shard that return points rather than scores: by id, in id order from a point on
// (scroll), in the order of an ordered payload index (scroll with order_by), and at random.

import type { Bitset } from '../engine/index.js';
import { compareNumeric } from '../json/integers.js';
import { missingRangeIndexForOrderBy } from '../messages.js';
import type { PointId } from '../model.js';
import type { Filter } from './filter/index.js';
import { isOrderedIndex, type OrderedEntry } from './payload-index/types.js';
import { selectPayload, selectVectors, type PointView, type ReadShape } from './selectors.js';
import { compareIds, type Shard } from './shard.js';

/** Scroll's order_by, checked against the collection's indexes: a key, a direction, a start value. */
export interface OrderBy {
  key: string;
  direction: 'asc' | 'desc';
  /** A number, a bigint past 2^53 (an integer index's exact start), or a datetime's microseconds. */
  startFrom: number | bigint | null;
}

function viewOf(shard: Shard, id: PointId, shape: ReadShape): PointView | null {
  const record = shard.record(id);
  if (!record) return null;
  const out: PointView = { id };
  const payload = selectPayload(record.payload ?? {}, shape.withPayload);
  if (payload) out.payload = payload;
  const vectors = selectVectors(record.vectors, shape.withVector);
  if (vectors) out.vectors = vectors;
  return out;
}

/** Points by id, in the order asked; missing ids are left out. */
export function retrievePoints(shard: Shard, ids: PointId[], shape: ReadShape): PointView[] {
  return ids.map((id) => viewOf(shard, id, shape)).filter((p): p is PointView => p !== null);
}

/** First index of `ids` (sorted) not below `from`. */
function lowerBound(ids: PointId[], from: PointId): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareIds(ids[mid], from) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `k` distinct elements of `items` in random order: a partial Fisher-Yates shuffle. */
function randomSubset<T>(items: T[], k: number): T[] {
  const n = Math.min(k, items.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (items.length - i));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items.slice(0, n);
}

/**
 * Scroll by the values of an ordered payload index. As in Qdrant, which reads (value, point)
 * pairs off the index, a point with several values comes once per distinct value, each time
 * with that value as its order_value.
 */
function scrollOrdered(shard: Shard, allowed: Bitset, orderBy: OrderBy, limit: number, shape: ReadShape): PointView[] {
  const index = shard.index(orderBy.key);
  if (!index || !isOrderedIndex(index)) throw missingRangeIndexForOrderBy(orderBy.key);
  const out: PointView[] = [];
  let previous: OrderedEntry | null = null;
  for (const entry of index.ordered(orderBy.direction, orderBy.startFrom ?? undefined)) {
    if (out.length >= limit) break;
    // The same value held twice by one point is one pair, and pairs come sorted.
    const repeated = previous !== null && previous.value === entry.value && previous.offset === entry.offset;
    previous = entry;
    if (repeated || !allowed.has(entry.offset)) continue;
    out.push({ ...viewOf(shard, shard.pointId(entry.offset), shape)!, orderValue: entry.value });
  }
  return out;
}

/** Up to `limit` matching points from `from` on in id order, or in the order `orderBy` names. */
export function scrollPoints(shard: Shard, filter: Filter | null, from: PointId | null, limit: number, shape: ReadShape, orderBy: OrderBy | null): PointView[] {
  const allowed = shard.matching(filter);
  if (orderBy) return scrollOrdered(shard, allowed, orderBy, limit, shape);
  const ids = shard.orderedIds();
  const out: PointView[] = [];
  for (let i = from === null ? 0 : lowerBound(ids, from); i < ids.length && out.length < limit; i++) {
    const offset = shard.offsetOf(ids[i])!;
    if (allowed.has(offset)) out.push(viewOf(shard, ids[i], shape)!);
  }
  return out;
}

/** Up to `limit` distinct matching points in uniformly random order, and how many points match. */
export function samplePoints(shard: Shard, filter: Filter | null, limit: number, shape: ReadShape): { points: PointView[]; matching: number } {
  const matching = [...shard.matching(filter)];
  const points = randomSubset(matching, limit).map((offset) => viewOf(shard, shard.pointId(offset), shape)!);
  return { points, matching: matching.length };
}

/** How points read by order_by rank when shards' pages merge: by value in the direction asked, ties by id. */
export function compareOrdered(direction: OrderBy['direction']): (a: PointView, b: PointView) => number {
  const sign = direction === 'desc' ? -1 : 1;
  return (a, b) => sign * compareNumeric(a.orderValue ?? 0, b.orderValue ?? 0) || compareIds(a.id, b.id);
}
