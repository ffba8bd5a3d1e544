// Exact scores in plain JavaScript (f64 accumulation), independent of the engine: the flat
// baseline, and the yardstick recall is measured with. Scores follow Qdrant: Cosine and Dot the
// (normalised) dot product, larger is closer; Euclid the L2 and Manhattan the L1 distance.

import { largerIsCloser, type Distance } from '../engine/index.js';

export function exactScore(distance: Distance, a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  switch (distance) {
    case 'Dot':
      for (let i = 0; i < a.length; i++) s += a[i] * b[i];
      return s;
    case 'Cosine': {
      let na = 0;
      let nb = 0;
      for (let i = 0; i < a.length; i++) {
        s += a[i] * b[i];
        na += a[i] * a[i];
        nb += b[i] * b[i];
      }
      return na === 0 || nb === 0 ? 0 : s / Math.sqrt(na * nb);
    }
    case 'Euclid':
      for (let i = 0; i < a.length; i++) s += (a[i] - b[i]) ** 2;
      return Math.sqrt(s);
    case 'Manhattan':
      for (let i = 0; i < a.length; i++) s += Math.abs(a[i] - b[i]);
      return s;
  }
}

/** True when score `a` is closer than score `b` under `distance`. */
export function closer(distance: Distance, a: number, b: number): boolean {
  return largerIsCloser(distance) ? a > b : a < b;
}

/** The k closest rows of `base` to `query` by brute force, closest first (ties: lower offset first). */
export function bruteForce(distance: Distance, base: readonly ArrayLike<number>[], query: ArrayLike<number>, k: number): { offsets: number[]; scores: number[] } {
  // A sorted window of the best k so far; k is small, so insertion beats a heap here.
  const offsets: number[] = [];
  const scores: number[] = [];
  for (let i = 0; i < base.length; i++) {
    const s = exactScore(distance, base[i], query);
    if (offsets.length === k && !closer(distance, s, scores[k - 1])) continue;
    let at = Math.min(offsets.length, k - 1);
    while (at > 0 && closer(distance, s, scores[at - 1])) at--;
    offsets.splice(at, 0, i);
    scores.splice(at, 0, s);
    if (offsets.length > k) {
      offsets.pop();
      scores.pop();
    }
  }
  return { offsets, scores };
}
