// The source side of shard transfers: for every transfer of the view whose source is this peer,
// its replica of the shard (a TransferProxy) brings the receiver level, among the updates it
// passes on meanwhile, by the transfer's method:
// - `stream_records` clears the receiver's copy, then streams its points in id order, batch by
//   batch (src/replica/transfer-proxy.ts says why the receiver ends equal to the source);
// - `snapshot` writes its shard part at the place the feeding starts, and has the receiver
//   download and restore it (taking on the source's clock map) ahead of the updates passed on;
// - `wal_delta` replays the operations the receiver misses from its log (src/cluster/wal-delta.ts),
//   and goes on as a `stream_records` (the same transfer restarted, as Qdrant's falls back) when
//   the log cannot serve it or the replay fails.
// Progress goes to the transfer's `comment` at most once a second; at the end the source proposes
// the finish (the receiver Active, the key gone), and for a move then its own replica leaving the
// shard. A batch that does not reach the receiver, or a receiver or a source replica that is no
// longer there, aborts the transfer (the receiver Dead, or gone for a move; a Dead one's peer's
// recovery starts another later).
//
// `prepare` runs BEFORE the placement takes a view: it makes this peer's replica feed a new
// transfer's receiver (every update it applies from then on is passed on, whichever peer's set
// sent it) in the same step as it queues the method's first step (the clearing, or the lane turn
// kept for the part or the delta), first in the receiver's lane; it stops the feeding once the
// view no longer holds the transfer's run (updates sent from before come relayed or stamped with
// the view they were sent from). A transfer this peer finds already under way when it starts
// (created at or before the first view it applied) was run by its previous process, which left
// the receiver missing what it never passed on: it is aborted.

import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JsonValue, PointId } from '../model.js';
import type { ShardContent } from '../replica/replica.js';
import type { ShardId } from '../replica/shard-id.js';
import { copyClockId } from '../replica/points-copy.js';
import type { QueuedBatch } from '../replica/transfer-batch.js';
import { transferClock, type LaneSlot, type ReceiverLane, type TransferProxy } from '../replica/transfer-proxy.js';
import type { Filter } from '../shard/filter/types.js';
import type { ShardRoute } from '../shard/snapshot-part.js';
import { sameTransfer, transferClockOf, type ClusterView, type ShardTransfer } from './cluster-view.js';
import type { ControlPlane } from './control-plane.js';
import { receiverShard, transferKey, type PeerId } from './keys.js';
import { TransferParts } from './transfer-parts.js';
import { resolveDelta, sendDelta } from './wal-delta.js';

/** What the runner proposes. */
export type TransferProposer = Pick<ControlPlane, 'finishTransfer' | 'completeMove' | 'abortTransfer' | 'restartTransfer' | 'setTransferComment' | 'setReplicaState'>;

export interface TransferRunnerOptions {
  peer: PeerId;
  controlPlane: TransferProposer;
  /** This peer's replica of a shard as a view places it (ClusterPlacement.transferSource). */
  source: (view: ClusterView, collection: string, shard: number) => TransferProxy | null;
  /** The one lane to `peer`'s replica of a shard as a view places it, this peer's own included (a copy of points into another shard). */
  pointsLane: (view: ClusterView, collection: string, shard: number, peer: PeerId) => ReceiverLane | null;
  /** A transfer's filter (`replicate_points`), read as the REST layer reads a request's. */
  filterOf: (wire: JsonValue) => Filter;
  /** Where this peer's snapshot transfers keep the parts they serve. */
  parts: Pick<TransferParts, 'create' | 'remove'>;
  /** A shard's content and route as a receiver restores it (Collection.restoreSpecOf); null when this peer does not hold it open. */
  restoreSpec: (collection: string, shard: number) => { spec: ShardContent; route: ShardRoute } | null;
  /** Headers a receiver downloads a part with (this peer's API key). */
  downloadHeaders: Record<string, string>;
  /** The revision of the first view this process applied: transfers created at or before it are its predecessor's. */
  firstRevision: number;
  /** Settles once this peer applied `revision` (the apply loop's wait), rejects after `timeoutMs`. */
  waitApplied: (revision: number, timeoutMs: number) => Promise<void>;
  /** Points per batch (default 100, Qdrant's batch for a stream transfer). */
  batchSize?: number;
  /** Least time between two progress comments (default 1 s). */
  commentIntervalMs?: number;
  log: { warn(message: string): void; info(message: string): void };
}

