// A plain JS reference of Qdrant's TurboQuant (docs/research/quantization.md section 3): padded
// dimension, the Hadamard rotation with its three MMIX-LCG permutations, TQ+ fitting (median /
// population stddev per rotated coordinate), Lloyd-Max coding over the f32 centroid table, and
// the asymmetric estimator with the integer query and centroid forms of Qdrant's SIMD kernels.
// Qdrant rotates in f64; a model made with `f32` rotates, rescales and calibrates rounding each
// step to f32, as the engine does, so both pick the same centroid for a coordinate that lies
// within rounding of a boundary (where the f64 form may pick the neighbour).

import type { Distance, TurboBits } from '../../src/engine/index.js';

/** The documented Lloyd-Max centroids for N(0, 1), by stored bits per coordinate. */
export const DOCUMENTED_CENTROIDS: Record<1 | 2 | 4, number[]> = {
  1: [-0.7978846, 0.7978846],
  2: [-1.51, -0.4528, 0.4528, 1.51],
  4: [-2.733, -2.069, -1.618, -1.256, -0.9424, -0.6568, -0.3881, -0.1284, 0.1284, 0.3881, 0.6568, 0.9424, 1.256, 1.618, 2.069, 2.733],
};

const SEEDS = [654605292835415893n, 8636605637963351413n, 1775280196666917949n];
const A = 6364136223846793005n;
const C = 1442695040888963407n;
const U64 = (1n << 64n) - 1n;

export function storedBits(bits: TurboBits): 1 | 2 | 4 {
  return bits === 'bits4' ? 4 : bits === 'bits2' ? 2 : 1;
}

/** Qdrant's padded dimension P. */
export function paddedDim(dim: number, bits: TurboBits): number {
  const up = (n: number, m: number) => Math.ceil(n / m) * m;
  if (bits === 'bits4') return up(dim, 2);
  if (bits === 'bits2') return up(dim, 4);
  if (bits === 'bits1') return up(dim, 8);
  return up(Math.floor((3 * dim) / 2), 8);
}

