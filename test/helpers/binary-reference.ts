// A plain reference of Qdrant 1.19's binary quantization (lib/quantization
// encoded_vectors_binary.rs, vector_stats.rs), written from its documented arithmetic with f32
// rounding where Qdrant computes in f32: per-dimension statistics, the one_bit / two_bits /
// one_and_half_bits codes, the scalar4bits / scalar8bits query codes (bit planes per 16-byte
// word) and the internal score dim - 2 * xor.

import type { BinaryEncoding, BinaryQueryEncoding, Distance } from '../../src/engine/index.js';

const f = Math.fround;
const EPSILON = 2 ** -23; // f32::EPSILON
const SIGMAS = f(2 / 3);

export interface Stats {
  mean: Float32Array;
  stddev: Float32Array;
}

/** Welford's mean and sample stddev per dimension in f64, kept as f32. */
export function vectorStats(vectors: ArrayLike<number>[], dim: number): Stats {
  const mean = new Float64Array(dim);
  const m2 = new Float64Array(dim);
  vectors.forEach((v, i) => {
    for (let j = 0; j < dim; j++) {
      const delta = v[j] - mean[j];
      mean[j] += delta / (i + 1);
      m2[j] += delta * (v[j] - mean[j]);
    }
  });
  const n = vectors.length;
  return { mean: Float32Array.from(mean), stddev: Float32Array.from(m2, (x) => (n > 1 ? Math.sqrt(x / (n - 1)) : 0)) };
}

/** Bits of a code before padding. */
export function extendedBits(encoding: BinaryEncoding, dim: number): number {
  return encoding === 'two_bits' ? 2 * dim : encoding === 'one_and_half_bits' ? dim + Math.ceil(dim / 2) : dim;
}

/** Bytes of a code: whole 128-bit words. */
export function codeBytes(encoding: BinaryEncoding, dim: number): number {
  return Math.ceil(extendedBits(encoding, dim) / 128) * 16;
}

function twoBits(value: number, j: number, stats: Stats): [boolean, boolean] {
  const sd = stats.stddev[j];
  if (sd < EPSILON) return [value > 0, false];
  const z = f(f(value - stats.mean[j]) / sd);
  if (z <= -SIGMAS) return [false, false];
  return z < SIGMAS ? [true, false] : [true, true];
}

/** The stored code of `v`: LSB-first bit stream, zero-padded to 16-byte words. */
export function encodeVector(encoding: BinaryEncoding, v: ArrayLike<number>, dim: number, stats: Stats | null): Uint8Array {
  const out = new Uint8Array(codeBytes(encoding, dim));
  const set = (i: number): void => { out[i >> 3] |= 1 << (i & 7); };
  for (let j = 0; j < dim; j++) {
    if (encoding === 'one_bit') {
      if (v[j] > 0) set(j);
      continue;
    }
    const [first, second] = twoBits(v[j], j, stats!);
    if (first) set(j);
    if (second) set(dim + (encoding === 'two_bits' ? j : j >> 1));
  }
  return out;
}

export const QUERY_BITS: Record<BinaryQueryEncoding, number> = { scalar4bits: 4, scalar8bits: 8 };

/** The query extended to the code layout, then quantized to `bits` per value: the codes, one per bit position. */
export function scalarQueryCodes(encoding: BinaryEncoding, q: ArrayLike<number>, dim: number, bits: number): number[] {
  const e = Array.from({ length: dim }, (_, j) => q[j]);
  if (encoding === 'two_bits') for (let j = 0; j < dim; j++) e.push(q[j]);
  if (encoding === 'one_and_half_bits') for (let j = 0; j < dim; j += 2) e.push(j + 1 < dim ? Math.max(q[j], q[j + 1]) : q[j]);
  const m = e.reduce((acc, x) => Math.max(acc, Math.abs(x)), 0);
  const levels = (1 << bits) - 1;
  const delta = f(f(m + m) / levels);
  return e.map((x) => {
    const scaled = delta > EPSILON ? f(f(x + m) / delta) : 0;
    const r = Math.floor(scaled);
    return (scaled - r >= 0.5 ? r + 1 : r) & levels;
  });
}

/** Scalar query codes laid out as the engine keeps them: `bits` planes of 16 bytes per 128 positions. */
export function scalarQueryPlanes(codes: number[], bytes: number, bits: number): Uint8Array {
  const out = new Uint8Array(bytes * bits);
  codes.forEach((code, i) => {
    for (let b = 0; b < bits; b++) if ((code >> b) & 1) out[((i >> 7) * bits + b) * 16 + ((i & 127) >> 3)] |= 1 << (i & 7);
  });
  return out;
}

function bit(code: Uint8Array, i: number): number {
  return (code[i >> 3] >> (i & 7)) & 1;
}

/** popcount(a XOR b). */
export function xorCount(a: Uint8Array, b: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < a.length * 8; i++) n += bit(a, i) ^ bit(b, i);
  return n;
}

/** Qdrant's scalar xor: sum over positions and query bits of (stored bit XOR code bit) << b, over 2^B - 1 (f32). */
export function scalarXor(stored: Uint8Array, codes: number[], bits: number): number {
  let sum = 0;
  codes.forEach((code, i) => {
    for (let b = 0; b < bits; b++) sum += (bit(stored, i) ^ ((code >> b) & 1)) << b;
  });
  return f(sum / ((1 << bits) - 1));
}

/** Qdrant's internal score from xor: zeros - xor with zeros = dim - xor (f32). */
export function internalScore(dim: number, xor: number): number {
  return f(f(dim - xor) - xor);
}

/** The query encoder and scorer of one configuration: internal score of a stored code. */
export function queryScorer(encoding: BinaryEncoding, queryEncoding: BinaryQueryEncoding | undefined, dim: number, stats: Stats | null, query: ArrayLike<number>): (stored: Uint8Array) => number {
  if (!queryEncoding) {
    const q = encodeVector(encoding, query, dim, stats);
    return (stored) => internalScore(dim, xorCount(q, stored));
  }
  const bits = QUERY_BITS[queryEncoding];
  const codes = scalarQueryCodes(encoding, query, dim, bits);
  return (stored) => internalScore(dim, scalarXor(stored, codes, bits));
}

/** Qdrant's postprocessing of an internal score: as is for Cosine/Dot, sqrt(|s|) for Euclid, |s| for Manhattan (f32). */
export function postprocess(distance: Distance, internal: number): number {
  if (distance === 'Euclid') return f(Math.sqrt(Math.abs(internal)));
  return distance === 'Manhattan' ? Math.abs(internal) : internal;
}
