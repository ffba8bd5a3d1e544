// Search, query, groups and matrix bodies -> the collection layer's requests (converted once per
// request); hits and groups -> Qdrant's ScoredPoint and PointGroup.

import { discoverNeedsTargetOrContext } from './messages.js';
import { DEFAULT_VECTOR } from '../model.js';
import type { GroupSpec, PointGroup } from '../collection/groups.js';
import type { MatrixRequest } from '../collection/matrix.js';
import type { OrderByRequest } from '../shard/order-by.js';
import type { QueryNode, QueryPlan, QueryRequest } from '../collection/query-tree.js';
import type { Example } from '../shard/query-objective.js';
import type { ScoredView, SearchParams } from '../shard/search.js';
import type { ReadShape } from '../shard/selectors.js';
import { shortF32 } from './f32-number.js';
import { toFilter } from './filter.js';
import { toFormula } from './formula-convert.js';
import { inferVector, isInferenceInput } from './inference.js';
import { renderRecord, toMultiVector, toPayloadSelection, toSparseVector, toVectorSelection, type WireRecord } from './point-convert.js';
import { toPointId } from './point-id.js';
import type {
  WireContextInput,
  WireDiscoverRequest,
  WireGrouping,
  WireMmr,
  WireOrderBy,
  WirePrefetch,
  WireQueryRequest,
  WireRecommendRequest,
  WireRelevanceFeedbackInput,
  WireSearchMatrixRequest,
  WireSearchParams,
  WireSearchRequest,
  WireSparseVector,
  WireVectorInput,
  WireWithPayload,
  WireWithVector,
} from './types.js';

const DEFAULT_QUERY_LIMIT = 10;
const DEFAULT_GROUP_SIZE = 3;
const DEFAULT_GROUP_LIMIT = 10;
const DEFAULT_MATRIX_SAMPLE = 10;
const DEFAULT_MATRIX_NEIGHBOURS = 3;

function toSearchParams(wire: WireSearchParams | null | undefined): SearchParams {
  const q = wire?.quantization;
  return {
    hnswEf: wire?.hnsw_ef ?? null,
    exact: wire?.exact ?? false,
    indexedOnly: wire?.indexed_only ?? false,
    idfCorpus: typeof wire?.idf === 'object' && wire.idf !== null ? toFilter(wire.idf.corpus) : null,
    quantization: q ? { ignore: q.ignore ?? false, rescore: q.rescore ?? undefined, oversampling: q.oversampling ?? undefined } : null,
  };
}

/** Search results carry no payload and no vector unless asked (unlike retrieve and scroll). */
function resultShape(withPayload: WireWithPayload | null | undefined, withVector: WireWithVector | null | undefined): ReadShape {
  return { withPayload: toPayloadSelection(withPayload ?? false), withVector: toVectorSelection(withVector ?? false) };
}

/** A v1.18 search: one nearest query on a vector given as such. */
export function fromSearchRequest(body: WireSearchRequest): QueryRequest {
  const named = !Array.isArray(body.vector);
  const vector = named ? (body.vector as { vector: number[] | WireSparseVector }).vector : (body.vector as number[]);
  return {
    root: {
      plan: { kind: 'nearest', input: toExample(vector) },
      prefetches: [],
      filter: body.filter ? toFilter(body.filter) : null,
      using: named ? (body.vector as { name: string }).name : DEFAULT_VECTOR,
      lookupFrom: null,
      params: toSearchParams(body.params),
      scoreThreshold: toScoreThreshold(body.score_threshold),
      limit: body.limit,
      offset: body.offset ?? 0,
    },
    shape: resultShape(body.with_payload, body.with_vector),
    shardKey: body.shard_key ?? null,
  };
}

/** A v1.18 recommend body as a query with a recommend query. */
export function recommendQuery(body: WireRecommendRequest): WireQueryRequest {
  return { ...body, query: { recommend: { positive: body.positive, negative: body.negative, strategy: body.strategy } } };
}

/** A v1.18 discover body as a query: discover with a target, context search without one. */
export function discoverQuery(body: WireDiscoverRequest): WireQueryRequest {
  const context = body.context ?? [];
  if (body.target !== null && body.target !== undefined) return { ...body, query: { discover: { target: body.target, context } } };
  if (context.length === 0) throw discoverNeedsTargetOrContext();
  return { ...body, query: { context } };
}

function toExample(input: WireVectorInput): Example {
  // A list of lists is a multivector (validated: at least one row, none empty, one length).
  if (Array.isArray(input)) return { vector: input.length > 0 && Array.isArray(input[0]) ? toMultiVector(input as number[][]) : (input as number[]) };
  if (typeof input === 'object') return { vector: isInferenceInput(input) ? inferVector(input, 'query') : toSparseVector(input) };
  return { pointId: toPointId(input) };
}

export function toOrderByRequest(wire: string | WireOrderBy): OrderByRequest {
  const spec = typeof wire === 'string' ? { key: wire } : wire;
  return { key: spec.key, direction: spec.direction ?? null, startFrom: spec.start_from ?? null };
}

function contextPairs(input: WireContextInput): [Example, Example][] {
  const pairs = input === null ? [] : Array.isArray(input) ? input : [input];
  return pairs.map((p) => [toExample(p.positive), toExample(p.negative)]);
}

/** Qdrant's MMR diversity when none is given. */
const DEFAULT_MMR_DIVERSITY = 0.5;

/** Qdrant's MMR: lambda (the weight of relevance) is 1 - diversity in f32; candidates default to the node's limit. */
function mmrPlan(nearest: WireVectorInput, mmr: WireMmr, limit: number): QueryPlan {
  const lambda = Math.fround(1 - Math.fround(mmr.diversity ?? DEFAULT_MMR_DIVERSITY));
  return { kind: 'mmr', input: toExample(nearest), lambda, candidatesLimit: mmr.candidates_limit ?? limit };
}

