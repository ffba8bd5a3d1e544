// The two exact top-k searches of the sparse index. Both return the same offsets and scores:
// a match is a document sharing at least one index with the query (Qdrant never returns the
// others), its score is sparseScore(), and results are ordered by score descending, then offset
// ascending.
//
// - prunedSearch: term-at-a-time over the query's posting lists with max-score pruning. Terms
//   go by decreasing bound (the largest |weight x value| a list can add), scores accumulate per
//   offset; once the bounds of the terms left add up to less than the k-th best lower bound, no
//   unseen document can enter the top k and the remaining lists only update the surviving
//   candidates (by binary search when they are few). Candidates whose upper bound falls below
//   that lower bound are dropped on the way. Survivors are scored again exactly at the end.
// - plainScan: scores every allowed document from the stored vectors (Qdrant's plain search,
//   for filters that let few points through).

import { DEAD, type PostingList } from './posting-list.js';
import { ABSENT, type SparseStore } from './sparse-store.js';
import { sparseScore } from './sparse-vector.js';
import { kthLargest, TopK } from './top-k.js';

/** A query in index order with its final weights (after IDF). */
export interface PreparedQuery {
  readonly indices: Uint32Array;
  readonly weights: Float64Array;
}

export interface SearchResultArrays {
  offsets: Uint32Array;
  scores: Float32Array;
}

/** Per-offset work arrays, reused by every search of one index (a search allocates O(k + terms)). */
export class SearchScratch {
  acc = new Float64Array(0);
  stamp = new Uint32Array(0);
  cand = new Uint32Array(0);
  epoch = 0;

  /** Sizes the arrays for `capacity` offsets and starts a new search (a fresh stamp). */
  begin(capacity: number): number {
    if (this.acc.length < capacity) {
      this.acc = new Float64Array(capacity);
      this.stamp = new Uint32Array(capacity);
      this.cand = new Uint32Array(capacity);
      this.epoch = 0;
    }
    if (++this.epoch === 0xffffffff) {
      this.stamp.fill(0);
      this.epoch = 1;
    }
    return this.epoch;
  }

  get byteLength(): number {
    return this.acc.byteLength + this.stamp.byteLength + this.cand.byteLength;
  }
}

interface Term {
  list: PostingList;
  weight: number;
  /** Largest and smallest contribution the list can add to a document's score (0 included: absent). */
  hi: number;
  lo: number;
}

/**
 * Relative slack on every pruning bound: partial sums add in a different order than the final
 * exact score and that score is rounded to f32, so a bound is trusted only up to this share of
 * the query's whole score range (a candidate too many is scored exactly, never one too few lost).
 */
const SLACK = 1e-6;

