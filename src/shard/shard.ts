// One shard: the only owner of its points. It lives in one worker thread and applies operations
// one at a time, so it needs no locks. State in memory: dense offsets <-> point ids, payloads by
// offset, one engine index per named vector, payload indexes. State on disk: one classic-level
// store of point records (point-codec.ts), the operation log (op-log.ts), the clock map
// (clock-map.ts), the last applied log entry and operation id. As in Qdrant, the log is the
// durable copy and the stored records follow it lazily: an operation's only synced write is its
// log entry. wait=true applies it in memory before answering; wait=false answers once it is
// logged and applies it before the shard serves any other task, or sooner when it is idle.
// Updates that arrive together (queued behind one another in the worker) are logged together,
// in one synced batch (group commit), each staged on the state its predecessors lead to.
// Applied changes accumulate per point (its latest record or its deletion) and are flushed in one
// unsynced batch with the applied marker, the clock map and the log truncation that allows, once
// they reach a log segment's size, once the shard is idle, and before anything reads the store
// directly or closes it. Opening loads the records and replays the entries after the applied
// marker; a crash loses only flushes, whose entries the log still holds.
// New vectors are stored unlinked; the shard's optimizer (optimizer/) links them in the
// background and persists the graphs in the same store, which the next open loads instead of
// rebuilding them. Sparse indexes are persisted with them, and on their own once their changes
// pass the indexing threshold.

import { ClassicLevel } from 'classic-level';
import { Bitset, SparseIndex, VectorIndex, type Datatype, type Distance, type MultivectorConfig, type Paging, type Quantization, type SparseDatatype } from '../engine/index.js';
import { pointNotFound } from '../messages.js';
import { isDense, isMulti, isSparse, multiCount, type NamedVectors, type Payload, type PointId } from '../model.js';
import { engineModule, sparseModule } from '../runtime/wasm-module.js';
import { LiveOffsets } from './live-offsets.js';
import { DEFAULT_PAGE_BUDGET_BYTES, PageFiles, removeStalePageFiles } from './page-files.js';
import { PayloadColumns, type PayloadColumn } from './payload-columns.js';
import { indexSemantics, matchesPayload, parseJsonPath, selectMatching, type Filter, type FilterSource } from './filter/index.js';
import { createPayloadIndex, type IndexSchema, type PayloadIndex } from './payload-index/index.js';
import { decodePoint, encodePoint, POINT_PREFIX, pointKey } from './point-codec.js';
import { deleteAtPath, setAtPath } from './payload-path.js';
import { GraphStore, type StoredGraphs } from './optimizer/graph-store.js';
import { DEFAULT_OPTIMIZER_SPEC, indexingThresholdBytes, type OptimizerSpec } from './optimizer/plan.js';
import type { ShardOptimizations } from './optimizer/report.js';
import { ShardOptimizer } from './optimizer/shard-optimizer.js';
import type { PointRecord, Target, WriteOp } from './write-ops.js';
import { ClockMap, type ClockTag } from './clock-map.js';
import { crashPoint } from './crash-points.js';
import type { LogEntry } from './log-entry-codec.js';
import { DEFAULT_WAL_SPEC, OpLog, type WalSpec } from './op-log.js';
import { ownField } from '../own-fields.js';
import { chargeWrite, jsonBytes, type HardwareUsage } from './hardware.js';

export interface VectorSpec {
  name: string;
  size: number;
  distance: Distance;
  m: number;
  efConstruct: number;
  fullScanThreshold: number;
  quantization: Quantization | null;
  /** Lists of vectors per point scored by MaxSim (Qdrant's multivector_config); absent or null: one vector per point. */
  multivector?: MultivectorConfig | null;
  /** The element type vectors are stored in (Qdrant's datatype); absent: float32. */
  datatype?: Datatype;
  /** Regions read on demand (Qdrant's `cold` placement); absent or null: all in memory. */
  paging?: VectorPaging | null;
}

/** Which regions of a vector's index are paged: its vectors (lists), their codes, its graph's links. */
export interface VectorPaging {
  vectors: boolean;
  codes: boolean;
  graph: boolean;
}

/**
 * Bytes of paged rows an index keeps in its memory between requests: QUIVER_COLD_PAGE_BUDGET_BYTES
 * (read here, in the shard worker, which inherits the server's environment) or the default.
 */
const PAGE_BUDGET_BYTES = Number(process.env.QUIVER_COLD_PAGE_BUDGET_BYTES) || DEFAULT_PAGE_BUDGET_BYTES;

/** A named sparse vector: its index's full scan threshold (points), its posting values' datatype and whether queries are weighted by IDF. */
export interface SparseVectorSpec {
  name: string;
  fullScanThreshold: number;
  datatype: SparseDatatype;
  idf: boolean;
}

export interface IndexSpec {
  key: string;
  schema: IndexSchema;
}

