// A transfer source's replica (Qdrant's forward proxy): this peer's own replica of a shard, which
// also passes on to a transfer's receiver every update it applies while it feeds that receiver
// (`feed` to `stopFeeding`: from the moment this peer starts the transfer until it applies its
// end), any update a replica set asks it to (`relay`: sent by a peer that still sees the
// transfer running after this one saw it end), and, once the transfer finished, any update sent
// from a view before that end (`seen`: its sender did not send it to the receiver, which was Dead
// or Partial there, and it reached this peer only now); it queues the transfer's batches among them. The receiver takes its updates through here alone
// (FED_BY_TRANSFER), over one lane that keeps the order of what is queued on it
// (src/peer/remote-replica.ts). Each update is queued to this replica and to the lane in the same
// synchronous step, and a batch is a scroll queued to this replica with a slot reserved in the
// lane in the same step, filled with the scroll's points once it answers. The worker runs tasks
// in the order queued, so a batch holds exactly the updates queued before it, and the receiver
// takes them in that same order: it ends equal to the source. The batches and the clearing of
// the receiver carry the transfer's own clock (`transferClock`), which no update ever uses, so
// the receiver never skips one as already seen.

import type { ClockTag } from '../shard/clock-map.js';
import type { RecoveryPoint } from '../shard/shard.js';
import type { WriteOp } from '../shard/write-ops.js';
import type { DeadlineBudget } from '../shard/deadline.js';
import type { Filter } from '../shard/filter/types.js';
import type { PointId } from '../model.js';
import { PointsCopy, type CopyClock } from './points-copy.js';
import type { ReplicaResult, ReplicaTask, ShardReplica } from './replica.js';
import { queueBatch, type QueuedBatch } from './transfer-batch.js';

/** A point update as a replica applies it. */
export type ApplyTask = Extract<ReplicaTask, { type: 'apply' }>;

/** A turn kept in a receiver's lane for updates known later. */
export interface LaneSlot {
  /** Sends `task` in the slot's turn, ahead of what waits behind the slot, which stays kept; answers its result once it ran. */
  put<T extends ReplicaTask>(task: T): Promise<ReplicaResult<T>>;
  /** Sends `update` in the slot's turn and ends the slot; `sent` settles with its answer. */
  fill(update: ApplyTask): void;
  /** Gives the turn up with nothing sent (`sent` resolves), or fails it (`sent` rejects). */
  drop(err?: unknown): void;
  readonly sent: Promise<void>;
}

/** The one ordered way to a receiver's replica. */
export interface ReceiverLane {
  run<T extends ReplicaTask>(task: T, deadline: DeadlineBudget | null): Promise<ReplicaResult<T>>;
  reserve(): LaneSlot;
  /** The receiver's recovery point, asked at once (not in the lane's turn: a kept slot may hold the lane). */
  recoveryPoint(): Promise<RecoveryPoint>;
}

/** Revisions between two runs' clocks of one transfer: more than etcd's revisions ever reach. */
const RUN_STRIDE = 2 ** 40;

/**
 * The clock id of one run of a transfer (`run`: how often it was restarted with another method):
 * from its key's creation revision, negative so that it never meets an incarnation (>= 1), and
 * another for each run, so that a run never skips a tick an earlier one used.
 */
export function transferClockId(createRevision: number, run = 0): number {
  return -(createRevision + run * RUN_STRIDE);
}

/** The clock of one transfer run's batches: the source's peer and the run's clock id. */
export function transferClock(source: number, clockId: number): (tick: number) => ClockTag {
  return (tick) => ({ peer: source, clockId, tick });
}

/** Every point: what clears a receiver's stale copy before the batches come. */
const CLEAR: WriteOp = { kind: 'delete', target: { filter: {} } };


export class TransferProxy implements ShardReplica {
  /** Receivers every update applied here is passed on to. */
  private readonly feeding = new Set<number>();
  /** Receivers whose transfer from here finished, by the revision of the view that ended it. */
  private readonly finished = new Map<number, number>();
  /** Copies of points into other shards' replicas (src/replica/points-copy.ts), by their transfer's key. */
  private readonly copies = new Map<string, PointsCopy>();

  /**
   * `lanes`: the lane to a peer's replica of this shard (null if the view names no such peer);
   * `onRelayFailed`: an update could not be passed on (the receiver missed it); the update still
   * stands here.
   */
  constructor(
    readonly inner: ShardReplica,
    private readonly lanes: (peer: number) => ReceiverLane | null,
    private readonly onRelayFailed: (peer: number, err: unknown) => void,
  ) {}

  /** Passes every update applied from now on to `to` as well (call it in the step that queues the transfer's first task). */
  feed(to: number): void {
    this.feeding.add(to);
  }

  /** Ends the feeding of `to`; `finishedAt`: the revision that made it Active (null: the transfer was aborted, `to` is Dead). */
  stopFeeding(to: number, finishedAt: number | null): void {
    this.feeding.delete(to);
    if (finishedAt === null) this.finished.delete(to);
    else this.finished.set(to, finishedAt);
  }

