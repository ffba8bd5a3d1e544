// The messages the main thread sends to shard workers, and what each answers. A shard is
// addressed by `shard`, a key unique in the node (collection storage id + shard number).

import type { Distance } from '../engine/index.js';
import type { FormulaStep, PrefetchScores } from '../shard/formula-rescore.js';
import type { PointId } from '../model.js';
import type { Filter } from '../shard/filter/index.js';
import type { PointView, ReadShape } from '../shard/selectors.js';
import type { OrderBy } from '../shard/reads.js';
import type { ShardStats } from '../shard/stats.js';
import type { IndexSpec, RecoveryPoint, ShardSpec } from '../shard/shard.js';
import type { ClockTag } from '../shard/clock-map.js';
import type { LogEntry } from '../shard/log-entry-codec.js';
import type { ScoredView, SearchSpec } from '../shard/search.js';
import type { RankedList } from '../shard/fusion.js';
import type { ShardQuery } from '../shard/query-plan.js';
import type { WriteOp } from '../shard/write-ops.js';
import type { WireError } from '../errors.js';
import type { Deadline } from '../shard/deadline.js';
import type { FacetValue } from '../shard/payload-index/types.js';
import type { OptimizerSpec } from '../shard/optimizer/plan.js';
import type { ShardOptimizations } from '../shard/optimizer/report.js';
import type { ShardRoute } from '../shard/snapshot-part.js';
import type { RemotePart } from '../shard/part-download.js';
import type { FileSlice } from '../storage/tar.js';
import type { HardwareUsage } from '../shard/hardware.js';
import type { MessagePort } from 'node:worker_threads';

export type ShardTask =
  | { type: 'open'; shard: string; spec: ShardSpec }
  /** Close and open again with a new spec, as one task so no read falls in between. */
  | { type: 'reopen'; shard: string; spec: ShardSpec }
  | { type: 'close'; shard: string }
  | { type: 'drop'; shard: string }
  /**
   * One operation: checked (and only checked with `dryRun`), logged under `clock`, applied; the
   * reply comes once it is applied with `wait`, once it is durable in the log without. Sent in
   * an UpdateBatch unless it is a dry run.
   */
  | {
    type: 'apply'; shard: string; ops: WriteOp[]; opId: number; clock: ClockTag; wait: boolean; dryRun: boolean;
    /**
     * Receivers of shard transfers that the replica taking this update feeds: set by a replica set
     * on the update it sends to a transfer's source, whose TransferProxy (src/replica/transfer-proxy.ts)
     * passes it on to them in order. A shard worker ignores it.
     */
    relay?: number[];
    /**
     * The control-plane revision of the view the sending replica set chose its targets from (a
     * cluster's): a transfer's source passes on an update sent from before its transfer ended.
     */
    seen?: number;
    /** The clock map the shard takes on with this update (LogEntry.adopt): a transfer's clearing of its receiver. */
    adopt?: ClockTag[];
    /**
     * An entry of a transfer source's log, replayed into its receiver by a `wal_delta` transfer
     * under its own clock tag (which may be an older transfer's). A shard worker ignores it.
     */
    replay?: boolean;
  }
  /** The shard's clock map and the extent of its log. */
  | { type: 'recovery_point'; shard: string }
  /** Up to `limit` log entries after sequence number `after`: what a replica that has `after` misses. */
  | { type: 'log_after'; shard: string; after: number; limit: number }
  | { type: 'retrieve'; shard: string; ids: PointId[]; shape: ReadShape }
  | { type: 'scroll'; shard: string; filter: Filter | null; from: PointId | null; limit: number; shape: ReadShape; orderBy: OrderBy | null }
  | { type: 'count'; shard: string; filter: Filter | null }
  | { type: 'sample'; shard: string; filter: Filter | null; limit: number; shape: ReadShape }
  | { type: 'search'; shard: string; searches: SearchSpec[] }
  /** Whole query trees, evaluated over this shard alone (the collection is this one shard). */
  | { type: 'query'; shard: string; queries: ShardQuery[] }
  /** A formula step over a collection's prefetched points: this shard's best `limit` of them. */
  | { type: 'formula'; shard: string; step: FormulaStep; prefetches: PrefetchScores; limit: number }
  /**
   * MMR over a collection's merged candidates: any of its shards' workers computes it, so the
   * main thread never runs the candidates × picks similarities.
   */
  | { type: 'mmr'; shard: string; candidates: ScoredView[]; using: string; distance: Distance | null; lambda: number; limit: number }
  | { type: 'facet'; shard: string; key: string; filter: Filter | null }
  | { type: 'stats'; shard: string }
  | { type: 'create_index'; shard: string; index: IndexSpec }
  | { type: 'drop_index'; shard: string; key: string }
  /** The shard optimizer's running, queued and completed optimizations. */
  | { type: 'optimizations'; shard: string }
  | { type: 'configure_optimizer'; shard: string; optimizer: OptimizerSpec }
  /** Writes the shard's points to a new file at `path` (its part of a snapshot). */
  | { type: 'snapshot'; shard: string; path: string }
  /** Replaces the shard's data with a snapshot part, opening the shard if it was not open. */
  | { type: 'restore'; shard: string; spec: ShardSpec; part: FileSlice | RemotePart; lastOp: number; route: ShardRoute };

