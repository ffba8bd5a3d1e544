// A copy of some of a shard's points into another shard's replica (Qdrant's `replicate_points`:
// a transfer whose receiver belongs to another shard, `to_shard_id`, with a filter). The source's
// replica (src/replica/transfer-proxy.ts) streams the matching points in id order, batch by batch,
// and passes on every update it applies meanwhile, all over the one lane to the receiver, which
// keeps the order they were queued in. An update is passed on as what it left behind rather
// than as it came: the ids it names (an upsert, a vector update, an operation on listed ids) are
// read back right behind it, in its own turn of the source's queue, and the receiver gets those
// of them that match the filter, whole, and loses the others (they no longer exist, or no longer
// match); operations on a filter are passed on as they are (they never fail on points the
// receiver lacks). So the receiver ends holding exactly the source's matching points, as of each
// update, even where one moves a point out of the filter (Qdrant's own proxy forwards only the
// upserted points that match, and leaves such a point behind in the receiver).
//
// The receiver's other updates (its own shard key's) do not pass through here: the copy uses its
// own clock, which no update of the receiver's shard ever uses, so neither skips the other's tags.

import type { PointId } from '../model.js';
import type { ClockTag } from '../shard/clock-map.js';
import { onlyIds } from '../shard/filter/combine.js';
import type { Filter } from '../shard/filter/types.js';
import type { PointView } from '../shard/selectors.js';
import { namedIds, type WriteOp } from '../shard/write-ops.js';
import type { ShardReplica } from './replica.js';
import { queueBatch, recordsOf, WHOLE_POINTS, type QueuedBatch } from './transfer-batch.js';
import type { ApplyTask, ReceiverLane } from './transfer-proxy.js';

/** Clock ids of copies start here: far past any incarnation (a peer's restart count), and below 2^53. */
const COPY_CLOCK_BASE = 2 ** 50;

/**
 * The clock id of the copy a transfer created at `createRevision` runs: positive, so that the
 * receiver takes its updates after the copy's opening as it takes a shard's own (a transfer's
 * negative clock marks a batch of a transfer that must still run there), and its own.
 */
export function copyClockId(createRevision: number): number {
  return COPY_CLOCK_BASE + createRevision;
}

/** Clock tags of one copy, ticked in the order they are queued in the lane. */
export interface CopyClock {
  /** The first update the receiver takes: the transfer's opening (tick 1 of its own clock, src/peer/p2p-server.ts). */
  opening: ClockTag;
  /** The copy's batches and passed-on updates, tick by tick. */
  next(): ClockTag;
}

export class PointsCopy {
  /** The revision of the view that ended the copy with its receiver Active (null while it runs). */
  finishedAt: number | null = null;

  /**
   * `source`: the replica copied from; `lane`: the one way to the receiver; `filter`: the points
   * copied (null: all); `onFailed`: an update did not reach the receiver (the copy cannot go on).
   */
  constructor(
    private readonly source: ShardReplica,
    private readonly lane: ReceiverLane,
    private readonly filter: Filter | null,
    private readonly clock: CopyClock,
    private readonly onFailed: (err: unknown) => void,
  ) {}

  /**
   * Keeps the receiver's first turn for the opening, sent once `ready` resolves (the lane waits
   * meanwhile, so nothing reaches the receiver before this peer applied the transfer's start);
   * call it in the step that registers the copy, before any update is passed on.
   */
  open(ready: Promise<void>): Promise<void> {
    const slot = this.lane.reserve();
    ready.then(
      () => slot.fill({ type: 'apply', ops: [], opId: 0, clock: this.clock.opening, wait: true, dryRun: false }),
      (err: unknown) => slot.drop(err),
    );
    return slot.sent;
  }

  /**
   * Passes `update` on, queued in the step `local` (its application here) was: the read of the
   * ids it names goes to the source's queue right behind it, and the receiver's turn is kept now.
   */
  pass(update: ApplyTask, local: Promise<unknown>): void {
    const slot = this.lane.reserve();
    const tag = this.clock.next();
    const named = [...new Set(update.ops.flatMap((op) => namedIds(op) ?? []))];
    const read = named.length === 0
      ? Promise.resolve([] as PointView[])
      : this.source.run({ type: 'scroll', filter: onlyIds(this.filter, named), from: null, limit: named.length, shape: WHOLE_POINTS, orderBy: null }, null);
    const applied = local.then(() => true, () => false);
    Promise.all([applied, read]).then(([done, points]) => {
      const ops = passedOps(update.ops, done, named, points);
      if (ops.length === 0) slot.drop();
      else slot.fill({ type: 'apply', ops, opId: 0, clock: tag, wait: true, dryRun: false });
    }, (err: unknown) => slot.drop(err));
    slot.sent.catch((err: unknown) => this.onFailed(err));
  }

  /** Queues a read of up to `limit` matching points from `from` on, and their upsert to the receiver at the same place of its lane. */
  batch(from: PointId | null, limit: number): QueuedBatch {
    return queueBatch(this.source, this.lane.reserve(), this.filter, from, limit, this.clock.next());
  }
}

/**
 * What the receiver takes for an update: its operations on a filter as they are (when it applied
 * here), then the named ids as they now are: the matching ones upserted whole, the others deleted.
 */
function passedOps(ops: readonly WriteOp[], applied: boolean, named: readonly PointId[], points: readonly PointView[]): WriteOp[] {
  const out: WriteOp[] = applied ? ops.filter((op) => namedIds(op) === null) : [];
  if (points.length > 0) out.push({ kind: 'upsert', points: recordsOf(points), mode: 'upsert', updateFilter: null });
  const kept = new Set(points.map((p) => p.id));
  const gone = named.filter((id) => !kept.has(id));
  if (gone.length > 0) out.push({ kind: 'delete', target: { ids: gone } });
  return out;
}
