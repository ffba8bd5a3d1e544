// Qdrant 1.19's int8 scalar quantization (lib/quantization encoded_vectors_u8 and quantile),
// restated from its documented behaviour in f32 arithmetic, for tests of the engine's codes and
// unrescored scores: u8 codes 0..127 padded to a multiple of 16 dimensions, alpha = (hi - lo) / 127,
// offset = lo, per-vector corrections and Qdrant's score postprocessing.

import type { Distance } from '../../src/engine/index.js';

export const f = Math.fround;

export interface Codebook {
  alpha: number;
  offset: number;
}

/** Qdrant's window [lo, hi]: whole range, or the quantile window of all n vectors (n <= 5000, so no sampling). */
export function qdrantRange(vectors: Float32Array[], quantile: number | null): [number, number] {
  const values = vectors.flatMap((v) => Array.from(v));
  const whole: [number, number] = [Math.min(...values), Math.max(...values)];
  if (quantile === null || quantile >= 1 || vectors.length < 127) return whole;
  const L = values.length;
  const k = vectors.length;
  const cut = Math.max(1, Math.min(Math.floor((L - 1) / 2), Math.trunc(f(f(k * f(1 - f(quantile))) / 2))));
  const sorted = Float32Array.from(values).sort();
  if (L - 2 * cut - 1 < 2) return whole;
  return [sorted[cut + 1], sorted[L - cut - 1]];
}

export function codebookOf([lo, hi]: [number, number]): Codebook {
  return { alpha: f(f(hi - lo) / 127), offset: lo };
}

/** Qdrant's encode_value: (x - offset) / alpha clamped to [0, 127], rounded half away from zero, NaN as 0. */
export function code(cb: Codebook, x: number): number {
  const v = Math.min(Math.max(f(f(x - cb.offset) / cb.alpha), 0), 127);
  return Number.isNaN(v) ? 0 : Math.floor(v + 0.5);
}

export function codes(cb: Codebook, distance: Distance, v: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(Math.ceil(v.length / 16) * 16);
  for (let i = 0; i < v.length; i++) out[i] = code(cb, v[i]);
  const placeholder = distance === 'Euclid' || distance === 'Manhattan' ? cb.offset : 0;
  out.fill(code(cb, placeholder), v.length);
  return out;
}

/** The correction a query carries (Qdrant's encode_int8_query offset). */
export function queryCorrection(cb: Codebook, distance: Distance, c: Uint8Array): number {
  if (distance === 'Manhattan') return 0;
  let sum = 0;
  if (distance === 'Euclid') {
    for (const x of c) sum = f(sum + f(x * x));
    return -f(f(sum * cb.alpha) * cb.alpha);
  }
  for (const x of c) sum = f(sum + x);
  return f(f(sum * cb.alpha) * cb.offset);
}

/** A stored vector's correction: the query's plus the shift (padded dim) * offset^2 for Dot/Cosine. */
export function storedCorrection(cb: Codebook, distance: Distance, c: Uint8Array): number {
  const shift = distance === 'Euclid' || distance === 'Manhattan' ? 0 : f(f(c.length * cb.offset) * cb.offset);
  return f(shift + queryCorrection(cb, distance, c));
}

/** Qdrant's quantized score as the user sees it: multiplier * kernel + corrections, then postprocessed. */
export function qdrantScore(cb: Codebook, distance: Distance, query: ArrayLike<number>, stored: ArrayLike<number>): number {
  const q = codes(cb, distance, query);
  const v = codes(cb, distance, stored);
  let kernel = 0;
  for (let i = 0; i < q.length; i++) kernel += distance === 'Manhattan' ? Math.abs(q[i] - v[i]) : q[i] * v[i];
  const multiplier = distance === 'Manhattan' ? -cb.alpha : distance === 'Euclid' ? f(f(2 * cb.alpha) * cb.alpha) : f(cb.alpha * cb.alpha);
  const internal = f(f(f(multiplier * kernel) + queryCorrection(cb, distance, q)) + storedCorrection(cb, distance, v));
  if (distance === 'Euclid') return f(Math.sqrt(Math.abs(internal)));
  return distance === 'Manhattan' ? Math.abs(internal) : internal;
}
