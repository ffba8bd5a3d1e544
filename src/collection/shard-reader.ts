// Reads over a chosen set of a collection's shards (all of them, or those of the shard keys a
// request names): fan-out to their replica sets and merging of what they answer. Points read
// from a custom-sharded collection carry the key of the shard they came from.

import type { PointId } from '../model.js';
import type { Filter } from '../shard/filter/index.js';
import type { PointView } from '../shard/selectors.js';
import type { Distance } from '../engine/index.js';
import type { RankedList } from '../shard/fusion.js';
import type { FormulaStep, PrefetchScores } from '../shard/formula-rescore.js';
import type { StoredVectors } from '../shard/query-objective.js';
import { evaluateQueries, type PagedSearch, type PointOrder, type QueryBackend, type ShardQuery } from '../shard/query-plan.js';
import { mergeHits, rankHits, ranksLargerFirst, type ScoredView } from '../shard/search.js';
import type { FacetValue } from '../shard/payload-index/types.js';
import { compareIds, type IndexSpec, type SparseVectorSpec, type VectorSpec } from '../shard/shard.js';
import { orderByOf, type OrderByRequest } from '../shard/order-by.js';
import { offsetWithOrderBy, vectorNameNotFound } from '../messages.js';
import { compareOrdered } from '../shard/reads.js';
import type { ReadShape } from '../shard/selectors.js';
import type { ReadTask, ReplicaResult } from '../replica/replica.js';
import type { ReplicaSet } from '../replica/replica-set.js';
import { shardOf } from '../shard/routing.js';
import { routeOf, type ShardLayout } from './shard-keys.js';

export interface ScrollPage {
  points: PointView[];
  next_page_offset: PointId | null;
}

/** What a reader needs of its collection, read when it runs (the configuration may change). */
export interface ReaderSource {
  /** Runs a read on one of the collection's shards, within the deadline of the request it serves. */
  read<T extends ReadTask>(shard: ReplicaSet, task: T): Promise<ReplicaResult<T>>;
  readonly layout: ShardLayout<ReplicaSet>;
  readonly vectors: readonly VectorSpec[];
  readonly sparseVectors: readonly SparseVectorSpec[];
  readonly indexes: readonly IndexSpec[];
}

/** Marks points with the key of the custom shard they were read from. */
function labelled<T extends PointView>(shard: ReplicaSet, points: T[]): T[] {
  if (shard.shardKey !== undefined) for (const p of points) p.shardKey = shard.shardKey;
  return points;
}

/** Keeps the first of points that share an id (the same id may live under two shard keys). */
function uniqueIds<T extends PointView>(sorted: T[]): T[] {
  const seen = new Set<PointId>();
  return sorted.filter((p) => !seen.has(p.id) && seen.add(p.id));
}

export class ShardReader implements QueryBackend {
  constructor(private readonly source: ReaderSource, readonly shards: readonly ReplicaSet[]) {}

  get vectors(): readonly VectorSpec[] {
    return this.source.vectors;
  }

  get indexes(): readonly IndexSpec[] {
    return this.source.indexes;
  }

  private run<T extends ReadTask>(shard: ReplicaSet, task: T): Promise<ReplicaResult<T>> {
    return this.source.read(shard, task);
  }

  private vectorSpec(name: string): VectorSpec {
    const spec = this.source.vectors.find((v) => v.name === name);
    if (!spec) throw vectorNameNotFound(name);
    return spec;
  }