export interface ShardSpec {
  path: string;
  vectors: VectorSpec[];
  sparseVectors: SparseVectorSpec[];
  indexes: IndexSpec[];
  /** Qdrant's defaults when absent. */
  optimizer?: OptimizerSpec;
  /** Qdrant's defaults when absent. */
  wal?: WalSpec;
}

/** Where a shard stands: what it has taken (its clock map, Qdrant's recovery point) and what its log holds. */
export interface RecoveryPoint {
  clocks: ClockTag[];
  /**
   * Per clock, the highest tick of an operation the log does not hold although the shard took it
   * (its entry truncated, or taken as part of a transfer's copy, `adopt`): a replica missing a
   * tick up to this one cannot catch up from this log.
   */
  cutoff: ClockTag[];
  /** Oldest entry still in the log; lastSeq + 1 when it holds none. */
  firstSeq: number;
  lastSeq: number;
  /** Last entry applied (its effects may still wait for the next flush to be stored). */
  appliedSeq: number;
}

const LAST_OP_KEY = 'm:last_op';
const APPLIED_SEQ_KEY = 'm:applied_seq';
const CLOCKS_KEY = 'm:clocks';
const CUTOFF_KEY = 'm:cutoff';

/** Names of the vectors whose indexes came from stored images (their records' vectors are already in them). */
interface LoadedImages {
  dense: ReadonlySet<string>;
  sparse: ReadonlySet<string>;
}

/** Point records an entry leads to (null: the point is deleted), computed before it is logged. */
type Staged = Map<PointId, PointRecord | null>;

/** One operation as a shard takes it: its operations, id and clock tag, and whether the answer waits for the apply. */
export interface ShardUpdate {
  ops: WriteOp[];
  opId: number;
  clock: ClockTag;
  wait: boolean;
  /** The clock map it replaces the shard's with (LogEntry.adopt). */
  adopt?: ClockTag[];
  /** Where applying it counts its writes (see hardware.ts). */
  usage?: HardwareUsage;
}

/** A shard as staged operations see it: the ids they changed so far, and each point's staged record. */
interface StagedView {
  changed(): PointId[];
  read(id: PointId): PointRecord | null;
}

/** How one update of a group went: taken (logged, or taken before), or refused with `error`. */
export type UpdateOutcome = { ok: true } | { ok: false; error: unknown };

/** How long the shard waits without a new applied change before it flushes (debounced). */
const IDLE_FLUSH_MS = 20;

