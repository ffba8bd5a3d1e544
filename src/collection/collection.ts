// A collection as the main thread sees it: its configuration, where its shards live, and the
// routing, fan-out and merging of every operation. It never holds point data itself.

import { BadInput } from '../errors.js';
import type { PointId } from '../model.js';
import type { Filter } from '../shard/filter/index.js';
import type { PointView } from '../shard/selectors.js';
import { ranksLargerFirst, type ScoredView, type SearchSpec } from '../shard/search.js';
import type { FacetValue } from '../shard/payload-index/types.js';
import { compareIds, type IndexSpec, type ShardSpec, type VectorSpec } from '../shard/shard.js';
import { namedIds, restrictOp, type WriteOp } from '../shard/write-ops.js';
import { DEFAULT_OPTIMIZER_SPEC, type OptimizerSpec } from '../shard/optimizer/plan.js';
import type { ShardOptimizations } from '../shard/optimizer/report.js';
import type { ShardWorkers } from '../worker/pool.js';
import type { OrderBy, ReadShape, ShardStats, ShardTask, TaskResults } from '../worker/tasks.js';
import type { FileSlice } from '../snapshot/tar.js';
import { activeDeadline } from './deadline-scope.js';
import { shardOf } from './routing.js';
import { WriteQueue } from './write-queue.js';

export interface ShardPlacement {
  /** Node-unique key of the shard (collection storage id + number). */
  key: string;
  worker: number;
  path: string;
}

export interface UpdateResult {
  operation_id: number;
  status: 'acknowledged' | 'completed';
}

export interface ScrollPage {
  points: PointView[];
  next_page_offset: PointId | null;
}

/** Tasks that only read, and so may be cut short by a deadline (a write never is: it would half-apply). */
const READS = new Set<ShardTask['type']>(['retrieve', 'scroll', 'count', 'search', 'facet', 'sample']);

/** Operations that fail on a point that does not exist, and so may fail on one shard after another shard applied them. */
const MAY_FAIL = new Set<WriteOp['kind']>(['update_vectors', 'delete_vectors', 'set_payload', 'overwrite_payload', 'delete_payload', 'clear_payload']);

export class Collection {
  private operationId = 0;
  private readonly writes = new WriteQueue();

  constructor(
    readonly name: string,
    private readonly workers: ShardWorkers,
    readonly shards: ShardPlacement[],
    private vectorSpecs: VectorSpec[],
    private indexSpecs: IndexSpec[],
    private optimizerSpec: OptimizerSpec = DEFAULT_OPTIMIZER_SPEC,
  ) {}

  get vectors(): readonly VectorSpec[] {
    return this.vectorSpecs;
  }

  get indexes(): readonly IndexSpec[] {
    return this.indexSpecs;
  }

  /** Sends a task to the shard's worker; reads carry the deadline of the request they serve. */
  private run<T extends ShardTask>(shard: ShardPlacement, task: T): Promise<TaskResults[T['type']]> {
    return this.workers.run(shard.worker, task, READS.has(task.type) ? activeDeadline() : null);
  }

  /** Opens every shard in its worker; the operation counter resumes after the highest applied id. */
  async open(): Promise<void> {
    const opened = await Promise.all(this.shards.map((s) => this.run(s, { type: 'open', shard: s.key, spec: this.specOf(s) })));
    this.operationId = Math.max(0, ...opened.map((o) => o.lastOp));
  }

  private specOf(shard: ShardPlacement): ShardSpec {
    return { path: shard.path, vectors: this.vectorSpecs, indexes: this.indexSpecs, optimizer: this.optimizerSpec };
  }

  /** New optimizer settings for every shard; queued with the writes, like any configuration change. */
  configureOptimizer(optimizer: OptimizerSpec): Promise<void> {
    return this.writes.enqueue(async () => {
      this.optimizerSpec = optimizer;
      await Promise.all(this.shards.map((s) => this.run(s, { type: 'configure_optimizer', shard: s.key, optimizer })));
    });
  }

  /** What each shard's optimizer is doing and has done. */
  optimizations(): Promise<ShardOptimizations[]> {
    return Promise.all(this.shards.map((s) => this.run(s, { type: 'optimizations', shard: s.key })));
  }

  /**
   * Gives every shard new vector parameters (hnsw_config or quantization_config changed): each
   * shard reopens from its store in one worker task (its persisted graphs no longer match, so its
   * optimizer links the vectors again in the background); writes wait for the reopen.
   */
  async reconfigure(vectors: VectorSpec[]): Promise<void> {
    await this.writes.enqueue(async () => {
      this.vectorSpecs = vectors;
      await Promise.all(this.shards.map((s) => this.run(s, { type: 'reopen', shard: s.key, spec: this.specOf(s) })));
    });
  }

