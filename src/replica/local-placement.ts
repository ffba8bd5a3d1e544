// Where this node keeps its replicas: shard `id` of a collection in
// <storage>/collections/<storage id>/<id>, owned by worker `id` mod the worker count. The
// collection's storage id names the folder, not its name: a name may hold characters a path
// cannot, and a collection being replaced by a recovery exists twice for a while.

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ShardKey } from '../model.js';
import type { ShardWorkers } from '../worker/pool.js';
import { LocalReplica } from './local-replica.js';
import { OperationClock } from './operation-clock.js';
import { ReplicaSet, type ReplicaSetParams } from './replica-set.js';
import { LocalReplicaStates } from './replica-states.js';
import type { ShardPlacement } from './shard-placement.js';
import { removeOrphanFolders } from './orphan-folders.js';
import type { ShardId } from './shard-id.js';

/** The peer id of a node outside a cluster: its replicas' peer, never shown (its one replica is always Active). */
export const SINGLE_NODE_PEER = 0;

export class LocalPlacement implements ShardPlacement {
  /** `peer`: this node's peer id, which its replicas carry. */
  constructor(private readonly storagePath: string, readonly workers: ShardWorkers, readonly peer = SINGLE_NODE_PEER) {}

  /**
   * A collection's clock: this node's peer id and clock 0. A node alone is the only writer of its
   * replicas and its counter resumes after the highest id they hold, so no restart reuses a tag.
   */
  newClock(): OperationClock {
    return new OperationClock(this.peer);
  }

  private get collectionsFolder(): string {
    return join(this.storagePath, 'collections');
  }

  private folderOf(storageId: string): string {
    return join(this.collectionsFolder, storageId);
  }

  /** Removes what this node holds of a collection no longer kept, once its shards are dropped or closed. */
  async removeCollection(storageId: string): Promise<void> {
    await rm(this.folderOf(storageId), { recursive: true, force: true });
  }

  /**
   * Removes every collection folder and shard folder not listed in `kept` (storage id -> shard
   * ids): what operations cut short by a crash left. Answers the paths removed.
   */
  removeOrphans(kept: ReadonlyMap<string, readonly number[]>): Promise<string[]> {
    return removeOrphanFolders(this.collectionsFolder, new Map([...kept].map(([storageId, ids]) => [storageId, ids.map(String)])));
  }

  /** Shard `shard` as a set of this node's one replica, Active. */
  replicaSet(shard: ShardId, storageId: string, params: () => ReplicaSetParams, shardKey?: ShardKey): ReplicaSet {
    return new ReplicaSet(shard, [this.replica(shard, storageId)], { peer: this.peer, states: new LocalReplicaStates([this.peer]), params, shardKey });
  }

  /** This node's replica of `shard`, of the collection stored under `storageId`. */
  replica(shard: ShardId, storageId: string): LocalReplica {
    return new LocalReplica(shard, this.peer, this.workers, {
      key: `${storageId}/${shard.shard}`,
      worker: shard.shard % this.workers.count,
      path: join(this.folderOf(storageId), String(shard.shard)),
    });
  }
}
