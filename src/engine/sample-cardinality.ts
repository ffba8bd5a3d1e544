// Whether a filter no index can count lets more than `threshold` points through, decided from a
// random sample of points as Qdrant's sample_check_cardinality decides it: points are checked
// one at a time until the Agresti-Coull interval (z = 2) of the matching share, scaled to the
// total, lies wholly above or below the threshold, or MAX_SAMPLED points were checked; then the
// estimate alone decides.

import { seededRandom } from './seeded-random.js';

/** Qdrant's MAX_ESTIMATED_POINTS. */
const MAX_SAMPLED = 1000;
const Z = 2;

/** The expected matching points and the half-width of the interval, from `positive` of `trials`. */
function interval(trials: number, positive: number, total: number): { expected: number; delta: number } {
  const nHat = trials + Z * Z;
  const pHat = (positive + (Z * Z) / 2) / nHat;
  const half = Z * Math.sqrt((pHat / nHat) * (1 - pHat));
  return { expected: Math.trunc(pHat * total), delta: Math.trunc(half * total) };
}

/**
 * True when the points matching `check` among `total` are estimated above `threshold`.
 * `sample()` draws the next random point (an offset, or -1 when none is left to draw).
 */
export function sampledAbove(sample: () => number, check: (offset: number) => boolean, threshold: number, total: number): boolean {
  let positive = 0;
  let expected = 0;
  for (let trials = 1; trials <= MAX_SAMPLED; trials++) {
    const offset = sample();
    if (offset < 0) break;
    if (check(offset)) positive++;
    const estimate = interval(trials, positive, total);
    expected = estimate.expected;
    if (expected - estimate.delta > threshold) return true;
    if (expected + estimate.delta < threshold) return false;
  }
  return expected > threshold;
}

/** A deterministic stream of uniform integers in [0, n), so that the same search plans the same way every time it runs. */
export function uniformInts(seed: number, n: number): () => number {
  const next = seededRandom(seed);
  return () => Math.floor(next() * n);
}
