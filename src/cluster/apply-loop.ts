// One peer's ordered application of the cluster's shared state (plan 3.3).
//
// It reads the whole prefix at a revision R, hands that view to `onApply`, then watches the
// prefix from R+1 and hands over each later revision's view, one revision at a time, in order,
// each only after `onApply` finished with the previous one: the events of one revision (a
// transaction changes several keys) arrive together. Requests that made a change wait with
// `waitApplied(revision)` until their own peer applied it.
//
// When the watch cannot go on (etcd compacted the history past the next revision, or the stream
// broke), or `onApply` failed, the loop reads the whole prefix again (after a bounded backoff,
// until it succeeds or the loop stops) and hands over that view with what changed since the last
// view applied: `onApply` must be idempotent (it compares the view with what the peer holds).

import type { IWatchResponse, Namespace, Watcher } from 'etcd3';
import { ServiceError } from '../errors.js';
import { changesBetween, readClusterView, storedValue, ClusterView, type ClusterChanges, type KeyEvent } from './cluster-view.js';

/** Applies one view; `changes` are from the view applied before. The loop awaits it. */
export type ApplyCallback = (view: ClusterView, changes: ClusterChanges, revision: number) => Promise<void>;

export interface ApplyLoopOptions {
  /** The client under the cluster prefix (keys.ts `clusterNamespace`). */
  namespace: Namespace;
  onApply: ApplyCallback;
  /** The view this peer applied before (changes of the first view are counted from it); default empty. */
  initialView?: ClusterView;
  /** Called with each failure the loop recovers from (a broken watch, a failed read or apply). */
  onError?: (err: Error) => void;
  /** First and longest wait before reading again after a failure (default 50 ms and 2 s). */
  retryInitialMs?: number;
  retryMaxMs?: number;
}

interface Waiter {
  revision: number;
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

const STOP_CANCEL_MS = 1000;

export class ApplyLoop {
  private view: ClusterView;
  private readonly onApply: ApplyCallback;
  private readonly namespace: Namespace;
  private readonly onError: (err: Error) => void;
  private readonly retryInitialMs: number;
  private readonly retryMaxMs: number;
  private retryMs: number;
  /** Each watch (and each recovery) gets a new generation; jobs and events of an older one are dropped. */
  private generation = 0;
  private watcher: Watcher | null = null;
  /** Every change of local state runs here, one job after another. */
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly waiters = new Set<Waiter>();
  private stopped = false;
  private started: Promise<void> | null = null;
  private firstApplied: { resolve: () => void; reject: (err: Error) => void } | null = null;
  private lastUpdateAt: Date | null = null;
  private lastErrorSeen: Error | null = null;

  constructor(options: ApplyLoopOptions) {
    this.namespace = options.namespace;
    this.onApply = options.onApply;
    this.view = options.initialView ?? ClusterView.empty();
    this.onError = options.onError ?? (() => {});
    this.retryInitialMs = options.retryInitialMs ?? 50;
    this.retryMaxMs = options.retryMaxMs ?? 2000;
    this.retryMs = this.retryInitialMs;
  }

  /** The last view handed to `onApply` (or advanced by a progress notification). */
  get current(): ClusterView {
    return this.view;
  }

  /** The revision applied: every change up to it is in the peer's state. */
  get appliedRevision(): number {
    return this.view.revision;
  }

  /** Events received and not yet applied (`/cluster`'s `pending_operations`). */
  get pendingOperations(): number {
    return this.pending;
  }

  /** When etcd last answered the loop (a read or any watch message, progress notifications included). */
  get lastUpdate(): Date | null {
    return this.lastUpdateAt;
  }

  /** The last failure the loop recovered from or is recovering from; null once a recovery succeeded. */
  get lastError(): Error | null {
    return this.lastErrorSeen;
  }

  /** Starts the loop; settles once the first view is applied (rejected if the loop stops first). */
  start(): Promise<void> {
    if (this.stopped) return Promise.reject(stoppedError());
    if (!this.started) {
      this.started = new Promise<void>((resolve, reject) => {
        this.firstApplied = { resolve, reject };
      });
      this.enqueue(this.generation, () => this.resync());
    }
    return this.started;
  }

