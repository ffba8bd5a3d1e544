// Recall@k as ann-benchmarks counts it: a returned point counts when it is no farther from the
// query than the k-th true neighbour (plus 1e-3), so ties at the k-th distance are not misses.
// Distances are recomputed exactly in JavaScript for both sides.

import { largerIsCloser } from '../engine/index.js';
import type { Dataset } from './dataset.js';
import { exactScore } from './exact.js';
import type { GroundTruth } from './ground-truth.js';

const EPSILON = 1e-3;

/** The recall levels engines are compared at (tables and plot guides). */
export const RECALL_TARGETS = [0.9, 0.95, 0.99];

export class RecallJudge {
  /** Per query, the score of its k-th true neighbour. */
  private readonly kth: Float64Array;

  constructor(private readonly data: Dataset, truth: GroundTruth, readonly k: number) {
    const { dim } = data;
    const nq = data.queries.length / dim;
    this.kth = new Float64Array(nq);
    for (let q = 0; q < nq; q++) {
      const id = truth.ids[q * truth.k + k - 1];
      this.kth[q] = exactScore(data.distance, this.query(q), data.base.subarray(id * dim, (id + 1) * dim));
    }
  }

  /** Mean recall@k over all queries; found[q] is what a runner returned for query q. */
  recall(found: readonly ArrayLike<number>[]): number {
    const { dim, distance } = this.data;
    const larger = largerIsCloser(distance);
    let hits = 0;
    found.forEach((ids, q) => {
      for (let i = 0; i < Math.min(ids.length, this.k); i++) {
        const s = exactScore(distance, this.query(q), this.data.base.subarray(ids[i] * dim, (ids[i] + 1) * dim));
        if (larger ? s >= this.kth[q] - EPSILON : s <= this.kth[q] + EPSILON) hits++;
      }
    });
    return hits / (found.length * this.k);
  }

  private query(q: number): Float32Array {
    return this.data.queries.subarray(q * this.data.dim, (q + 1) * this.data.dim);
  }
}
