// A collection as the main thread sees it: its configuration, the replica sets of its shards,
// and the routing of every write. It never holds point data itself, nor knows where its shards
// live; reads go through a ShardReader over the shards a request selects.

import { collectionNotFound, float16OutOfRange, shardNotFound, multiRegularMismatch, shardKeyAlreadyExists, shardKeyDoesNotExist, sparseDenseMismatch, vectorDimensionMismatch, vectorNameNotFound } from '../messages.js';
import { BadInput, BadRequest } from '../errors.js';
import { FLOAT16_OVERFLOW, float16Overflow } from '../engine/index.js';
import { isMulti, isSparse, type ShardKey, type Vector } from '../model.js';
import type { IndexSpec, SparseVectorSpec, VectorSpec } from '../shard/shard.js';
import { namedIds, splitOp, type WriteOp } from '../shard/write-ops.js';
import { DEFAULT_OPTIMIZER_SPEC, type OptimizerSpec } from '../shard/optimizer/plan.js';
import { DEFAULT_WAL_SPEC, type WalSpec } from '../shard/op-log.js';
import type { ShardOptimizations } from '../shard/optimizer/report.js';
import type { ShardStats } from '../shard/stats.js';
import type { TaskResults } from '../worker/tasks.js';
import type { FileSlice } from '../storage/tar.js';
import { OperationClock } from '../replica/operation-clock.js';
import type { ReadTask, ReplicaResult, ReplicaTask, ShardContent } from '../replica/replica.js';
import type { ReplicaSet } from '../replica/replica-set.js';
import { applyAcross, lockedInOrder } from '../replica/shard-writes.js';
import { activeDeadline } from '../replica/request-scope.js';
import { shardOf } from '../shard/routing.js';
import { readShards, routeOf, writeGroups, type ShardKeyEntry, type ShardKeySelector, type ShardLayout } from './shard-keys.js';
import { ShardReader, type ReaderSource } from './shard-reader.js';
import { SharedGate } from './shared-gate.js';
import type { StrictModeConfig } from './kept-config.js';
import { StrictMode, type CollectionSize } from './strict-mode.js';
import type { StrictRead } from './strict-reads.js';

/** Whether a payload index change is checked against strict mode here (`check`) or was already, where it was asked (`committed`). */
export type IndexAdmission = 'check' | 'committed';

export interface UpdateResult {
  operation_id: number;
  status: 'acknowledged' | 'completed';
}

/** A point operation and the shard keys it goes to (none: automatic sharding routes by id alone). */
export interface RoutedOp {
  op: WriteOp;
  shardKey?: ShardKeySelector | null;
}

/** A collection's dense and sparse vectors as its shards take them. */
export interface VectorSpecs {
  vectors: VectorSpec[];
  sparseVectors: SparseVectorSpec[];
}

/** The replica set of a new shard of a custom key, placed by the node (not opened yet). */
export type PlaceShard = (id: number, shardKey: ShardKey) => ReplicaSet;

/**
 * Stores a change of the collection's record (its owner, the manager, may refuse it: the
 * collection was deleted or replaced meanwhile). Called while the collection's writes wait, so
 * the change and the shards' state go together.
 */
export type Persist<T> = (value: T) => Promise<void>;

/** Operations that fail on a point that does not exist, and so may fail on one shard after another shard applied them. */
const MAY_FAIL = new Set<WriteOp['kind']>(['update_vectors', 'delete_vectors', 'set_payload', 'overwrite_payload', 'delete_payload', 'clear_payload']);

export class Collection implements ReaderSource {
  private readonly gate = new SharedGate();
  /** Set by the drop or close job: every job queued after it fails as if the collection did not exist. */
  private ended = false;
  private readonly strictMode: StrictMode;

