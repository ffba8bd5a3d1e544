// Turbo4 records of a fixed point set as the reference encodes them, and every point's score on
// its record for a query, ranked in the distance's order: what the server's turbo4 tests compare
// its answers with.

import type { Distance } from '../../src/engine/index.js';
import { better, dot } from './reference.js';
import { encode, internalScore, normalModel, type TurboCode } from './turbo-reference.js';

export interface ScoredRecord {
  id: number;
  score: number;
}

function normalised(v: number[]): number[] {
  const len = Math.fround(Math.sqrt(dot(v, v)));
  return v.map((x) => Math.fround(x / len));
}

/** A vector as the engine receives it: Cosine vectors normalised first. */
function given(distance: Distance, v: number[]): number[] {
  return distance === 'Cosine' ? normalised(v) : v;
}

function postprocess(distance: Distance, internal: number): number {
  if (distance === 'Euclid') return Math.fround(Math.sqrt(Math.abs(internal)));
  return Math.fround(distance === 'Manhattan' ? Math.abs(internal) : internal);
}

export class Turbo4Fixture {
  /** Each point's record per distance (Normal mode, rounded to f32 as the engine rounds); point i has id i + 1. */
  readonly records: Map<Distance, TurboCode[]>;

  constructor(private readonly dim: number, distances: readonly Distance[], points: readonly number[][]) {
    this.records = new Map(distances.map((distance) => {
      const model = normalModel(distance, dim, true);
      return [distance, points.map((p) => encode(model, given(distance, p)))];
    }));
  }

  /** Every point scored on its record for `query`, best first (ties by id). */
  ranked(distance: Distance, query: number[]): ScoredRecord[] {
    const model = normalModel(distance, this.dim);
    const q = given(distance, query);
    const scored = this.records.get(distance)!.map((code, i) => ({ id: i + 1, score: postprocess(distance, internalScore(model, q, code)) }));
    return scored.sort((x, y) => (better(distance, x.score, y.score) ? -1 : better(distance, y.score, x.score) ? 1 : x.id - y.id));
  }
}
