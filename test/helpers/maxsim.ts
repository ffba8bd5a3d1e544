// Plain JS MaxSim reference, as Qdrant scores multivectors: for each query vector the best
// per-pair similarity (dot, cosine, or the negated squared L2 / L1 distance), summed; Euclid
// reports sqrt(|sum|) and Manhattan |sum| (Qdrant post-processes the sum, not each term).

import type { Distance } from '../../src/engine/index.js';
import { score } from './reference.js';

/** Qdrant's per-pair similarity inside MaxSim: the score for Cosine and Dot, the negated squared L2 or negated L1 distance. */
function similarity(distance: Distance, a: Float32Array, b: Float32Array): number {
  const s = score(distance, a, b);
  if (distance === 'Euclid') return -(s * s);
  return distance === 'Manhattan' ? -s : s;
}

/** Qdrant's MaxSim score of list `doc` for list `query` (both rows of dim). */
export function maxSimScore(distance: Distance, dim: number, query: Float32Array, doc: Float32Array): number {
  let sum = 0;
  for (let q = 0; q < query.length; q += dim) {
    let best = -Infinity;
    for (let p = 0; p < doc.length; p += dim) best = Math.max(best, similarity(distance, query.subarray(q, q + dim), doc.subarray(p, p + dim)));
    sum += best;
  }
  if (distance === 'Euclid') return Math.sqrt(Math.abs(sum));
  if (distance === 'Manhattan') return Math.abs(sum);
  return sum;
}