/** Fisher-Yates driven by the MMIX LCG, as a gather: x'[i] = x[perm[i]]. */
export function permutation(n: number, seed: bigint): number[] {
  const idx = Array.from({ length: n }, (_, i) => i);
  let state = seed;
  for (let i = n - 1; i >= 1; i--) {
    state = (state * A + C) & U64;
    const j = Number((state >> 32n) % BigInt(i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx;
}

const same = (x: number) => x;

function wht(x: Float64Array, at: number, n: number, round: (x: number) => number): void {
  for (let h = 1; h < n; h *= 2) {
    for (let i = at; i < at + n; i += 2 * h) {
      for (let j = i; j < i + h; j++) {
        const a = x[j];
        const b = x[j + h];
        x[j] = round(a + b);
        x[j + h] = round(a - b);
      }
    }
  }
  const norm = round(1 / round(Math.sqrt(n)));
  for (let i = at; i < at + n; i++) x[i] = round(x[i] * norm);
}

/** The power-of-two chunks of P, largest first. */
export function chunks(p: number): number[] {
  const out: number[] = [];
  for (let b = 31; b >= 0; b--) if (p & (1 << b)) out.push(1 << b);
  return out;
}

function whtChunks(x: Float64Array, round: (x: number) => number = same): void {
  let at = 0;
  for (const n of chunks(x.length)) {
    wht(x, at, n, round);
    at += n;
  }
}

const permutations = new Map<number, number[][]>();

/** Qdrant's rotation of `values` zero-padded to p (each step rounded to f32 with `f32`). */
export function rotate(values: ArrayLike<number>, p: number, f32 = false): Float64Array {
  const round = f32 ? Math.fround : same;
  let perms = permutations.get(p);
  if (!perms) permutations.set(p, (perms = SEEDS.map((s) => permutation(p, s))));
  let x = new Float64Array(p);
  for (let i = 0; i < values.length; i++) x[i] = values[i];
  whtChunks(x, round);
  for (const perm of perms) {
    x = Float64Array.from(perm, (j) => x[j]);
    whtChunks(x, round);
  }
  return x;
}

function norm(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * x[i];
  return Math.sqrt(s);
}

export interface TurboModel {
  distance: Distance;
  bits: TurboBits;
  dim: number;
  p: number;
  shift: Float64Array;
  scale: Float64Array;
  f32: boolean;
}

const roundOf = (model: TurboModel) => (model.f32 ? Math.fround : same);

/** The rotated vector rescaled to length sqrt(P) (Cosine vectors have length 1 as stored), and the length used. */
function rescaled(model: TurboModel, v: ArrayLike<number>): { x: Float64Array; l2: number } {
  const round = roundOf(model);
  const x = rotate(v, model.p, model.f32);
  const l2 = model.distance === 'Cosine' ? 1 : Math.fround(norm(x));
  const factor = round(round(Math.sqrt(model.p)) / l2);
  if (l2 > 0) for (let i = 0; i < x.length; i++) x[i] = round(x[i] * factor);
  return { x, l2 };
}

/** TQ+ fitted on `vectors` (as stored): shift = -median (the upper middle), scale = 1 / population stddev. */
export function fitModel(distance: Distance, bits: TurboBits, dim: number, vectors: ArrayLike<number>[], f32 = false): TurboModel {
  const p = paddedDim(dim, bits);
  const model: TurboModel = { distance, bits, dim, p, shift: new Float64Array(p), scale: new Float64Array(p).fill(1), f32 };
  const rows = vectors.map((v) => rescaled(model, v).x);
  for (let i = 0; i < p; i++) {
    const column = rows.map((r) => Math.fround(r[i])).sort((a, b) => a - b);
    const mean = column.reduce((s, x) => s + x, 0) / column.length;
    const sigma = Math.sqrt(column.reduce((s, x) => s + (x - mean) ** 2, 0) / column.length);
    if (sigma <= 1.1920929e-7) continue;
    model.shift[i] = -column[column.length >> 1];
    model.scale[i] = f32 ? Math.fround(1 / Math.fround(sigma)) : 1 / sigma;
  }
  return model;
}

export interface TurboCode {
  idx: Uint8Array;
  scaling: number;
  l2: number;
}

/** Qdrant's encoding of the stored vector v; with `given`, its extras for those indices instead of the nearest ones. */
export function encode(model: TurboModel, v: ArrayLike<number>, given?: Uint8Array): TurboCode {
  const { x, l2 } = rescaled(model, v);
  const round = roundOf(model);
  const table = DOCUMENTED_CENTROIDS[storedBits(model.bits)].map(Math.fround);
  const zero = x.every((y) => y === 0);
  const idx = new Uint8Array(model.p);
  let cnSq = 0;
  for (let i = 0; i < model.p; i++) {
    const y = Math.fround(zero ? x[i] : round(round(x[i] + model.shift[i]) * model.scale[i]));
    let k = 0;
    for (let b = 1; b < table.length; b++) if (y > Math.fround(Math.fround(table[b - 1] + table[b]) / 2)) k = b;
    idx[i] = given ? given[i] : k;
    cnSq += (table[idx[i]] / model.scale[i] - model.shift[i]) ** 2;
  }
  const cn = model.distance === 'Cosine' && zero ? Math.sqrt(model.p) : Math.sqrt(cnSq);
  return { idx, scaling: model.distance === 'Manhattan' ? l2 : l2 / cn, l2 };
}

/** The code record as the engine stores it: indices LSB first, padded to 16 bytes, then f32 scaling (and l2 for Euclid); l2 is 1 where it is not stored. */
export function decodeRecord(model: TurboModel, bytes: Uint8Array): TurboCode {
  const bits = storedBits(model.bits);
  const codeBytes = Math.ceil((model.p * bits) / 8 / 16) * 16;
  const idx = new Uint8Array(model.p);
  for (let i = 0; i < model.p; i++) idx[i] = (bytes[(i * bits) >> 3] >> ((i * bits) & 7)) & ((1 << bits) - 1);
  const extras = new DataView(bytes.buffer, bytes.byteOffset + codeBytes);
  return { idx, scaling: extras.getFloat32(0, true), l2: model.distance === 'Euclid' ? extras.getFloat32(4, true) : model.distance === 'Manhattan' ? extras.getFloat32(0, true) : 1 };
}

/**
 * Qdrant's internal (bigger is closer) score of a code for the query (preprocessed as stored):
 * dot * scaling (Dot, Cosine), -(|q|^2 + l2^2 - 2 dot scaling) (Euclid), -L1 to the dequantized
 * vector rotated back (Manhattan). The dot product uses the kernels' integer forms: query
 * coordinates scaled to +-8127, centroids to +-127.
 */
export function internalScore(model: TurboModel, query: ArrayLike<number>, code: TurboCode): number {
  const table = DOCUMENTED_CENTROIDS[storedBits(model.bits)];
  if (model.distance === 'Manhattan') return -manhattan(model, query, code);
  const q = rotate(query, model.p, model.f32);
  let qm = 0;
  const y = new Float64Array(model.p);
  for (let i = 0; i < model.p; i++) {
    qm -= q[i] * model.shift[i];
    y[i] = q[i] / model.scale[i];
  }
  const peak = y.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const qScale = peak > 0 ? 8127 / Math.fround(peak) : 0;
  const cScale = 127 / Math.fround(table[table.length - 1]);
  let sum = 0;
  for (let i = 0; i < model.p; i++) sum += Math.round(y[i] * qScale) * Math.round(Math.fround(table[code.idx[i]]) * cScale);
  const dot = (qScale > 0 ? sum / (qScale * cScale) : 0) + qm;
  if (model.distance === 'Euclid') return -(norm(q) ** 2 + code.l2 ** 2 - 2 * dot * code.scaling);
  return dot * code.scaling;
}

/** The inverse of rotate(): W, then for each permutation from the last, scatter back and W. */
export function rotateBack(rotated: ArrayLike<number>): Float64Array {
  let x = Float64Array.from(rotated);
  const perms = SEEDS.map((s) => permutation(x.length, s));
  for (let k = 2; k >= 0; k--) {
    whtChunks(x);
    const back = new Float64Array(x.length);
    perms[k].forEach((j, i) => (back[j] = x[i]));
    x = back;
  }
  whtChunks(x);
  return x;
}

/**
 * The vector a code stands for, in original coordinates (dim values): the reverted centroids times
 * scaling (Dot, Cosine, Euclid: the vector the estimator measures against) or times l2 / sqrt(P)
 * (Manhattan, whose `scaling` holds l2), rotated back.
 */
export function dequantize(model: TurboModel, code: TurboCode): Float64Array {
  const table = DOCUMENTED_CENTROIDS[storedBits(model.bits)];
  const factor = model.distance === 'Manhattan' ? code.scaling / Math.sqrt(model.p) : code.scaling;
  const x = Float64Array.from({ length: model.p }, (_, i) => (table[code.idx[i]] / model.scale[i] - model.shift[i]) * factor);
  return rotateBack(x).subarray(0, model.dim);
}

/** Qdrant's turbo4 datatype model: bits4 in Normal mode (no TQ+: shift 0, scale 1). */
export function normalModel(distance: Distance, dim: number, f32 = false): TurboModel {
  const p = paddedDim(dim, 'bits4');
  return { distance, bits: 'bits4', dim, p, shift: new Float64Array(p), scale: new Float64Array(p).fill(1), f32 };
}

function manhattan(model: TurboModel, query: ArrayLike<number>, code: TurboCode): number {
  const x = dequantize(model, code);
  let s = 0;
  for (let j = 0; j < model.dim; j++) s += Math.abs(query[j] - x[j]);
  return s;
}
