// Vector search inside one shard: the filter becomes an allow-bitset, the engine finds the top
// offsets (graph or exact scan), ids and the requested payload and vectors are attached.

import { largerIsCloser, type Bitset, type Distance, type QuantizationSearchParams, type VectorIndex } from '../engine/index.js';
import { BadInput } from '../errors.js';
import type { PointId } from '../model.js';
import type { Filter } from './filter/index.js';
import { selectPayload, selectVectors, type PayloadSelection, type PointView, type VectorSelection } from './selectors.js';
import type { Shard } from './shard.js';

export interface SearchParams {
  hnswEf: number | null;
  exact: boolean;
  quantization: QuantizationSearchParams | null;
  indexedOnly: boolean;
}

/**
 * What a search looks for: the points nearest a vector, or (recommend's custom objectives) the
 * best by a score combined from similarities to positive and negative examples.
 */
export type SearchQuery =
  | { kind: 'nearest'; vector: number[] }
  | { kind: 'recommend'; strategy: 'best_score' | 'sum_scores'; positives: number[][]; negatives: number[][] };

export interface SearchSpec {
  using: string;
  query: SearchQuery;
  filter: Filter | null;
  /** How many hits this shard returns: the request's offset + limit. */
  top: number;
  params: SearchParams;
  scoreThreshold: number | null;
  withPayload: PayloadSelection;
  withVector: VectorSelection;
}

export interface ScoredView extends PointView {
  score: number;
  version: number;
}

/** Whether hits of this search rank larger scores first. */
export function ranksLargerFirst(query: SearchQuery, distance: Distance): boolean {
  return query.kind === 'recommend' || largerIsCloser(distance);
}

export function searchShard(shard: Shard, spec: SearchSpec): ScoredView[] {
  const index = shard.vectorIndex(spec.using);
  if (!index) throw new BadInput(`Not existing vector name error: ${spec.using}`);
  const vectors = spec.query.kind === 'nearest' ? [spec.query.vector] : [...spec.query.positives, ...spec.query.negatives];
  for (const v of vectors) {
    if (v.length !== index.dim) throw new BadInput(`Vector dimension error: expected dim: ${index.dim}, got ${v.length}`);
  }
  const allowed = spec.filter ? shard.matching(spec.filter) : undefined;
  const scored = spec.query.kind === 'nearest'
    ? nearest(index, spec.query.vector, spec, allowed)
    : recommended(index, spec.query, spec, allowed);
  const larger = ranksLargerFirst(spec.query, index.config.distance);
  const hits: ScoredView[] = [];
  for (const { offset, score } of scored) {
    // score_threshold is inclusive, on the side of "closer" for the ranking.
    if (spec.scoreThreshold !== null && (larger ? score < spec.scoreThreshold : score > spec.scoreThreshold)) break;
    const id: PointId = shard.pointId(offset);
    const record = shard.record(id)!;
    const hit: ScoredView = { id, score, version: record.version ?? 0 };
    const payload = selectPayload(record.payload ?? {}, spec.withPayload);
    if (payload) hit.payload = payload;
    const vectors = selectVectors(record.vectors, spec.withVector);
    if (vectors) hit.vectors = vectors;
    hits.push(hit);
  }
  return hits;
}

interface Scored {
  offset: number;
  score: number;
}

function nearest(index: VectorIndex, vector: number[], spec: SearchSpec, allowed: Bitset | undefined): Scored[] {
  const found = index.search(vector, {
    limit: spec.top,
    ef: spec.params.hnswEf ?? undefined,
    exact: spec.params.exact,
    filter: allowed,
    quantization: spec.params.quantization ?? undefined,
  });
  return Array.from(found.offsets, (offset, i) => ({ offset, score: found.scores[i] }));
}

/**
 * Qdrant's raw similarity, which recommend's objectives combine: the dot product for Cosine and
 * Dot, the negated squared L2 distance for Euclid, the negated L1 distance for Manhattan.
 */
function similarity(distance: Distance, score: number): number {
  if (distance === 'Euclid') return -(score * score);
  if (distance === 'Manhattan') return -score;
  return score;
}

/** Qdrant's bounded stand-in for a sigmoid: x / (1 + |x|), scaled into (0, 1). */
function scaledFastSigmoid(x: number): number {
  return 0.5 * (x / (1 + Math.abs(x)) + 1);
}

/**
 * best_score and sum_scores, scored exactly: every allowed point's similarity to each example
 * comes from one exact engine scan per example, then the objective ranks them.
 */
function recommended(index: VectorIndex, query: Extract<SearchQuery, { kind: 'recommend' }>, spec: SearchSpec, allowed: Bitset | undefined): Scored[] {
  const distance = index.config.distance;
  const all = index.size;
  const similarities = (example: number[]): Map<number, number> => {
    const found = index.search(example, { limit: all, exact: true, filter: allowed, quantization: { ignore: true } });
    const out = new Map<number, number>();
    found.offsets.forEach((offset, i) => out.set(offset, similarity(distance, found.scores[i])));
    return out;
  };
  const positives = query.positives.map(similarities);
  const negatives = query.negatives.map(similarities);
  const offsets = [...(positives[0] ?? negatives[0] ?? new Map<number, number>()).keys()];
  const scored = offsets.map((offset) => {
    const pos = positives.map((m) => m.get(offset)!);
    const neg = negatives.map((m) => m.get(offset)!);
    if (query.strategy === 'sum_scores') {
      return { offset, score: Math.fround(pos.reduce((a, b) => a + b, 0) - neg.reduce((a, b) => a + b, 0)) };
    }
    const maxPos = Math.max(-Infinity, ...pos);
    const maxNeg = Math.max(-Infinity, ...neg);
    return { offset, score: Math.fround(maxPos > maxNeg ? scaledFastSigmoid(maxPos) : -scaledFastSigmoid(maxNeg)) };
  });
  scored.sort((a, b) => b.score - a.score || a.offset - b.offset);
  return scored.slice(0, spec.top);
}