const DEFAULT_BATCH = 100;
const COMMENT_INTERVAL_MS = 1000;
/** Batches read and not yet answered by the receiver, at most (the lane holds them in memory). */
const BATCHES_AHEAD = 4;
/** How long an abort etcd does not take (no quorum, its client's circuit breaker open) is proposed again, and the pauses between. */
const ABORT_RETRY_MS = 10 * 60_000;
const ABORT_PAUSE_MS = 100;
const ABORT_PAUSE_MAX_MS = 5_000;
/** How long the clearing waits for this peer to have applied its transfer's start. */
const START_WAIT_MS = 30_000;

/** Qdrant's progress comment of a stream transfer: done/total, the time since the start, and the estimated time left. */
export function progressComment(done: number, total: number, elapsedMs: number): string {
  const all = Math.max(done, total);
  const eta = done > 0 ? `${((elapsedMs / done) * (all - done) / 1000).toFixed(2)}s` : '-';
  return `Transferring records (${done}/${all}), started ${Math.floor(elapsedMs / 1000)}s ago, ETA: ${eta}`;
}

/** One run of a transfer this peer is the source of. */
interface Run {
  transfer: ShardTransfer;
  /** This peer's replica feeding the receiver (null: it holds none). */
  proxy: TransferProxy | null;
  stopped: boolean;
  /** A comment is being stored. */
  commenting: boolean;
  /** The receiver's lane turn a delta is put in, ahead of the updates passed on, while it is kept. */
  slot: LaneSlot | null;
}

/** The same run of the same transfer: a restart (another method) is another run. */
function sameRun(a: ShardTransfer, b: ShardTransfer): boolean {
  return a.createRevision === b.createRevision && (a.record.run ?? 0) === (b.record.run ?? 0);
}

export class TransferRunner {
  private readonly runs = new Map<string, Run>();
  /** Transfers of a previous process, to abort once the view is applied. */
  private readonly orphans: ShardTransfer[] = [];
  private view: ClusterView | null = null;
  private readonly batchSize: number;
  private readonly commentIntervalMs: number;

  constructor(private readonly options: TransferRunnerOptions) {
    this.batchSize = options.batchSize ?? DEFAULT_BATCH;
    this.commentIntervalMs = options.commentIntervalMs ?? COMMENT_INTERVAL_MS;
  }

  /** Before the placement takes `view`: starts the view's new transfer runs from this peer (their first step queued at once), stops those gone. */
  prepare(view: ClusterView): void {
    this.view = view;
    // A run is kept until its transfer leaves the view: one that ended is not started again by a view from before its end.
    for (const [key, run] of this.runs) {
      if (view.transfers.some((t) => transferKey(t) === key && sameRun(t, run.transfer))) continue;
      run.stopped = true;
      // What waits behind a kept turn goes on: a restart's run queues its own start behind it.
      run.slot?.drop();
      // From now on only the updates sent from before this view go on (transfer-proxy.ts), if it finished.
      const finished = view.replicas(run.transfer.collection, receiverShard(run.transfer))?.get(run.transfer.to) === 'Active';
      this.stopSending(run, finished ? view.revision : null);
      this.runs.delete(key);
    }
    for (const transfer of view.transfers) {
      const key = transferKey(transfer);
      const current = this.runs.get(key);
      if (transfer.from !== this.options.peer || (current && sameRun(current.transfer, transfer))) continue;
      if (transfer.createRevision <= this.options.firstRevision) {
        if (!this.orphans.some((o) => sameTransfer(o, transfer))) this.orphans.push(transfer);
        continue;
      }
      const proxy = this.options.source(view, transfer.collection, transfer.shard);
      const run: Run = { transfer, proxy, stopped: false, commenting: false, slot: null };
      this.runs.set(key, run);
      // Every update queued here from now on goes to the receiver too, behind the method's first
      // step (the clearing, or the turn kept for the part or the delta) queued in the same step;
      // a copy of points into another shard registers itself as its first step (copyPoints).
      if (transfer.toShard === undefined) proxy?.feed(transfer.to);
      void this.drive(run);
    }
  }

  /** After the view is applied: aborts the transfers a previous process of this peer left. */
  settle(): void {
    for (const orphan of this.orphans.splice(0)) void this.abort(orphan, 'its source restarted');
  }

  /** Stops every transfer (the peer stops); the receivers are aborted by their own peers' recovery once this one is gone. */
  stop(): void {
    for (const run of this.runs.values()) {
      run.stopped = true;
      run.slot?.drop(new Error('the transfer\'s source stops'));
      this.stopSending(run, null);
    }
  }

  /** Ends what this peer's replica passes on to the run's receiver; `finishedAt`: the revision that made it Active (null: aborted). */
  private stopSending(run: Run, finishedAt: number | null): void {
    if (run.transfer.toShard === undefined) run.proxy?.stopFeeding(run.transfer.to, finishedAt);
    else run.proxy?.stopCopying(transferKey(run.transfer), finishedAt);
  }

