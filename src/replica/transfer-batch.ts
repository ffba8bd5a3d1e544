// One batch of a transfer: points read from the source's replica and upserted to the receiver at
// the place of its lane kept when the read was queued (so the batch lands among the updates passed
// on exactly where the source read it), as every transfer that streams records sends them.

import type { PointId } from '../model.js';
import type { ClockTag } from '../shard/clock-map.js';
import type { Filter } from '../shard/filter/types.js';
import type { PointView } from '../shard/selectors.js';
import type { PointRecord } from '../shard/write-ops.js';
import type { ShardReplica } from './replica.js';
import type { LaneSlot } from './transfer-proxy.js';

/** Whole points: every vector and the payload. */
export const WHOLE_POINTS = { withPayload: { all: true }, withVector: true } as const;

/** Points as a read gave them, as an upsert writes them. */
export function recordsOf(points: readonly PointView[]): PointRecord[] {
  return points.map((p) => ({ id: p.id, vectors: p.vectors ?? {}, payload: p.payload ?? null }));
}

/** One batch queued: its points read (with where the next batch starts), and its send. */
export interface QueuedBatch {
  read: Promise<{ count: number; next: PointId | null }>;
  sent: Promise<void>;
}

/**
 * Queues a read of up to `limit` points matching `filter` (null: any) from `from` on, in id order
 * and whole, to `source`, and fills `slot` (kept in the receiver's lane in the same step) with
 * their upsert tagged `tag`; an empty read gives the slot up.
 */
export function queueBatch(source: ShardReplica, slot: LaneSlot, filter: Filter | null, from: PointId | null, limit: number, tag: ClockTag): QueuedBatch {
  const scroll = source.run({ type: 'scroll', filter, from, limit: limit + 1, shape: WHOLE_POINTS, orderBy: null }, null);
  const read = scroll.then((points) => {
    const taken = points.slice(0, limit);
    if (taken.length === 0) slot.drop();
    else slot.fill({ type: 'apply', ops: [{ kind: 'upsert', points: recordsOf(taken), mode: 'upsert', updateFilter: null }], opId: 0, clock: tag, wait: true, dryRun: false });
    return { count: taken.length, next: points[limit]?.id ?? null };
  }, (err: unknown) => {
    slot.drop(err);
    throw err;
  });
  return { read, sent: slot.sent };
}
