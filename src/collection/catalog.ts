// What the REST routes change about collections: creation, configuration, named vectors, shard
// keys, payload indexes, deletion, aliases. A single node changes its own tables at once
// (CollectionManager); a cluster peer proposes the change to the control plane and answers once
// it applied it (src/cluster/cluster-catalog.ts). Reads (names, records, lookups by alias) stay on
// the local CollectionManager: every peer holds every collection's record.

import type { IndexSpec } from '../shard/shard.js';
import type { ShardKey } from '../model.js';
import type { ReplicaState } from '../replica/replica.js';
import type { UpdateResult } from './collection.js';
import type { CollectionConfig } from './config-model.js';
import type { AliasAction } from './name-rules.js';

/** A new shard key, as `PUT /collections/{name}/shards` asks for it. */
export interface ShardKeyRequest {
  /** Shards of the key; null: the collection's shard_number. */
  shardsNumber: number | null;
  /** Replicas per shard; null: the collection's replication_factor. */
  replicationFactor: number | null;
  /** The peers allowed to hold the key's replicas; null: every peer. */
  placement: readonly number[] | null;
  /** The replicas' first state; null: Active. */
  initialState: ReplicaState | null;
}

/**
 * Every call takes the request's commit `timeout` (seconds; undefined: the mode's default). A
 * single node changes its tables without consensus, so its route bounds the whole call instead.
 */
export interface Catalog {
  /** shard_number of a new automatically sharded collection whose request gave none. */
  defaultShardNumber(): number;
  /** Creates a collection; 409 if the name is taken, 400 if it is an alias's. */
  create(name: string, config: CollectionConfig, timeout?: number): Promise<void>;
  /** Stores the configuration `change` makes of the current one (which it may refuse by throwing). */
  updateConfig(nameOrAlias: string, change: (config: CollectionConfig) => CollectionConfig, timeout?: number): Promise<void>;
  /** Creates or deletes a named vector (`removed` names a deleted one). */
  changeVectorName(nameOrAlias: string, change: (config: CollectionConfig) => CollectionConfig, removed: string | null, timeout?: number): Promise<UpdateResult>;
  createShardKey(nameOrAlias: string, key: ShardKey, request: ShardKeyRequest, timeout?: number): Promise<void>;
  dropShardKey(nameOrAlias: string, key: ShardKey, timeout?: number): Promise<void>;
  createIndex(nameOrAlias: string, index: IndexSpec, timeout?: number): Promise<UpdateResult>;
  dropIndex(nameOrAlias: string, key: string, timeout?: number): Promise<UpdateResult>;
  /** Deletes a collection by its own name with its aliases; false if there was none. */
  delete(name: string, timeout?: number): Promise<boolean>;
  /** Applies alias actions in order, all or nothing. */
  changeAliases(actions: AliasAction[], timeout?: number): Promise<void>;
}