  /**
   * An update this peer was to pass on to `peer` did not reach it: the transfer feeding it is
   * aborted; a receiver already Active (its transfer just ended) missed an update, so it is Dead.
   */
  relayFailed(shard: ShardId, peer: number, err: unknown): void {
    const view = this.view;
    if (view === null) return;
    const transfer = view.transferTo(shard.collection, shard.shard, peer);
    if (transfer && transfer.from === this.options.peer) {
      const run = this.runs.get(transferKey(transfer));
      if (run) run.stopped = true;
      void this.abort(transfer, `an update did not reach the receiver: ${message(err)}`);
      return;
    }
    if (view.replicas(shard.collection, shard.shard)?.get(peer) === 'Active') {
      this.options.controlPlane.setReplicaState(shard.collection, shard.shard, peer, 'Dead', ['Active'])
        .catch((e: unknown) => this.options.log.warn(`marking peer ${peer}'s replica of ${shard.collection}:${shard.shard} Dead: ${message(e)}`));
    }
  }

  /**
   * An update a copy of points was to pass on did not reach its receiver: the copy is aborted
   * (once). Once its run stopped (aborted already, or ended: a copy still passes on the updates
   * sent from before its end) it is only reported: the update stands in the source key, where its
   * sender routed it.
   */
  private copyFailed(run: Run, err: unknown): void {
    if (run.stopped) {
      this.options.log.warn(`an update did not reach the receiver of the copy ${describe(run.transfer)}, which no longer runs: ${message(err)}`);
      return;
    }
    run.stopped = true;
    void this.abort(run.transfer, `an update did not reach the receiver: ${message(err)}`);
  }

  /** Runs the transfer by its method, then finishes it (or aborts it, or falls back to a stream). */
  private async drive(run: Run): Promise<void> {
    const { transfer } = run;
    try {
      // The method's first step runs in this very step (the clearing, or the kept turn): see prepare.
      const ended = await this.bringLevel(run);
      if (!ended || run.stopped) return;
      const { ended: finished } = await this.options.controlPlane.finishTransfer(transfer, transfer.createRevision);
      // Gone already (aborted), or this peer's replica is no longer Active: aborted, if still there.
      if (!finished) throw new Error('the transfer could not be finished');
      if (!transfer.record.sync) await this.completeMove(transfer);
    } catch (err) {
      if (run.stopped) return;
      run.stopped = true;
      await this.abort(transfer, message(err));
    }
  }

  /** Runs the method's part of the transfer; false when the run stopped (or was restarted) before the end. */
  private bringLevel(run: Run): Promise<boolean> {
    if (run.transfer.toShard !== undefined) return this.copyPoints(run);
    switch (run.transfer.record.method) {
      case 'stream_records':
        return this.streamRecords(run);
      case 'snapshot':
        return this.sendSnapshot(run);
      case 'wal_delta':
        return this.replayDelta(run);
    }
  }

  /**
   * Keeps the receiver's next lane turn and writes this replica's shard part, both in this very
   * step (so the part holds exactly what precedes the updates passed on), then has the receiver
   * download and restore it in that turn, taking on this replica's clock map with the opening.
   */
  private async sendSnapshot(run: Run): Promise<boolean> {
    const { transfer, proxy } = run;
    const startedAt = Date.now();
    if (proxy === null) throw new Error('this peer holds no replica of the shard');
    const { slot, mark } = proxy.hold(transfer.to);
    run.slot = slot;
    const part = this.options.parts.create();
    const written = proxy.inner.run({ type: 'snapshot', path: part.path }, null);
    mark.catch(() => undefined); // awaited below
    written.catch(() => undefined); // awaited below
    try {
      const [{ clocks }, { points, lastOp }] = await Promise.all([mark, written]);
      const restore = this.options.restoreSpec(transfer.collection, transfer.shard);
      const uri = this.view?.peers.get(this.options.peer)?.uri;
      if (restore === null || uri === undefined) throw new Error('this peer does not hold the shard open');
      await this.options.waitApplied(transfer.createRevision, START_WAIT_MS);
      if (run.stopped) return false;
      this.comment(run, progressComment(0, points, Date.now() - startedAt));
      const { size } = await stat(part.path);
      const remote = { url: TransferParts.url(uri, basename(part.path)), headers: this.options.downloadHeaders, size };
      await slot.put({ type: 'restore', spec: restore.spec, part: remote, lastOp, route: restore.route });
      if (run.stopped) return false;
      const tag = transferClock(this.options.peer, transferClockOf(transfer));
      slot.fill({ type: 'apply', ops: [], opId: 0, clock: tag(1), adopt: clocks, wait: true, dryRun: false });
      await slot.sent;
      this.comment(run, progressComment(points, points, Date.now() - startedAt));
      this.options.log.info(`snapshot transfer of ${describe(transfer)}: ${points} points restored from a part of ${size} bytes`);
      return true;
    } catch (err) {
      // Nothing behind the kept turn may reach the receiver without the part.
      slot.drop(err);
      throw err;
    } finally {
      await this.options.parts.remove(part.path);
    }
  }