/** Relevance feedback's numbers are f32 in Qdrant. */
function feedbackPlan({ target, feedback, strategy }: WireRelevanceFeedbackInput): QueryPlan {
  const { a, b, c } = strategy.naive;
  const examples = feedback.map((f) => ({ example: toExample(f.example), score: Math.fround(f.score) }));
  return { kind: 'feedback', target: toExample(target), feedback: examples, a: Math.fround(a), b: Math.fround(b), c: Math.fround(c) };
}

/** The plan of a query or prefetch; null when it has no query (the matching points are read in id order). */
function queryPlan(body: Pick<WireQueryRequest, 'query' | 'limit'>): QueryPlan | null {
  const q = body.query;
  if (q === null || q === undefined) return null;
  if (typeof q === 'object' && !Array.isArray(q)) {
    if ('recommend' in q) {
      const r = q.recommend;
      return { kind: 'recommend', positives: (r.positive ?? []).map(toExample), negatives: (r.negative ?? []).map(toExample), strategy: r.strategy ?? 'average_vector' };
    }
    if ('discover' in q) return { kind: 'discover', target: toExample(q.discover.target), pairs: contextPairs(q.discover.context) };
    if ('context' in q) return { kind: 'context', pairs: contextPairs(q.context) };
    if ('fusion' in q) return { kind: 'fusion', method: q.fusion, k: null, weights: null };
    if ('rrf' in q) return { kind: 'fusion', method: 'rrf', k: q.rrf.k ?? null, weights: q.rrf.weights ?? null };
    if ('order_by' in q) return { kind: 'order_by', orderBy: toOrderByRequest(q.order_by) };
    if ('sample' in q) return { kind: 'sample' };
    if ('formula' in q) return { kind: 'formula', formula: toFormula(q) };
    if ('relevance_feedback' in q) return feedbackPlan(q.relevance_feedback);
    if ('indices' in q || isInferenceInput(q)) return { kind: 'nearest', input: toExample(q as WireVectorInput) };
    if (q.mmr) return mmrPlan(q.nearest, q.mmr, body.limit ?? DEFAULT_QUERY_LIMIT);
    return { kind: 'nearest', input: toExample(q.nearest) };
  }
  return { kind: 'nearest', input: toExample(q) };
}

function toQueryNode(wire: WirePrefetch | WireQueryRequest): QueryNode {
  const prefetches = !wire.prefetch ? [] : Array.isArray(wire.prefetch) ? wire.prefetch : [wire.prefetch];
  const from = wire.lookup_from;
  return {
    plan: queryPlan(wire),
    prefetches: prefetches.map(toQueryNode),
    filter: wire.filter ? toFilter(wire.filter) : null,
    using: wire.using ?? DEFAULT_VECTOR,
    lookupFrom: from ? { collection: from.collection, vector: from.vector ?? null, shardKey: from.shard_key ?? null } : null,
    params: toSearchParams(wire.params),
    scoreThreshold: toScoreThreshold(wire.score_threshold),
    limit: wire.limit ?? DEFAULT_QUERY_LIMIT,
    offset: ('offset' in wire ? wire.offset : null) ?? 0,
  };
}

export function toQueryRequest(body: WireQueryRequest): QueryRequest {
  return { root: toQueryNode(body), shape: resultShape(body.with_payload, body.with_vector), shardKey: body.shard_key ?? null };
}

export function toGroupSpec(body: WireGrouping): GroupSpec {
  const lookup = body.with_lookup;
  const target = typeof lookup === 'string' ? { collection: lookup } : lookup;
  return {
    groupBy: body.group_by,
    groupSize: body.group_size ?? DEFAULT_GROUP_SIZE,
    limit: body.limit ?? DEFAULT_GROUP_LIMIT,
    lookup: target ? {
      collection: target.collection,
      shape: { withPayload: toPayloadSelection(target.with_payload ?? true), withVector: toVectorSelection(target.with_vectors ?? false) },
    } : null,
  };
}

export function toMatrixRequest(body: WireSearchMatrixRequest): MatrixRequest {
  return {
    shardKey: body.shard_key ?? null,
    filter: body.filter ? toFilter(body.filter) : null,
    using: body.using ?? DEFAULT_VECTOR,
    sample: body.sample ?? DEFAULT_MATRIX_SAMPLE,
    limit: body.limit ?? DEFAULT_MATRIX_NEIGHBOURS,
  };
}

export interface WireScoredPoint extends WireRecord {
  version: number;
  score: number;
}

/**
 * Qdrant reads a threshold as an f32, like the scores it is compared with: the short form of a
 * score a client was given must admit that same score.
 */
function toScoreThreshold(threshold: number | null | undefined): number | null {
  return threshold == null ? null : Math.fround(threshold);
}

/** Qdrant's field order: id, version, score, then the record's parts that are present. */
export function renderScored(hit: ScoredView): WireScoredPoint {
  const { id, ...parts } = renderRecord(hit);
  return { id, version: hit.version, score: shortF32(hit.score), ...parts };
}

export interface WirePointGroup {
  id: string | number | bigint;
  hits: WireScoredPoint[];
  lookup?: WireRecord;
}

export function renderGroups(groups: PointGroup[]): { groups: WirePointGroup[] } {
  return {
    groups: groups.map((g) => {
      const out: WirePointGroup = { id: g.id, hits: g.hits.map(renderScored) };
      if (g.lookup) out.lookup = renderRecord(g.lookup);
      return out;
    }),
  };
}
