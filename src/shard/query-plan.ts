// A query tree ready to run (the query API's request with its prefetches): every example already
// a vector, every filter compiled, every limit set. The same evaluation runs it in two places: in
// a shard worker, over that shard alone (the whole tree in one task), and on the main thread over
// a collection's shards, where each step's searches fan out and merge before the next step.

import type { Distance } from '../engine/index.js';
import type { PointId } from '../model.js';
import { onlyIds, type Filter } from './filter/index.js';
import { dbsf, DEFAULT_RRF_K, rrf, type RankedList } from './fusion.js';
import type { OrderByRequest } from './order-by.js';
import { ranksLargerFirst, type ScoredView, type SearchSpec } from './search.js';
import type { PointView, ReadShape } from './selectors.js';
import type { FormulaStep, PrefetchScores } from './formula-rescore.js';
import { withMmrVector, withoutMmrVector } from './mmr.js';
import { exampleVector, searchQueryOf, storedIds, type StoredVectors, type VectorQuery } from './query-objective.js';

/** One search with the paging of its results: `offset + limit` hits are found, `limit` kept. */
export interface PagedSearch {
  spec: Omit<SearchSpec, 'top'>;
  limit: number;
  offset: number;
}

/**
 * A read that ranks points by something other than a score: their ids (a query without a
 * query), an order_by key (checked against the indexes where the read runs), or chance.
 */
export type PointOrder = { kind: 'id' } | { kind: 'order_by'; orderBy: OrderByRequest } | { kind: 'sample' };

/**
 * A search step: its query's examples are vectors, or points of the shards the plan runs on
 * (their `using` vector is read where the plan runs; `lookup_from` examples arrive as vectors).
 */
export interface SearchStep {
  kind: 'search';
  query: VectorQuery;
  spec: Omit<SearchSpec, 'top' | 'query'>;
}

/** What a node does with the points it considers (all matching points, or its prefetches' hits). */
export type QueryStep =
  | SearchStep
  | { kind: 'read'; order: PointOrder; filter: Filter | null; shape: ReadShape }
  | { kind: 'fusion'; method: 'rrf' | 'dbsf'; k: number | null; weights: number[] | null; scoreThreshold: number | null }
  | FormulaStep;

/** How many of a node's hits are kept, after skipping how many. */
type Paging = Pick<ShardQuery, 'limit' | 'offset'>;

export interface ShardQuery {
  step: QueryStep;
  /** With prefetches, a search or read step ranks exactly the candidates they found. */
  prefetches: ShardQuery[];
  limit: number;
  offset: number;
}

/** Where a plan's searches and reads run: one shard, or a collection's shards merged. */
export interface QueryBackend {
  /** Each search's hits, best first, paged. */
  search(searches: PagedSearch[]): Promise<ScoredView[][]>;
  /** Up to `limit` points in the order asked. */
  read(order: PointOrder, filter: Filter | null, limit: number, shape: ReadShape): Promise<PointView[]>;
  /** The `using` vectors of stored points; ids not found are absent. */
  storedVectors(ids: PointId[], using: string): Promise<StoredVectors>;
  /** The distance of a dense vector; null for a sparse one (scored by dot product). */
  distance(using: string): Distance | null;
  /** Prefetched points rescored by a formula where their payloads are: the best `limit`, best first. */
  formula(step: FormulaStep, prefetches: PrefetchScores, limit: number): Promise<ScoredView[]>;
  /** Up to `limit` of the candidates (holding their `using` vector) in MMR order, computed in a shard worker. */
  mmr(candidates: ScoredView[], using: string, lambda: number, limit: number): Promise<ScoredView[]>;
}

function nodesOf(query: ShardQuery): ShardQuery[] {
  return [query, ...query.prefetches.flatMap(nodesOf)];
}

function searchOf(query: ShardQuery): SearchStep | null {
  return query.step.kind === 'search' ? query.step : null;
}

/** The stored examples of every search step, read once per vector name for all the trees. */
async function readExamples(nodes: ShardQuery[], backend: QueryBackend): Promise<Map<string, StoredVectors>> {
  const ids = new Map<string, Set<PointId>>();
  for (const step of nodes.map(searchOf)) {
    if (!step) continue;
    const stored = storedIds(step.query);
    if (!stored.length) continue;
    const set = ids.get(step.spec.using) ?? new Set();
    for (const id of stored) set.add(id);
    ids.set(step.spec.using, set);
  }
  const read = await Promise.all([...ids].map(async ([using, set]) => [using, await backend.storedVectors([...set], using)] as const));
  return new Map(read);
}

/** A search step's spec, its query's examples now vectors. */
function specOf(step: SearchStep, examples: Map<string, StoredVectors>): Omit<SearchSpec, 'top'> {
  const { using } = step.spec;
  const query = searchQueryOf(step.query, (e) => exampleVector(e, examples.get(using) ?? new Map()), using);
  return { ...step.spec, query };
}

