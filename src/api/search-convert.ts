// Search and query bodies -> the shards' SearchSpec; hits -> Qdrant's ScoredPoint.

import { BadInput } from '../errors.js';
import type { Filter } from '../shard/filter/index.js';
import { DEFAULT_VECTOR, type PointId } from '../model.js';
import type { ScoredView, SearchParams, SearchQuery, SearchSpec } from '../shard/search.js';
import { toFilter } from './filter.js';
import { renderRecord, toPayloadSelection, toPointId, toVectorSelection, type WireRecord } from './point-convert.js';
import type { WireContextInput, WireOrderBy, WireQueryRequest, WireSearchParams, WireSearchRequest, WireVectorInput, WireWithPayload, WireWithVector } from './types.js';

export interface PlannedSearch {
  spec: Omit<SearchSpec, 'top'>;
  limit: number;
  offset: number;
}

const DEFAULT_QUERY_LIMIT = 10;

export function toSearchParams(wire: WireSearchParams | null | undefined): SearchParams {
  const q = wire?.quantization;
  return {
    hnswEf: wire?.hnsw_ef ?? null,
    exact: wire?.exact ?? false,
    indexedOnly: wire?.indexed_only ?? false,
    quantization: q ? { ignore: q.ignore ?? false, rescore: q.rescore ?? undefined, oversampling: q.oversampling ?? undefined } : null,
  };
}

/** Search results carry no payload and no vector unless asked (unlike retrieve and scroll). */
function readShape(withPayload: WireWithPayload | null | undefined, withVector: WireWithVector | null | undefined) {
  return { withPayload: toPayloadSelection(withPayload ?? false), withVector: toVectorSelection(withVector ?? false) };
}

export function fromSearchRequest(body: WireSearchRequest): PlannedSearch {
  const named = !Array.isArray(body.vector);
  const vector = named ? (body.vector as { vector: number[] }).vector : (body.vector as number[]);
  return {
    spec: {
      using: named ? (body.vector as { name: string }).name : DEFAULT_VECTOR,
      query: { kind: 'nearest', vector },
      filter: body.filter ? toFilter(body.filter) : null,
      params: toSearchParams(body.params),
      scoreThreshold: body.score_threshold ?? null,
      ...readShape(body.with_payload, body.with_vector),
    },
    limit: body.limit,
    offset: body.offset ?? 0,
  };
}

/** An example or query input: a vector as given, or a stored point (whose vector is looked up). */
export type Example = { vector: number[] } | { pointId: PointId };

export type RecommendStrategy = 'average_vector' | 'best_score' | 'sum_scores';

/** What a request asks, before stored points' vectors are looked up. */
export type QueryPlan =
  | { kind: 'nearest'; input: Example }
  | { kind: 'recommend'; positives: Example[]; negatives: Example[]; strategy: RecommendStrategy }
  | { kind: 'discover'; target: Example; pairs: [Example, Example][] }
  | { kind: 'context'; pairs: [Example, Example][] }
  | { kind: 'fusion'; method: 'rrf' | 'dbsf'; k: number | null; weights: number[] | null }
  | { kind: 'order_by'; orderBy: string | WireOrderBy }
  | { kind: 'sample' };

/** Plans that score points against vectors. */
export type VectorPlan = Extract<QueryPlan, { kind: 'nearest' | 'recommend' | 'discover' | 'context' }>;

/** Plans that read points rather than score them (Qdrant runs them as scrolls). */
export type ReadPlan = Extract<QueryPlan, { kind: 'order_by' | 'sample' }>;

export function isReadPlan(plan: QueryPlan | null): plan is ReadPlan {
  return plan !== null && (plan.kind === 'order_by' || plan.kind === 'sample');
}

export function toExample(input: WireVectorInput): Example {
  return Array.isArray(input) ? { vector: input } : { pointId: toPointId(input) };
}

/** The plan of a query or prefetch; null when it has no query (its prefetches are then merged as they are). */
export function queryPlan(body: Pick<WireQueryRequest, 'query'>): QueryPlan | null {
  const q = body.query;
  if (q === null || q === undefined) return null;
  if (typeof q === 'object' && !Array.isArray(q)) {
    if ('recommend' in q) return recommendPlan(q.recommend.positive ?? [], q.recommend.negative ?? [], q.recommend.strategy ?? null);
    if ('discover' in q) return { kind: 'discover', target: toExample(q.discover.target), pairs: contextPairs(q.discover.context) };
    if ('context' in q) return { kind: 'context', pairs: contextPairs(q.context) };
    if ('fusion' in q) return { kind: 'fusion', method: q.fusion, k: null, weights: null };
    if ('rrf' in q) return { kind: 'fusion', method: 'rrf', k: q.rrf.k ?? null, weights: q.rrf.weights ?? null };
    if ('order_by' in q) return { kind: 'order_by', orderBy: q.order_by };
    if ('sample' in q) return { kind: 'sample' };
    return { kind: 'nearest', input: toExample(q.nearest) };
  }
  return { kind: 'nearest', input: toExample(q) };
}

export function contextPairs(input: WireContextInput): [Example, Example][] {
  const pairs = input === null ? [] : Array.isArray(input) ? input : [input];
  return pairs.map((p) => [toExample(p.positive), toExample(p.negative)]);
}

export function recommendPlan(positive: WireVectorInput[], negative: WireVectorInput[], strategy: RecommendStrategy | null): QueryPlan {
  return { kind: 'recommend', positives: positive.map(toExample), negatives: negative.map(toExample), strategy: strategy ?? 'average_vector' };
}

/** Qdrant's average_vector query: avg(positives), or avg(p) + (avg(p) - avg(negatives)). */
export function averageVector(positives: number[][], negatives: number[][]): number[] {
  if (positives.length === 0) throw new BadInput('Positive vectors should not be empty with `average` strategy');
  const avg = (list: number[][]) => list[0].map((_, j) => list.reduce((sum, v) => sum + v[j], 0) / list.length);
  const pos = avg(positives);
  if (negatives.length === 0) return pos;
  const neg = avg(negatives);
  return pos.map((p, j) => p + p - neg[j]);
}

/** The parts of a query or prefetch that shape its own search. */
export type QueryNode = Pick<WireQueryRequest, 'using' | 'lookup_from' | 'params' | 'score_threshold' | 'limit' | 'offset'>;

/** The search of one query node, with the filter and result shape its caller settled on. */
export function fromQueryNode(node: QueryNode, query: SearchQuery, filter: Filter | null, shape: ResultShape): PlannedSearch {
  return {
    spec: {
      using: node.using ?? DEFAULT_VECTOR,
      query,
      filter,
      params: toSearchParams(node.params),
      scoreThreshold: node.score_threshold ?? null,
      ...shape,
    },
    limit: node.limit ?? DEFAULT_QUERY_LIMIT,
    offset: node.offset ?? 0,
  };
}

export type ResultShape = ReturnType<typeof readShape>;

export function resultShape(body: Pick<WireQueryRequest, 'with_payload' | 'with_vector'>): ResultShape {
  return readShape(body.with_payload, body.with_vector);
}

export interface WireScoredPoint extends WireRecord {
  version: number;
  score: number;
}

export function renderScored(hit: ScoredView): WireScoredPoint {
  const { id, payload, vector, shard_key, order_value } = renderRecord(hit);
  const out: WireScoredPoint = { id, version: hit.version, score: hit.score, payload, vector };
  if (shard_key !== undefined) out.shard_key = shard_key;
  if (order_value !== undefined) out.order_value = order_value;
  return out;
}
