// Qdrant's sparse vector, `{indices, values}`, and the one form the sparse index works in:
// indices sorted ascending (Qdrant sorts them too), no duplicates, finite values. Every input
// goes through normalizeSparse() once, so the scoring loops can rely on that order.

import { InvalidSparseVector } from './sparse-errors.js';

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
