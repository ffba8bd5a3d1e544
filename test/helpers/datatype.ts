// Reference conversions to Qdrant's storage datatypes, written independently of the engine's:
// float16 by searching the table of every finite half (nearest, ties to the even bit pattern),
// uint8 as Rust's `x as u8` (truncate toward zero, saturate at 0 and 255, NaN to 0). Then the
// stored form of a vector (Cosine normalised first, except uint8) and Qdrant's score over
// stored forms (MetricQueryScorer converts the query to the datatype too).

import type { Datatype, Distance } from '../../src/engine/index.js';
import { dot, score } from './reference.js';

/** Every finite non-negative half, ascending: index = bit pattern (0 .. 0x7bff). */
const HALVES: number[] = Array.from({ length: 0x7c00 }, (_, bits) => {
  const e = bits >> 10, m = bits & 0x3ff;
  return e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15);
});

/** x rounded to float16 (an infinity past the largest half's rounding range). */
export function toHalf(x: number): number {
  const a = Math.abs(Math.fround(x));
  let lo = 0, hi = HALVES.length - 1;
  if (a >= 65520) return Math.sign(x) * Infinity;
  if (a >= HALVES[hi]) return Math.sign(x) * HALVES[hi];
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (HALVES[mid] <= a) lo = mid; else hi = mid;
  }
  const below = a - HALVES[lo], above = HALVES[hi] - a;
  const pick = below < above ? lo : above < below ? hi : lo % 2 === 0 ? lo : hi;
  return x < 0 ? -HALVES[pick] : HALVES[pick];
}

export function toByte(x: number): number {
  if (Number.isNaN(x)) return 0;
  return Math.min(Math.max(Math.trunc(x), 0), 255);
}

function normalised(v: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(v);
  const norm = Math.sqrt(dot(out, out));
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] = Math.fround(out[i] / norm);
  return out;
}

/** What the index stores (and returns) for `v`, row by row for lists of `dim`. */
export function storedForm(datatype: Datatype, distance: Distance, v: ArrayLike<number>, dim = v.length): Float32Array {
  const out = new Float32Array(v.length);
  for (let r = 0; r < v.length; r += dim) {
    const row = Array.from({ length: dim }, (_, i) => v[r + i]);
    const pre = distance === 'Cosine' && datatype !== 'uint8' ? normalised(row) : Float32Array.from(row);
    for (let i = 0; i < dim; i++) out[r + i] = datatype === 'float16' ? toHalf(pre[i]) : datatype === 'uint8' ? toByte(pre[i]) : pre[i];
  }
  return out;
}

/**
 * Qdrant's score between stored forms: Cosine over float16 is the dot product of the stored
 * (normalised, then rounded) vectors; uint8 Cosine divides by both norms (bytes are not normalised).
 */
export function storedScore(datatype: Datatype, distance: Distance, query: ArrayLike<number>, stored: ArrayLike<number>): number {
  if (distance === 'Cosine' && datatype !== 'uint8') return dot(query, stored);
  return score(distance, query, stored);
}
