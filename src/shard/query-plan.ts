// A query tree ready to run (the query API's request with its prefetches): every example already
// a vector, every filter compiled, every limit set. The same evaluation runs it in two places: in
// a shard worker, over that shard alone (the whole tree in one task), and on the main thread over
// a collection's shards, where each step's searches fan out and merge before the next step.

import type { Distance } from '../engine/index.js';
import type { PointId } from '../model.js';
import type { Filter } from './filter/index.js';
import { dbsf, DEFAULT_RRF_K, rrf, type RankedList } from './fusion.js';
import type { OrderBy } from './reads.js';
import { ranksLargerFirst, type ScoredView, type SearchSpec } from './search.js';
import type { PointView, ReadShape } from './selectors.js';

/** One search with the paging of its results: `offset + limit` hits are found, `limit` kept. */
export interface PagedSearch {
  spec: Omit<SearchSpec, 'top'>;
  limit: number;
  offset: number;
}

/** A read that ranks points by something other than a score: an order_by key, or chance. */
export type PointOrder = { kind: 'order_by'; orderBy: OrderBy } | { kind: 'sample' };

/** What a node does with the points it considers (all matching points, or its prefetches' hits). */
export type QueryStep =
  | { kind: 'search'; spec: Omit<SearchSpec, 'top'> }
  | { kind: 'read'; order: PointOrder; filter: Filter | null; shape: ReadShape }
  | { kind: 'fusion'; method: 'rrf' | 'dbsf'; k: number | null; weights: number[] | null; scoreThreshold: number | null }
  /** No query of its own: its single prefetch's hits, paged. */
  | { kind: 'pass' };

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
  distance(using: string): Distance;
}

function both(a: Filter | null, b: Filter | null): Filter | null {
  if (!a) return b;
  if (!b) return a;
  return { must: [{ kind: 'filter', filter: a }, { kind: 'filter', filter: b }] };
}

function only(filter: Filter | null, ids: PointId[]): Filter {
  return both(filter, { must: [{ kind: 'hasId', ids: new Set(ids) }] })!;
}

/** The searches of nodes without prefetches: they depend on nothing, so they all run at once. */
function leafSearches(query: ShardQuery): ShardQuery[] {
  if (query.prefetches.length) return query.prefetches.flatMap(leafSearches);
  return query.step.kind === 'search' ? [query] : [];
}

function paged(query: ShardQuery, spec: Omit<SearchSpec, 'top'>): PagedSearch {
  return { spec, limit: query.limit, offset: query.offset };
}

/**
 * Runs query trees: first every leaf search of all of them together (one batch), then each tree
 * bottom-up, a node's prefetches before the node.
 */
export async function evaluateQueries(queries: ShardQuery[], backend: QueryBackend): Promise<RankedList[]> {
  const leaves = queries.flatMap(leafSearches);
  const specs = leaves.map((q) => paged(q, (q.step as Extract<QueryStep, { kind: 'search' }>).spec));
  const results = specs.length ? await backend.search(specs) : [];
  const found = new Map(leaves.map((q, i) => [q, results[i]]));
  return Promise.all(queries.map((q) => evaluate(q, backend, found)));
}

async function evaluate(query: ShardQuery, backend: QueryBackend, found: Map<ShardQuery, ScoredView[]>): Promise<RankedList> {
  const { step, limit, offset } = query;
  const lists = await Promise.all(query.prefetches.map((p) => evaluate(p, backend, found)));
  switch (step.kind) {
    case 'pass':
      return { hits: lists[0].hits.slice(offset, offset + limit), largerBetter: lists[0].largerBetter };
    case 'fusion': {
      const fused = step.method === 'rrf' ? rrf(lists, step.k ?? DEFAULT_RRF_K, step.weights) : dbsf(lists);
      const threshold = step.scoreThreshold;
      const kept = threshold === null ? fused : fused.filter((h) => h.score >= threshold);
      return { hits: kept.slice(offset, offset + limit), largerBetter: true };
    }
    case 'search': {
      const largerBetter = () => ranksLargerFirst(step.spec.query, backend.distance(step.spec.using));
      const leaf = found.get(query);
      if (leaf) return { hits: leaf, largerBetter: largerBetter() };
      // Rescoring: the node's own query ranks exactly the candidates its prefetches found.
      const candidates = candidatesOf(lists);
      if (candidates.length === 0) return { hits: [], largerBetter: true };
      const spec = { ...step.spec, filter: only(step.spec.filter, candidates), params: { ...step.spec.params, exact: true } };
      const [hits] = await backend.search([paged(query, spec)]);
      return { hits, largerBetter: largerBetter() };
    }
    case 'read': {
      let filter = step.filter;
      if (query.prefetches.length) {
        const candidates = candidatesOf(lists);
        if (candidates.length === 0) return { hits: [], largerBetter: true };
        filter = only(filter, candidates);
      }
      // Qdrant runs these as scrolls: every hit scores 1, version 0.
      const points = await backend.read(step.order, filter, offset + limit, step.shape);
      return { hits: points.slice(offset, offset + limit).map((p) => ({ ...p, score: 1, version: 0 })), largerBetter: true };
    }
  }
}

function candidatesOf(lists: RankedList[]): PointId[] {
  return [...new Set(lists.flatMap((l) => l.hits.map((h) => h.id)))];
}