  constructor(
    readonly name: string,
    private shardLayout: ShardLayout<ReplicaSet>,
    private vectorSpecs: VectorSpec[],
    private sparseSpecs: SparseVectorSpec[],
    private indexSpecs: IndexSpec[],
    private optimizerSpec: OptimizerSpec = DEFAULT_OPTIMIZER_SPEC,
    private readonly walSpec: WalSpec = DEFAULT_WAL_SPEC,
    strictMode: StrictModeConfig = { enabled: false },
    /** Numbers the collection's operations: one sequence over all its shards, tagged as this node's (src/replica/operation-clock.ts). */
    private readonly clock: OperationClock = new OperationClock(),
  ) {
    this.strictMode = new StrictMode(strictMode);
  }

  get vectors(): readonly VectorSpec[] {
    return this.vectorSpecs;
  }

  get sparseVectors(): readonly SparseVectorSpec[] {
    return this.sparseSpecs;
  }

  get indexes(): readonly IndexSpec[] {
    return this.indexSpecs;
  }

  get layout(): ShardLayout<ReplicaSet> {
    return this.shardLayout;
  }

  get shards(): readonly ReplicaSet[] {
    return this.shardLayout.shards;
  }

  /** Reads over every shard, or over those of the shard keys a request selects. */
  reader(selector?: ShardKeySelector | null): ShardReader {
    return new ShardReader(this, readShards(this.shardLayout, selector));
  }

