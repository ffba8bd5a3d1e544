// Vector search inside one shard: the filter becomes an allow-bitset, the named vector's index
// finds the top offsets (the dense engine's graph or exact scan, or the sparse inverted index),
// ids and the requested payload and vectors are attached.

import { largerIsCloser, type Bitset, type Distance, type IdfStatistics, type QuantizationSearchParams, type SparseIndex, type VectorIndex } from '../engine/index.js';
import { multiRegularMismatch, sparseDenseMismatch, vectorDimensionMismatch, vectorNameNotFound } from '../messages.js';
import { multiCount, type MultiVector, type PointId, type SparseVector } from '../model.js';
import { planFilter, type Filter, type FilterPlan } from './filter/index.js';
import { selectPayload, selectVectors, type PayloadSelection, type PointView, type VectorSelection } from './selectors.js';
import { compareIds, type Shard } from './shard.js';
import { checkDeadline, pollDeadline } from './deadline.js';
import { charge } from './hardware.js';

export interface SearchParams {
  hnswEf: number | null;
  exact: boolean;
  quantization: QuantizationSearchParams | null;
  indexedOnly: boolean;
  /** Sparse vectors with the idf modifier: the points whose statistics weigh the query (null: all). */
  idfCorpus: Filter | null;
}

/** A vector a query scores with: dense (as sent, in numbers), sparse, or a multivector. */
export type QueryVector = number[] | SparseVector | MultiVector;

export function isSparseQuery(vector: QueryVector): vector is SparseVector {
  return !Array.isArray(vector) && 'indices' in vector;
}

export function isMultiQuery(vector: QueryVector): vector is MultiVector {
  return !Array.isArray(vector) && 'dim' in vector;
}

/** A (positive, negative) pair of example vectors of discover and context queries. */
export type ExamplePair = [positive: QueryVector, negative: QueryVector];

/** A pair of relevance feedback examples, the first judged more relevant, and the pair's weight. */
export interface FeedbackPair {
  positive: QueryVector;
  negative: QueryVector;
  weight: number;
}

/**
 * Scores combined from similarities to several example vectors (Qdrant's custom objectives):
 * recommend's best_score and sum_scores, discover (target plus context pairs), context (pairs),
 * relevance feedback (target plus weighted feedback pairs).
 */
export type Objective =
  | { type: 'best_score' | 'sum_scores'; positives: QueryVector[]; negatives: QueryVector[] }
  | { type: 'discover'; target: QueryVector; pairs: ExamplePair[] }
  | { type: 'context'; pairs: ExamplePair[] }
  | { type: 'feedback'; target: QueryVector; pairs: FeedbackPair[]; a: number };

/** What a search looks for: the points nearest a vector, or the best by a custom objective. */
export type SearchQuery = { kind: 'nearest'; vector: QueryVector } | { kind: 'custom'; objective: Objective };

