// Vector search inside one shard: the filter becomes an allow-bitset, the engine finds the top
// offsets (graph or exact scan), ids and the requested payload and vectors are attached.

import { largerIsCloser, type Bitset, type Distance, type QuantizationSearchParams, type VectorIndex } from '../engine/index.js';
import { BadInput } from '../errors.js';
import type { PointId } from '../model.js';
import type { Filter } from './filter/index.js';
import { selectPayload, selectVectors, type PayloadSelection, type PointView, type VectorSelection } from './selectors.js';
import { compareIds, type Shard } from './shard.js';
import { checkDeadline, pollDeadline } from './deadline.js';

export interface SearchParams {
  hnswEf: number | null;
  exact: boolean;
  quantization: QuantizationSearchParams | null;
  indexedOnly: boolean;
}

/** A (positive, negative) pair of example vectors of discover and context queries. */
export type ExamplePair = [positive: number[], negative: number[]];

/**
 * Scores combined from similarities to several example vectors (Qdrant's custom objectives):
 * recommend's best_score and sum_scores, discover (target plus context pairs), context (pairs).
 */
export type Objective =
  | { type: 'best_score' | 'sum_scores'; positives: number[][]; negatives: number[][] }
  | { type: 'discover'; target: number[]; pairs: ExamplePair[] }
  | { type: 'context'; pairs: ExamplePair[] };

/** What a search looks for: the points nearest a vector, or the best by a custom objective. */
export type SearchQuery = { kind: 'nearest'; vector: number[] } | { kind: 'custom'; objective: Objective };

function objectiveVectors(o: Objective): number[][] {
  if (o.type === 'discover') return [o.target, ...o.pairs.flat()];
  if (o.type === 'context') return o.pairs.flat();
  return [...o.positives, ...o.negatives];
}

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
  return query.kind === 'custom' || largerIsCloser(distance);
}

export function searchShard(shard: Shard, spec: SearchSpec): ScoredView[] {
  const index = shard.vectorIndex(spec.using);
  if (!index) throw new BadInput(`Not existing vector name error: ${spec.using}`);
  const vectors = spec.query.kind === 'nearest' ? [spec.query.vector] : objectiveVectors(spec.query.objective);
  for (const v of vectors) {
    if (v.length !== index.dim) throw new BadInput(`Vector dimension error: expected dim: ${index.dim}, got ${v.length}`);
  }
  const allowed = spec.filter ? shard.matching(spec.filter) : undefined;
  const scored = spec.query.kind === 'nearest'
    ? nearest(index, spec.query.vector, spec, allowed)
    : customScored(index, spec.query.objective, spec, allowed);
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

/** Qdrant's bounded stand-in for a sigmoid: x / (1 + |x|), in (-1, 1). */
function fastSigmoid(x: number): number {
  return x / (1 + Math.abs(x));
}

function scaledFastSigmoid(x: number): number {
  return 0.5 * (fastSigmoid(x) + 1);
}

/** The margin Qdrant's context loss subtracts: f32 machine epsilon. */
const CONTEXT_MARGIN = 1.1920929e-7;

/** One point's score under an objective, from its similarity to each example vector. */
function objectiveScore(o: Objective, sim: (v: number[]) => number): number {
  switch (o.type) {
    case 'sum_scores':
      return o.positives.reduce((a, v) => a + sim(v), 0) - o.negatives.reduce((a, v) => a + sim(v), 0);
    case 'best_score': {
      const maxPos = Math.max(-Infinity, ...o.positives.map(sim));
      const maxNeg = Math.max(-Infinity, ...o.negatives.map(sim));
      return maxPos > maxNeg ? scaledFastSigmoid(maxPos) : -scaledFastSigmoid(maxNeg);
    }
    case 'discover': {
      // Rank: +1 per pair the point is on the positive side of, -1 otherwise; then closeness to the target in (0, 1).
      const rank = o.pairs.reduce((r, [p, n]) => r + (sim(p) > sim(n) ? 1 : -1), 0);
      return rank + scaledFastSigmoid(sim(o.target));
    }
    case 'context':
      return o.pairs.reduce((loss, [p, n]) => loss + fastSigmoid(Math.min(sim(p) - sim(n) - CONTEXT_MARGIN, 0)), 0);
  }
}

/**
 * Custom objectives, scored exactly: every allowed point's similarity to each distinct example
 * comes from one exact engine scan per example, then the objective ranks them.
 */
function customScored(index: VectorIndex, objective: Objective, spec: SearchSpec, allowed: Bitset | undefined): Scored[] {
  const distance = index.config.distance;
  const scans = new Map<number[], Map<number, number>>();
  for (const example of objectiveVectors(objective)) {
    if (scans.has(example)) continue;
    checkDeadline();
    const found = index.search(example, { limit: index.size, exact: true, filter: allowed, quantization: { ignore: true } });
    const bySimilarity = new Map<number, number>();
    found.offsets.forEach((offset, i) => bySimilarity.set(offset, similarity(distance, found.scores[i])));
    scans.set(example, bySimilarity);
  }
  const offsets = [...(scans.values().next().value ?? new Map<number, number>()).keys()];
  const scored = offsets.map((offset) => {
    pollDeadline();
    return { offset, score: Math.fround(objectiveScore(objective, (v) => scans.get(v)!.get(offset)!)) };
  });
  scored.sort((a, b) => b.score - a.score || a.offset - b.offset);
  return scored.slice(0, spec.top);
}

/** Hits best first (by score in the search's direction), ties by id: the order results merge in. */
export function rankHits(hits: ScoredView[], largerFirst: boolean): ScoredView[] {
  return hits.sort((a, b) => (largerFirst ? b.score - a.score : a.score - b.score) || compareIds(a.id, b.id));
}