  /**
   * A task that fails because the collection was dropped meanwhile (a read racing a delete or
   * replacement) fails as Qdrant reports a missing collection, not with the closed shard's error.
   */
  private async guarded<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      if (this.ended) throw collectionNotFound(this.name);
      throw err;
    }
  }

  /** Runs a read on one of the collection's shards, within the deadline of the request it serves. */
  read<T extends ReadTask>(shard: ReplicaSet, task: T): Promise<ReplicaResult<T>> {
    return this.guarded(shard.read(task, activeDeadline()));
  }

  /** Runs an update of indexes or settings (not of points: `write`) on every shard. */
  private updateAll<T extends Exclude<ReplicaTask, { type: 'apply' }>>(task: T): Promise<ReplicaResult<T>[]> {
    return this.guarded(Promise.all(this.shards.map((s) => s.update(task))));
  }

  /**
   * Queues a job that needs the whole collection still: it waits for the writes already under
   * way and later ones wait for it. A job queued before the collection is dropped completes
   * before the drop; one queued after it fails cleanly (Qdrant's 404), so no write is
   * acknowledged and then lost to a delete or replacement that was already under way.
   */
  private serial<T>(job: () => Promise<T>): Promise<T> {
    return this.gate.exclusive(async () => {
      if (this.ended) throw collectionNotFound(this.name);
      return job();
    });
  }

  /** Closes (or drops) every shard once the jobs queued before have finished; later jobs are refused. */
  private end(type: 'close' | 'drop'): Promise<void> {
    return this.gate.exclusive(async () => {
      if (this.ended) return;
      this.ended = true;
      await Promise.all(this.shards.map((s) => s.each({ type })));
    });
  }

  /** Opens every shard; the operation counter resumes after the highest applied id. */
  async open(): Promise<void> {
    const opened = await this.updateAll({ type: 'open', spec: this.content() });
    for (const { lastOp } of opened) this.clock.observe(lastOp);
  }

  /**
   * Opens this peer's replicas that joined their shards since the collection opened (an operator's
   * transfer placed them here), each from an empty folder: whatever a replica that left this peer
   * before left there is dropped first. The transfer then fills it. Shared with writes, not
   * exclusive: a write under way may be waiting for this peer to apply the very view that placed
   * the replica (a transfer's source relays it here once this peer applied that view), and
   * nothing writes to the replica before then.
   */
  openJoinedReplicas(): Promise<void> {
    return this.gate.shared(async () => {
      if (this.ended) throw collectionNotFound(this.name);
      for (const set of this.shards.filter((s) => s.localNeedsOpening)) {
        await set.each({ type: 'drop' });
        const { lastOp } = await set.update({ type: 'open', spec: this.content() });
        this.clock.observe(lastOp);
      }
    });
  }

  /**
   * What a copy of shard `id` is restored with elsewhere (a `snapshot` transfer's receiver): the
   * shard's content and its route, the same on every peer (the configuration comes from the
   * control plane); null when the collection has no such shard.
   */
  restoreSpecOf(id: number): { spec: ShardContent; route: { index: number; count: number } } | null {
    const shard = this.shards.find((s) => s.shard.shard === id);
    return shard ? { spec: this.content(), route: routeOf(this.shardLayout, shard) } : null;
  }

  private content(): ShardContent {
    return { vectors: this.vectorSpecs, sparseVectors: this.sparseSpecs, indexes: this.indexSpecs, optimizer: this.optimizerSpec, wal: this.walSpec };
  }

  /**
   * A configuration change, run alone: `persist` stores the new record and answers the optimizer
   * and vector parameters it implies; the shards then take those that changed. New optimizer
   * settings apply at once; new vector parameters (hnsw_config or quantization_config) reopen
   * each shard from its store in one task (its persisted graphs no longer match, so its
   * optimizer links the vectors again in the background), and writes wait for the reopen.
   */
  reconfigure(persist: () => Promise<{ optimizer: OptimizerSpec; strictMode: StrictModeConfig } & VectorSpecs>): Promise<void> {
    return this.serial(async () => {
      const { optimizer, strictMode, ...specs } = await persist();
      this.strictMode.configure(strictMode);
      if (JSON.stringify(optimizer) !== JSON.stringify(this.optimizerSpec)) {
        this.optimizerSpec = optimizer;
        await this.updateAll({ type: 'configure_optimizer', optimizer });
      }
      await this.takeVectorSpecs(specs);
    });
  }

  /**
   * Creates or deletes named vectors (Qdrant's vector name operations) while the collection's
   * writes wait, so none lands between the steps. Each deleted name (`removed`) first leaves
   * every point that has it, as one logged operation on every shard: no stored record keeps data
   * under a name the configuration no longer has (snapshot parts are vetted against it, and a
   * vector created later under the name starts empty). Then `persist` stores the configuration
   * and the shards reopen with the new specs (a new vector starts empty on every point).
   * `purge` says which replicas the removal reaches: `replicated`, a point update of every
   * replica (a single node's request); `local`, this peer's own replicas only (a cluster peer
   * applying the control plane's change: every peer purges its own, as it reopens its own).
   */
  changeVectors(persist: () => Promise<VectorSpecs>, removed: readonly string[], purge: 'replicated' | 'local' = 'replicated'): Promise<UpdateResult> {
    return this.serial(async () => {
      let operationId: number | null = null;
      if (removed.length > 0) {
        const op: WriteOp = { kind: 'delete_vectors', target: { filter: { should: removed.map((name) => ({ kind: 'hasVector', name })) } }, names: [...removed] };
        operationId = purge === 'replicated'
          ? await applyAcross(new Map(this.shards.map((s) => [s, [op]])), this.clock, 1, { checkFirst: false, wait: true })
          : await this.applyLocally(op);
      }
      await this.takeVectorSpecs(await persist());
      return { operation_id: operationId ?? this.clock.take(1), status: 'completed' };
    });
  }

  /** Applies `op` to this peer's replica of every shard (in their write order), numbered by this peer's clock. */
  private applyLocally(op: WriteOp): Promise<number> {
    return lockedInOrder(this.shards, async () => {
      const opId = this.clock.take(1);
      const clock = this.clock.tagOf(opId);
      await Promise.all(this.shards.map((s) => s.localReplica?.run({ type: 'apply', ops: [op], opId, clock, wait: true, dryRun: false }, null)));
      return opId;
    });
  }

  /** Reopens every shard with new vector specs (they load what of their stored indexes still fits). */
  private async takeVectorSpecs({ vectors, sparseVectors }: VectorSpecs): Promise<void> {
    if (JSON.stringify([vectors, sparseVectors]) === JSON.stringify([this.vectorSpecs, this.sparseSpecs])) return;
    this.vectorSpecs = vectors;
    this.sparseSpecs = sparseVectors;
    await this.updateAll({ type: 'reopen', spec: this.content() });
  }

  /** What each shard's optimizer is doing and has done. */
  optimizations(): Promise<ShardOptimizations[]> {
    return Promise.all(this.shards.map((s) => this.guarded(s.read({ type: 'optimizations' }, null))));
  }

  /** Writes listed shards' points to files between two writes, so together they are one point in time. */
  snapshotShards(targets: { index: number; path: string }[]): Promise<TaskResults['snapshot'][]> {
    return this.serial(() => Promise.all(targets.map(({ index, path }) => this.guarded(this.shards[index].read({ type: 'snapshot', path }, null)))));
  }

  /**
   * Replaces shards' data with snapshot parts (opening shards not open yet). Each replica builds
   * the new store beside the live one and swaps it in as one task; a shard whose part fails keeps
   * its data. Run alone, so no write is half-applied across it.
   */
  restoreShards(parts: { index: number; part: FileSlice; lastOp: number }[]): Promise<void> {
    return this.serial(async () => {
      const outcomes = await Promise.allSettled(parts.map(({ index, part, lastOp }) => {
        const shard = this.shards[index];
        return this.guarded(shard.update({ type: 'restore', spec: this.content(), part, lastOp, route: routeOf(this.shardLayout, shard) }));
      }));
      for (const outcome of outcomes) if (outcome.status === 'fulfilled') this.clock.observe(outcome.value.lastOp);
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;
    });
  }

  close(): Promise<void> {
    return this.end('close');
  }

  /** Removes every shard's data, after the jobs already queued. */
  drop(): Promise<void> {
    return this.end('drop');
  }

  /** Checks vector names and dimensions of every operation before anything is sent to a shard. */
  private checkVectors(ops: WriteOp[]): void {
    const byName = new Map(this.vectorSpecs.map((v) => [v.name, v]));
    const sparse = new Set(this.sparseSpecs.map((v) => v.name));
    for (const op of ops) {
      if (op.kind !== 'upsert' && op.kind !== 'update_vectors' && op.kind !== 'delete_vectors') continue;
      if (op.kind === 'delete_vectors') {
        for (const name of op.names) if (!byName.has(name) && !sparse.has(name)) throw vectorNameNotFound(name);
        continue;
      }
      for (const p of op.points) {
        for (const [name, vector] of Object.entries(p.vectors)) {
          const spec = byName.get(name);
          if (!spec && !sparse.has(name)) throw vectorNameNotFound(name);
          checkVector(name, vector, spec);
        }
      }
    }
  }

  /**
   * Strict mode's admission of a read before it runs: its checks (limits, filters, search
   * parameters, timeout), then its cost taken from the read rate limiter of every shard it reads.
   */
  admitRead(read: StrictRead, timeout: number | null): void {
    this.strictMode.checkRead(read, timeout, this.indexSpecs);
    if (!this.strictMode.limitsReads) return;
    const costs = new Map<number, number>();
    for (const { shardKey, tokens } of read.costs) {
      for (const shard of readShards(this.shardLayout, shardKey)) costs.set(shard.id, (costs.get(shard.id) ?? 0) + tokens);
    }
    this.strictMode.admitRead(costs);
  }

  /** Points, vector bytes and payload bytes over every shard, as the size limits compare them. */
  private async size(): Promise<CollectionSize> {
    const stats = await this.stats();
    return stats.reduce((total, s) => ({ points: total.points + s.points, vectorBytes: total.vectorBytes + s.vectorsBytes, payloadBytes: total.payloadBytes + s.payloadsBytes }), { points: 0, vectorBytes: 0, payloadBytes: 0 });
  }

  /**
   * What a write costs each shard's write rate limiter: per operation, the points it names there,
   * or for a filter the points the filter selects there (Qdrant: its estimate of that number),
   * at least one.
   */
  private async writeCosts(parts: Map<ReplicaSet, WriteOp[]>): Promise<Map<number, number>> {
    const costs = await Promise.all([...parts].map(async ([shard, ops]) => {
      let tokens = 0;
      for (const op of ops) {
        const ids = namedIds(op);
        const selected = ids ? ids.length : 'target' in op && 'filter' in op.target ? await this.read(shard, { type: 'count', filter: op.target.filter }) : 0;
        tokens += Math.max(1, selected);
      }
      return [shard.id, tokens] as const;
    }));
    return new Map(costs);
  }

  /**
   * Applies a list of operations as one collection operation. Each operation goes to the shard
   * groups its keys select and, within a group, to the shard its ids hash to; the shards' parts
   * are then applied all or none (src/replica/shard-writes.ts). Writes to different shards run
   * side by side; those to one shard in order.
   */
  async write(ops: RoutedOp[], wait: boolean): Promise<UpdateResult[]> {
    await this.strictMode.checkWrite(ops.map((r) => r.op), this.indexSpecs, () => this.size());
    this.checkVectors(ops.map((r) => r.op));
    return this.gate.shared(async () => {
      if (this.ended) throw collectionNotFound(this.name);
      const parts = new Map<ReplicaSet, WriteOp[]>();
      for (const { op, shardKey } of ops) {
        for (const group of writeGroups(this.shardLayout, shardKey)) {
          splitOp(op, group.length, (id) => shardOf(id, group.length)).forEach((part, i) => {
            if (part) parts.set(group[i], [...(parts.get(group[i]) ?? []), part]);
          });
        }
      }
      if (this.strictMode.limitsWrites) this.strictMode.admitWrite(await this.writeCosts(parts));
      const mayFail = parts.size > 1 && ops.some((r) => MAY_FAIL.has(r.op.kind));
      // One operation id per operation (Qdrant answers a batch with one result each).
      const first = await applyAcross(parts, this.clock, ops.length, { checkFirst: mayFail, wait });
      const status = wait ? 'completed' : 'acknowledged';
      return ops.map((_, i) => ({ operation_id: first + i, status }));
    });
  }

  /**
   * Applies `ops` to shard `id` alone, numbered and tagged as this node's writes are: an update
   * another peer forwarded to this one as the leader of the shard's replicas (medium or strong
   * ordering, src/cluster/p2p-host.ts). The sender already checked and routed the operations.
   * Answers the first of their operation ids.
   */
  applyToShard(id: number, ops: WriteOp[], wait: boolean): Promise<number> {
    return this.gate.shared(async () => {
      if (this.ended) throw collectionNotFound(this.name);
      const set = this.shards.find((s) => s.id === id);
      if (!set) throw shardNotFound(id);
      return applyAcross(new Map([[set, ops]]), this.clock, ops.length, { checkFirst: false, wait });
    });
  }

  private hasKey(key: ShardKey): boolean {
    return this.shardLayout.keys?.some((e) => e.key === key) ?? false;
  }

  /**
   * Creates `count` shards for a new key of a custom-sharded collection, numbered after the
   * highest shard id, with the collection's payload indexes. Whatever a key dropped before a
   * crash left where a new shard goes is dropped first, so no old point comes back. The new
   * shards exist before `persist` stores the key list, so a crash between the two leaves only
   * shards no record names, which the start-up sweep removes; if `persist` fails, they are dropped.
   */
  createShardKey(key: ShardKey, count: number, place: PlaceShard, persist: Persist<ShardKeyEntry[]>): Promise<void> {
    return this.serial(async () => {
      if (this.hasKey(key)) throw shardKeyAlreadyExists(key, this.name);
      const next = Math.max(0, ...this.shards.map((s) => s.id)) + 1;
      const added = Array.from({ length: count }, (_, i) => place(next + i, key));
      await Promise.all(added.map(async (s) => {
        await s.each({ type: 'drop' });
        await s.update({ type: 'open', spec: this.content() });
      }));
      const keys = [...(this.shardLayout.keys ?? []), { key, shards: added.map((s) => s.id) }];
      try {
        await persist(keys);
      } catch (err) {
        await Promise.all(added.map((s) => s.each({ type: 'drop' })));
        throw err;
      }
      this.shardLayout = { keys, shards: [...this.shards, ...added] };
    });
  }

  /**
   * Removes a key and its shards: reads and writes stop reaching them at once; `persist` stores
   * the remaining key list before any data is deleted, so a crash never leaves the key half there.
   */
  dropShardKey(key: ShardKey, persist: Persist<ShardKeyEntry[]>): Promise<void> {
    return this.serial(async () => {
      if (!this.hasKey(key)) throw shardKeyDoesNotExist(key, this.name);
      const keys = (this.shardLayout.keys ?? []).filter((e) => e.key !== key);
      const dropped = this.shards.filter((s) => s.shardKey === key);
      await persist(keys);
      this.shardLayout = { keys, shards: this.shards.filter((s) => s.shardKey !== key) };
      await Promise.all(dropped.map((s) => s.each({ type: 'drop' })));
    });
  }

  stats(): Promise<ShardStats[]> {
    return Promise.all(this.shards.map((s) => this.guarded(s.read({ type: 'stats' }, null))));
  }

  /**
   * Strict mode's checks of a payload index change a request asks for: the index count (for a
   * new index) and a write rate token on every shard. Checked where the request arrives: a
   * cluster peer checks before proposing the change, and every peer then applies it unchecked
   * (`admission: 'committed'`): a committed change must not be refused by one peer's limits.
   */
  admitIndexChange(creating: boolean): void {
    if (creating) this.strictMode.checkIndexCount(this.indexSpecs.length);
    this.strictMode.admitWrite(new Map(this.shards.map((s) => [s.id, 1])));
  }

  /** Builds a payload index on every shard; `persist` then stores the new index list with the record. */
  createIndex(index: IndexSpec, persist: Persist<IndexSpec[]>, admission: IndexAdmission = 'check'): Promise<UpdateResult> {
    return this.serial(async () => {
      if (admission === 'check') this.admitIndexChange(true);
      await this.updateAll({ type: 'create_index', index });
      return this.changeIndexes([...this.indexSpecs.filter((i) => i.key !== index.key), index], persist);
    });
  }

  dropIndex(key: string, persist: Persist<IndexSpec[]>, admission: IndexAdmission = 'check'): Promise<UpdateResult> {
    return this.serial(async () => {
      if (admission === 'check') this.admitIndexChange(false);
      await this.updateAll({ type: 'drop_index', key });
      return this.changeIndexes(this.indexSpecs.filter((i) => i.key !== key), persist);
    });
  }

  private async changeIndexes(indexes: IndexSpec[], persist: Persist<IndexSpec[]>): Promise<UpdateResult> {
    await persist(indexes);
    this.indexSpecs = indexes;
    return { operation_id: this.clock.take(1), status: 'completed' };
  }
}

/**
 * One vector against its name's kind, in Qdrant's order: a sparse name takes only sparse vectors
 * (a multivector there is WrongMulti); a dense or multi name checks dimensions first, so an empty
 * list (read as a 0-d dense vector) is a dimension error, and only a right-sized vector of the
 * other kind is the conversion error.
 */
function checkVector(name: string, vector: Vector, spec: VectorSpec | undefined): void {
  if (!spec) {
    if (isMulti(vector)) throw multiRegularMismatch();
    if (!isSparse(vector)) throw sparseDenseMismatch();
    return;
  }
  if (isSparse(vector)) throw sparseDenseMismatch();
  const dim = isMulti(vector) ? vector.dim : vector.length;
  if (dim !== spec.size) throw vectorDimensionMismatch(spec.size, dim);
  if (isMulti(vector) !== Boolean(spec.multivector)) throw multiRegularMismatch();
  if (spec.datatype === 'float16') {
    const values = isMulti(vector) ? vector.data : vector;
    const at = float16Overflow(values);
    if (at >= 0) throw float16OutOfRange(name, at, values[at], FLOAT16_OVERFLOW);
  }
}