/**
 * Runs query trees: stored examples are read first, then every leaf search of all the trees
 * together (one batch), then each tree bottom-up, a node's prefetches before the node.
 */
export async function evaluateQueries(queries: ShardQuery[], backend: QueryBackend): Promise<RankedList[]> {
  const nodes = queries.flatMap(nodesOf);
  const examples = await readExamples(nodes, backend);
  // Nodes without prefetches depend on nothing, so their searches all run at once.
  const leaves = nodes.flatMap((q) => {
    const step = searchOf(q);
    return step && q.prefetches.length === 0 ? [{ q, step, spec: specOf(step, examples) }] : [];
  });
  const results = leaves.length ? await backend.search(leaves.map(({ q, step, spec }) => paged(step, spec, q))) : [];
  const found = new Map(leaves.map(({ q, spec }, i) => [q, { spec, hits: results[i] }]));
  return Promise.all(queries.map((q) => evaluate(q, { backend, examples, found })));
}

/** What evaluating a node needs besides the node. */
interface Evaluation {
  backend: QueryBackend;
  examples: Map<string, StoredVectors>;
  /** The leaf searches' specs and hits. */
  found: Map<ShardQuery, { spec: Omit<SearchSpec, 'top'>; hits: ScoredView[] }>;
}

async function evaluate(query: ShardQuery, evaluation: Evaluation): Promise<RankedList> {
  const { backend, examples, found } = evaluation;
  const { step, limit, offset } = query;
  const lists = await Promise.all(query.prefetches.map((p) => evaluate(p, evaluation)));
  switch (step.kind) {
    case 'fusion': {
      const fused = step.method === 'rrf' ? rrf(lists, step.k ?? DEFAULT_RRF_K, step.weights) : dbsf(lists);
      const threshold = step.scoreThreshold;
      const kept = threshold === null ? fused : fused.filter((h) => h.score >= threshold);
      return { hits: kept.slice(offset, offset + limit), largerBetter: true };
    }
    case 'search': {
      const leaf = found.get(query);
      if (leaf) return { hits: await pickedByMmr(step, leaf.hits, query, backend), largerBetter: ranksLargerFirst(leaf.spec.query, backend.distance(leaf.spec.using)) };
      // Rescoring: the node's own query ranks exactly the candidates its prefetches found.
      const candidates = candidatesOf(lists);
      if (candidates.length === 0) return { hits: [], largerBetter: true };
      const own = specOf(step, examples);
      const spec = { ...own, filter: onlyIds(own.filter, candidates), params: { ...own.params, exact: true } };
      const [hits] = await backend.search([paged(step, spec, query)]);
      return { hits: await pickedByMmr(step, hits, query, backend), largerBetter: ranksLargerFirst(own.query, backend.distance(own.using)) };
    }
    case 'formula': {
      const prefetches = lists.map((l) => l.hits.map(({ id, score }) => ({ id, score })));
      return { hits: (await backend.formula(step, prefetches, offset + limit)).slice(offset), largerBetter: true };
    }
    case 'read': {
      let filter = step.filter;
      if (query.prefetches.length) {
        const candidates = candidatesOf(lists);
        if (candidates.length === 0) return { hits: [], largerBetter: true };
        filter = onlyIds(filter, candidates);
      }
      // Qdrant runs these as scrolls: every hit scores 1, version 0.
      const points = await backend.read(step.order, filter, offset + limit, step.shape);
      return { hits: points.slice(offset, offset + limit).map((p) => ({ ...p, score: 1, version: 0 })), largerBetter: true };
    }
  }
}

/** A search step's paging: an MMR step first finds its candidates, with the vector MMR compares. */
function paged(step: SearchStep, spec: Omit<SearchSpec, 'top'>, { limit, offset }: Paging): PagedSearch {
  if (step.query.kind !== 'mmr') return { spec, limit, offset };
  return { spec: { ...spec, withVector: withMmrVector(spec.withVector, spec.using) }, limit: step.query.candidatesLimit, offset: 0 };
}

/** A search step's hits: as found, or for an MMR step the page of its candidates MMR picks. */
async function pickedByMmr(step: SearchStep, candidates: ScoredView[], { limit, offset }: Paging, backend: QueryBackend): Promise<ScoredView[]> {
  if (step.query.kind !== 'mmr') return candidates;
  const { using, withVector } = step.spec;
  const picked = await backend.mmr(candidates, using, step.query.lambda, offset + limit);
  return withoutMmrVector(picked, withVector, using).slice(offset, offset + limit);
}

function candidatesOf(lists: RankedList[]): PointId[] {
  return [...new Set(lists.flatMap((l) => l.hits.map((h) => h.id)))];
}
