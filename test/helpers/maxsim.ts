// Plain JS MaxSim reference, as Qdrant scores multivectors: for each query vector the best
// per-pair similarity (dot, cosine, or the negated squared L2 / L1 distance), summed; Euclid
// reports sqrt(|sum|) and Manhattan |sum| (Qdrant post-processes the sum, not each term).

import type { Distance } from '../../src/engine/index.js';
import { dot } from './reference.js';

function similarity(distance: Distance, a: Float32Array, b: Float32Array): number {
  switch (distance) {
    case 'Cosine': {
      const norms = Math.sqrt(dot(a, a)) * Math.sqrt(dot(b, b));
      return norms === 0 ? 0 : dot(a, b) / norms;
    }
    case 'Dot':
      return dot(a, b);
    case 'Euclid': {
      let s = 0;
      for (let i = 0; i < a.length; i++) s += (a[i] - b[i]) ** 2;
      return -s;
    }
    case 'Manhattan': {
      let s = 0;
      for (let i = 0; i < a.length; i++) s += Math.abs(a[i] - b[i]);
      return -s;
    }
  }
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
