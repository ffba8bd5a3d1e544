// Qdrant's sparse vector, `{indices, values}`, and the one form the sparse index works in:
// indices sorted ascending (Qdrant sorts them too), no duplicates, finite values. Every input
// goes through normalizeSparse() once, so the scoring loops can rely on that order.

import { BadInput } from '../errors.js';

export interface SparseVector {
  /** Term (dimension) numbers, u32; any order, no duplicates. */
  readonly indices: ArrayLike<number>;
  /** One value per index. */
  readonly values: ArrayLike<number>;
}

/** A sparse vector in index order: what the index stores and scores with. */
export interface SortedSparse {
  readonly indices: Uint32Array;
  readonly values: Float32Array;
}

/** A sparse vector the index cannot take (400, "Wrong input: ..."). */
export class InvalidSparseVector extends BadInput {}

const MAX_INDEX = 0xffffffff;

/**
 * Validates `vector` and returns it sorted by index (a copy; the input is never changed).
 * An empty vector is valid: stored, it matches no query; as a query, it matches nothing.
 */
export function normalizeSparse(vector: SparseVector): SortedSparse {
  const { indices, values } = vector;
  const n = indices.length;
  if (values.length !== n) throw new InvalidSparseVector(`sparse vector has ${n} indices but ${values.length} values`);
  const idx = new Uint32Array(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    const x = indices[i];
    if (!Number.isInteger(x) || x < 0 || x > MAX_INDEX) throw new InvalidSparseVector(`sparse vector index ${x} is not an integer from 0 to ${MAX_INDEX}`);
    if (!Number.isFinite(values[i])) throw new InvalidSparseVector(`sparse vector value ${values[i]} at index ${x} is not a finite number`);
    idx[i] = x;
    if (i > 0 && idx[i - 1] >= x) sorted = false;
  }
  const val = Float32Array.from(values);
  if (sorted) return { indices: idx, values: val };
  // Sort a permutation once; inputs are short (tens to hundreds of entries).
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => idx[a] - idx[b]);
  const outIdx = new Uint32Array(n);
  const outVal = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    outIdx[i] = idx[order[i]];
    outVal[i] = val[order[i]];
    if (i > 0 && outIdx[i] === outIdx[i - 1]) throw new InvalidSparseVector(`sparse vector index ${outIdx[i]} appears more than once`);
  }
  return { indices: outIdx, values: outVal };
}

/**
 * The exact score of a stored vector for a query: the dot product over their shared indices,
 * summed in f64 in ascending index order and rounded to f32 once. Every search path ends with
 * this function, so a score never depends on the path that found it. Returns NaN when the two
 * share no index (no match, as in Qdrant, whose sparse search never returns such points).
 */
export function sparseScore(qIdx: Uint32Array, qVal: Float64Array, dIdx: Uint32Array, dVal: Float32Array, dFrom: number, dTo: number): number {
  let i = 0;
  let j = dFrom;
  let sum = 0;
  let shared = false;
  const qn = qIdx.length;
  while (i < qn && j < dTo) {
    const a = qIdx[i];
    const b = dIdx[j];
    if (a === b) {
      sum += qVal[i] * dVal[j];
      shared = true;
      i++;
      j++;
    } else if (a < b) i++;
    else j++;
  }
  return shared ? Math.fround(sum) : NaN;
}
