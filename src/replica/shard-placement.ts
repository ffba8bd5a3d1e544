// Where a collection's shards live, as the collection layer sees it: the replica set of each
// shard (whichever peers hold its replicas, in whichever states), and what this node removes of
// a collection it no longer keeps. A single node places every replica on itself (LocalPlacement);
// a cluster peer places them as the control plane's view says (src/cluster).

import type { ShardKey } from '../model.js';
import type { ShardWorkers } from '../worker/pool.js';
import type { OperationClock } from './operation-clock.js';
import type { ReplicaSet, ReplicaSetParams } from './replica-set.js';
import type { ShardId } from './shard-id.js';

export interface ShardPlacement {
  /** The workers that own this node's replicas. */
  readonly workers: ShardWorkers;
  /** This node's peer id. */
  readonly peer: number;
  /**
   * A new operation clock for a collection, tagging its writes as this node's (peer 0 and clock 0
   * alone; the peer id and this start's incarnation in a cluster: src/replica/operation-clock.ts).
   */
  newClock(): OperationClock;
  /**
   * The replica set of `shard` of the collection stored under `storageId`; `params` are read when
   * a request comes (a collection's replication parameters can be updated).
   */
  replicaSet(shard: ShardId, storageId: string, params: () => ReplicaSetParams, shardKey?: ShardKey): ReplicaSet;
  /** Removes what this node holds of a collection no longer kept, once its shards are dropped or closed. */
  removeCollection(storageId: string): Promise<void>;
  /** Removes every collection folder and shard folder not listed in `kept` (storage id -> shard ids); answers the paths removed. */
  removeOrphans(kept: ReadonlyMap<string, readonly number[]>): Promise<string[]>;
}