  /**
   * Copies the points matching `filter` into another shard's replica over `lane` from now on
   * (`key`: its transfer's): every update applied here is passed on as the copy passes it; call
   * it in the step that queues the copy's opening (`PointsCopy.open`) and first batch.
   */
  copyPoints(key: string, lane: ReceiverLane, filter: Filter | null, clock: CopyClock, onFailed: (err: unknown) => void): PointsCopy {
    const copy = new PointsCopy(this.inner, lane, filter, clock, onFailed);
    this.copies.set(key, copy);
    return copy;
  }

  /**
   * Ends copy `key`; `finishedAt`: the revision that made its receiver Active (null: aborted).
   * A finished copy still takes the updates sent from a view before its end: their sender may
   * have routed them here rather than to the receiver, which was not Active there.
   */
  stopCopying(key: string, finishedAt: number | null): void {
    const copy = this.copies.get(key);
    if (!copy) return;
    if (finishedAt === null) this.copies.delete(key);
    else copy.finishedAt = finishedAt;
  }

  /** The receivers `update` goes to besides this replica (see the header). */
  private receiversOf(update: ApplyTask, relay: readonly number[]): Set<number> {
    const receivers = new Set([...this.feeding, ...relay]);
    if (update.seen !== undefined) for (const [to, at] of this.finished) if (update.seen < at) receivers.add(to);
    return receivers;
  }

  get shard() {
    return this.inner.shard;
  }

  get peer(): number {
    return this.inner.peer;
  }

  /**
   * Runs `task` here; an update also goes to each of its receivers (`receiversOf`, once each),
   * queued in the same step, and answers once all settled (a receiver's failure is reported, not
   * answered: the update stands on this replica).
   */
  run<T extends ReplicaTask>(task: T, deadline: DeadlineBudget | null): Promise<ReplicaResult<T>> {
    if (task.type !== 'apply' || task.dryRun || (task.relay === undefined && this.feeding.size === 0 && this.finished.size === 0 && this.copies.size === 0)) return this.inner.run(task, deadline);
    const { relay, ...rest } = task as ApplyTask;
    const update: ApplyTask = rest;
    const receivers = this.receiversOf(update, relay ?? []);
    const local = this.inner.run(update, deadline);
    for (const copy of this.copies.values()) {
      if (copy.finishedAt === null || (update.seen !== undefined && update.seen < copy.finishedAt)) copy.pass(update, local);
    }
    const relayed = [...receivers].map((peer) => {
      const lane = this.lanes(peer);
      if (lane === null) {
        this.onRelayFailed(peer, new Error(`no lane to peer ${peer}`));
        return Promise.resolve();
      }
      return lane.run(update, null).then(() => undefined, (err: unknown) => this.onRelayFailed(peer, err));
    });
    return Promise.all([local, ...relayed]).then(([result]) => result as ReplicaResult<T>);
  }

  /**
   * Keeps the next turn of `to`'s lane, and reads this replica's recovery point at the same place
   * of its own queue: call it in the step that starts feeding `to`, and the slot stands exactly
   * between what this replica took before (the mark) and every update fed from then on.
   */
  hold(to: number): { lane: ReceiverLane; slot: LaneSlot; mark: Promise<RecoveryPoint> } {
    const lane = this.lanes(to);
    if (lane === null) throw new Error(`no lane to peer ${to}`);
    const slot = lane.reserve();
    // A slot dropped with an error rejects `sent`, which its holder awaits only on success.
    slot.sent.catch(() => undefined);
    return { lane, slot, mark: this.inner.run({ type: 'recovery_point' }, null) };
  }

  /**
   * Queues the clearing of `to`'s copy (every point deleted, and this replica's clock map taken
   * on: the receiver becomes a copy of this replica, so a later `wal_delta` can start from it)
   * before anything else of the transfer reaches it; it is sent once `ready` resolves (the lane
   * waits meanwhile), so that it leaves after this peer applied the transfer's start and the
   * receiver waits until it did too.
   */
  clear(to: number, tag: ClockTag, ready: Promise<void>): Promise<void> {
    let held: ReturnType<TransferProxy['hold']>;
    try {
      held = this.hold(to);
    } catch (err) {
      return Promise.reject(err);
    }
    const { slot, mark } = held;
    Promise.all([mark, ready]).then(
      ([{ clocks }]) => slot.fill({ type: 'apply', ops: [CLEAR], opId: 0, clock: tag, adopt: clocks, wait: true, dryRun: false }),
      (err: unknown) => slot.drop(err),
    );
    return slot.sent;
  }

  /**
   * Queues a read of up to `limit` points from `from` on (in id order, every vector and the
   * payload) here, and the upsert of what it reads to `to` at the same place in `to`'s lane.
   */
  batch(to: number, from: PointId | null, limit: number, tag: ClockTag): QueuedBatch {
    const lane = this.lanes(to);
    if (lane === null) {
      const err = Promise.reject(new Error(`no lane to peer ${to}`));
      err.catch(() => undefined);
      return { read: err as QueuedBatch['read'], sent: err as Promise<void> };
    }
    return queueBatch(this.inner, lane.reserve(), null, from, limit, tag);
  }
}