function objectiveVectors(o: Objective): QueryVector[] {
  if (o.type === 'discover') return [o.target, ...o.pairs.flat()];
  if (o.type === 'context') return o.pairs.flat();
  if (o.type === 'feedback') return [o.target, ...o.pairs.flatMap((p) => [p.positive, p.negative])];
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

/**
 * Whether hits of this search rank larger scores first: custom objectives and sparse vectors
 * (dot products) do; a dense vector as its distance says. `distance` is null for a sparse vector.
 */
export function ranksLargerFirst(query: SearchQuery, distance: Distance | null): boolean {
  return query.kind === 'custom' || distance === null || largerIsCloser(distance);
}

interface Scored {
  offset: number;
  score: number;
}

/** One named vector of a shard as searches use it: dense (the engine) or sparse (the inverted index). */
interface VectorScorer {
  distance: Distance | null;
  /** The `top` points nearest `vector` that the filter plan allows, best first. */
  nearest(vector: QueryVector, spec: SearchSpec, plan: FilterPlan | undefined): Scored[];
  /** Qdrant's raw similarity to `example` of every allowed point that has this vector, by offset. */
  similarities(example: QueryVector, allowed: Bitset | undefined): Map<number, number>;
}

function scorerOf(shard: Shard, using: string): VectorScorer {
  const dense = shard.vectorIndex(using);
  if (dense) return denseScorer(dense);
  const sparse = shard.sparseIndex(using);
  if (sparse) return sparseScorer(shard, sparse, shard.sparseSpec(using)?.idf ?? false);
  throw vectorNameNotFound(using);
}

/** A query for the engine: its rows and how many (1 for a single vector). */
interface EngineQuery {
  rows: ArrayLike<number>;
  count: number;
}

/**
 * What an index takes of a query vector, with Qdrant's errors: a single-vector index takes a
 * dense vector of its dimension; a multivector index takes a list of vectors of its dimension,
 * or a dense vector as a list of one (Qdrant reads a dense query as a one-vector multivector).
 */
function engineQuery(index: VectorIndex, v: QueryVector): EngineQuery {
  if (isSparseQuery(v)) throw sparseDenseMismatch();
  if (isMultiQuery(v)) {
    if (!index.multivector) throw multiRegularMismatch();
    if (v.dim !== index.dim) throw vectorDimensionMismatch(index.dim, v.dim);
    return { rows: v.data, count: multiCount(v) };
  }
  if (v.length !== index.dim) throw vectorDimensionMismatch(index.dim, v.length);
  return { rows: v, count: 1 };
}

function denseScorer(index: VectorIndex): VectorScorer {
  const check = (v: QueryVector): EngineQuery => engineQuery(index, v);
  const distance = index.config.distance;
  return {
    distance,
    nearest(vector, spec, plan) {
      const query = check(vector);
      // What no index answered is checked by the engine's plan: on the points the graph search
      // reaches, or on every candidate before an exact scan of the few (see VectorIndex).
      const rest = plan?.rest;
      const found = index.search(query.rows, {
        limit: spec.top,
        ef: spec.params.hnswEf ?? undefined,
        exact: spec.params.exact,
        filter: plan?.candidates,
        check: rest ? plan.check.matcher(rest) : undefined,
        quantization: spec.params.quantization ?? undefined,
      }, query.count);
      plan?.check.chargeReads();
      charge('cpu', found.cost);
      return Array.from(found.offsets, (offset, i) => ({ offset, score: found.scores[i] }));
    },
    similarities(example, allowed) {
      const query = check(example);
      const found = index.search(query.rows, { limit: index.size, exact: true, filter: allowed, quantization: { ignore: true } }, query.count);
      charge('cpu', found.cost);
      const bySimilarity = new Map<number, number>();
      found.offsets.forEach((offset, i) => bySimilarity.set(offset, similarity(distance, found.scores[i])));
      return bySimilarity;
    },
  };
}

/**
 * A sparse vector: scores are dot products over shared indices; a point sharing none with the
 * query is no match for a nearest search (as in Qdrant). With the `idf` modifier, query values
 * are weighted by the shard's own statistics, as Qdrant weighs them per shard. The index is
 * exact, so hnsw_ef and exact change nothing.
 */
function sparseScorer(shard: Shard, index: SparseIndex, idf: boolean): VectorScorer {
  const check = (v: QueryVector): SparseVector => {
    if (!isSparseQuery(v)) throw sparseDenseMismatch();
    return v;
  };
  return {
    distance: null,
    nearest(vector, spec, plan) {
      const query = check(vector);
      const allowed = plan && allowedBy(plan);
      const stats = !idf ? undefined : spec.params.idfCorpus ? corpusStatistics(index, shard.matching(spec.params.idfCorpus), query) : { documentCount: index.documentCount, documentFrequencies: index.documentFrequencies(query.indices) };
      const found = index.search(query, { limit: spec.top, filter: allowed, idf: stats });
      charge('cpu', sparseSearchCost(index, query, allowed));
      return Array.from(found.offsets, (offset, i) => ({ offset, score: found.scores[i] }));
    },
    similarities(example, allowed) {
      const query = check(example);
      const bySimilarity = new Map<number, number>();
      for (let offset = 0; offset < index.offsetCount; offset++) {
        if (allowed && !allowed.has(offset)) continue;
        const stored = index.vector(offset);
        if (!stored) continue;
        charge('cpu', sparsePairCost(query, stored));
        bySimilarity.set(offset, sparseDot(query, stored));
      }
      return bySimilarity;
    },
  };
}

/** Qdrant's `cpu` count for scoring one pair of sparse vectors: the comparisons a merge of their indices takes. */
function sparsePairCost(a: SparseVector, b: SparseVector): number {
  return Math.min(a.indices.length, b.indices.length);
}

/**
 * The `cpu` count of a sparse search, by the plan the index follows: a scan of the few allowed
 * points (float32 values only) scores each pair; a search through the postings makes one
 * product per stored value at a query index.
 */
function sparseSearchCost(index: SparseIndex, query: SparseVector, allowed: Bitset | undefined): number {
  const scans = allowed !== undefined && index.datatype === 'float32' && index.usesFullScan(allowed);
  if (!scans) return index.documentFrequencies(query.indices).reduce((a, b) => a + b, 0);
  let cost = 0;
  for (const offset of allowed) {
    const stored = index.vector(offset);
    if (stored) cost += sparsePairCost(query, stored);
  }
  return cost;
}

/**
 * IDF statistics over the corpus points only (Qdrant 1.19's `params.idf.corpus`): N the corpus
 * points with a non-empty vector, n per query index those with a non-zero value there.
 */
function corpusStatistics(index: SparseIndex, corpus: Bitset, query: SparseVector): IdfStatistics {
  const position = new Map(Array.from(query.indices, (x, i) => [x, i]));
  const frequencies = new Uint32Array(query.indices.length);
  let documents = 0;
  for (const offset of corpus) {
    const stored = index.vector(offset);
    if (!stored || stored.indices.length === 0) continue;
    documents++;
    stored.indices.forEach((x, i) => {
      const at = position.get(x);
      if (at !== undefined && stored.values[i] !== 0) frequencies[at]++;
    });
  }
  return { documentCount: documents, documentFrequencies: frequencies };
}

/** Dot product over shared indices of two sparse vectors (indices ascending in both). */
export function sparseDot(a: SparseVector, b: SparseVector): number {
  let sum = 0;
  for (let i = 0, j = 0; i < a.indices.length && j < b.indices.length;) {
    if (a.indices[i] === b.indices[j]) sum += a.values[i++] * b.values[j++];
    else if (a.indices[i] < b.indices[j]) i++;
    else j++;
  }
  return Math.fround(sum);
}

/** The points a filter plan allows: its candidates that meet the rest of the filter. */
function allowedBy(plan: FilterPlan): Bitset {
  const { candidates, rest, check } = plan;
  if (!rest) return candidates;
  const matches = check.matcher(rest);
  candidates.forEach((offset) => {
    if (!matches(offset)) candidates.delete(offset);
  });
  check.chargeReads();
  return candidates;
}

export function searchShard(shard: Shard, spec: SearchSpec): ScoredView[] {
  const scorer = scorerOf(shard, spec.using);
  const plan = spec.filter ? planFilter(spec.filter, shard) : undefined;
  const scored = spec.query.kind === 'nearest'
    ? scorer.nearest(spec.query.vector, spec, plan)
    : customScored(scorer, spec.query.objective, spec, plan && allowedBy(plan));
  const larger = ranksLargerFirst(spec.query, scorer.distance);
  const hits: ScoredView[] = [];
  for (const { offset, score } of scored) {
    // score_threshold is inclusive, on the side of "closer" for the ranking.
    if (spec.scoreThreshold !== null && (larger ? score < spec.scoreThreshold : score > spec.scoreThreshold)) break;
    const id: PointId = shard.pointId(offset);
    const hit: ScoredView = { id, score, version: shard.version(offset) };
    const payload = selectPayload(shard.payload(offset) ?? {}, spec.withPayload);
    if (payload) hit.payload = payload;
    // The whole record (every stored vector copied out of the engine) only when vectors are asked for.
    const vectors = spec.withVector === false ? undefined : selectVectors(shard.record(id)!.vectors, spec.withVector);
    if (vectors) hit.vectors = vectors;
    hits.push(hit);
  }
  return hits;
}

/**
 * Qdrant's raw similarity, which recommend's objectives combine: the dot product for Cosine and
 * Dot, the negated squared L2 distance for Euclid, the negated L1 distance for Manhattan. For a
 * multivector it is the raw MaxSim sum, which the engine's score gives back the same way (it
 * reports sqrt(|sum|) for Euclid and |sum| for Manhattan).
 */
export function similarity(distance: Distance, score: number): number {
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
function objectiveScore(o: Objective, sim: (v: QueryVector) => number): number {
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
    case 'feedback':
      // a * sim(target) + sum of weight * (sim(positive) - sim(negative)), in f32 steps as Qdrant.
      return o.pairs.reduce(
        (score, p) => Math.fround(score + Math.fround(p.weight * Math.fround(sim(p.positive) - sim(p.negative)))),
        Math.fround(o.a * sim(o.target)),
      );
  }
}

/**
 * Custom objectives, scored exactly: every allowed point's similarity to each distinct example
 * comes from one exact scan per example, then the objective ranks them.
 */
function customScored(scorer: VectorScorer, objective: Objective, spec: SearchSpec, allowed: Bitset | undefined): Scored[] {
  const scans = new Map<QueryVector, Map<number, number>>();
  for (const example of objectiveVectors(objective)) {
    if (scans.has(example)) continue;
    checkDeadline();
    scans.set(example, scorer.similarities(example, allowed));
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
  return hits.sort((a, b) => compareHits(a, b, largerFirst));
}

function compareHits(a: ScoredView, b: ScoredView, largerFirst: boolean): number {
  return (largerFirst ? b.score - a.score : a.score - b.score) || compareIds(a.id, b.id);
}

/**
 * Merges the hit lists of several shards as Qdrant's collection does (a k-way merge by the
 * distance's order of the scores shown): each list keeps its own order, the engine's by internal
 * score, and the better of the lists' first hits is taken next. For lists already ranked by the
 * score shown this is rankHits of their union; it differs only where postprocessing reorders a
 * shard's answer (unrescored binary Euclid/Manhattan, whose sqrt(|s|) and |s| are not monotonic).
 * Equal scores within a list are put in id order, as rankHits does.
 */
export function mergeHits(lists: ScoredView[][], largerFirst: boolean): ScoredView[] {
  const ordered = lists.map((hits) => tiesById(hits));
  const at = ordered.map(() => 0);
  const out: ScoredView[] = [];
  for (;;) {
    let best = -1;
    for (let i = 0; i < ordered.length; i++) {
      if (at[i] < ordered[i].length && (best < 0 || compareHits(ordered[i][at[i]], ordered[best][at[best]], largerFirst) < 0)) best = i;
    }
    if (best < 0) return out;
    out.push(ordered[best][at[best]++]);
  }
}

/** `hits` with each run of equal scores in id order, the order otherwise kept. */
function tiesById(hits: ScoredView[]): ScoredView[] {
  const out = hits.slice();
  for (let start = 0; start < out.length;) {
    let end = start + 1;
    while (end < out.length && out[end].score === out[start].score) end++;
    if (end - start > 1) out.splice(start, end - start, ...out.slice(start, end).sort((a, b) => compareIds(a.id, b.id)));
    start = end;
  }
  return out;
}
