// What strict mode looks at in a read, from the request as the collection layer receives it:
// the parts it checks (limits, filters, search parameters, in Qdrant's order) and what the read
// costs the rate limiters (Qdrant's costs: comparisons per search, conditions per filter, ids).
// Where the wire matters (a limit the request left out is not bounded), the route passes it.

import type { Filter } from '../shard/filter/index.js';
import { multiCount } from '../model.js';
import type { Example, VectorQuery } from '../shard/query-objective.js';
import type { QueryVector, SearchParams } from '../shard/search.js';
import { isReadPlan, isVectorPlan, type QueryNode, type QueryRequest } from './query-tree.js';
import type { ShardKeySelector } from './shard-keys.js';
import { conditionCount } from './strict-filter.js';

/** One part of a read as strict mode checks it (a request, or one of its prefetches). */
export interface ReadCheck {
  /** The `limit` bounded by `max_query_limit`; null when the request sets none. */
  limit: number | null;
  filter: Filter | null;
  /** The request's own `exact` (count, facet); searches carry theirs in `params`. */
  exact: boolean | null;
  params: SearchParams | null;
}

/** What a read costs the rate limiter: tokens on each shard of a shard-key selection. */
export interface ReadCost {
  shardKey: ShardKeySelector | null;
  tokens: number;
}

/** A read as strict mode sees it. */
export interface StrictRead {
  /** In the order Qdrant checks them (a request's prefetches before the request). */
  checks: ReadCheck[];
  /** The field results are grouped by: it must have an index serving `match`. */
  groupBy: string | null;
  /** Searches in a batch request (`search_max_batchsize`); null for a single request. */
  batch: number | null;
  costs: ReadCost[];
}

/** Qdrant's base cost of a read that scores nothing (a scroll, count or facet). */
const BASE_COST = 1;
/** Sparse dimensions counted as one similarity comparison. */
const SPARSE_DIMS_COST_UNIT = 64;

function conditions(filter: Filter | null): number {
  return filter ? conditionCount(filter) : 0;
}

/** How many similarity comparisons a query vector makes against one point. */
function vectorCost(vector: QueryVector): number {
  if (Array.isArray(vector)) return 1;
  if ('indices' in vector) return Math.ceil(vector.indices.length / SPARSE_DIMS_COST_UNIT);
  return multiCount(vector);
}

/** A stored point used as an example counts as one comparison (its vector is not read here). */
function exampleCost(example: Example): number {
  return 'vector' in example ? vectorCost(example.vector) : 1;
}

function searchCost(query: VectorQuery): number {
  switch (query.kind) {
    case 'nearest':
    case 'mmr':
      // MMR's candidates come from one nearest search.
      return exampleCost(query.input);
    case 'feedback':
      return [query.target, ...query.feedback.map((f) => f.example)].reduce((n, e) => n + exampleCost(e), 0);
    case 'recommend':
      // average_vector searches once with the combined vector.
      return query.strategy === 'average_vector' ? 1 : [...query.positives, ...query.negatives].reduce((n, e) => n + exampleCost(e), 0);
    case 'discover':
      return [query.target, ...query.pairs.flat()].reduce((n, e) => n + exampleCost(e), 0);
    case 'context':
      return query.pairs.flat().reduce((n, e) => n + exampleCost(e), 0);
  }
}

/**
 * Tokens a query tree costs a shard: each search costs its comparisons, each scroll-like read
 * (order_by, sample, no query) the base cost, plus one per condition of the filter it runs with
 * (its own and those inherited); fusion, formulas and merging cost nothing.
 */
function nodeCost(node: QueryNode, inherited: number): number {
  const filterConditions = inherited + conditions(node.filter);
  const scrolls = node.plan === null || isReadPlan(node.plan);
  const own = isVectorPlan(node.plan) ? searchCost(node.plan) + filterConditions : scrolls ? BASE_COST + filterConditions : 0;
  return own + node.prefetches.reduce((n, p) => n + nodeCost(p, filterConditions), 0);
}

function nodeChecks(node: QueryNode): ReadCheck[] {
  return [...node.prefetches.flatMap(nodeChecks), { limit: node.limit, filter: node.filter, exact: null, params: node.params }];
}

/** Searches, recommendations, discoveries and query trees; `batch` when they came as one batch request. */
export function queryRead(requests: QueryRequest[], batch: boolean): StrictRead {
  return {
    checks: requests.flatMap((r) => nodeChecks(r.root)),
    groupBy: null,
    batch: batch ? requests.length : null,
    costs: requests.map((r) => ({ shardKey: r.shardKey, tokens: nodeCost(r.root, 0) })),
  };
}

/** A grouped search: its limit is groups × group size. */
export function groupsRead(request: QueryRequest, groupBy: string, limit: number, groupSize: number): StrictRead {
  const { root } = request;
  return {
    checks: [{ limit: limit * groupSize, filter: root.filter, exact: null, params: root.params }],
    groupBy,
    batch: null,
    costs: [{ shardKey: request.shardKey, tokens: nodeCost(root, 0) }],
  };
}

/** Reads that score nothing (scroll, count, facet, the distance matrix's sampling). */
export function plainRead(shardKey: ShardKeySelector | null, filter: Filter | null, limit: number | null, exact: boolean | null): StrictRead {
  return {
    checks: [{ limit, filter, exact, params: null }],
    groupBy: null,
    batch: null,
    costs: [{ shardKey, tokens: BASE_COST + conditions(filter) }],
  };
}

/** The distance matrix: its limit is samples × neighbours, each as far as the request gives them. */
export function matrixRead(shardKey: ShardKeySelector | null, filter: Filter | null, sample: number | null, limit: number | null): StrictRead {
  const bound = sample !== null && limit !== null ? sample * limit : sample ?? limit;
  return plainRead(shardKey, filter, bound, null);
}

/** Points read by id: one token per id asked. */
export function retrieveRead(shardKey: ShardKeySelector | null, ids: number): StrictRead {
  return { checks: [], groupBy: null, batch: null, costs: [{ shardKey, tokens: ids }] };
}
