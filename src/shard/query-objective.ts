// What a vector query looks for, before and after its examples are vectors: nearest, recommend,
// discover and context queries whose examples are vectors or stored points, and the search each
// becomes once every example is a vector.

import { exampleVectorNotFound, pointNotFound, validationFailed, vectorDimensionMismatch } from '../messages.js';
import { isDense, type MultiVector, type PointId, type SparseVector, type Vector } from '../model.js';
import { isMultiQuery, isSparseQuery, type ExamplePair, type FeedbackPair, type QueryVector, type SearchQuery } from './search.js';

/** An example or query input: a vector as given, or a stored point (whose vector is looked up). */
export type Example = { vector: QueryVector } | { pointId: PointId };

export type RecommendStrategy = 'average_vector' | 'best_score' | 'sum_scores';

/** A relevance feedback example: a vector or point, and how relevant it was judged. */
export interface FeedbackExample {
  example: Example;
  score: number;
}

/** A query that scores points against vectors. */
export type VectorQuery =
  | { kind: 'nearest'; input: Example }
  /**
   * Nearest candidates (`candidatesLimit` of them), then picked by maximal marginal relevance:
   * `lambda` weighs relevance against similarity to the points already picked.
   */
  | { kind: 'mmr'; input: Example; lambda: number; candidatesLimit: number }
  /** Qdrant 1.19's relevance feedback, naive strategy with coefficients a, b, c. */
  | { kind: 'feedback'; target: Example; feedback: FeedbackExample[]; a: number; b: number; c: number }
  | { kind: 'recommend'; positives: Example[]; negatives: Example[]; strategy: RecommendStrategy }
  | { kind: 'discover'; target: Example; pairs: [Example, Example][] }
  | { kind: 'context'; pairs: [Example, Example][] };

/** Every example a query names, in any role. */
function examplesOf(query: VectorQuery): Example[] {
  switch (query.kind) {
    case 'nearest':
    case 'mmr':
      return [query.input];
    case 'feedback':
      return [...query.feedback.map((f) => f.example), query.target];
    case 'recommend':
      return [...query.positives, ...query.negatives];
    case 'discover':
      return [query.target, ...query.pairs.flat()];
    case 'context':
      return query.pairs.flat();
  }
}

/** The ids of the stored points a query names. */
export function storedIds(query: VectorQuery): PointId[] {
  return examplesOf(query).flatMap((e) => ('pointId' in e ? [e.pointId] : []));
}

/** Stored points' vectors of one name, as read: a point absent from the map was not found. */
export type StoredVectors = Map<PointId, Vector | undefined>;

/**
 * Reads an example's vector: as given, or the stored point's (a point that is not there is an
 * error); null for a stored point without a vector of the name the query uses.
 */
export type ExampleReader = (example: Example) => QueryVector | null;

/** An example's vector: as given, or read from the stored point (null: it has no such vector). */
export function exampleVector(example: Example, stored: StoredVectors): QueryVector | null {
  if ('vector' in example) return example.vector;
  if (!stored.has(example.pointId)) throw pointNotFound(example.pointId);
  const v = stored.get(example.pointId);
  return v ? queryVectorOf(v) : null;
}

/**
 * Qdrant's query API leaves a recommend example without the vector out (it resolves those with
 * a filter_map), and refuses one everywhere else: nearest, MMR, feedback, discover and context.
 */
function requiring(read: ExampleReader, name: string): (example: Example) => QueryVector {
  return (example) => {
    const v = read(example);
    if (v === null) throw exampleVectorNotFound(name);
    return v;
  };
}

function present(list: Example[], read: ExampleReader): QueryVector[] {
  return list.map(read).filter((v): v is QueryVector => v !== null);
}

/** A stored vector as a query scores with it: dense ones in numbers, sparse and multi ones as they are. */
export function queryVectorOf(v: Vector): QueryVector {
  return isDense(v) ? Array.from(v) : v;
}

type VectorKind = 'dense' | 'sparse' | 'multi';

function kindOf(v: QueryVector): VectorKind {
  return isSparseQuery(v) ? 'sparse' : isMultiQuery(v) ? 'multi' : 'dense';
}

/** The one kind of every vector of a list; mixed lists are refused. */
function kindOfAll(list: QueryVector[]): VectorKind {
  const kinds = new Set(list.map(kindOf));
  if (kinds.size > 1) throw validationFailed("Can't average vectors with different types");
  return [...kinds][0];
}

/**
 * Qdrant's average_vector query: avg(positives), or avg(p) + (avg(p) - avg(negatives)). Sparse
 * vectors are averaged over the union of their indices (an absent index counts as 0).
 * Multivectors are not averaged: Qdrant concatenates the positives' rows and appends the
 * negatives' rows negated (lib/segment/src/vector_storage/query/reco_query.rs).
 */
function averageVector(positives: QueryVector[], negatives: QueryVector[]): QueryVector {
  if (positives.length === 0) throw validationFailed('Positive vectors should not be empty with `average` strategy');
  const kind = kindOfAll(positives);
  if (negatives.length > 0 && kindOfAll(negatives) !== kind) {
    throw validationFailed('Positive and negative vectors should be of the same type, either all dense or all sparse or all multi');
  }
  if (kind === 'sparse') return averageSparse(positives as SparseVector[], negatives as SparseVector[]);
  if (kind === 'multi') return concatenatedMulti(positives as MultiVector[], negatives as MultiVector[]);
  const avg = (list: number[][]) => list[0].map((_, j) => list.reduce((sum, v) => sum + v[j], 0) / list.length);
  const pos = avg(positives as number[][]);
  if (negatives.length === 0) return pos;
  const neg = avg(negatives as number[][]);
  return pos.map((p, j) => p + p - neg[j]);
}

