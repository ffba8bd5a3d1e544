// The catalogue of a cluster peer (plan 3.4): a change to collections or aliases is checked and
// proposed to the control plane as one compare-and-swap transaction (control-plane.ts, which
// checks it with a single node's rules against the state it read), then the request waits until
// this peer applied the committed revision, so it reads its own change. A creation also waits
// until every replica it placed is Active, as Qdrant awaits the replicas' activation. Both waits
// share the request's commit `timeout` (Qdrant's default for consensus operations: 10 s) and fail
// with Qdrant's error for a consensus operation that did not commit in time.
//
// Nothing here changes local collections or holds a collection's gate while it waits on the
// control plane: the apply loop's reconcile does the local work (reconcile.ts), so a request never
// blocks it (risk R5). The one exception is a snapshot recovery's own data: only the peer the
// snapshot was given to holds it, so that peer restores its replicas itself, between two waits.

import type { Catalog, CollectionSnapshotContent, ReplicaChange, ShardKeyRequest, ShardPart, SnapshotPriority } from '../collection/catalog.js';
import type { Collection, UpdateResult } from '../collection/collection.js';
import type { CollectionConfig } from '../collection/config-model.js';
import type { CollectionManager } from '../collection/manager.js';
import type { AliasAction } from '../collection/name-rules.js';
import { checkCollectionSnapshotFits } from '../collection/snapshot-compatibility.js';
import { StrictMode } from '../collection/strict-mode.js';
import { BadInput, ServiceError } from '../errors.js';
import { collectionNotFound, filterNeedsStreaming, pointsCopyNeedsStreaming, transferDoesNotExist, transferUnchanged } from '../messages.js';
import type { ShardKey } from '../model.js';
import type { TransferMethod } from '../replica/transfer-method.js';
import type { IndexSpec } from '../shard/shard.js';
import { sameTransfer, type ClusterView } from './cluster-view.js';
import type { ControlPlane } from './control-plane.js';
import { receiverShard, type PeerId, type TransferRef } from './keys.js';
import { defaultShardNumber } from './placement.js';
import type { Reconciler } from './reconcile.js';
import { statesAfterRecovery } from './recovered-replicas.js';

/** Qdrant's wait for a consensus operation without a `timeout` (`CONSENSUS_META_OP_WAIT`). */
export const DEFAULT_COMMIT_TIMEOUT_SECONDS = 10;

/** The longest delay a Node timer holds; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How this peer's apply loop reports revisions applied (ApplyLoop). */
export interface AppliedRevisions {
  waitApplied(revision: number, timeoutMs: number): Promise<void>;
}

export interface ClusterCatalogOptions {
  controlPlane: ControlPlane;
  loop: AppliedRevisions;
  reconciler: Pick<Reconciler, 'view' | 'waitFor'>;
  /**
   * This peer's own collections: strict mode's checks of a request run against its local copy
   * before the change is proposed, and a snapshot recovery restores its replicas.
   */
  collections: Pick<CollectionManager, 'get' | 'collectionNamed' | 'held'>;
  peerId: PeerId;
  /** `storage.shard_transfer_method`: an operator's transfer without a method uses it (null: stream_records, as Qdrant). */
  transferMethod: TransferMethod | null;
}

function commitTimedOut(seconds: number): ServiceError {
  return new ServiceError(`Waiting for consensus operation commit failed. Timeout set at: ${seconds} seconds`);
}

/** Whether every replica of collection `name`, as created under `storageId`, is Active (or the collection is gone). */
function activated(view: ClusterView, name: string, storageId: string): boolean {
  if (view.collections.get(name)?.storageId !== storageId) return true;
  return [...(view.shards.get(name)?.values() ?? [])].every((entry) => Object.values(entry.replicas).every((state) => state === 'Active'));
}

export class ClusterCatalog implements Catalog {
  private readonly controlPlane: ControlPlane;
  private readonly loop: AppliedRevisions;
  private readonly reconciler: Pick<Reconciler, 'view' | 'waitFor'>;
  private readonly collections: Pick<CollectionManager, 'get' | 'collectionNamed' | 'held'>;
  private readonly peerId: PeerId;
  private readonly transferMethod: TransferMethod | null;

  constructor(options: ClusterCatalogOptions) {
    this.controlPlane = options.controlPlane;
    this.loop = options.loop;
    this.reconciler = options.reconciler;
    this.collections = options.collections;
    this.peerId = options.peerId;
    this.transferMethod = options.transferMethod;
  }

  /** Qdrant's default shard_number in a cluster: one per known peer (live or not). */
  defaultShardNumber(): number {
    return defaultShardNumber(this.reconciler.view.peers.size);
  }