  /** Writes listed shards' points to files between two writes, so together they are one point in time. */
  snapshotShards(targets: { index: number; path: string }[]): Promise<TaskResults['snapshot'][]> {
    return this.writes.enqueue(() => Promise.all(targets.map(({ index, path }) => this.run(this.shards[index], { type: 'snapshot', shard: this.shards[index].key, path }))));
  }

  /**
   * Replaces shards' data with snapshot parts (opening shards not open yet). Each worker builds the
   * new store beside the live one and swaps it in as one task; a shard whose part fails keeps its
   * data. Queued with the writes, so no write is half-applied across it.
   */
  restoreShards(parts: { index: number; part: FileSlice; lastOp: number }[]): Promise<void> {
    return this.writes.enqueue(async () => {
      const outcomes = await Promise.allSettled(parts.map(({ index, part, lastOp }) => {
        const shard = this.shards[index];
        return this.run(shard, { type: 'restore', shard: shard.key, spec: this.specOf(shard), part, lastOp, route: { index, count: this.shards.length } });
      }));
      for (const outcome of outcomes) if (outcome.status === 'fulfilled') this.operationId = Math.max(this.operationId, outcome.value.lastOp);
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;
    });
  }

  async close(): Promise<void> {
    await this.writes.idle();
    await Promise.all(this.shards.map((s) => this.run(s, { type: 'close', shard: s.key })));
  }

  async drop(): Promise<void> {
    await this.writes.idle();
    await Promise.all(this.shards.map((s) => this.run(s, { type: 'drop', shard: s.key })));
  }

  private vectorSpec(name: string): VectorSpec {
    const spec = this.vectorSpecs.find((v) => v.name === name);
    if (!spec) throw new BadInput(`Not existing vector name error: ${name}`);
    return spec;
  }

  /** Checks vector names and dimensions of every operation before anything is sent to a shard. */
  private checkVectors(ops: WriteOp[]): void {
    const byName = new Map(this.vectorSpecs.map((v) => [v.name, v]));
    for (const op of ops) {
      if (op.kind !== 'upsert' && op.kind !== 'update_vectors' && op.kind !== 'delete_vectors') continue;
      if (op.kind === 'delete_vectors') {
        for (const name of op.names) if (!byName.has(name)) throw new BadInput(`Not existing vector name error: ${name}`);
        continue;
      }
      for (const p of op.points) {
        for (const [name, vector] of Object.entries(p.vectors)) {
          const spec = byName.get(name);
          if (!spec) throw new BadInput(`Not existing vector name error: ${name}`);
          if (vector.length !== spec.size) throw new BadInput(`Vector dimension error: expected dim: ${spec.size}, got ${vector.length}`);
        }
      }
    }
  }

  /**
   * Applies a list of operations as one collection operation. Writes of one collection are
   * serialised, so operation ids follow the order of application on every shard.
   */
  write(ops: WriteOp[], wait: boolean): Promise<UpdateResult[]> {
    this.checkVectors(ops);
    return this.writes.enqueue(async () => {
      // One operation id per operation (Qdrant answers a batch with one result each); the
      // shards record the last, so the counter resumes after all of them on restart.
      const first = this.operationId + 1;
      this.operationId += ops.length;
      const opId = this.operationId;
      const perShard = this.shards.map((_, i) => ops.flatMap((op) => {
        const ids = namedIds(op);
        if (ids === null) return [op];
        const part = restrictOp(op, (id) => shardOf(id, this.shards.length) === i);
        return part ? [part] : [];
      }));
      const involved = this.shards.map((s, i) => ({ s, ops: perShard[i] })).filter((x) => x.ops.length > 0);
      if (involved.length > 1 && ops.some((op) => MAY_FAIL.has(op.kind))) {
        await Promise.all(involved.map(({ s, ops: o }) => this.run(s, { type: 'apply', shard: s.key, ops: o, opId, dryRun: true })));
      }
      await Promise.all(involved.map(({ s, ops: o }) => this.run(s, { type: 'apply', shard: s.key, ops: o, opId, dryRun: false })));
      const status = wait ? 'completed' : 'acknowledged';
      return ops.map((_, i) => ({ operation_id: first + i, status }));
    });
  }

  /** Points by id, in the order asked, each once; missing ids are left out. */
  async retrieve(ids: PointId[], shape: ReadShape): Promise<PointView[]> {
    const unique = [...new Set(ids)];
    const groups = this.shards.map((_, i) => unique.filter((id) => shardOf(id, this.shards.length) === i));
    const found = await Promise.all(this.shards.map((s, i) => (groups[i].length ? this.run(s, { type: 'retrieve', shard: s.key, ids: groups[i], shape }) : [])));
    const byId = new Map<PointId, PointView>();
    for (const list of found) for (const p of list) byId.set(p.id, p);
    return unique.flatMap((id) => byId.get(id) ?? []);
  }