/** The positives' rows, then the negatives' rows negated, as one multivector of the first positive's dim. */
function concatenatedMulti(positives: MultiVector[], negatives: MultiVector[]): MultiVector {
  const dim = positives[0].dim;
  // Rows of another length would be cut at the wrong places (Qdrant's issue #10574): refused.
  const other = [...positives, ...negatives].find((v) => v.dim !== dim);
  if (other) throw vectorDimensionMismatch(dim, other.dim);
  const data = new Float32Array([...positives, ...negatives].reduce((n, v) => n + v.data.length, 0));
  let at = 0;
  for (const v of positives) {
    data.set(v.data, at);
    at += v.data.length;
  }
  for (const v of negatives) {
    for (let i = 0; i < v.data.length; i++) data[at + i] = -v.data[i];
    at += v.data.length;
  }
  return { dim, data };
}

function averageSparse(positives: SparseVector[], negatives: SparseVector[]): SparseVector {
  const avg = (list: SparseVector[]): Map<number, number> => {
    const sums = new Map<number, number>();
    for (const v of list) v.indices.forEach((index, i) => sums.set(index, (sums.get(index) ?? 0) + v.values[i]));
    for (const [index, sum] of sums) sums.set(index, sum / list.length);
    return sums;
  };
  const pos = avg(positives);
  const out = new Map(pos);
  if (negatives.length > 0) {
    const neg = avg(negatives);
    for (const index of new Set([...pos.keys(), ...neg.keys()])) out.set(index, 2 * (pos.get(index) ?? 0) - (neg.get(index) ?? 0));
  }
  const indices = Uint32Array.from([...out.keys()].sort((a, b) => a - b));
  return { indices, values: Float32Array.from(indices, (index) => out.get(index)!) };
}

/**
 * The naive strategy's pairs, as Qdrant forms them: every ordered pair of examples whose
 * feedback scores differ by more than 0, weighted by c * (difference ^ b), in f32. Every example
 * is read first, so a missing point is reported even when it forms no pair.
 */
function feedbackPairs(query: Extract<VectorQuery, { kind: 'feedback' }>, vectorOf: (e: Example) => QueryVector): FeedbackPair[] {
  const examples = query.feedback.map((f) => ({ vector: vectorOf(f.example), score: f.score }));
  const pairs: FeedbackPair[] = [];
  for (const positive of examples) {
    for (const negative of examples) {
      const confidence = Math.fround(positive.score - negative.score);
      if (positive === negative || confidence <= 0) continue;
      const weight = Math.fround(Math.fround(confidence ** query.b) * query.c);
      pairs.push({ positive: positive.vector, negative: negative.vector, weight });
    }
  }
  return pairs;
}

/** The search a query makes once its examples are vectors. */
export function searchQueryOf(query: VectorQuery, read: ExampleReader, name: string): SearchQuery {
  const vectorOf = requiring(read, name);
  const pairs = (list: [Example, Example][]): ExamplePair[] => list.map(([p, n]) => [vectorOf(p), vectorOf(n)]);
  switch (query.kind) {
    case 'nearest':
    case 'mmr':
      return { kind: 'nearest', vector: vectorOf(query.input) };
    case 'feedback':
      return { kind: 'custom', objective: { type: 'feedback', target: vectorOf(query.target), pairs: feedbackPairs(query, vectorOf), a: query.a } };
    case 'recommend': {
      const positives = present(query.positives, read);
      const negatives = present(query.negatives, read);
      return query.strategy === 'average_vector'
        ? { kind: 'nearest', vector: averageVector(positives, negatives) }
        : { kind: 'custom', objective: { type: query.strategy, positives, negatives } };
    }
    case 'discover':
      return { kind: 'custom', objective: { type: 'discover', target: vectorOf(query.target), pairs: pairs(query.pairs) } };
    case 'context':
      return { kind: 'custom', objective: { type: 'context', pairs: pairs(query.pairs) } };
  }
}

/** The query with its examples replaced by their vectors. */
export function withVectors(query: VectorQuery, read: ExampleReader, name: string): VectorQuery {
  const vectorOf = requiring(read, name);
  const v = (e: Example): Example => ({ vector: vectorOf(e) });
  const given = (list: Example[]): Example[] => present(list, read).map((vector) => ({ vector }));
  const pairs = (list: [Example, Example][]): [Example, Example][] => list.map(([p, n]) => [v(p), v(n)]);
  switch (query.kind) {
    case 'nearest':
      return { kind: 'nearest', input: v(query.input) };
    case 'mmr':
      return { ...query, input: v(query.input) };
    case 'feedback':
      return { ...query, target: v(query.target), feedback: query.feedback.map((f) => ({ example: v(f.example), score: f.score })) };
    case 'recommend':
      return { ...query, positives: given(query.positives), negatives: given(query.negatives) };
    case 'discover':
      return { kind: 'discover', target: v(query.target), pairs: pairs(query.pairs) };
    case 'context':
      return { kind: 'context', pairs: pairs(query.pairs) };
  }
}