export interface TaskResults {
  open: { lastOp: number };
  reopen: { lastOp: number };
  close: null;
  drop: null;
  apply: null;
  recovery_point: RecoveryPoint;
  log_after: LogEntry[];
  retrieve: PointView[];
  scroll: PointView[];
  count: number;
  /** Up to `limit` distinct matching points in uniformly random order, and how many points match. */
  sample: { points: PointView[]; matching: number };
  search: ScoredView[][];
  query: RankedList[];
  formula: ScoredView[];
  mmr: ScoredView[];
  /** Distinct values of the key among matching points, with how many points hold each. */
  facet: [FacetValue, number][];
  stats: ShardStats;
  create_index: null;
  drop_index: null;
  optimizations: ShardOptimizations;
  configure_optimizer: null;
  snapshot: { points: number; lastOp: number };
  restore: { lastOp: number };
}

/** What every shard worker thread is started with. */
export interface WorkerSettings {
  /** Test-only fault injection (src/worker/faults.ts). */
  faults: boolean;
}

/** What the main thread sends: a task, and the deadline of the read request it serves. */
export interface TaskMessage {
  task: ShardTask;
  deadline: Deadline | null;
}

/**
 * Hardware a task used (src/shard/hardware.ts): `usage` its own, `deferred` that of the shard's
 * earlier wait=false updates, applied after their own replies went.
 */
export interface UsageReport {
  usage?: HardwareUsage;
  deferred?: HardwareUsage;
}

/**
 * What a worker sends back: a result, a Quiver error as data (class identity does not cross
 * threads), or a fault: the task failed in a way that leaves the worker's shards in an unknown
 * state (a WebAssembly trap), so the worker must be replaced.
 */
export type TaskReply<T> = ({ ok: T } & UsageReport) | ({ error: WireError } & UsageReport) | { fault: string };

/** An apply task that changes the shard (not a dry run). */
export type UpdateTask = Extract<ShardTask, { type: 'apply' }>;

export function isUpdateTask(task: ShardTask): task is UpdateTask {
  return task.type === 'apply' && !task.dryRun;
}

/**
 * Updates queued one behind another for a worker, sent as one message so that each shard logs
 * its share with one synced write (group commit). Each update has its own answer; a fault fails
 * them all, as it fails the worker.
 */
export interface UpdateBatch {
  updates: UpdateTask[];
}

export type UpdateReply = ({ ok: null } | { error: WireError }) & UsageReport;

export type UpdateBatchReply = { replies: UpdateReply[] } | { fault: string };

/**
 * The one task Piscina runs in a shard worker: it hands over the port every later message comes
 * through (a port kept busy is drained several messages per wake-up, where Piscina wakes its
 * thread once per task), and a shared cell in which the worker writes the sequence number of each
 * message as it begins it, so that when the thread fails the supervisor knows which message was
 * running and which were only queued behind it.
 */
export interface Connect {
  port: MessagePort;
  begun: Int32Array;
}

/** A message on the port; the worker runs them one at a time, in `seq` order. */
export interface Sent {
  seq: number;
  message: TaskMessage | UpdateBatch;
}

/** Messages posted together (those sent in one turn of the supervisor's event loop), in `seq` order. */
export type Posted = Sent[];

/** The worker's answer to a message; answers come in the order the messages were sent. */
export type Answer = TaskReply<unknown> | UpdateBatchReply;

/** Reads, which the supervisor may send while earlier reads are still in the worker. */
export function isReadTask(task: Pick<ShardTask, 'type'>): boolean {
  switch (task.type) {
    case 'retrieve': case 'scroll': case 'count': case 'sample': case 'search':
    case 'query': case 'formula': case 'mmr': case 'facet':
      return true;
    default:
      return false;
  }
}
