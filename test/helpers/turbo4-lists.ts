// Reference of a turbo4 multivector field (Qdrant 1.19: one Normal-mode 4-bit record per row,
// helpers/turbo-reference): the records of each stored list, the list they read back as, and
// Qdrant's MaxSim on them (per query row the best estimator score, summed, then post-processed).

import type { Distance } from '../../src/engine/index.js';
import { better, dot } from './reference.js';
import { dequantize, encode, internalScore, normalModel, type TurboCode, type TurboModel } from './turbo-reference.js';

/** Qdrant's post-processing of an internal (bigger is closer) score, in f32. */
export function postprocess(distance: Distance, internal: number): number {
  if (distance === 'Euclid') return Math.fround(Math.sqrt(Math.abs(internal)));
  return Math.fround(distance === 'Manhattan' ? Math.abs(internal) : internal);
}

export function rowsOf(list: ArrayLike<number>, dim: number): Float32Array[] {
  return Array.from({ length: list.length / dim }, (_, r) => Float32Array.from(Array.prototype.slice.call(list, r * dim, (r + 1) * dim) as number[]));
}

function normalised(v: ArrayLike<number>): Float32Array {
  const len = Math.fround(Math.sqrt(dot(v, v)));
  return Float32Array.from(v, (x) => x / len);
}

export class Turbo4Lists {
  readonly model: TurboModel;
  private readonly rounded: TurboModel;
  /** Records by key (offset or point id); undefined once deleted. */
  readonly records: (TurboCode[] | undefined)[] = [];

  constructor(readonly distance: Distance, readonly dim: number) {
    this.model = normalModel(distance, dim);
    this.rounded = normalModel(distance, dim, true);
  }

  /** What Qdrant encodes of a row: the row as given, normalised first for Cosine. */
  given(row: ArrayLike<number>): Float32Array {
    return this.distance === 'Cosine' ? normalised(row) : Float32Array.from(row);
  }

  store(key: number, list: ArrayLike<number>): void {
    this.records[key] = rowsOf(list, this.dim).map((r) => encode(this.rounded, this.given(r)));
  }

  /** The list the records of `key` stand for: every row dequantized and rotated back, rows concatenated. */
  dequantized(key: number): Float32Array {
    return Float32Array.from(this.records[key]!.flatMap((code) => Array.from(dequantize(this.model, code))));
  }

  /** Qdrant's MaxSim of the query list against the records of `key`, post-processed. */
  score(query: ArrayLike<number>, key: number): number {
    const codes = this.records[key]!;
    const internal = rowsOf(query, this.dim).reduce((sum, qr) => sum + Math.max(...codes.map((c) => internalScore(this.model, this.given(qr), c))), 0);
    return postprocess(this.distance, internal);
  }

  /** The best `limit` keys and their scores, best first (ties by key). */
  ranked(query: ArrayLike<number>, limit: number): { key: number; score: number }[] {
    const scored = this.records.flatMap((r, key) => (r ? [{ key, score: this.score(query, key) }] : []));
    scored.sort((x, y) => (better(this.distance, x.score, y.score) ? -1 : better(this.distance, y.score, x.score) ? 1 : x.key - y.key));
    return scored.slice(0, limit);
  }
}