interface PendingApply {
  entry: LogEntry;
  staged: Staged;
  usage?: HardwareUsage;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function readJson<T>(db: ClassicLevel<string, Uint8Array>, key: string): Promise<T | undefined> {
  const bytes = await db.get(key);
  return bytes === undefined ? undefined : (JSON.parse(decoder.decode(bytes)) as T);
}

/** Compares ids as Qdrant orders them: numbers first by value, then UUIDs by their text. */
export function compareIds(a: PointId, b: PointId): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  // Numeric ids (number or bigint, which < compares exactly across) before UUIDs.
  const aText = typeof a === 'string';
  if (aText !== (typeof b === 'string')) return aText ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export class Shard implements FilterSource {
  private readonly ids: PointId[] = [];
  private readonly payloads: (Payload | undefined)[] = [];
  /** JSON bytes of each stored payload, -1 until asked (hardware usage of reads). */
  private readonly payloadSizes: number[] = [];
  private readonly versions: number[] = [];
  private readonly offsets = new Map<PointId, number>();
  private readonly live = new LiveOffsets();
  private readonly columns = new PayloadColumns(this.payloads);
  private readonly vectors = new Map<string, VectorIndex>();
  /** The files behind paged vector regions, closed with the shard. */
  private readonly pageFiles: PageFiles[] = [];
  /** Sparse vectors: loaded from their persisted images on open, records newer than those laid over them. */
  private readonly sparse = new Map<string, SparseIndex>();
  /** Sparse vectors changed since their stored image (or with none), and the bytes of postings changed (8 per entry). */
  private readonly sparseDirty = new Set<string>();
  private sparseChangedBytes = 0;
  /** Image writes run one at a time (the optimizer's and the sparse ones). */
  private persisting: Promise<void> = Promise.resolve();
  private sparsePersistQueued = false;
  private closing = false;
  private readonly indexes = new Map<string, PayloadIndex>();
  private readonly indexSpecs = new Map<string, IndexSpec>();
  private sortedIds: PointId[] | null = null;
  /** Offsets of deleted points, given to new points. */
  private readonly free: number[] = [];
  private readonly graphs: GraphStore;
  private readonly optimizer: ShardOptimizer;
  private log!: OpLog;
  private clocks = new ClockMap();
  /** RecoveryPoint.cutoff. */
  private cutoff = new ClockMap();
  private appliedSeq = 0;
  /** wait=false entries logged and acknowledged but not applied yet, in log order. */
  private readonly pending: PendingApply[] = [];
  private applying: Promise<void> | null = null;
  /** Applied changes not stored yet, by point key: the latest record, encoded, or null for a deletion. */
  private unflushed = new Map<string, Uint8Array | null>();
  private unflushedBytes = 0;
  /** The stored applied marker: the last entry whose effects the stored records hold. */
  private flushedSeq = 0;
  /** Flushes run one after another; each stores what has accumulated when it starts. */
  private flushes: Promise<void> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | null = null;
  lastOp = 0;

  private constructor(private readonly db: ClassicLevel<string, Uint8Array>, private readonly spec: ShardSpec) {
    this.graphs = new GraphStore(db);
    this.optimizer = new ShardOptimizer({ vectorIndexes: this.vectors, persistGraphs: () => this.persistGraphs() }, spec.optimizer ?? DEFAULT_OPTIMIZER_SPEC);
  }

  static async open(spec: ShardSpec): Promise<Shard> {
    const db = new ClassicLevel<string, Uint8Array>(spec.path, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    const shard = new Shard(db, spec);
    const stored = await shard.graphs.read(spec.vectors, spec.sparseVectors);
    const module = await engineModule();
    removeStalePageFiles(spec.path);
    for (const [i, v] of spec.vectors.entries()) {
      const image = stored?.images.get(v.name);
      const paging = shard.pagingOf(i, v);
      shard.vectors.set(v.name, image
        ? await VectorIndex.load(module, image, { fullScanThreshold: v.fullScanThreshold, paging })
        : await VectorIndex.create(module, {
          dim: v.size, distance: v.distance, m: v.m, efConstruct: v.efConstruct,
          fullScanThreshold: v.fullScanThreshold, quantization: v.quantization, multivector: v.multivector ?? null, datatype: v.datatype, paging,
        }));
    }
    for (const v of spec.sparseVectors) {
      const image = stored?.sparseImages.get(v.name);
      const config = { fullScanThreshold: v.fullScanThreshold, datatype: v.datatype };
      shard.sparse.set(v.name, image ? await SparseIndex.load(await sparseModule(), image, config) : await SparseIndex.create(await sparseModule(), config));
      if (!image) shard.sparseDirty.add(v.name);
    }
    for (const index of spec.indexes) shard.addIndex(index);
    await shard.load(stored);
    shard.lastOp = (await readJson<number>(db, LAST_OP_KEY)) ?? 0;
    shard.appliedSeq = (await readJson<number>(db, APPLIED_SEQ_KEY)) ?? 0;
    shard.flushedSeq = shard.appliedSeq;
    shard.clocks = new ClockMap((await readJson<ClockTag[]>(db, CLOCKS_KEY)) ?? []);
    shard.cutoff = new ClockMap((await readJson<ClockTag[]>(db, CUTOFF_KEY)) ?? []);
    shard.log = await OpLog.open(db, spec.wal ?? DEFAULT_WAL_SPEC, shard.appliedSeq);
    await shard.replay();
    shard.optimizer.wake();
    shard.persistSparseWhenDue();
    return shard;
  }

  /** The engine's paging of vector `v` (the `index`th of the spec), its page files opened; null when all stays in memory. */
  private pagingOf(index: number, v: VectorSpec): Paging | null {
    if (!v.paging || (!v.paging.vectors && !v.paging.codes && !v.paging.graph)) return null;
    const regions = [v.paging.vectors, v.paging.codes, v.paging.graph].flatMap((paged, region) => (paged ? [region] : []));
    const files = new PageFiles(this.spec.path, index, regions);
    this.pageFiles.push(files);
    return { ...v.paging, budgetBytes: PAGE_BUDGET_BYTES, store: files };
  }

  /** Applies the entries logged after the applied marker: acknowledged wait=false writes a crash stopped. */
  private async replay(): Promise<void> {
    for await (const entry of this.log.entries(this.appliedSeq)) {
      this.clocks = this.clocksAfter(this.clocks, entry);
      await this.applied({ entry, staged: this.stageAll(entry.ops, new Map()) });
    }
  }

  /**
   * Fills memory from the point records. A record that stored graphs include (same id, version
   * up to their last operation) takes its graph offset and leaves the loaded graphs as they are;
   * a record written later is placed as a write places it, and offsets whose point is gone since
   * are deleted, so the graphs end up exactly as current as the records.
   */
  private async load(stored: StoredGraphs | null): Promise<void> {
    const graphOffsets = new Map<PointId, number>();
    stored?.ids.forEach((id, offset) => id !== null && graphOffsets.set(id, offset));
    // New points take offsets after the stored graphs' until the free ones are known.
    this.ids.length = stored?.ids.length ?? 0;
    const inGraphs: LoadedImages = { dense: new Set(stored?.images.keys()), sparse: new Set(stored?.sparseImages.keys()) };
    for await (const value of this.db.values({ gte: POINT_PREFIX, lt: POINT_PREFIX + '\uffff' })) {
      const record = decodePoint(value);
      const offset = graphOffsets.get(record.id);
      if (offset === undefined) {
        this.place(record);
        continue;
      }
      graphOffsets.delete(record.id);
      this.claim(record.id, offset);
      this.fill(record, offset, (record.version ?? 0) <= stored!.lastOp ? inGraphs : null);
    }
    for (const offset of graphOffsets.values()) {
      for (const index of this.vectors.values()) index.delete(offset);
      for (const [name, index] of this.sparse) if (index.delete(offset)) this.sparseChanged(name, 1);
    }
    for (let offset = this.ids.length - 1; offset >= 0; offset--) if (this.payloads[offset] === undefined) this.free.push(offset);
  }

  /**
   * Writes every graph and sparse index image with the offset -> id map and the last operation
   * they include (captured together, between writes). A sparse index unchanged since its stored
   * image keeps that image: it still holds exactly the sparse vectors of these offsets.
   */
  private persistGraphs(): Promise<void> {
    const next = this.persisting.catch(() => undefined /* reported to its own caller */).then(async () => {
      const dense = new Map([...this.vectors].map(([name, index]) => [name, index.serializeParts()]));
      const dirty = new Set(this.sparseDirty);
      const changedBytes = this.sparseChangedBytes;
      const sparse = new Map([...this.sparse].map(([name, index]) => [name, dirty.has(name) ? index.serialize() : null]));
      this.sparseDirty.clear();
      this.sparseChangedBytes = 0;
      const ids = Array.from(this.ids, (id, offset) => (this.payloads[offset] === undefined ? null : id));
      const lastOp = this.lastOp;
      try {
        // Opening lays records newer than the images over them, never the reverse: the records
        // must be stored at least as far as the captured images go before the images are.
        await this.flush();
        await this.graphs.write(this.spec.vectors, this.spec.sparseVectors, { dense, sparse }, ids, lastOp);
      } catch (err) {
        for (const name of dirty) this.sparseDirty.add(name);
        this.sparseChangedBytes += changedBytes;
        throw err;
      }
    });
    this.persisting = next;
    return next;
  }

  /** Counts a change of `entries` postings of a sparse vector; past the indexing threshold, its images are written in the background. */
  private sparseChanged(name: string, entries: number): void {
    this.sparseDirty.add(name);
    this.sparseChangedBytes += 8 * Math.max(1, entries);
  }

  /**
   * Persists the images once the sparse changes since the last ones pass the indexing threshold
   * (Qdrant indexes a segment past it; below it the index is rebuilt from the records on open,
   * as Qdrant rebuilds an appendable segment's mutable sparse index) and a quarter of what the
   * indexes hold: each image is written whole, so a growing index is written a bounded number
   * of times its final size (at a fixed threshold, 200000 documents wrote ~100 images).
   */
  private persistSparseWhenDue(): void {
    if (this.sparsePersistQueued || this.closing) return;
    // An image holds each non-zero twice (stored vector and posting), 8 bytes each.
    let held = 0;
    for (const index of this.sparse.values()) held += 16 * index.entryCount;
    if (this.sparseChangedBytes < Math.max(indexingThresholdBytes(this.spec.optimizer ?? DEFAULT_OPTIMIZER_SPEC), held / 4)) return;
    this.sparsePersistQueued = true;
    setImmediate(() => {
      this.sparsePersistQueued = false;
      if (this.closing) return;
      this.persistGraphs().catch(() => undefined /* the changes stay counted: the next persist writes them */);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.settle();
    await this.optimizer.stop();
    await this.persisting.catch(() => undefined /* a failed image write leaves the records to rebuild from */);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    await this.flush();
    for (const files of this.pageFiles) files.close();
    await this.db.close();
  }

  optimizations(): ShardOptimizations {
    return this.optimizer.report();
  }

  configureOptimizer(spec: OptimizerSpec): void {
    this.spec.optimizer = spec;
    this.optimizer.configure(spec);
  }

  /** Every stored point record in its on-disk form, in key order; one task reads it whole, so it is one point in time. */
  async *storedPoints(): AsyncGenerator<Uint8Array> {
    await this.flush();
    for await (const value of this.db.values({ gte: POINT_PREFIX, lt: POINT_PREFIX + '\uffff' })) yield value;
  }

  /** Writes a new store at `path` holding `records` (versions kept) and `lastOp`, with an empty log, as `apply` would have left it. */
  static async createStore(path: string, records: AsyncIterable<PointRecord>, lastOp: number): Promise<number> {
    const db = new ClassicLevel<string, Uint8Array>(path, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    try {
      let count = 0;
      let batch = db.batch();
      for await (const record of records) {
        batch.put(pointKey(record.id), encodePoint(record));
        if (++count % 1000 === 0) {
          await batch.write();
          batch = db.batch();
        }
      }
      batch.put(LAST_OP_KEY, encoder.encode(String(lastOp)));
      await batch.write({ sync: true });
      return count;
    } finally {
      await db.close();
    }
  }

  // FilterSource: what filters and payload indexes read.
  get size(): number {
    return this.ids.length;
  }
  isLive(offset: number): boolean {
    return this.payloads[offset] !== undefined;
  }
  liveOffsets(): Bitset {
    return this.live.below(this.ids.length);
  }
  payload(offset: number): Payload | undefined {
    return this.payloads[offset];
  }
  column(key: string): PayloadColumn {
    return this.columns.column(key);
  }
  payloadBytes(offset: number): number {
    let size = this.payloadSizes[offset] ?? -1;
    if (size < 0) this.payloadSizes[offset] = size = jsonBytes(this.payloads[offset] ?? {});
    return size;
  }
  pointId(offset: number): PointId {
    return this.ids[offset];
  }
  /** The version of the live point at `offset`, as its record has it, without reading the record. */
  version(offset: number): number {
    return this.versions[offset] ?? 0;
  }
  hasVector(offset: number, name: string): boolean {
    return (this.vectors.get(name) ?? this.sparse.get(name))?.has(offset) ?? false;
  }
  offsetOf(id: PointId): number | undefined {
    return this.offsets.get(id);
  }
  index(key: string): PayloadIndex | undefined {
    return this.indexes.get(key);
  }

  get pointCount(): number {
    return this.offsets.size;
  }

  vectorCount(name: string): number {
    return (this.vectors.get(name) ?? this.sparse.get(name))?.size ?? 0;
  }

  /** Vectors of a dense or multi name in all (each row of a multivector counts), for sizes in bytes. */
  storedVectorCount(name: string): number {
    return this.vectors.get(name)?.storedVectorCount ?? 0;
  }

  indexedPoints(key: string): number {
    return this.indexes.get(key)?.indexedPoints() ?? 0;
  }

  /** The stored record of a live point. */
  record(id: PointId): PointRecord | undefined {
    const offset = this.offsets.get(id);
    if (offset === undefined) return undefined;
    const vectors: NamedVectors = {};
    for (const [name, index] of this.vectors) {
      if (!index.has(offset)) continue;
      vectors[name] = index.multivector ? { dim: index.dim, data: index.vector(offset) } : index.vector(offset);
    }
    for (const [name, index] of this.sparse) {
      const v = index.vector(offset);
      if (v) vectors[name] = v;
    }
    return { id, vectors, payload: this.payloads[offset] ?? {}, version: this.versions[offset] };
  }

  /** Live ids in Qdrant's order. */
  orderedIds(): PointId[] {
    this.sortedIds ??= [...this.offsets.keys()].sort(compareIds);
    return this.sortedIds;
  }

  /** Offsets of live points matching `filter` (all live points when it is null). */
  matching(filter: Filter | null): Bitset {
    if (filter) return selectMatching(filter, this);
    const all = new Bitset(this.size);
    for (const offset of this.offsets.values()) all.add(offset);
    return all;
  }

  /**
   * Takes one operation (a list of operations applied in order) tagged with its clock tag. It is
   * first played against a staged view of the shard, so a failure (a point that must exist and
   * does not) throws before anything is logged or changed; with `dryRun`, stops after that check.
   * An operation whose tag the clock map already covers was taken before and is skipped. With
   * `wait`, returns once applied; without, once durable in the log.
   */
  async apply(ops: WriteOp[], opId: number, clock: ClockTag, wait: boolean, dryRun = false): Promise<void> {
    if (dryRun) {
      await this.settle();
      if (!this.clocks.covers(clock)) this.stageAll(ops, new Map());
      return;
    }
    const [outcome] = await this.applyGroup([{ ops, opId, clock, wait }]);
    if (!outcome.ok) throw outcome.error;
  }

  /**
   * Takes updates in order as `apply` takes one, with one synced write for all their log
   * entries. Each is staged on the state the ones before it lead to; a refused one is left out
   * and the others go on. Answers once every update is durable in the log, and, if any of them
   * waits, applied. If the log write fails, none is taken.
   */
  async applyGroup(updates: ShardUpdate[]): Promise<UpdateOutcome[]> {
    await this.settle();
    let clocks = new ClockMap(this.clocks.tags());
    const cutoff = new ClockMap(this.cutoff.tags());
    const before: Staged = new Map();
    const taken: { update: ShardUpdate; staged: Staged; index: number }[] = [];
    const outcomes = updates.map((update, index): UpdateOutcome => {
      if (clocks.covers(update.clock)) return { ok: true };
      try {
        const staged = this.stageAll(update.ops, before);
        for (const [id, record] of staged) before.set(id, record);
        clocks = this.clocksAfter(clocks, update, cutoff);
        taken.push({ update, staged, index });
        return { ok: true };
      } catch (error) {
        return { ok: false, error };
      }
    });
    if (taken.length === 0) return outcomes;
    const appends = this.log.prepare(taken.map(({ update }) => update));
    const batch = this.db.batch();
    for (const append of appends) batch.put(append.key, append.value);
    try {
      await batch.write({ sync: true });
    } catch (error) {
      for (const { index } of taken) outcomes[index] = { ok: false, error };
      return outcomes;
    }
    this.clocks = clocks;
    this.cutoff = cutoff;
    appends.forEach((append, i) => {
      this.log.appended(append);
      crashPoint('after-log-append', append.entry.seq);
      this.pending.push({ entry: append.entry, staged: taken[i].staged, usage: taken[i].update.usage });
    });
    if (taken.some(({ update }) => update.wait)) {
      await this.settle();
    } else {
      // Apply while the worker is idle, so the next task rarely has to wait for it.
      setImmediate(() => this.settle().catch(() => undefined /* the next task's settle() retries and reports it */));
    }
    return outcomes;
  }

  /**
   * The clock map once `update` is taken on `clocks`: its tag's tick raised, or, for an update
   * that adopts a map (a transfer's clearing), that map with its tag; the adopted ticks then
   * join `cutoff`, the updates they stand for being in no entry of this log.
   */
  private clocksAfter(clocks: ClockMap, update: { clock: ClockTag; adopt?: ClockTag[] }, cutoff: ClockMap = this.cutoff): ClockMap {
    const next = update.adopt ? new ClockMap(update.adopt) : clocks;
    if (update.adopt) for (const tag of update.adopt) cutoff.advance(tag);
    next.advance(update.clock);
    return next;
  }

  /** Applies every pending wait=false entry, in order; every task starts with it so it sees them. */
  settle(): Promise<void> {
    if (this.pending.length === 0) return this.applying ?? Promise.resolve();
    this.applying ??= (async () => {
      try {
        while (this.pending.length > 0) {
          crashPoint('before-apply', this.pending[0].entry.seq);
          await this.applied(this.pending[0]);
          this.pending.shift();
        }
      } finally {
        this.applying = null;
      }
    })();
    return this.applying;
  }

  /**
   * Applies a logged entry in memory and adds its records to the next flush, which runs once the
   * accumulated records reach a log segment's size (wal_capacity_mb), or once the shard is idle.
   */
  private async applied({ entry, staged, usage }: PendingApply): Promise<void> {
    for (const [id, record] of staged) {
      if (record) {
        if (usage) chargeWrite(usage, record, this.indexes.keys());
        const versioned = { ...record, version: entry.opId };
        this.place(versioned);
        this.accumulate(pointKey(id), encodePoint(versioned));
      } else {
        this.remove(id);
        this.accumulate(pointKey(id), null);
      }
    }
    this.appliedSeq = entry.seq;
    this.lastOp = Math.max(this.lastOp, entry.opId);
    this.optimizer.wake();
    this.persistSparseWhenDue();
    if (this.unflushedBytes < (this.spec.wal ?? DEFAULT_WAL_SPEC).capacityBytes) return this.flushWhenIdle();
    // The entry is logged and applied whatever this flush does: a failed one keeps the changes
    // for the next flush, which a reader of the store awaits and so reports.
    await this.flush().catch(() => undefined);
  }

  /** Keeps the latest change of a point only: a point written many times between flushes is stored once. */
  private accumulate(key: string, value: Uint8Array | null): void {
    const size = (v: Uint8Array | null | undefined): number => (v === undefined ? 0 : key.length + (v?.byteLength ?? 0));
    this.unflushedBytes += size(value) - size(this.unflushed.get(key));
    this.unflushed.set(key, value);
  }

  /** Flushes once no change has been applied for IDLE_FLUSH_MS. */
  private flushWhenIdle(): void {
    if (this.idleTimer) {
      this.idleTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      this.flush().catch(() => undefined /* the changes stay accumulated: the next flush stores them and reports */);
    }, IDLE_FLUSH_MS);
    this.idleTimer.unref();
  }

  /**
   * Stores every applied change in one unsynced batch with the applied marker, the clock map and
   * the log truncation that allows. Unsynced: the log entries are durable, so a crash replays what
   * the batch loses. Every direct reader of the store awaits it first.
   */
  flush(): Promise<void> {
    const next = this.flushes.catch(() => undefined /* reported to its own caller */).then(() => this.writeFlush());
    this.flushes = next;
    return next;
  }

  private async writeFlush(): Promise<void> {
    const seq = this.appliedSeq;
    if (seq === this.flushedSeq && this.unflushed.size === 0) return;
    const changes = this.unflushed;
    this.unflushed = new Map();
    this.unflushedBytes = 0;
    const batch = this.db.batch();
    for (const [key, value] of changes) {
      if (value) batch.put(key, value);
      else batch.del(key);
    }
    batch.put(LAST_OP_KEY, encoder.encode(String(this.lastOp)));
    batch.put(APPLIED_SEQ_KEY, encoder.encode(String(seq)));
    batch.put(CLOCKS_KEY, encoder.encode(JSON.stringify(this.clocks.tags())));
    const truncated = this.log.truncate(batch, seq);
    const cutoff = new ClockMap(this.cutoff.tags());
    for (const tag of this.log.clocksOf(truncated)) cutoff.advance(tag);
    batch.put(CUTOFF_KEY, encoder.encode(JSON.stringify(cutoff.tags())));
    try {
      await batch.write();
    } catch (err) {
      // Changes applied since this flush began are newer than its own.
      for (const [key, value] of changes) if (!this.unflushed.has(key)) this.accumulate(key, value);
      throw err;
    }
    crashPoint('after-flush-write', this.flushedSeq + 1, seq);
    this.log.truncated(truncated);
    // Adopted meanwhile (applyGroup) is kept: the stored map is only ever lower than the live one.
    for (const tag of cutoff.tags()) this.cutoff.advance(tag);
    this.flushedSeq = seq;
  }

  /** The records `ops` lead to, played on the shard as `before` (earlier staged changes) leaves it. */
  private stageAll(ops: WriteOp[], before: Staged): Staged {
    const staged: Staged = new Map();
    const read = (id: PointId): PointRecord | null => {
      if (staged.has(id)) return staged.get(id)!;
      return before.has(id) ? before.get(id)! : this.record(id) ?? null;
    };
    const view: StagedView = { changed: () => [...before.keys(), ...staged.keys()], read };
    for (const op of ops) this.stage(op, staged, view);
    return staged;
  }

  /** Where the shard stands (after its pending applies). */
  recoveryPoint(): RecoveryPoint {
    return { clocks: this.clocks.tags(), cutoff: this.cutoff.tags(), firstSeq: this.log.firstSeq, lastSeq: this.log.lastSeq, appliedSeq: this.appliedSeq };
  }

  /** Up to `limit` log entries after sequence number `after` (LogTruncated when the log no longer holds them all). */
  entriesAfter(after: number, limit: number): Promise<LogEntry[]> {
    return this.log.entriesAfter(after, limit);
  }

  private stage(op: WriteOp, staged: Staged, view: StagedView): void {
    const { read } = view;
    const existing = (target: Target): PointRecord[] => this.resolve(target, view);
    switch (op.kind) {
      case 'upsert':
        for (const p of op.points) {
          const current = read(p.id);
          if (current ? op.mode === 'insert_only' : op.mode === 'update_only') continue;
          // update_filter: an existing point is replaced only while it matches the filter.
          if (current && op.updateFilter && !this.matchesRecord(op.updateFilter, current)) continue;
          staged.set(p.id, { id: p.id, vectors: p.vectors, payload: p.payload ?? {} });
        }
        return;
      case 'delete':
        for (const id of 'ids' in op.target ? op.target.ids : existing(op.target).map((r) => r.id)) {
          if (read(id)) staged.set(id, null);
        }
        return;
      case 'update_vectors': {
        // As in Qdrant, the filter is judged once, on the points as the operation finds them;
        // a point that does not exist is still an error.
        const { updateFilter } = op;
        const excluded = new Set(updateFilter ? op.points.flatMap((p) => {
          const current = read(p.id);
          return current && !this.matchesRecord(updateFilter, current) ? [p.id] : [];
        }) : []);
        for (const p of op.points) {
          if (excluded.has(p.id)) continue;
          const current = read(p.id);
          if (!current) throw pointNotFound(p.id);
          staged.set(p.id, { ...current, vectors: { ...current.vectors, ...p.vectors } });
        }
        return;
      }
      case 'delete_vectors':
        for (const r of existing(op.target)) {
          const vectors = { ...r.vectors };
          for (const name of op.names) delete vectors[name];
          staged.set(r.id, { ...r, vectors });
        }
        return;
      case 'set_payload':
        for (const r of existing(op.target)) {
          const payload = structuredClone(r.payload ?? {});
          const path = op.key === null ? undefined : parseJsonPath(op.key);
          if (path) setAtPath(payload, path, structuredClone(op.payload));
          else Object.assign(payload, structuredClone(op.payload));
          staged.set(r.id, { ...r, payload });
        }
        return;
      case 'overwrite_payload':
        for (const r of existing(op.target)) staged.set(r.id, { ...r, payload: structuredClone(op.payload) });
        return;
      case 'delete_payload':
        for (const r of existing(op.target)) {
          const payload = structuredClone(r.payload ?? {});
          for (const key of op.keys) {
            const path = parseJsonPath(key);
            if (path) deleteAtPath(payload, path);
          }
          staged.set(r.id, { ...r, payload });
        }
        return;
      case 'clear_payload':
        for (const r of existing(op.target)) staged.set(r.id, { ...r, payload: {} });
        return;
    }
  }

  /** Current records of a target: listed ids must exist; a filter is matched against staged state. */
  private resolve(target: Target, { changed, read }: StagedView): PointRecord[] {
    if ('ids' in target) {
      return target.ids.map((id) => {
        const r = read(id);
        if (!r) throw pointNotFound(id);
        return r;
      });
    }
    const out: PointRecord[] = [];
    const changedIds = changed();
    if (changedIds.length === 0) {
      for (const offset of this.matching(target.filter)) out.push(this.record(this.ids[offset])!);
      return out;
    }
    // Earlier operations (of this request or of updates logged with it) changed points: match
    // against their staged form.
    for (const id of new Set([...this.offsets.keys(), ...changedIds])) {
      const r = read(id);
      if (r && this.matchesRecord(target.filter, r)) out.push(r);
    }
    return out;
  }

  /** One record against a filter, with the full-text semantics of this shard's text indexes. */
  private matchesRecord(filter: Filter, record: PointRecord): boolean {
    return matchesPayload(filter, { id: record.id, payload: record.payload ?? {}, vectors: new Set(Object.keys(record.vectors)) }, indexSemantics(this));
  }

  /** Puts a record in memory: a new point gets a free offset or the next one, an existing one keeps its own. */
  private place(record: PointRecord): void {
    let offset = this.offsets.get(record.id);
    if (offset === undefined) offset = this.claim(record.id, this.free.pop() ?? this.ids.length);
    else for (const index of this.indexes.values()) index.remove(offset);
    this.fill(record, offset, null);
  }

  private claim(id: PointId, offset: number): number {
    this.ids[offset] = id;
    this.offsets.set(id, offset);
    this.sortedIds = null;
    return offset;
  }

  /** Writes a record at its offset; the vectors of `loaded` indexes are already there. New vectors are stored unlinked. */
  private fill(record: PointRecord, offset: number, loaded: LoadedImages | null): void {
    const payload = record.payload ?? {};
    this.payloads[offset] = payload;
    this.live.add(offset);
    this.columns.set(offset, payload);
    this.payloadSizes[offset] = -1;
    this.versions[offset] = record.version ?? 0;
    for (const [name, index] of this.vectors) {
      if (loaded?.dense.has(name)) continue;
      const v = ownField(record.vectors, name);
      // A record holds the kind its index takes (checked before it was logged).
      if (v && index.multivector && isMulti(v)) index.stash(offset, v.data, multiCount(v));
      else if (v && !index.multivector && isDense(v)) index.stash(offset, v);
      else index.delete(offset);
    }
    for (const [name, index] of this.sparse) {
      if (loaded?.sparse.has(name)) continue;
      const v = ownField(record.vectors, name);
      if (v && isSparse(v)) {
        index.upsert(offset, v);
        this.sparseChanged(name, v.indices.length);
      } else if (index.delete(offset)) this.sparseChanged(name, 1);
    }
    for (const index of this.indexes.values()) index.add(offset, payload);
  }

  private remove(id: PointId): void {
    const offset = this.offsets.get(id);
    if (offset === undefined) return;
    this.offsets.delete(id);
    this.payloads[offset] = undefined;
    this.live.delete(offset);
    this.columns.set(offset, undefined);
    this.payloadSizes[offset] = -1;
    this.free.push(offset);
    this.sortedIds = null;
    for (const index of this.vectors.values()) index.delete(offset);
    for (const [name, index] of this.sparse) if (index.delete(offset)) this.sparseChanged(name, 1);
    for (const index of this.indexes.values()) index.remove(offset);
  }

  /** Builds a payload index over the current points (replacing one on the same key). */
  createIndex(spec: IndexSpec): void {
    this.addIndex(spec);
    const index = this.indexes.get(spec.key)!;
    for (const offset of this.offsets.values()) index.add(offset, this.payloads[offset]!);
  }

  private addIndex(spec: IndexSpec): void {
    this.indexes.set(spec.key, createPayloadIndex(spec.key, spec.schema));
    this.indexSpecs.set(spec.key, spec);
  }

  dropIndex(key: string): void {
    this.indexes.delete(key);
    this.indexSpecs.delete(key);
  }

  describe(): { vectors: VectorSpec[]; indexes: IndexSpec[] } {
    return { vectors: this.spec.vectors, indexes: [...this.indexSpecs.values()] };
  }

  sparseIndex(name: string): SparseIndex | undefined {
    return this.sparse.get(name);
  }

  sparseSpec(name: string): SparseVectorSpec | undefined {
    return this.spec.sparseVectors.find((v) => v.name === name);
  }

  vectorIndex(name: string): VectorIndex | undefined {
    return this.vectors.get(name);
  }
}
