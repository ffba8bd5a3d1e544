// Where a collection's shards live on a cluster peer: each shard's replica set holds this peer's
// local replica when the control plane's view places one here, and a RemoteReplica for every
// other peer the view places one on (reached at that peer's p2p URI); the states are the view's
// (view-replica-states.ts). A set's membership is not frozen when it is built: the placement keeps
// each set's replica list and rewrites it from every view applied (`applyView`), so replicas that
// move between peers (issue 18) or peers that change URI reach the sets already serving, without
// rebuilding the collection and losing its write order. One RemoteReplica exists per (collection,
// shard, peer): it alone orders that replica's updates (src/peer/remote-replica.ts).

import type { ShardKey } from '../model.js';
import type { P2pClient } from '../peer/p2p-client.js';
import type { LocalShard } from '../peer/p2p-server.js';
import { RemoteReplica, type RemoteReplicaOptions } from '../peer/remote-replica.js';
import { LocalPlacement } from '../replica/local-placement.js';
import { TransferProxy } from '../replica/transfer-proxy.js';
import { OperationClock } from '../replica/operation-clock.js';
import { ReplicaSet, type ReplicaSetParams } from '../replica/replica-set.js';
import type { ShardReplica } from '../replica/replica.js';
import type { ShardId } from '../replica/shard-id.js';
import type { ShardPlacement } from '../replica/shard-placement.js';
import type { ShardWorkers } from '../worker/pool.js';
import { ClusterView, transferClockOf } from './cluster-view.js';
import { SourceLapses } from './source-lapses.js';
import { replicaStateIn, ViewReplicaStates, type AppliedViews, type StateProposer } from './view-replica-states.js';

export interface ClusterPlacementOptions {
  storagePath: string;
  workers: ShardWorkers;
  /** This peer's id. */
  peer: number;
  /** This start's incarnation (src/cluster/node-identity.ts): the clock id of this peer's write tags. */
  incarnation: number;
  /** Where a failed replica is proposed Dead. */
  proposer: StateProposer;
  /** Waits until this peer applied a revision (the apply loop's `waitApplied`). */
  waitApplied: AppliedViews['waitApplied'];
  /** Reaches the other peers. */
  client: P2pClient;
  /** The view already applied when the placement starts (default: empty; `applyView` brings the next ones). */
  view?: ClusterView;
  /**
   * An update this peer's replica of `shard` was asked to pass on to `peer` (a transfer's
   * receiver) did not reach it (src/replica/transfer-proxy.ts).
   */
  onRelayFailed?: (shard: ShardId, peer: number, err: unknown) => void;
  /** Dropping this peer's copy of a shard it no longer holds failed (its folder stays). */
  onDropFailed?: (shard: ShardId, err: unknown) => void;
  /** How long a failed replica's mark waits to be applied (default Qdrant's deactivation timeout). */
  deactivationTimeoutMs?: number;
  remoteOptions?: RemoteReplicaOptions;
}

/** A set's replicas, as the placement keeps them current. */
interface Membership {
  shard: ShardId;
  storageId: string;
  /** The very array the set holds: rewritten in place. */
  replicas: ShardReplica[];
  /** Its replicas' lapses from source of truth in every view applied since the set was made. */
  lapses: SourceLapses;
}

function shardKeyOf(storageId: string, shard: number): string {
  return `${storageId}\0${shard}`;
}

export class ClusterPlacement implements ShardPlacement, AppliedViews {
  /** This peer's own replicas and folders. */
  readonly local: LocalPlacement;
  readonly peer: number;
  private current: ClusterView;
  private readonly memberships = new Map<string, Membership>();
  /** By storage id, shard and peer. */
  private readonly remotes = new Map<string, RemoteReplica>();
  /** This peer's replicas, each able to feed a transfer's receiver. */
  private readonly locals = new Map<string, TransferProxy>();

