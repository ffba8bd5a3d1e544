// What the REST routes change about collections: creation, configuration, named vectors, shard
// keys, payload indexes, deletion, aliases. A single node changes its own tables at once
// (CollectionManager); a cluster peer proposes the change to the control plane and answers once
// it applied it (src/cluster/cluster-catalog.ts). Reads (names, records, lookups by alias) stay on
// the local CollectionManager: every peer holds every collection's record.

import type { TransferMethod } from '../replica/transfer-method.js';
import type { IndexSpec } from '../shard/shard.js';
import type { JsonValue, ShardKey } from '../model.js';
import type { ReplicaState } from '../replica/replica.js';
import type { FileSlice } from '../storage/tar.js';
import type { Collection, UpdateResult } from './collection.js';
import type { CollectionConfig } from './config-model.js';
import type { AliasAction } from './name-rules.js';
import type { ShardKeyEntry } from './shard-keys.js';

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
 * An operator's change of where a shard's replicas are (`POST /collections/{name}/cluster`):
 * `replicate_shard` / `move_shard` (a new replica on `to`, streamed from `from`'s; a move then
 * removes `from`'s), `abort_transfer`, `restart_transfer` (with another method), `drop_replica`.
 */
export type ReplicaChange =
  | { kind: 'transfer'; shard: number; from: number; to: number; move: boolean; /** Null: the configured method, or stream_records. */ method: TransferMethod | null }
  | { kind: 'abort_transfer'; shard: number; from: number; to: number; /** The receiver's shard when it is another (`to_shard_id`). */ toShard?: number }
  | { kind: 'restart_transfer'; shard: number; from: number; to: number; toShard?: number; method: TransferMethod }
  | { kind: 'replicate_points'; fromKey: ShardKey; toKey: ShardKey; /** As the request gave it (checked); null: every point. */ filter: JsonValue | null }
  | { kind: 'drop_replica'; shard: number; peer: number };

/**
 * Qdrant's source of truth of a snapshot recovery where a shard has other replicas: `replica` (its
 * default) the existing replicas, `snapshot` the snapshot's data, `no_sync` neither (no
 * synchronization at all). Every replica of a single node is its own, so there it changes nothing.
 */
export const SNAPSHOT_PRIORITIES = ['no_sync', 'snapshot', 'replica'] as const;
export type SnapshotPriority = (typeof SNAPSHOT_PRIORITIES)[number];
export const DEFAULT_SNAPSHOT_PRIORITY: SnapshotPriority = 'replica';

/** One shard's part of a snapshot: the shard's position in its collection, its points, its last operation id. */
export interface ShardPart {
  index: number;
  part: FileSlice;
  lastOp: number;
}

/** A collection snapshot as a recovery applies it (already checked whole). */
export interface CollectionSnapshotContent {
  config: CollectionConfig;
  indexes: IndexSpec[];
  shardKeys?: ShardKeyEntry[];
  /** Every shard's part, by the shard's position in the snapshot's collection. */
  parts: ShardPart[];
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
  /** Changes where a shard's replicas are; answers once the change is committed (a transfer then runs in the background). */
  changeReplicas(nameOrAlias: string, change: ReplicaChange, timeout?: number): Promise<void>;
  /** Recovers collection `name` (its own name, created if missing) from a collection snapshot. */
  recoverCollection(name: string, snapshot: CollectionSnapshotContent, priority: SnapshotPriority): Promise<void>;
  /** Replaces one shard's data of `collection` with a shard snapshot's part (checked against the collection). */
  recoverShard(collection: Collection, part: ShardPart, priority: SnapshotPriority): Promise<void>;
}