  /** Clears the receiver and streams every record; answers once all reached it. */
  private async streamRecords(run: Run): Promise<boolean> {
    const { transfer, proxy } = run;
    // When this peer's task started, as Qdrant counts it (not the proposer's clock).
    const startedAt = Date.now();
    if (proxy === null) throw new Error('this peer holds no replica of the shard');
    const tag = transferClock(this.options.peer, transferClockOf(transfer));
    let tick = 1;
    // Every request carries the revision its sender applied, and the receiver serves it once it
    // applied that too: sent after this peer applied the start, the receiver is Partial by then.
    const started = this.options.waitApplied(transfer.createRevision, START_WAIT_MS);
    const cleared = proxy.clear(transfer.to, tag(tick++), started);
    const total = await proxy.inner.run({ type: 'count', filter: null }, null);
    return this.streamBatches(run, cleared, total, startedAt, (from) => proxy.batch(transfer.to, from, this.batchSize, tag(tick++)));
  }

  /**
   * Copies the points of the source shard that match the transfer's filter into the receiver's
   * replica of another shard (`replicate_points`): no clearing (the receiver keeps its own
   * points), the matching points streamed, and every update applied here meanwhile passed on as
   * src/replica/points-copy.ts says; answers once all reached it.
   */
  private async copyPoints(run: Run): Promise<boolean> {
    const { transfer, proxy } = run;
    const startedAt = Date.now();
    if (proxy === null) throw new Error('this peer holds no replica of the shard');
    const into = receiverShard(transfer);
    const lane = this.view === null ? null : this.options.pointsLane(this.view, transfer.collection, into, transfer.to);
    if (lane === null) throw new Error(`no lane to peer ${transfer.to}'s replica of shard ${into}`);
    const filter = transfer.record.filter === undefined ? null : this.options.filterOf(transfer.record.filter);
    const opening = transferClock(this.options.peer, transferClockOf(transfer))(1);
    const tag = transferClock(this.options.peer, copyClockId(transfer.createRevision));
    let tick = 0;
    const copy = proxy.copyPoints(transferKey(transfer), lane, filter, { opening, next: () => tag(++tick) }, (err) => this.copyFailed(run, err));
    const opened = copy.open(this.options.waitApplied(transfer.createRevision, START_WAIT_MS));
    const total = await proxy.inner.run({ type: 'count', filter }, null);
    return this.streamBatches(run, opened, total, startedAt, (from) => copy.batch(from, this.batchSize));
  }

  /** Queues batch after batch (`next`) behind `first`, a bounded number ahead, commenting the progress; false when the run stopped first. */
  private async streamBatches(run: Run, first: Promise<void>, total: number, startedAt: number, next: (from: PointId | null) => QueuedBatch): Promise<boolean> {
    first.catch(() => undefined); // awaited below; a failure stops the run there
    const sends: Promise<void>[] = [first];
    let done = 0;
    let from: PointId | null = null;
    let lastComment = 0;
    for (;;) {
      if (run.stopped) return false;
      const batch = next(from);
      sends.push(batch.sent);
      batch.sent.catch(() => undefined); // awaited below; a failure stops the run there
      const { count, next: after } = await batch.read;
      done += count;
      if (Date.now() - lastComment >= this.commentIntervalMs) {
        lastComment = Date.now();
        this.comment(run, progressComment(done, total, Date.now() - startedAt));
      }
      if (after === null) break;
      from = after;
      if (sends.length > BATCHES_AHEAD) await sends[sends.length - 1 - BATCHES_AHEAD];
    }
    await Promise.all(sends);
    return true;
  }

