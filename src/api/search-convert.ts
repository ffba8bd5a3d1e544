// Search and query bodies -> the shards' SearchSpec; hits -> Qdrant's ScoredPoint.

import { BadRequest } from '../errors.js';
import { DEFAULT_VECTOR, type PointId } from '../model.js';
import type { ScoredView, SearchParams, SearchSpec } from '../shard/search.js';
import { toFilter } from './filter.js';
import { renderRecord, toPayloadSelection, toPointId, toVectorSelection, type WireRecord } from './point-convert.js';
import type { WireQueryRequest, WireSearchParams, WireSearchRequest, WireVectorInput, WireWithPayload, WireWithVector } from './types.js';

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
  return {
    spec: {
      using: named ? (body.vector as { name: string }).name : DEFAULT_VECTOR,
      vector: named ? (body.vector as { vector: number[] }).vector : (body.vector as number[]),
      filter: body.filter ? toFilter(body.filter) : null,
      params: toSearchParams(body.params),
      scoreThreshold: body.score_threshold ?? null,
      ...readShape(body.with_payload, body.with_vector),
    },
    limit: body.limit,
    offset: body.offset ?? 0,
  };
}

/** A query's input: a vector as given, or a stored point (whose vector is looked up). */
export type QueryInput = { vector: number[] } | { pointId: PointId };

export function queryInput(body: WireQueryRequest): QueryInput {
  if (body.query === null || body.query === undefined) throw new BadRequest('a query is required: this server answers nearest-vector queries');
  const input: WireVectorInput = typeof body.query === 'object' && !Array.isArray(body.query) ? body.query.nearest : body.query;
  return Array.isArray(input) ? { vector: input } : { pointId: toPointId(input) };
}

export function fromQueryRequest(body: WireQueryRequest, vector: number[]): PlannedSearch {
  return {
    spec: {
      using: body.using ?? DEFAULT_VECTOR,
      vector,
      filter: body.filter ? toFilter(body.filter) : null,
      params: toSearchParams(body.params),
      scoreThreshold: body.score_threshold ?? null,
      ...readShape(body.with_payload, body.with_vector),
    },
    limit: body.limit ?? DEFAULT_QUERY_LIMIT,
    offset: body.offset ?? 0,
  };
}

export interface WireScoredPoint extends Omit<WireRecord, 'order_value'> {
  version: number;
  score: number;
}

export function renderScored(hit: ScoredView): WireScoredPoint {
  const { id, payload, vector, shard_key } = renderRecord(hit);
  const out: WireScoredPoint = { id, version: hit.version, score: hit.score, payload, vector };
  if (shard_key !== undefined) out.shard_key = shard_key;
  return out;
}