  constructor(private readonly options: ClusterPlacementOptions) {
    this.peer = options.peer;
    this.local = new LocalPlacement(options.storagePath, options.workers, options.peer);
    this.current = options.view ?? ClusterView.empty();
  }

  get workers(): ShardWorkers {
    return this.options.workers;
  }

  /** The view the data path reads: the last one given to `applyView`. */
  view(): ClusterView {
    return this.current;
  }

  waitApplied(revision: number, timeoutMs: number): Promise<void> {
    return this.options.waitApplied(revision, timeoutMs);
  }

  /**
   * Takes a newly applied view: the states every set reads, and each set's replicas rewritten
   * from it. Call it first in the apply loop's `onApply`, before the reconcile builds or opens
   * anything of that view.
   */
  applyView(view: ClusterView): void {
    this.current = view;
    for (const membership of this.memberships.values()) {
      // A shard the view no longer has (its collection deleted or re-created, its key dropped)
      // keeps its replicas: the reconcile's drop of it must still reach this peer's copy.
      const placed = this.placedIn(view, membership.shard, membership.storageId);
      membership.lapses.observe(view.revision, placed ? view.shards.get(membership.shard.collection)!.get(membership.shard.shard)!.replicas : null);
      if (!placed) continue;
      const replicas = this.replicasIn(view, membership.shard, membership.storageId);
      const local = membership.replicas.find((r) => r.peer === this.peer);
      membership.replicas.splice(0, membership.replicas.length, ...replicas);
      if (local && !replicas.includes(local)) this.dropLeft(membership, local);
    }
  }

  /**
   * This peer's replica of a shard that still exists left it (moved away, or dropped by an
   * operator): its worker closes it and its folder goes. The set no longer sends it anything, and
   * a task already queued on the worker runs before the drop. Should it come back here later, it
   * comes back empty, filled by its transfer.
   */
  private dropLeft(membership: Membership, local: ShardReplica): void {
    this.locals.delete(shardKeyOf(membership.storageId, membership.shard.shard));
    local.run({ type: 'drop' }, null).catch((err: unknown) => this.options.onDropFailed?.(membership.shard, err));
  }

  private placedIn(view: ClusterView, shard: ShardId, storageId: string): boolean {
    return view.collections.get(shard.collection)?.storageId === storageId && view.shards.get(shard.collection)?.has(shard.shard) === true;
  }

  /** A collection's clock: this peer's id and this start's incarnation, so no restart reuses a tag. */
  newClock(): OperationClock {
    return new OperationClock(this.peer, this.options.incarnation);
  }

  /** Shard `shard`'s replica set as the current view places it; it follows the later views. */
  replicaSet(shard: ShardId, storageId: string, params: () => ReplicaSetParams, shardKey?: ShardKey): ReplicaSet {
    const key = shardKeyOf(storageId, shard.shard);
    let membership = this.memberships.get(key);
    if (!membership) {
      membership = { shard, storageId, replicas: this.replicasIn(this.current, shard, storageId), lapses: new SourceLapses() };
      this.memberships.set(key, membership);
    }
    const states = new ViewReplicaStates(shard, storageId, this, this.options.proposer, membership.lapses, this.options.deactivationTimeoutMs);
    return new ReplicaSet(shard, membership.replicas, { peer: this.peer, states, params, shardKey, deactivationTimeoutMs: this.options.deactivationTimeoutMs, localLifecycle: true });
  }

  /** This peer's replica of a collection's shard and its state (and, fed by a transfer, since when), or null when the view places none here. */
  localShard(collection: string, shard: number): LocalShard | null {
    const storageId = this.current.collections.get(collection)?.storageId;
    if (storageId === undefined) return null;
    const id = { collection, shard };
    const state = replicaStateIn(this.current, id, storageId, this.peer);
    if (state === undefined) return null;
    const transfer = this.current.transferTo(collection, shard, this.peer);
    return { replica: this.localReplica(id, storageId), state, ...(transfer ? { transfer: { source: transfer.from, since: transfer.createRevision, clockId: transferClockOf(transfer) } } : {}) };
  }

