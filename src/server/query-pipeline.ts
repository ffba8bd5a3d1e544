// The query API's evaluation: a query node (the request or one of its prefetches) looks up the
// vectors of examples given as stored points, runs its prefetches first if it has any (the
// request's filter applies to them too), then either fuses their results (rrf, dbsf) or rescores
// their candidates with its own query, or, without prefetches, searches the collection.

import { averageVector, fromQueryNode, isReadPlan, type Example, type PlannedSearch, type QueryNode, type ReadPlan, type ResultShape, type VectorPlan } from '../api/search-convert.js';
import { toFilter } from '../api/filter.js';
import { pointNotFound } from '../messages.js';
import type { WireFilter } from '../api/filter.js';
import type { WirePrefetch } from '../api/types.js';
import type { ShardReader } from '../collection/shard-reader.js';
import { dbsf, DEFAULT_RRF_K, rrf, type RankedList } from '../collection/fusion.js';
import type { CollectionManager } from '../collection/manager.js';
import { BadInput, BadRequest } from '../errors.js';
import { DEFAULT_VECTOR, type PointId } from '../model.js';
import type { Filter } from '../shard/filter/index.js';
import { ranksLargerFirst, type ExamplePair, type ScoredView, type SearchQuery } from '../shard/search.js';
import { queryPlan } from '../api/search-convert.js';
import { orderByOf } from './routes/order-by.js';

export interface QueryContext {
  collections: CollectionManager;
  /** The shards the request reads (all, or those of its shard keys). */
  collection: ShardReader;
  shape: ResultShape;
}

/** A node of the query tree: the request itself or a prefetch. */
export type QueryTreeNode = QueryNode & { prefetch?: WirePrefetch | WirePrefetch[] | null; query?: WirePrefetch['query']; filter?: WireFilter | null };

function both(a: Filter | null, b: Filter | null): Filter | null {
  if (!a) return b;
  if (!b) return a;
  return { must: [{ kind: 'filter', filter: a }, { kind: 'filter', filter: b }] };
}

function without(filter: Filter | null, ids: PointId[]): Filter | null {
  return ids.length ? both(filter, { mustNot: [{ kind: 'hasId', ids: new Set(ids) }] }) : filter;
}

function only(filter: Filter | null, ids: PointId[]): Filter {
  return both(filter, { must: [{ kind: 'hasId', ids: new Set(ids) }] })!;
}

/**
 * The shards' search for a nearest, recommend, discover or context plan: stored examples are looked up (in
 * `lookup_from` if named) and, when they are this collection's points, left out of the results.
 */
export async function planSearch(ctx: QueryContext, node: QueryNode, plan: VectorPlan, filter: Filter | null): Promise<PlannedSearch> {
  const using = node.using ?? DEFAULT_VECTOR;
  const source = node.lookup_from ? ctx.collections.get(node.lookup_from.collection).reader(node.lookup_from.shard_key) : ctx.collection;
  const name = node.lookup_from?.vector ?? using;
  const examples = examplesOf(plan);
  const ids = examples.flatMap((e) => ('pointId' in e ? [e.pointId] : []));
  const found = ids.length ? await source.retrieve(ids, { withPayload: { all: false }, withVector: [name] }) : [];
  const stored = new Map(found.map((p) => [p.id, p.vectors?.[name]]));
  const vectorOf = (e: Example): number[] => {
    if ('vector' in e) return e.vector;
    if (!stored.has(e.pointId)) throw pointNotFound(e.pointId);
    const v = stored.get(e.pointId);
    if (!v) throw new BadInput(`Vector \`${name}\` of point ${e.pointId} not found`);
    return v;
  };
  const pairs = (list: [Example, Example][]): ExamplePair[] => list.map(([p, n]) => [vectorOf(p), vectorOf(n)]);
  let query: SearchQuery;
  switch (plan.kind) {
    case 'nearest':
      query = { kind: 'nearest', vector: vectorOf(plan.input) };
      break;
    case 'recommend': {
      const positives = plan.positives.map(vectorOf);
      const negatives = plan.negatives.map(vectorOf);
      query = plan.strategy === 'average_vector'
        ? { kind: 'nearest', vector: averageVector(positives, negatives) }
        : { kind: 'custom', objective: { type: plan.strategy, positives, negatives } };
      break;
    }
    case 'discover':
      query = { kind: 'custom', objective: { type: 'discover', target: vectorOf(plan.target), pairs: pairs(plan.pairs) } };
      break;
    case 'context':
      query = { kind: 'custom', objective: { type: 'context', pairs: pairs(plan.pairs) } };
      break;
  }
  return fromQueryNode(node, query, node.lookup_from ? filter : without(filter, ids), ctx.shape);
}