  /** Waits until this peer applied `revision` (and `until` holds, if given), within the commit timeout. */
  private async applied(revision: number, timeout: number | undefined, until?: (view: ClusterView) => boolean): Promise<void> {
    const seconds = timeout ?? DEFAULT_COMMIT_TIMEOUT_SECONDS;
    const deadline = Date.now() + seconds * 1000;
    const left = () => Math.min(Math.max(0, deadline - Date.now()), MAX_TIMER_MS);
    await this.loop.waitApplied(revision, left()).catch((err: unknown) => {
      throw err instanceof ServiceError && Date.now() >= deadline ? commitTimedOut(seconds) : err;
    });
    if (until) await this.reconciler.waitFor(until, left(), () => commitTimedOut(seconds));
  }

  async create(name: string, config: CollectionConfig, timeout?: number): Promise<void> {
    const { revision, record } = await this.controlPlane.createCollection(name, config);
    await this.applied(revision, timeout, (view) => activated(view, name, record.storageId));
  }

  async updateConfig(nameOrAlias: string, change: (config: CollectionConfig) => CollectionConfig, timeout?: number): Promise<void> {
    const { revision } = await this.controlPlane.updateCollection(nameOrAlias, (record) => ({ ...record, config: change(record.config) }));
    await this.applied(revision, timeout);
  }

  /**
   * The answer's operation id is the revision the change committed at: the change is one
   * operation of the cluster's control plane, not of a shard's log.
   */
  async changeVectorName(nameOrAlias: string, change: (config: CollectionConfig) => CollectionConfig, _removed: string | null, timeout?: number): Promise<UpdateResult> {
    const { revision } = await this.controlPlane.updateCollection(nameOrAlias, (record) => ({ ...record, config: change(record.config) }));
    await this.applied(revision, timeout);
    return { operation_id: revision, status: 'completed' };
  }

  async createShardKey(nameOrAlias: string, key: ShardKey, request: ShardKeyRequest, timeout?: number): Promise<void> {
    const { revision } = await this.controlPlane.createShardKey(nameOrAlias, key, request);
    await this.applied(revision, timeout);
  }

  async dropShardKey(nameOrAlias: string, key: ShardKey, timeout?: number): Promise<void> {
    const { revision } = await this.controlPlane.dropShardKey(nameOrAlias, key);
    await this.applied(revision, timeout);
  }

  /**
   * Strict mode is checked here, by the peer the request reached (its rate limits are its own, as
   * Qdrant's are per peer), before the change is proposed; the index count again against the
   * record the transaction compares, so two peers adding one index each cannot pass the limit.
   */
  async createIndex(nameOrAlias: string, index: IndexSpec, timeout?: number): Promise<UpdateResult> {
    this.collections.get(nameOrAlias).admitIndexChange(true);
    const { revision } = await this.controlPlane.updateCollection(nameOrAlias, (record) => {
      new StrictMode(record.config.strictMode).checkIndexCount(record.indexes.length);
      return { ...record, indexes: [...record.indexes.filter((i) => i.key !== index.key), index] };
    });
    await this.applied(revision, timeout);
    return { operation_id: revision, status: 'completed' };
  }

  async dropIndex(nameOrAlias: string, key: string, timeout?: number): Promise<UpdateResult> {
    this.collections.get(nameOrAlias).admitIndexChange(false);
    const { revision } = await this.controlPlane.updateCollection(nameOrAlias, (record) => ({ ...record, indexes: record.indexes.filter((i) => i.key !== key) }));
    await this.applied(revision, timeout);
    return { operation_id: revision, status: 'completed' };
  }

  async delete(name: string, timeout?: number): Promise<boolean> {
    const { revision, deleted } = await this.controlPlane.deleteCollection(name);
    await this.applied(revision, timeout);
    return deleted;
  }

  async changeAliases(actions: AliasAction[], timeout?: number): Promise<void> {
    const { revision } = await this.controlPlane.changeAliases(actions);
    await this.applied(revision, timeout);
  }

  /**
   * Proposes the change and waits until this peer applied it; a transfer it starts runs on its
   * source peer from then on, as Qdrant's runs after its consensus operation committed.
   */
  async changeReplicas(nameOrAlias: string, change: ReplicaChange, timeout?: number): Promise<void> {
    const { name } = this.collections.get(nameOrAlias);
    const committed = await this.proposeReplicaChange(name, change);
    await this.applied(committed.revision, timeout);
  }