  /** Forgets the collection's sets and remote replicas, and removes its local folder. */
  async removeCollection(storageId: string): Promise<void> {
    const prefix = `${storageId}\0`;
    for (const map of [this.memberships, this.remotes, this.locals]) {
      for (const key of map.keys()) if (key.startsWith(prefix)) map.delete(key);
    }
    await this.local.removeCollection(storageId);
  }

  removeOrphans(kept: ReadonlyMap<string, readonly number[]>): Promise<string[]> {
    return this.local.removeOrphans(kept);
  }

  /** The replicas `view` gives a shard, in peer order: this peer's local one, the others' remote ones. */
  private replicasIn(view: ClusterView, shard: ShardId, storageId: string): ShardReplica[] {
    if (view.collections.get(shard.collection)?.storageId !== storageId) return [];
    const entry = view.shards.get(shard.collection)?.get(shard.shard);
    const replicas: ShardReplica[] = [];
    for (const peer of Object.keys(entry?.replicas ?? {}).map(Number).sort((a, b) => a - b)) {
      if (peer === this.peer) {
        replicas.push(this.localReplica(shard, storageId));
        continue;
      }
      // Every peer a shard is placed on is registered (the control plane places over the peer table).
      const uri = view.peers.get(peer)?.uri;
      if (uri !== undefined) replicas.push(this.remoteReplica(shard, storageId, peer, uri));
    }
    return replicas;
  }

  private localReplica(shard: ShardId, storageId: string): TransferProxy {
    const key = shardKeyOf(storageId, shard.shard);
    let replica = this.locals.get(key);
    if (!replica) {
      replica = new TransferProxy(
        this.local.replica(shard, storageId),
        (peer) => this.laneTo(shard, storageId, peer),
        (peer, err) => this.options.onRelayFailed?.(shard, peer, err),
      );
      this.locals.set(key, replica);
    }
    return replica;
  }

  /** The one lane to `peer`'s replica of a shard, at its URI in the current view. */
  private laneTo(shard: ShardId, storageId: string, peer: number): RemoteReplica | null {
    const uri = this.current.peers.get(peer)?.uri;
    return uri === undefined || peer === this.peer ? null : this.remoteReplica(shard, storageId, peer, uri);
  }

  /**
   * This peer's replica of a shard as `view` places it, to feed a transfer from; null when the
   * view places none here.
   */
  transferSource(view: ClusterView, collection: string, shard: number): TransferProxy | null {
    const storageId = view.collections.get(collection)?.storageId;
    const id = { collection, shard };
    if (storageId === undefined || replicaStateIn(view, id, storageId, this.peer) === undefined) return null;
    return this.localReplica(id, storageId);
  }

  /**
   * The lane to `peer`'s replica of a shard as `view` places it, this peer's own included: the
   * receiver of a copy of points from another shard (`replicate_points`) takes it over p2p like
   * any receiver, whichever peer holds it, so the p2p server's checks and order hold for it too.
   */
  pointsLane(view: ClusterView, collection: string, shard: number, peer: number): RemoteReplica | null {
    const storageId = view.collections.get(collection)?.storageId;
    const uri = view.peers.get(peer)?.uri;
    const id = { collection, shard };
    if (storageId === undefined || uri === undefined || replicaStateIn(view, id, storageId, peer) === undefined) return null;
    return this.remoteReplica(id, storageId, peer, uri);
  }

  /** The one RemoteReplica of (collection, shard, peer); a new one only if the peer's URI changed. */
  private remoteReplica(shard: ShardId, storageId: string, peer: number, uri: string): RemoteReplica {
    const key = `${shardKeyOf(storageId, shard.shard)}\0${peer}`;
    let replica = this.remotes.get(key);
    if (!replica || replica.uri !== uri) {
      replica = new RemoteReplica(shard, peer, uri, this.options.client, this.options.remoteOptions);
      this.remotes.set(key, replica);
    }
    return replica;
  }
}
