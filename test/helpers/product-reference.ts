// Qdrant's product quantization in plain JS, for tests: chunk ranges, nearest centroids, one
// chunk's k-means (without random refills, which a JS run cannot replay) and rebuilt vectors.
// Codebooks are dimension-major, as the engine's: value of dimension j in centroid k at j * 256 + k.

import type { Distance } from '../../src/engine/index.js';
import { score } from './reference.js';

const f = Math.fround;

/** Chunk c's dimensions: [c * b, min((c + 1) * b, dim)). */
export function chunkRange(dim: number, b: number, c: number): [number, number] {
  return [c * b, Math.min((c + 1) * b, dim)];
}

/** Index of the centroid nearest (f32 squared L2, summed in dimension order; first minimum) to x's dims [j0, j1). */
export function nearest(codebook: Float32Array, x: ArrayLike<number>, j0: number, j1: number): number {
  let best = Infinity;
  let at = 0;
  for (let k = 0; k < 256; k++) {
    let s = 0;
    for (let j = j0; j < j1; j++) {
      const d = f(x[j] - codebook[j * 256 + k]);
      s = f(s + f(d * d));
    }
    if (s < best) {
      best = s;
      at = k;
    }
  }
  return at;
}

/** Qdrant's k-means for one chunk over `xs` (the samples' full vectors, in order): returns false if a centroid went empty. */
export function kmeans(xs: Float32Array[], j0: number, j1: number, codebook: Float32Array): boolean {
  for (let k = 0; k < 256; k++) for (let j = j0; j < j1; j++) codebook[j * 256 + k] = xs[k][j];
  for (let iter = 0; iter < 100; iter++) {
    const sums = new Float64Array(256 * (j1 - j0));
    const members = new Int32Array(256);
    for (const x of xs) {
      const k = nearest(codebook, x, j0, j1);
      members[k]++;
      for (let j = j0; j < j1; j++) sums[k * (j1 - j0) + j - j0] += x[j];
    }
    let moved = 0;
    for (let k = 0; k < 256; k++) {
      if (members[k] === 0) return false;
      for (let j = j0; j < j1; j++) {
        const next = f(sums[k * (j1 - j0) + j - j0] / members[k]);
        moved += Math.abs(next - codebook[j * 256 + k]);
        codebook[j * 256 + k] = next;
      }
    }
    if (moved < 1e-5) break;
  }
  return true;
}

/** The vector rebuilt from its code: each chunk's centroid. */
export function rebuilt(codebook: Float32Array, code: Uint8Array, dim: number, b: number): Float32Array {
  const out = new Float32Array(dim);
  for (let c = 0; c < code.length; c++) {
    const [j0, j1] = chunkRange(dim, b, c);
    for (let j = j0; j < j1; j++) out[j] = codebook[j * 256 + code[c]];
  }
  return out;
}

export function normalised(v: Float32Array): Float32Array {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return n === 0 ? v : v.map((x) => x / n);
}

/** Qdrant's shown score of a point for an unrescored product search: the score against the rebuilt vector. */
export function quantizedScore(distance: Distance, query: Float32Array, approx: Float32Array): number {
  if (distance === 'Cosine') return score('Dot', normalised(query), approx);
  return score(distance, query, approx);
}
