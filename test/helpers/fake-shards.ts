// In-memory shards for testing the collection layer without workers or a server: a real
// Collection over real replica sets, each with one fake replica that answers the tasks reads send
// (retrieve, scroll, sample, count, search, query, formula, mmr) by brute force over plain arrays, and logs
// every task so tests can count round trips.

import { Collection } from '../../src/collection/collection.js';
import type { QueryScope } from '../../src/collection/query-planner.js';
import type { ShardReader } from '../../src/collection/shard-reader.js';
import type { ReplicaResult, ReplicaTask, ShardReplica } from '../../src/replica/replica.js';
import { ReplicaSet } from '../../src/replica/replica-set.js';
import { LocalReplicaStates } from '../../src/replica/replica-states.js';
import type { ShardId } from '../../src/replica/shard-id.js';
import { shardOf } from '../../src/shard/routing.js';
import type { Distance } from '../../src/engine/index.js';
import type { Payload, PointId } from '../../src/model.js';
import { matchesPayload, type Filter } from '../../src/shard/filter/index.js';
import { evaluateQueries, type PagedSearch, type PointOrder, type ShardQuery } from '../../src/shard/query-plan.js';
import { rescoreByFormula, type FormulaSource, type FormulaStep, type PrefetchScores } from '../../src/shard/formula-rescore.js';
import { maximalMarginalRelevance } from '../../src/shard/mmr.js';
import { orderByOf } from '../../src/shard/order-by.js';
import { compareOrdered, type OrderBy } from '../../src/shard/reads.js';
import { rankHits, ranksLargerFirst, type ScoredView, type SearchSpec } from '../../src/shard/search.js';
import { selectPayload, selectVectors, type PointView, type ReadShape } from '../../src/shard/selectors.js';
import { compareIds, type IndexSpec, type VectorSpec } from '../../src/shard/shard.js';

export interface FakePoint {
  id: PointId;
  vector: number[];
  payload: Payload;
}

/** The score the engine gives: dot product, or L2 distance for Euclid. */
export function scoreOf(distance: Distance, a: number[], b: number[]): number {
  if (distance === 'Euclid') return Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0));
  return a.reduce((s, x, i) => s + x * b[i], 0);
}

class FakeShard {
  constructor(readonly points: FakePoint[], private readonly distance: Distance, private readonly indexes: readonly IndexSpec[]) {}

  private matches(filter: Filter | null): FakePoint[] {
    if (!filter) return this.points;
    return this.points.filter((p) => matchesPayload(filter, { id: p.id, payload: p.payload, vectors: new Set(['']) }));
  }

  private view(p: FakePoint, shape: ReadShape): PointView {
    const out: PointView = { id: p.id };
    const payload = selectPayload(p.payload, shape.withPayload);
    if (payload) out.payload = payload;
    const vectors = selectVectors({ '': new Float32Array(p.vector) }, shape.withVector);
    if (vectors) out.vectors = vectors;
    return out;
  }

  retrieve(ids: PointId[], shape: ReadShape): PointView[] {
    return ids.flatMap((id) => this.points.filter((p) => p.id === id).map((p) => this.view(p, shape)));
  }

  scroll(filter: Filter | null, from: PointId | null, limit: number, shape: ReadShape, orderBy: OrderBy | null): PointView[] {
    const matching = this.matches(filter);
    if (orderBy) {
      const valued = matching.map((p) => ({ ...this.view(p, shape), orderValue: p.payload[orderBy.key] as number }));
      return valued.sort(compareOrdered(orderBy.direction)).slice(0, limit);
    }
    return [...matching].sort((a, b) => compareIds(a.id, b.id)).filter((p) => from === null || compareIds(p.id, from) >= 0).slice(0, limit).map((p) => this.view(p, shape));
  }

  sample(filter: Filter | null, limit: number, shape: ReadShape): { points: PointView[]; matching: number } {
    const matching = this.matches(filter);
    const shuffled = [...matching].sort(() => Math.random() - 0.5);
    return { points: shuffled.slice(0, limit).map((p) => this.view(p, shape)), matching: matching.length };
  }

  search(spec: SearchSpec): ScoredView[] {
    if (spec.query.kind !== 'nearest') throw new Error('the fake shard scores nearest queries only');
    const vector = spec.query.vector;
    const larger = ranksLargerFirst(spec.query, this.distance);
    const hits = this.matches(spec.filter).map((p) => ({ ...this.view(p, spec), score: scoreOf(this.distance, p.vector, vector as number[]), version: 0 }));
    const kept = hits.filter((h) => spec.scoreThreshold === null || (larger ? h.score >= spec.scoreThreshold : h.score <= spec.scoreThreshold));
    return rankHits(kept, larger).slice(0, spec.top);
  }

  /** What the worker's formula task does: this shard's candidates rescored by the formula. */
  formula(step: FormulaStep, prefetches: PrefetchScores, limit: number): ScoredView[] {
    const source: FormulaSource = {
      payload: (id) => this.points.find((p) => p.id === id)?.payload,
      matching: (filter, ids) => new Set(ids.filter((id) => this.matches(filter).some((p) => p.id === id))),
    };
    return rescoreByFormula(step, prefetches, source, limit).map(({ id, score }) => ({ ...this.retrieve([id], step.shape)[0], score, version: 0 }));
  }