  /**
   * Settles once `revision` is applied; rejects after `timeoutMs` with the error Qdrant gives when
   * a consensus operation did not commit in time, or when the loop stops.
   */
  waitApplied(revision: number, timeoutMs: number): Promise<void> {
    if (this.view.revision >= revision) return Promise.resolve();
    if (this.stopped) return Promise.reject(stoppedError());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        revision, resolve, reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(new ServiceError(`Waiting for consensus operation commit failed. Timeout set at: ${timeoutMs / 1000} seconds`));
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /**
   * Reads the whole control plane again and applies it even if nothing changed since the last
   * view (the reconcile compares it with what this peer holds), then watches from there; settles
   * once that view is applied, rejects after `timeoutMs`.
   */
  async resynchronize(timeoutMs: number): Promise<void> {
    if (this.stopped) throw stoppedError();
    this.generation++;
    this.pending = 0;
    await this.closeWatch();
    const generation = this.generation;
    let settle!: { resolve: () => void; reject: (err: Error) => void };
    const applied = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    this.enqueue(generation, async () => {
      try {
        await this.resync(true);
        settle.resolve();
      } catch (err) {
        settle.reject(err instanceof Error ? err : new Error(String(err)));
        throw err;
      }
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ServiceError(`the control plane was not read again within ${timeoutMs / 1000} seconds`)), timeoutMs);
    });
    try {
      await Promise.race([applied, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops watching, waits for the apply under way, rejects every waiter; leaves no timer behind. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.generation++;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.closeWatch();
    await this.queue;
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(stoppedError());
    }
    this.waiters.clear();
    this.firstApplied?.reject(stoppedError());
    this.firstApplied = null;
  }

  private enqueue(generation: number, job: () => Promise<void>): void {
    this.queue = this.queue.then(async () => {
      if (generation !== this.generation || this.stopped) return;
      try {
        await job();
      } catch (err) {
        if (generation === this.generation && !this.stopped) await this.recover(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  /**
   * Reads everything, applies it with the changes since the last view (`always`: even at the
   * revision already applied), and watches from the next revision.
   */
  private async resync(always = false): Promise<void> {
    const generation = this.generation;
    const view = await readClusterView(this.namespace);
    this.lastUpdateAt = new Date();
    // etcd answers again; a failing onApply below sets it again.
    this.lastErrorSeen = null;
    if (always || view.revision > this.view.revision) await this.apply(view);
    if (generation !== this.generation) return; // stopped meanwhile: no new watch
    this.retryMs = this.retryInitialMs;
    this.watch(view.revision + 1);
    this.firstApplied?.resolve();
    this.firstApplied = null;
  }

  private async apply(view: ClusterView, done?: () => void): Promise<void> {
    await this.onApply(view, changesBetween(this.view, view), view.revision);
    done?.();
    this.advance(view);
  }

  /** Makes `view` the one applied and answers the waiters it satisfies. */
  private advance(view: ClusterView): void {
    this.view = view;
    for (const waiter of this.waiters) {
      if (waiter.revision > view.revision) continue;
      clearTimeout(waiter.timer);
      this.waiters.delete(waiter);
      waiter.resolve();
    }
  }

  private watch(fromRevision: number): void {
    const generation = this.generation;
    const watcher = this.namespace.watch().prefix('').startRevision(String(fromRevision)).watcher();
    this.watcher = watcher;
    watcher.on('data', (response: IWatchResponse) => {
      if (generation !== this.generation) return;
      this.lastUpdateAt = new Date();
      this.received(generation, response);
    });
    // A compacted history cancels the watch (the client already dropped it); a broken stream
    // would be reopened by the client from a revision it guesses, so the loop reads everything instead.
    watcher.on('error', (err: Error) => this.failed(generation, err, false));
    watcher.on('disconnected', (err: Error) => this.failed(generation, err, true));
  }

  /** Queues one watch message: its events grouped by revision, each group one apply. */
  private received(generation: number, response: IWatchResponse): void {
    const byRevision = new Map<number, KeyEvent[]>();
    for (const event of response.events) {
      const revision = Number(event.kv.mod_revision);
      const key = event.kv.key.toString();
      const list = byRevision.get(revision) ?? [];
      list.push(event.type === 'Delete' ? { type: 'delete', key } : { type: 'put', key, value: storedValue(event.kv) });
      byRevision.set(revision, list);
    }
    if (byRevision.size === 0) {
      // A progress notification: everything up to its revision was sent, and nothing changed.
      const revision = Number(response.header.revision);
      this.enqueue(generation, async () => {
        if (revision > this.view.revision) this.advance(this.view.at(revision));
      });
      return;
    }
    for (const [revision, events] of [...byRevision].sort(([a], [b]) => a - b)) {
      this.pending += events.length;
      this.enqueue(generation, async () => {
        // Counted out before the waiters hear of it; a recovery meanwhile already zeroed the count.
        const counted = () => {
          if (generation === this.generation) this.pending -= events.length;
        };
        if (revision > this.view.revision) await this.apply(this.view.withEvents(revision, events), counted);
        else counted(); // already in a view read after a recovery
      });
    }
  }

  private failed(generation: number, err: Error, stillAttached: boolean): void {
    if (generation !== this.generation || this.stopped) return;
    if (!stillAttached) this.watcher = null;
    void this.recover(err);
  }

  /** Drops the watch and what it queued, and reads everything again after the backoff. */
  private async recover(err: Error): Promise<void> {
    this.lastErrorSeen = err;
    this.onError(err);
    this.generation++;
    this.pending = 0;
    await this.closeWatch();
    if (this.stopped) return;
    const generation = this.generation;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.retryMaxMs);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.enqueue(generation, () => this.resync());
    }, delay);
  }

  /** Cancels the watch; bounded, since a cancel on a broken stream may never be answered. */
  private async closeWatch(): Promise<void> {
    const watcher = this.watcher;
    this.watcher = null;
    if (!watcher) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      watcher.cancel().catch(() => {}),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, STOP_CANCEL_MS); }),
    ]);
    clearTimeout(timer);
  }
}

function stoppedError(): ServiceError {
  return new ServiceError('the cluster apply loop stopped');
}