/** Every example a plan names, in any role. */
function examplesOf(plan: VectorPlan): Example[] {
  switch (plan.kind) {
    case 'nearest':
      return [plan.input];
    case 'recommend':
      return [...plan.positives, ...plan.negatives];
    case 'discover':
      return [plan.target, ...plan.pairs.flat()];
    case 'context':
      return plan.pairs.flat();
  }
}

function prefetchesOf(node: QueryTreeNode): WirePrefetch[] {
  if (!node.prefetch) return [];
  return Array.isArray(node.prefetch) ? node.prefetch : [node.prefetch];
}

/** Plans a node without prefetches (one search); used directly by batches. */
export async function planLeaf(ctx: QueryContext, node: QueryTreeNode, inherited: Filter | null): Promise<PlannedSearch> {
  const plan = queryPlan(node);
  if (!plan) throw new BadRequest('a query without prefetch needs a `query`');
  if (plan.kind === 'fusion') throw new BadRequest('Fusion queries require prefetches');
  if (isReadPlan(plan)) throw new BadRequest(`${plan.kind} queries cannot be grouped`);
  return planSearch(ctx, node, plan, both(inherited, node.filter ? toFilter(node.filter) : null));
}

/** Evaluates a query node to its ranked hits (limit and offset applied). */
export async function evaluate(ctx: QueryContext, node: QueryTreeNode, inherited: Filter | null): Promise<RankedList> {
  const prefetches = prefetchesOf(node);
  const larger = (planned: PlannedSearch) => ranksLargerFirst(planned.spec.query, ctx.collection.vectors.find((v) => v.name === planned.spec.using)?.distance ?? 'Cosine');
  if (prefetches.length === 0) {
    const plan = queryPlan(node);
    if (isReadPlan(plan)) return readPoints(ctx, node, plan, both(inherited, node.filter ? toFilter(node.filter) : null));
    const planned = await planLeaf(ctx, node, inherited);
    const [hits] = await ctx.collection.search([planned]);
    return { hits, largerBetter: larger(planned) };
  }
  const filter = both(inherited, node.filter ? toFilter(node.filter) : null);
  const lists = await Promise.all(prefetches.map((p) => evaluate(ctx, p, filter)));
  const plan = queryPlan(node);
  const limit = node.limit ?? 10;
  const offset = node.offset ?? 0;
  if (plan === null) {
    if (lists.length !== 1) throw new BadRequest('several prefetches need a query to combine them, e.g. {"fusion": "rrf"}');
    return { hits: lists[0].hits.slice(offset, offset + limit), largerBetter: lists[0].largerBetter };
  }
  if (plan.kind === 'fusion') {
    const fused = plan.method === 'rrf' ? rrf(lists, plan.k ?? DEFAULT_RRF_K, plan.weights) : dbsf(lists);
    const threshold = node.score_threshold;
    const kept = threshold === null || threshold === undefined ? fused : fused.filter((h) => h.score >= threshold);
    return { hits: kept.slice(offset, offset + limit), largerBetter: true };
  }
  // Rescoring: the node's own query ranks exactly the candidates its prefetches found.
  const candidates = [...new Set(lists.flatMap((l) => l.hits.map((h: ScoredView) => h.id)))];
  if (candidates.length === 0) return { hits: [], largerBetter: true };
  if (isReadPlan(plan)) return readPoints(ctx, node, plan, only(filter, candidates));
  const planned = await planSearch(ctx, node, plan, only(filter, candidates));
  planned.spec.params = { ...planned.spec.params, exact: true };
  const [hits] = await ctx.collection.search([planned]);
  return { hits, largerBetter: larger(planned) };
}

/**
 * An order_by or sample query reads points instead of scoring them: Qdrant runs it as a scroll
 * (by the field's values, or at random) and gives every hit score 1 and version 0.
 */
async function readPoints(ctx: QueryContext, node: QueryNode, plan: ReadPlan, filter: Filter | null): Promise<RankedList> {
  const limit = node.limit ?? 10;
  const offset = node.offset ?? 0;
  const points = plan.kind === 'order_by'
    ? (await ctx.collection.scroll(filter, null, offset + limit, ctx.shape, orderByOf(plan.orderBy, ctx.collection.indexes))).points
    : await ctx.collection.sample(filter, offset + limit, ctx.shape);
  return { hits: points.slice(offset, offset + limit).map((p) => ({ ...p, score: 1, version: 0 })), largerBetter: true };
}
