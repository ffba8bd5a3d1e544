// Maximal marginal relevance (the query API's `nearest` with `mmr`), as Qdrant computes it
// (lib/shard/src/query/mmr): nearest candidates are picked one at a time, the first the most
// relevant, each next the one maximising lambda * relevance - (1 - lambda) * (its largest
// similarity to a point already picked). Similarities are Qdrant's raw ones, in f32; the hits
// keep their search scores.

import type { Distance } from '../engine/index.js';
import { isDense, type MultiVector, type Vector } from '../model.js';
import { ownField } from '../own-fields.js';
import { pollDeadline } from './deadline.js';
import { similarity, sparseDot, type ScoredView } from './search.js';
import type { VectorSelection } from './selectors.js';

/** The vectors a search must return for MMR to read `using`, besides those asked. */
export function withMmrVector(selection: VectorSelection, using: string): VectorSelection {
  if (selection === true) return true;
  if (selection === false) return [using];
  return selection.includes(using) ? selection : [...selection, using];
}

/** Takes the `using` vector back out of hits whose request did not ask for it. */
export function withoutMmrVector(hits: ScoredView[], asked: VectorSelection, using: string): ScoredView[] {
  if (asked === true || (Array.isArray(asked) && asked.includes(using))) return hits;
  return hits.map((hit) => {
    const out = { ...hit };
    if (asked === false || !out.vectors) delete out.vectors;
    else out.vectors = Object.fromEntries(Object.entries(out.vectors).filter(([name]) => name !== using));
    return out;
  });
}

/** Raw similarity of two dense rows: dot product (Cosine rows are stored normalised), or minus a distance. */
function rowSimilarity(distance: Distance, a: ArrayLike<number>, b: ArrayLike<number>, at = 0, bt = 0, dim = a.length): number {
  let sum = 0;
  for (let i = 0; i < dim; i++) {
    const x = a[at + i];
    const y = b[bt + i];
    if (distance === 'Euclid') sum += (x - y) * (x - y);
    else if (distance === 'Manhattan') sum += Math.abs(x - y);
    else sum += x * y;
  }
  return Math.fround(distance === 'Euclid' || distance === 'Manhattan' ? -sum : sum);
}

/** MaxSim of `query`'s rows against `stored`'s: for each query row its best stored row, summed. */
function maxSim(distance: Distance, query: MultiVector, stored: MultiVector): number {
  let sum = 0;
  for (let q = 0; q < query.data.length; q += query.dim) {
    let best = -Infinity;
    for (let s = 0; s < stored.data.length; s += stored.dim) best = Math.max(best, rowSimilarity(distance, query.data, stored.data, q, s, query.dim));
    sum += best;
  }
  return Math.fround(sum);
}

/** Qdrant's raw similarity of `stored` to `query` (sparse vectors: dot product; `distance` is null for them). */
function vectorSimilarity(distance: Distance | null, query: Vector, stored: Vector): number {
  if (isDense(query)) return rowSimilarity(distance ?? 'Dot', query, stored as Float32Array);
  if ('indices' in query) return sparseDot(query, stored as typeof query);
  return maxSim(distance ?? 'Dot', query, stored as MultiVector);
}

/**
 * Up to `limit` of the candidates (best first, holding their `using` vector; the others are
 * left out as Qdrant leaves them) in MMR order. Fewer than two candidates are returned as they are.
 */
export function maximalMarginalRelevance(candidates: ScoredView[], using: string, distance: Distance | null, lambda: number, limit: number): ScoredView[] {
  const unique = [...new Map(candidates.map((h) => [h.id, h])).values()];
  const usable = unique.filter((h) => h.vectors && ownField(h.vectors, using));
  if (usable.length < 2) return usable;
  const vectors = usable.map((h) => ownField(h.vectors!, using)!);
  // Relevance is the raw similarity to the query, which the search score gives back.
  const relevance = usable.map((h) => (distance === null ? h.score : similarity(distance, h.score)));
  // Each candidate's largest similarity to a picked point, updated with each pick (not recomputed
  // over all picks, which gives the same maximum).
  const nearestPicked = usable.map(() => -Infinity);
  // Qdrant keeps the remaining candidates in an IndexSet and removes by swap; a tie on the
  // maximum goes to the last in that order (Rust's max_by_key). Both are kept here.
  const remaining = usable.map((_, i) => i);
  const pick = (score: (i: number) => number) => {
    let best = 0;
    let bestScore = -Infinity;
    remaining.forEach((candidate, position) => {
      const s = score(candidate);
      if (s >= bestScore) [best, bestScore] = [position, s];
    });
    const picked = remaining[best];
    remaining[best] = remaining[remaining.length - 1];
    remaining.pop();
    for (const i of remaining) nearestPicked[i] = Math.max(nearestPicked[i], vectorSimilarity(distance, vectors[i], vectors[picked]));
    return picked;
  };
  const selected = [pick((i) => relevance[i])];
  const diversity = Math.fround(1 - lambda);
  while (selected.length < limit && remaining.length > 0) {
    pollDeadline();
    selected.push(pick((i) => Math.fround(Math.fround(lambda * relevance[i]) - Math.fround(diversity * nearestPicked[i]))));
  }
  return selected.map((i) => usable[i]);
}