  /**
   * Keeps the receiver's next lane turn (in this very step, with the mark of where this replica
   * stands), replays the receiver's delta in it, and closes it with the run's own clock; a log
   * that cannot serve the delta, or a replay that fails, restarts the transfer as a stream.
   */
  private async replayDelta(run: Run): Promise<boolean> {
    const { transfer, proxy } = run;
    const startedAt = Date.now();
    if (proxy === null) throw new Error('this peer holds no replica of the shard');
    const { lane, slot, mark } = proxy.hold(transfer.to);
    run.slot = slot;
    mark.catch(() => undefined); // awaited below
    let sent = 0;
    try {
      await this.options.waitApplied(transfer.createRevision, START_WAIT_MS);
      const [point, own] = await Promise.all([lane.recoveryPoint(), mark]);
      const { from, behind } = resolveDelta(point, own);
      let lastComment = 0;
      const progress = (done: number, total: number) => {
        if (Date.now() - lastComment < this.commentIntervalMs) return;
        lastComment = Date.now();
        this.comment(run, progressComment(done, total, Date.now() - startedAt));
      };
      if (behind) sent = await sendDelta({ source: proxy.inner, slot, mark: own, from, stopped: () => run.stopped, progress });
    } catch (err) {
      if (run.stopped) return false;
      run.stopped = true;
      // Nothing behind the kept turn may reach the receiver without the delta: it would take ticks past what it misses.
      slot.drop(err);
      await this.fallBack(transfer, message(err));
      return false;
    }
    if (run.stopped) return false;
    const tag = transferClock(this.options.peer, transferClockOf(transfer));
    slot.fill({ type: 'apply', ops: [], opId: 0, clock: tag(1), wait: true, dryRun: false });
    await slot.sent;
    this.options.log.info(`wal_delta transfer of ${describe(transfer)}: ${sent} operations replayed from the log`);
    return true;
  }

  /** A `wal_delta` that cannot go on restarts as a `stream_records` (Qdrant's fallback); aborted if that is refused. */
  private async fallBack(transfer: ShardTransfer, reason: string): Promise<void> {
    this.options.log.info(`wal_delta transfer of ${describe(transfer)} falls back to stream_records: ${reason}`);
    try {
      const { restarted } = await this.options.controlPlane.restartTransfer(transfer, 'stream_records', transfer.createRevision);
      if (restarted) return;
    } catch (err) {
      this.options.log.warn(`restarting the transfer of ${describe(transfer)} as stream_records: ${message(err)}`);
    }
    await this.abort(transfer, reason);
  }

  /**
   * A move's source leaves the shard once its receiver is Active. If that fails, the shard keeps
   * both replicas (as a replication would): nothing is lost, and a `drop_replica` ends the move.
   */
  private async completeMove(transfer: ShardTransfer): Promise<void> {
    try {
      await this.options.controlPlane.completeMove(transfer);
    } catch (err) {
      this.options.log.warn(`the move of ${describe(transfer)} ended with both replicas Active: ${message(err)}`);
    }
  }

  /** Stores progress unless the previous comment is still being stored (comments are a display, not a log). */
  private comment(run: Run, text: string): void {
    if (run.commenting) return;
    run.commenting = true;
    const { transfer } = run;
    void this.options.controlPlane.setTransferComment(transfer, transfer.createRevision, text)
      .catch((err: unknown) => this.options.log.warn(`storing the progress of ${describe(transfer)}: ${message(err)}`))
      .finally(() => {
        run.commenting = false;
      });
  }

  /**
   * Proposes the abort until etcd takes it (or the transfer left the view another way), bounded:
   * a transfer left under way with nobody running it would keep its receiver Partial, and count
   * against both peers' transfer limits, for good (the receiver's recovery aborts it only once
   * this peer's replica is gone or not Active).
   */
  private async abort(transfer: ShardTransfer, reason: string): Promise<void> {
    this.options.log.warn(`aborting the transfer of ${describe(transfer)}: ${reason}`);
    const end = Date.now() + ABORT_RETRY_MS;
    for (let pause = ABORT_PAUSE_MS; ; pause = Math.min(pause * 2, ABORT_PAUSE_MAX_MS)) {
      try {
        await this.options.controlPlane.abortTransfer(transfer, transfer.createRevision);
        return;
      } catch (err) {
        const stillThere = this.view?.transfers.some((t) => sameTransfer(t, transfer) && t.createRevision === transfer.createRevision) ?? true;
        if (!stillThere || Date.now() + pause > end) {
          if (stillThere) this.options.log.warn(`the transfer of ${describe(transfer)} could not be aborted: ${message(err)}`);
          return;
        }
        // A pause does not keep a stopping process alive.
        await sleep(pause, undefined, { ref: false });
      }
    }
  }
}

function describe(transfer: ShardTransfer): string {
  const into = transfer.toShard === undefined ? '' : ` (into shard ${transfer.toShard})`;
  return `shard ${transfer.collection}:${transfer.shard} from peer ${transfer.from} to peer ${transfer.to}${into}`;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