  private async proposeReplicaChange(collection: string, change: ReplicaChange): Promise<{ revision: number }> {
    switch (change.kind) {
      case 'transfer':
        return this.controlPlane.startOperatorTransfer({ collection, shard: change.shard, from: change.from, to: change.to }, !change.move, change.method ?? this.transferMethod ?? 'stream_records');
      case 'drop_replica':
        return this.controlPlane.dropReplica(collection, change.shard, change.peer);
      case 'replicate_points':
        return this.controlPlane.startPointsTransfer(collection, change.fromKey, change.toKey, change.filter, this.transferMethod ?? 'stream_records');
      case 'abort_transfer': {
        const ref = transferRefOf(collection, change);
        const { ended, revision } = await this.controlPlane.abortTransfer(ref);
        if (!ended) throw transferDoesNotExist(ref);
        return { revision };
      }
      case 'restart_transfer': {
        // Restarting with the method it has is refused, as Qdrant refuses it.
        const ref = transferRefOf(collection, change);
        const transfer = this.reconciler.view.transferTo(collection, receiverShard(ref), change.to);
        if (!transfer || !sameTransfer(transfer, ref)) throw transferDoesNotExist(ref);
        if (change.method === transfer.record.method) throw transferUnchanged(change.shard, change.from, change.to);
        // A copy of points into another shard only streams (it keeps the receiver's own points).
        if (transfer.toShard !== undefined) throw transfer.record.filter === undefined ? pointsCopyNeedsStreaming(change.method) : filterNeedsStreaming(change.method);
        const { restarted, revision } = await this.controlPlane.restartTransfer(ref, change.method);
        if (!restarted) throw transferDoesNotExist(ref);
        return { revision };
      }
    }
  }

  /**
   * A collection snapshot recovered on this peer, as Qdrant does in distributed mode: a collection
   * the cluster does not have is created there with the snapshot's configuration, payload indexes
   * and shard keys (one transaction), and this peer waits until every replica of it is Active; an
   * existing one keeps its configuration and must fit the snapshot (same dense vectors, shard
   * number and shard keys). This peer then restores its own replicas of the shards from the
   * snapshot's parts (each swaps its store in one task of its worker, so it serves its old data
   * until then), and settles each restored shard's replica states by `priority`.
   */
  async recoverCollection(name: string, snapshot: CollectionSnapshotContent, priority: SnapshotPriority): Promise<void> {
    const { revision, record, created } = await this.controlPlane.recoverCollection(name, snapshot, (existing) => checkCollectionSnapshotFits(existing, snapshot));
    await this.applied(revision, undefined, created ? (view) => activated(view, name, record.storageId) : undefined);
    const collection = this.collections.collectionNamed(name);
    if (!collection || this.collections.held(name)?.storageId !== record.storageId) {
      // Deleted (or replaced) by a change committed after this one: the collection recovered into is gone.
      if (this.reconciler.view.collections.get(name)?.storageId !== record.storageId) throw collectionNotFound(name);
      throw new ServiceError(`collection ${name} is not open on this peer yet; retry the recovery`);
    }
    await collection.restoreShards(snapshot.parts);
    await this.settleRecovered(collection, record.storageId, snapshot.parts.map((p) => p.index), priority);
  }

  /** A shard snapshot recovered into this peer's replica of the shard, whose states then follow `priority`. */
  async recoverShard(collection: Collection, part: ShardPart, priority: SnapshotPriority): Promise<void> {
    const storageId = this.collections.held(collection.name)?.storageId;
    const shard = collection.shards[part.index];
    if (storageId === undefined) throw new ServiceError(`collection ${collection.name} is not open on this peer`);
    if (!shard.localReplica) throw new BadInput(`Shard ${shard.id} of collection ${collection.name} has no replica on peer ${this.peerId}`);
    await collection.restoreShards([part]);
    await this.settleRecovered(collection, storageId, [part.index], priority);
  }

  /** Proposes the replica states of each restored shard this peer holds a replica of, and waits until this peer applied them. */
  private async settleRecovered(collection: Collection, storageId: string, indexes: readonly number[], priority: SnapshotPriority): Promise<void> {
    let revision = 0;
    for (const index of indexes) {
      const shard = collection.shards[index];
      if (!shard.localReplica) continue;
      const committed = await this.controlPlane.changeReplicaStates(collection.name, storageId, shard.id, (replicas) => statesAfterRecovery(replicas, this.peerId, priority));
      revision = Math.max(revision, committed.revision);
    }
    await this.applied(revision, undefined);
  }
}

/** The transfer an `abort_transfer` or `restart_transfer` names (with its receiver's shard when another). */
function transferRefOf(collection: string, change: Extract<ReplicaChange, { kind: 'abort_transfer' | 'restart_transfer' }>): TransferRef {
  return { collection, shard: change.shard, from: change.from, to: change.to, ...(change.toShard === undefined ? {} : { toShard: change.toShard }) };
}