  /** Points by id, in the order asked, each once; missing ids are left out. */
  async retrieve(ids: PointId[], shape: ReadShape): Promise<PointView[]> {
    const unique = [...new Set(ids)];
    const found = await Promise.all(this.shards.map(async (shard) => {
      const { index, count } = routeOf(this.source.layout, shard);
      const mine = unique.filter((id) => shardOf(id, count) === index);
      return mine.length ? labelled(shard, await this.run(shard, { type: 'retrieve', ids: mine, shape })) : [];
    }));
    const byId = new Map<PointId, PointView>();
    for (const list of found) for (const p of list) if (!byId.has(p.id)) byId.set(p.id, p);
    return unique.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * Qdrant's scroll: by id from `from`, or by an indexed payload key (`order`), which pages with
   * `start_from` and takes no offset.
   */
  async scroll(filter: Filter | null, from: PointId | null, limit: number, shape: ReadShape, order: OrderByRequest | null): Promise<ScrollPage> {
    const orderBy = order ? orderByOf(order, this.indexes) : null;
    if (orderBy && from !== null) throw offsetWithOrderBy();
    // One extra point per shard tells whether a next page exists and where it starts.
    const pages = await Promise.all(this.shards.map(async (s) => labelled(s, await this.run(s, { type: 'scroll', filter, from, limit: limit + 1, shape, orderBy }))));
    const merged = pages.flat();
    if (orderBy) {
      merged.sort(compareOrdered(orderBy.direction));
      return { points: merged.slice(0, limit), next_page_offset: null };
    }
    merged.sort((a, b) => compareIds(a.id, b.id));
    const points = uniqueIds(merged);
    return { points: points.slice(0, limit), next_page_offset: points.length > limit ? points[limit].id : null };
  }

  /**
   * Up to `limit` matching points drawn uniformly at random without replacement. Each shard
   * shuffles its own matches; each pick then comes from a shard with probability proportional
   * to the matches it has left, which makes the draw uniform over the whole collection.
   */
  async sample(filter: Filter | null, limit: number, shape: ReadShape): Promise<PointView[]> {
    const draws = await Promise.all(this.shards.map((s) => this.run(s, { type: 'sample', filter, limit, shape })));
    this.shards.forEach((s, i) => labelled(s, draws[i].points));
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
  async search(searches: PagedSearch[]): Promise<ScoredView[][]> {
    for (const s of searches) this.distance(s.spec.using);
    const specs = searches.map((s) => ({ ...s.spec, top: s.limit + s.offset }));
    const perShard = await Promise.all(this.shards.map(async (sh) => (await this.run(sh, { type: 'search', searches: specs })).map((hits) => labelled(sh, hits))));
    return searches.map((s, i) => {
      const hits = mergeHits(perShard.map((r) => r[i]), ranksLargerFirst(s.spec.query, this.distance(s.spec.using)));
      return uniqueIds(hits).slice(s.offset, s.offset + s.limit);
    });
  }

  /**
   * Runs query trees. A reader of one shard sends them whole in one task (so a shard elsewhere
   * costs one round trip); over several shards, fusion and rescoring need every shard's
   * candidates, so each step's searches fan out and merge here before the next step runs.
   */
  async query(queries: ShardQuery[]): Promise<RankedList[]> {
    if (this.shards.length !== 1) return evaluateQueries(queries, this);
    const [shard] = this.shards;
    const lists = await this.run(shard, { type: 'query', queries });
    for (const list of lists) labelled(shard, list.hits);
    return lists;
  }

  /** Points in the order asked: by id, by an order_by key, or drawn at random. */
  async read(order: PointOrder, filter: Filter | null, limit: number, shape: ReadShape): Promise<PointView[]> {
    if (order.kind === 'sample') return this.sample(filter, limit, shape);
    return (await this.scroll(filter, null, limit, shape, order.kind === 'id' ? null : order.orderBy)).points;
  }

  /**
   * Prefetched points rescored by a formula: every shard scores the candidates it holds (their
   * payloads are there), then the best of all shards merge, ties by id.
   */
  async formula(step: FormulaStep, prefetches: PrefetchScores, limit: number): Promise<ScoredView[]> {
    const perShard = await Promise.all(this.shards.map(async (s) => labelled(s, await this.run(s, { type: 'formula', step, prefetches, limit }))));
    return uniqueIds(rankHits(perShard.flat(), true)).slice(0, limit);
  }

  /**
   * MMR over the merged candidates (as Qdrant's collection level), computed in the first shard's
   * worker: its cost grows with candidates × picks, which the main thread must not carry.
   */
  async mmr(candidates: ScoredView[], using: string, lambda: number, limit: number): Promise<ScoredView[]> {
    const [first] = this.shards;
    // No shard (a custom-sharded collection without any yet) found no candidates.
    if (!first) return [];
    // The candidates keep the shard keys they were found under.
    return this.run(first, { type: 'mmr', candidates, using, distance: this.distance(using), lambda, limit });
  }

  distance(using: string): Distance | null {
    if (this.source.sparseVectors.some((v) => v.name === using)) return null;
    return this.vectorSpec(using).distance;
  }

  async storedVectors(ids: PointId[], using: string): Promise<StoredVectors> {
    const points = await this.retrieve(ids, { withPayload: { all: false }, withVector: [using] });
    return new Map(points.map((p) => [p.id, p.vectors?.[using]]));
  }

  /** Facet counts summed over shards, by count (descending) then value (ascending), as Qdrant orders them. */
  async facet(key: string, filter: Filter | null, limit: number): Promise<{ value: FacetValue; count: number }[]> {
    const perShard = await Promise.all(this.shards.map((s) => this.run(s, { type: 'facet', key, filter })));
    const totals = new Map<FacetValue, number>();
    for (const pairs of perShard) for (const [value, n] of pairs) totals.set(value, (totals.get(value) ?? 0) + n);
    return [...totals]
      .filter(([, count]) => count > 0)
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || compareFacetValues(a.value, b.value))
      .slice(0, limit);
  }

  async count(filter: Filter | null): Promise<number> {
    const counts = await Promise.all(this.shards.map((s) => this.run(s, { type: 'count', filter })));
    return counts.reduce((a, b) => a + b, 0);
  }
}

/**
 * Values of one facet share a type (the index's); mixed types order booleans, numbers, strings.
 * Integers past 2^53 are bigints, which `<` compares with numbers exactly.
 */
function compareFacetValues(a: FacetValue, b: FacetValue): number {
  const kindA = facetKind(a);
  const kindB = facetKind(b);
  if (kindA !== kindB) return kindA < kindB ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function facetKind(value: FacetValue): string {
  return typeof value === 'bigint' ? 'number' : typeof value;
}
