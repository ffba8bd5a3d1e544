// One copy of a shard and the one way to reach it: a task in, its result out. A local replica is
// the worker thread that owns the shard on this node; a remote one would be a peer reached over
// the network. Tasks are plain data and name neither a worker nor a folder, so both fit.

import type { DeadlineBudget } from '../shard/deadline.js';
import type { ShardSpec } from '../shard/shard.js';
import type { WriteOp } from '../shard/write-ops.js';
import type { ShardTask, TaskResults } from '../worker/tasks.js';
import type { ShardId } from './shard-id.js';

/** Qdrant's replica states (src/replica/replica-states.ts says where a set's come from). */
export const REPLICA_STATES = [
  'Active', 'Dead', 'Partial', 'Initializing', 'Listener', 'PartialSnapshot', 'Recovery', 'Resharding', 'ReshardingScaleDown', 'ActiveRead', 'ManualRecovery',
] as const;

export type ReplicaState = (typeof REPLICA_STATES)[number];

/** States in which a replica holds all of the shard's data and answers reads (as in Qdrant). */
export const READABLE: ReadonlySet<ReplicaState> = new Set<ReplicaState>(['Active', 'ReshardingScaleDown', 'ActiveRead']);

/**
 * States in which a replica takes updates: the readable ones, and those catching up (a transfer
 * or a resharding feeding it) that must not miss a write made meanwhile. A Dead replica or one
 * being rebuilt from a snapshot takes none.
 */
export const UPDATABLE: ReadonlySet<ReplicaState> = new Set<ReplicaState>([...READABLE, 'Partial', 'Initializing', 'Listener', 'Resharding']);

/**
 * States in which a replica can be the source of truth of its shard (Qdrant's
 * `can_be_source_of_truth`): an update stands only once one of them applied it, and a medium
 * ordering leads from one of them.
 */
export const SOURCE_OF_TRUTH: ReadonlySet<ReplicaState> = new Set<ReplicaState>(['Active', 'ActiveRead', 'Resharding', 'ReshardingScaleDown']);

/**
 * States of a replica fed by its transfer's source alone: replica sets send it no update
 * directly; the source passes on every update it applies while the transfer runs, and those a
 * set asks it to (`relay` of an apply task: the set still sees the transfer running). A stream transfer
 * interleaves the source's batches with the updates at the places the source applied them, so
 * that a batch read before an update never lands after it; an update that also came directly
 * could overtake a batch, or be taken twice (a shard skips a clock tag it has seen, so the later
 * copy of two would be lost rather than replayed). Quiver's Partial replicas only ever come from
 * a stream transfer, its Recovery ones from a `wal_delta` transfer (the source replays the
 * operations the receiver misses ahead of the updates it passes on).
 */
export const FED_BY_TRANSFER: ReadonlySet<ReplicaState> = new Set<ReplicaState>(['Partial', 'Recovery']);

/** States of a replica that is receiving the shard from another (Qdrant's `is_partial_or_recovery`). */
export const RECEIVING: ReadonlySet<ReplicaState> = new Set<ReplicaState>(['Partial', 'PartialSnapshot', 'Recovery', 'Resharding', 'ReshardingScaleDown', 'ActiveRead']);

/** A shard's content as a replica is asked to open it; where it keeps it is the replica's business. */
export type ShardContent = Omit<ShardSpec, 'path'>;

type Unplaced<T> = T extends { spec: ShardSpec } ? Omit<T, 'shard' | 'spec'> & { spec: ShardContent } : Omit<T, 'shard'>;

/** A shard task as a replica receives it: without the node's key of the shard or its folder. */
export type ReplicaTask = Unplaced<ShardTask>;

/** Tasks that only read points, and so may be cut short by a deadline (a write never is: it would half-apply). */
export type ReadTask = Extract<ReplicaTask, { type: 'retrieve' | 'scroll' | 'count' | 'sample' | 'search' | 'query' | 'formula' | 'mmr' | 'facet' }>;

export type ReplicaResult<T extends ReplicaTask> = TaskResults[T['type']];

/** Qdrant's write orderings: which replica leads a point update (src/replica/write-ordering.ts). */
export type WriteOrdering = 'weak' | 'medium' | 'strong';

/**
 * A point update sent to the replica that leads it (medium or strong ordering) when that replica
 * is on another peer: without this peer's operation id or clock tag, which the leader assigns
 * as it applies the update through its own replica set.
 */
export interface ForwardedUpdate {
  ops: WriteOp[];
  wait: boolean;
  ordering: WriteOrdering;
}

export interface ShardReplica {
  readonly shard: ShardId;
  /** The peer holding this copy: the key of its state in the set's states (replica-states.ts). */
  readonly peer: number;
  /**
   * Runs `task` on this copy of the shard. A read carries what is left of its request's time; the
   * replica pins it to its own clock on receipt and stops the task once it runs out. Tasks start
   * in the order of the calls (the write path relies on it to order a shard's updates without
   * waiting for each): a local replica's worker queue is in that order; a remote one must keep it.
   */
  run<T extends ReplicaTask>(task: T, deadline: DeadlineBudget | null): Promise<ReplicaResult<T>>;
  /**
   * Has this replica's peer apply `update` as the leader of its set. Only a replica on another
   * peer can lead for this one (a local leader applies directly), so a local replica has none.
   * Answers the leader's operation id.
   */
  forward?(update: ForwardedUpdate): Promise<number>;
}
