// Synthetic SPLADE-like sparse vectors: terms drawn without replacement from a Zipf-Mandelbrot
// distribution over the vocabulary (p(rank r) ~ 1 / (r + SHIFT)), so a few terms sit in about
// half the documents and most in a handful; values are positive and larger for rarer terms, as
// learned sparse encoders weigh them. Deterministic for a seed (mulberry32).

import type { SortedSparse } from '../engine/index.js';
import { seededRandom } from './synthetic.js';

/** Keeps the head of the distribution at about half the documents for ~120 terms each (not all of them, as plain Zipf would). */
const SHIFT = 20;

export interface SparseDataOptions {
  vocabulary: number;
  /** Mean non-zeros per vector (each vector has 0.5x to 1.5x this many). */
  nonZeros: number;
  seed: number;
}

export class SparseGenerator {
  private readonly cdf: Float64Array;
  private readonly next: () => number;
  private readonly seen: Uint32Array;
  private stamp = 0;

  constructor(private readonly options: SparseDataOptions) {
    const v = options.vocabulary;
    this.cdf = new Float64Array(v);
    let total = 0;
    for (let r = 0; r < v; r++) this.cdf[r] = total += 1 / (r + SHIFT);
    for (let r = 0; r < v; r++) this.cdf[r] /= total;
    this.next = seededRandom(options.seed);
    this.seen = new Uint32Array(v);
  }

  /** One vector with about `nonZeros` entries (default: the generator's), indices ascending. */
  vector(nonZeros = this.options.nonZeros): SortedSparse {
    const n = Math.max(1, Math.min(this.options.vocabulary, Math.round(nonZeros * (0.5 + this.next()))));
    const stamp = ++this.stamp;
    const terms: number[] = [];
    while (terms.length < n) {
      const r = this.rank(this.next());
      if (this.seen[r] === stamp) continue;
      this.seen[r] = stamp;
      terms.push(r);
    }
    terms.sort((a, b) => a - b);
    const values = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      // Rarer terms weigh more: ~0.3 for the head, up to ~3 in the tail, with noise.
      const rarity = Math.log1p(terms[i] / 50) / Math.log1p(this.options.vocabulary / 50);
      values[i] = (0.3 + 2.7 * rarity) * (0.25 + this.next());
    }
    return { indices: Uint32Array.from(terms), values };
  }

  private rank(u: number): number {
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