  /** What the worker's query task does: the whole tree over this shard alone. */
  query(queries: ShardQuery[]) {
    return evaluateQueries(queries, {
      distance: () => this.distance,
      storedVectors: async (ids: PointId[]) => new Map(this.points.filter((p) => ids.includes(p.id)).map((p) => [p.id, new Float32Array(p.vector)])),
      search: async (searches: PagedSearch[]) => searches.map((s) => this.search({ ...s.spec, top: s.offset + s.limit }).slice(s.offset, s.offset + s.limit)),
      read: async (order: PointOrder, filter, limit, shape) => order.kind === 'sample' ? this.sample(filter, limit, shape).points : this.scroll(filter, null, limit, shape, order.kind === 'id' ? null : orderByOf(order.orderBy, this.indexes)),
      formula: async (step, prefetches, limit) => this.formula(step, prefetches, limit),
      mmr: async (candidates, using, lambda, limit) => maximalMarginalRelevance(candidates, using, this.distance, lambda, limit),
    });
  }
}

/** A replica of one fake shard: answers the read tasks of the query path, and logs every task. */
class FakeShardReplica implements ShardReplica {
  readonly peer = 0;

  constructor(readonly shard: ShardId, private readonly fake: FakeShard, private readonly log: ReplicaTask['type'][]) {}

  async run<T extends ReplicaTask>(task: T): Promise<ReplicaResult<T>> {
    this.log.push(task.type);
    // What crosses to a real replica and back is structured-cloned data; so is this answer.
    return structuredClone(await this.answer(task)) as ReplicaResult<T>;
  }

  private async answer(task: ReplicaTask): Promise<unknown> {
    const fake = this.fake;
    switch (task.type) {
      case 'open':
        return { lastOp: 0 };
      case 'retrieve':
        return fake.retrieve(task.ids, task.shape);
      case 'scroll':
        return fake.scroll(task.filter, task.from, task.limit, task.shape, task.orderBy);
      case 'sample':
        return fake.sample(task.filter, task.limit, task.shape);
      case 'count':
        return fake.points.filter((p) => !task.filter || matchesPayload(task.filter, { id: p.id, payload: p.payload, vectors: new Set(['']) })).length;
      case 'search':
        return task.searches.map((s) => fake.search(s));
      case 'query':
        return fake.query(task.queries);
      case 'formula':
        return fake.formula(task.step, task.prefetches, task.limit);
      case 'mmr':
        return maximalMarginalRelevance(task.candidates, task.using, task.distance, task.lambda, task.limit);
      default:
        throw new Error(`the fake shards do not run ${task.type} tasks`);
    }
  }
}

/** A real collection (and replica sets) over fake shards, one replica each. */
export class FakeCollection {
  readonly collection: Collection;
  private readonly log: ReplicaTask['type'][] = [];
  private readonly shards: FakeShard[];

  private constructor(name: string, points: FakePoint[], shardCount: number, distance: Distance, indexes: readonly IndexSpec[]) {
    this.shards = Array.from({ length: shardCount }, (_, id) => new FakeShard(points.filter((pt) => shardOf(pt.id, shardCount) === id), distance, indexes));
    // As a single node's: one Active replica of peer 0 per shard.
    const sets = this.shards.map((fake, id) => new ReplicaSet({ collection: name, shard: id }, [new FakeShardReplica({ collection: name, shard: id }, fake, this.log)], {
      peer: 0,
      states: new LocalReplicaStates([0]),
      params: () => ({ writeConsistencyFactor: 1, readFanOutFactor: null }),
    }));
    const vectors: VectorSpec[] = [{ name: '', size: points[0]?.vector.length ?? 0, distance, m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null }];
    this.collection = new Collection(name, { keys: null, shards: sets }, vectors, [], [...indexes]);
  }

  static async open(name: string, points: FakePoint[], shardCount: number, distance: Distance, indexes: readonly IndexSpec[] = []): Promise<FakeCollection> {
    const fake = new FakeCollection(name, points, shardCount, distance, indexes);
    await fake.collection.open();
    fake.takeTasks();
    return fake;
  }

  /** How many points each shard holds. */
  get sizes(): number[] {
    return this.shards.map((s) => s.points.length);
  }

  reader(): ShardReader {
    return this.collection.reader();
  }

  /** Tasks sent since the last call, counted by type. */
  takeTasks(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const type of this.log.splice(0)) counts[type] = (counts[type] ?? 0) + 1;
    return counts;
  }
}

/** A query scope over fake collections by name; the first is the one queried. */
export function fakeScope(main: FakeCollection, others: Record<string, FakeCollection> = {}): QueryScope {
  return {
    reader: (shardKey) => main.collection.reader(shardKey),
    lookup: (name, shardKey) => {
      const other = others[name];
      if (!other) throw new Error(`no fake collection ${name}`);
      return other.collection.reader(shardKey);
    },
  };
}