export function prunedSearch(query: PreparedQuery, lists: ReadonlyMap<number, PostingList>, store: SparseStore, scratch: SearchScratch, k: number, allow: Uint32Array | null): SearchResultArrays {
  const terms: Term[] = [];
  let rHi = 0;
  let rLo = 0;
  for (let i = 0; i < query.indices.length; i++) {
    const list = lists.get(query.indices[i]);
    if (list === undefined || list.live === 0) continue;
    const w = query.weights[i];
    const a = w * list.max;
    const b = w * list.min;
    const hi = Math.max(0, a, b);
    const lo = Math.min(0, a, b);
    terms.push({ list, weight: w, hi, lo });
    rHi += hi;
    rLo += lo;
  }
  terms.sort((x, y) => y.hi - x.hi);
  const eps = SLACK * (rHi - rLo) + Number.MIN_VALUE;
  const epoch = scratch.begin(store.capacity);
  const { acc, stamp, cand } = scratch;
  const heap = new Float64Array(k);
  let nc = 0;
  let t = 0;
  let closed = false;
  // Largest partial score so far (an over-estimate once scores can fall: that only costs a check).
  let best = -Infinity;

  // Phase 1: every posting of the strongest terms, until no unseen document can reach the top k.
  while (t < terms.length && !closed) {
    const { list, weight, hi, lo } = terms[t++];
    rHi -= hi;
    rLo -= lo;
    const offs = list.offsets;
    const vals = list.values;
    const n = list.length;
    for (let p = 0; p < n; p++) {
      const off = offs[p];
      if (off >= DEAD) continue;
      if (allow !== null && (allow[off >>> 5] & (1 << (off & 31))) === 0) continue;
      let s = weight * vals[p];
      if (stamp[off] !== epoch) {
        stamp[off] = epoch;
        cand[nc++] = off;
      } else s += acc[off];
      acc[off] = s;
      if (s > best) best = s;
    }
    // The k-th best lower bound can only pass rHi if some partial score does (cheap pre-check).
    if (nc >= k && best + rLo > rHi - eps) {
      const theta = kthLargest(acc, cand, nc, k, heap) + rLo;
      if (rHi < theta - eps) {
        closed = true;
        nc = keepReachable(acc, stamp, cand, nc, theta - eps - rHi);
      }
    }
  }

  // Phase 2: the remaining (weak) terms update the surviving candidates only.
  if (t < terms.length) cand.subarray(0, nc).sort();
  while (t < terms.length && nc > 0) {
    const { list, weight, hi, lo } = terms[t++];
    rHi -= hi;
    rLo -= lo;
    addToCandidates(list, weight, acc, stamp, epoch, cand, nc);
    if (nc >= k) nc = keepReachable(acc, stamp, cand, nc, kthLargest(acc, cand, nc, k, heap) + rLo - eps - rHi);
  }

  // Survivors within the slack of the k-th best are scored exactly; the rest cannot rank.
  const floor = nc >= k ? kthLargest(acc, cand, nc, k, heap) - eps : -Infinity;
  const top = new TopK(k);
  const di = store.indices;
  const dv = store.values;
  for (let i = 0; i < nc; i++) {
    const off = cand[i];
    if (acc[off] < floor) continue;
    const start = store.starts[off];
    const score = sparseScore(query.indices, query.weights, di, dv, start, start + store.lengths[off]);
    if (score === score) top.push(score, off);
  }
  return top.sorted();
}

/** Drops candidates whose score cannot reach `floor`; keeps the order of the rest. */
function keepReachable(acc: Float64Array, stamp: Uint32Array, cand: Uint32Array, nc: number, floor: number): number {
  let w = 0;
  for (let i = 0; i < nc; i++) {
    const off = cand[i];
    if (acc[off] >= floor) cand[w++] = off;
    else stamp[off] = 0;
  }
  return w;
}

/** Adds one list's contributions to the (offset-sorted) candidates: binary searches when they are few, one pass otherwise. */
function addToCandidates(list: PostingList, weight: number, acc: Float64Array, stamp: Uint32Array, epoch: number, cand: Uint32Array, nc: number): void {
  const offs = list.offsets;
  const vals = list.values;
  const n = list.length;
  if (nc * (Math.log2(n + 1) + 1) < n) {
    let p = 0;
    for (let i = 0; i < nc && p < n; i++) {
      const off = cand[i];
      p = list.search(off, p);
      if (p < n && offs[p] === off) acc[off] += weight * vals[p];
    }
    return;
  }
  for (let p = 0; p < n; p++) {
    const off = offs[p];
    if (off < DEAD && stamp[off] === epoch) acc[off] += weight * vals[p];
  }
}

/** Scores every document allowed by `allow` (every stored one when null) from the stored vectors. */
export function plainScan(query: PreparedQuery, store: SparseStore, k: number, allow: Uint32Array | null): SearchResultArrays {
  const top = new TopK(k);
  const { indices, values, starts, lengths } = store;
  const count = store.count;
  const visit = (off: number) => {
    const n = lengths[off];
    if (n === ABSENT || n === 0) return;
    const start = starts[off];
    const score = sparseScore(query.indices, query.weights, indices, values, start, start + n);
    if (score === score) top.push(score, off);
  };
  if (allow === null) {
    for (let off = 0; off < count; off++) visit(off);
  } else {
    const words = Math.min(allow.length, (count + 31) >>> 5);
    for (let w = 0; w < words; w++) {
      let bits = allow[w];
      while (bits !== 0) {
        const low = bits & -bits;
        const off = (w << 5) + 31 - Math.clz32(low);
        if (off < count) visit(off);
        bits ^= low;
      }
    }
  }
  return top.sorted();
}