  async scroll(filter: Filter | null, from: PointId | null, limit: number, shape: ReadShape, orderBy: OrderBy | null): Promise<ScrollPage> {
    // One extra point per shard tells whether a next page exists and where it starts.
    const pages = await Promise.all(this.shards.map((s) => this.run(s, { type: 'scroll', shard: s.key, filter, from, limit: limit + 1, shape, orderBy })));
    const merged = pages.flat();
    if (orderBy) {
      const sign = orderBy.direction === 'desc' ? -1 : 1;
      merged.sort((a, b) => sign * ((a.orderValue ?? 0) - (b.orderValue ?? 0)) || compareIds(a.id, b.id));
      return { points: merged.slice(0, limit), next_page_offset: null };
    }
    merged.sort((a, b) => compareIds(a.id, b.id));
    return { points: merged.slice(0, limit), next_page_offset: merged.length > limit ? merged[limit].id : null };
  }

  /**
   * Up to `limit` matching points drawn uniformly at random without replacement. Each shard
   * shuffles its own matches; each pick then comes from a shard with probability proportional
   * to the matches it has left, which makes the draw uniform over the whole collection.
   */
  async sample(filter: Filter | null, limit: number, shape: ReadShape): Promise<PointView[]> {
    const draws = await Promise.all(this.shards.map((s) => this.run(s, { type: 'sample', shard: s.key, filter, limit, shape })));
    const left = draws.map((d) => d.matching);
    const out: PointView[] = [];
    let total = left.reduce((a, b) => a + b, 0);
    while (out.length < limit && total > 0) {
      let pick = Math.floor(Math.random() * total);
      const i = left.findIndex((n) => (pick -= n) < 0);
      out.push(draws[i].points[draws[i].matching - left[i]]);
      left[i]--;
      total--;
    }
    return out;
  }

  /**
   * Runs a batch of searches with one task per shard (all shards in parallel), then merges each
   * search's hits: best score first, ties by id, then `offset` and `limit` over the merged list.
   */
  async search(searches: { spec: Omit<SearchSpec, 'top'>; limit: number; offset: number }[]): Promise<ScoredView[][]> {
    for (const s of searches) this.vectorSpec(s.spec.using);
    const specs = searches.map((s) => ({ ...s.spec, top: s.limit + s.offset }));
    const perShard = await Promise.all(this.shards.map((sh) => this.run(sh, { type: 'search', shard: sh.key, searches: specs })));
    return searches.map((s, i) => {
      const larger = ranksLargerFirst(s.spec.query, this.vectorSpec(s.spec.using).distance);
      const hits = perShard.flatMap((r) => r[i]);
      hits.sort((a, b) => (larger ? b.score - a.score : a.score - b.score) || compareIds(a.id, b.id));
      return hits.slice(s.offset, s.offset + s.limit);
    });
  }

  /** Facet counts summed over shards, by count (descending) then value (ascending), as Qdrant orders them. */
  async facet(key: string, filter: Filter | null, limit: number): Promise<{ value: FacetValue; count: number }[]> {
    const perShard = await Promise.all(this.shards.map((s) => this.run(s, { type: 'facet', shard: s.key, key, filter })));
    const totals = new Map<FacetValue, number>();
    for (const pairs of perShard) for (const [value, n] of pairs) totals.set(value, (totals.get(value) ?? 0) + n);
    return [...totals]
      .filter(([, count]) => count > 0)
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || compareFacetValues(a.value, b.value))
      .slice(0, limit);
  }

  async count(filter: Filter | null): Promise<number> {
    const counts = await Promise.all(this.shards.map((s) => this.run(s, { type: 'count', shard: s.key, filter })));
    return counts.reduce((a, b) => a + b, 0);
  }

  async stats(): Promise<ShardStats[]> {
    return Promise.all(this.shards.map((s) => this.run(s, { type: 'stats', shard: s.key })));
  }

  async createIndex(index: IndexSpec): Promise<UpdateResult> {
    return this.writes.enqueue(async () => {
      await Promise.all(this.shards.map((s) => this.run(s, { type: 'create_index', shard: s.key, index })));
      this.indexSpecs = [...this.indexSpecs.filter((i) => i.key !== index.key), index];
      return { operation_id: ++this.operationId, status: 'completed' };
    });
  }

  async dropIndex(key: string): Promise<UpdateResult> {
    return this.writes.enqueue(async () => {
      await Promise.all(this.shards.map((s) => this.run(s, { type: 'drop_index', shard: s.key, key })));
      this.indexSpecs = this.indexSpecs.filter((i) => i.key !== key);
      return { operation_id: ++this.operationId, status: 'completed' };
    });
  }
}

/** Values of one facet share a type (the index's); mixed types order booleans, numbers, strings. */
function compareFacetValues(a: FacetValue, b: FacetValue): number {
  if (typeof a !== typeof b) return typeof a < typeof b ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
