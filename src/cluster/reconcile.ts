// A peer's reconcile: what the apply loop (apply-loop.ts) calls with each view of the control
// plane, to make this peer's local state what the view says (plan 3.3). Every peer holds every
// collection (it serves and routes any request); it opens the shards the view places on it, and
// proposes its replicas Initializing -> Active once they are open. It compares the view with what
// the peer holds, not the changes since the last view, so a restart (or a loop that read
// everything again) converges the same way: a collection deleted meanwhile is dropped, one
// created meanwhile is opened.
//
// The local work runs here, inside the loop's job, with the same CollectionManager and Collection
// methods a single node's requests use (they take the collection's gate); a request in cluster
// mode only proposes and waits (cluster-catalog.ts), so no gate is ever held while waiting on etcd
// (risk R5).

import type { CollectionManager, CollectionRecord } from '../collection/manager.js';
import type { Collection } from '../collection/collection.js';
import { ServiceError, type QuiverError } from '../errors.js';
import type { ReplicaState } from '../replica/replica.js';
import { ClusterView, type ClusterChanges } from './cluster-view.js';
import type { ReplicaStateChange } from './control-plane.js';
import type { PeerId } from './keys.js';

/** The control-plane changes a reconcile proposes: its replicas becoming Active once open, and Listener on a Listener peer. */
export interface ReplicaActivation {
  setReplicaState(collection: string, shard: number, peer: PeerId, state: ReplicaState, from: readonly ReplicaState[] | null): Promise<ReplicaStateChange>;
  becomeListener(collection: string, shard: number, peer: PeerId): Promise<unknown>;
}

export interface ReconcilerOptions {
  peerId: PeerId;
  collections: CollectionManager;
  controlPlane: ReplicaActivation;
  /**
   * A Listener peer (`storage.node_type`): each of its Active replicas becomes Listener once
   * another replica of its shard is Active (a shard keeps one that serves reads), as Qdrant's do.
   */
  listener?: boolean;
  /**
   * A local change that failed (the collection is named). The reconcile goes on with the others,
   * and tries again with the next view (a failure that lasts, such as this node's strict mode
   * refusing an index the cluster created, leaves this peer behind on that collection only).
   */
  onError?: (err: Error, collection: string | null) => void;
}

interface ViewWaiter {
  until: (view: ClusterView) => boolean;
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class Reconciler {
  private current = ClusterView.empty();
  private readonly waiters = new Set<ViewWaiter>();
  private readonly peerId: PeerId;
  private readonly collections: CollectionManager;
  private readonly controlPlane: ReplicaActivation;
  private readonly onError: (err: Error, collection: string | null) => void;
  private readonly listener: boolean;

  constructor(options: ReconcilerOptions) {
    this.listener = options.listener ?? false;
    this.peerId = options.peerId;
    this.collections = options.collections;
    this.controlPlane = options.controlPlane;
    this.onError = options.onError ?? (() => {});
  }

  /**
   * The view being applied, or the last one applied: where a cluster placement reads which peers
   * hold each shard when the reconcile opens a collection.
   */
  get view(): ClusterView {
    return this.current;
  }

  /** The apply loop's callback (ApplyCallback). */
  readonly onApply = async (view: ClusterView, _changes: ClusterChanges, _revision: number): Promise<void> => {
    this.current = view;
    const names = [...view.collections.keys()];
    for (const name of this.collections.names()) {
      const record = view.collections.get(name);
      if (!record || record.storageId !== this.collections.held(name)?.storageId) await this.attempt(name, () => this.collections.delete(name));
    }
    for (const name of names) await this.attempt(name, () => this.reconcileCollection(view.collections.get(name)!, view));
    await this.attempt(null, () => this.collections.setAliases(view.aliases));
    await Promise.all(names.map((name) => this.activate(name, view)));
    this.answerWaiters(view);
  };

  private async attempt(collection: string | null, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.onError(err instanceof Error ? err : new Error(String(err)), collection);
    }
  }

  /** Opens a collection this peer does not hold, or brings the one it holds to the view's record. */
  private async reconcileCollection(record: CollectionRecord, view: ClusterView): Promise<void> {
    const held = this.collections.held(record.name);
    if (!held) {
      await this.collections.adopt(record);
      return;
    }
    // Its shards were placed before the view placed them (a restart opens before etcd answers).
    if (!this.placedAsViewSays(this.collections.get(record.name), view)) await this.collections.adopt(held, true);
    // Before this view is applied, so that a transfer's first batch, sent once it is, finds its receiver open.
    await this.collections.get(record.name).openJoinedReplicas();
    if (JSON.stringify(held) !== JSON.stringify(record)) await this.collections.applyRecord(record);
  }

  /** Whether every shard the collection has holds a replica here exactly when the view places one here. */
  private placedAsViewSays(collection: Collection, view: ClusterView): boolean {
    const entries = view.shards.get(collection.name);
    return collection.shards.every((s) => {
      const entry = entries?.get(s.id);
      return !entry || (entry.replicas[String(this.peerId)] !== undefined) === (s.localReplica !== undefined);
    });
  }

  /**
   * Proposes Active for this peer's replicas of `name` still Initializing, once they are open
   * here; on a Listener peer, Listener for its Active ones whose shard has another Active replica
   * (one that just became Active, after its creation or a transfer, turns at the next view).
   */
  private async activate(name: string, view: ClusterView): Promise<void> {
    if (!this.collections.exists(name)) return;
    const open = new Set(this.collections.get(name).shards.filter((s) => s.localReplica).map((s) => s.id));
    const own = String(this.peerId);
    const entries = [...(view.shards.get(name) ?? [])].filter(([shard]) => open.has(shard));
    const pending = entries.filter(([, entry]) => entry.replicas[own] === 'Initializing');
    const listening = this.listener
      ? entries.filter(([, entry]) => entry.replicas[own] === 'Active' && Object.entries(entry.replicas).some(([peer, state]) => peer !== own && state === 'Active'))
      : [];
    await Promise.all([
      ...pending.map(([shard]) => this.attempt(name, () => this.controlPlane.setReplicaState(name, shard, this.peerId, 'Active', ['Initializing']))),
      ...listening.map(([shard]) => this.attempt(name, () => this.controlPlane.becomeListener(name, shard, this.peerId))),
    ]);
  }

  /**
   * Settles once a view this peer applied satisfies `until` (the current one included); rejects
   * with `onTimeout()` after `timeoutMs`, or when the reconciler stops.
   */
  waitFor(until: (view: ClusterView) => boolean, timeoutMs: number, onTimeout: () => QuiverError): Promise<void> {
    if (until(this.current)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: ViewWaiter = {
        until, resolve, reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(onTimeout());
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  private answerWaiters(view: ClusterView): void {
    for (const waiter of this.waiters) {
      if (!waiter.until(view)) continue;
      clearTimeout(waiter.timer);
      this.waiters.delete(waiter);
      waiter.resolve();
    }
  }

  /** Rejects every waiter (the peer stops); leaves no timer behind. */
  stop(): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new ServiceError('the cluster reconcile stopped'));
    }
    this.waiters.clear();
  }
}
