// The two exact top-k searches of the sparse index. Both return the same offsets and scores:
// a match is a document sharing at least one index with the query (Qdrant never returns the
// others), its score is the engine's score() (dot product over shared indices, f64 in index
// order, rounded to f32), and results are ordered by score descending, then offset ascending.
//
// - prunedSearch: term-at-a-time over the query's posting lists with max-score pruning. Terms
//   go by decreasing bound (the largest weight x value a list can add), scores accumulate per
//   offset; once the bounds of the terms left add up to less than the k-th best lower bound, no
//   unseen document can enter the top k and the remaining lists only update the surviving
//   candidates (by binary search when they are few). Candidates whose upper bound falls below
//   that lower bound are dropped on the way. Survivors are scored again exactly at the end.
// - plainScan: scores every allowed document from the stored vectors (Qdrant's plain search,
//   for filters that let few points through). Only for float32 posting values: with another
//   datatype the lists hold converted values the stored vectors do not, and prunedSearch (with
//   its filter) serves every search, scoring from the lists.
//
// The per-posting and per-document loops run in the sparse engine (assembly/sparse); the
// bookkeeping per term and per candidate set stays here.

import type { PostingList } from './posting-list.js';
import type { SparseMemory } from './sparse-memory.js';
import type { SparseStore } from './sparse-store.js';
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

/**
 * Work blocks in engine memory, reused by every search of one index: per offset acc f64,
 * stamp u32, cand u32 (also the scan's output ids) and out f64 (the scan's scores); the allow
 * bitset; the query. A search allocates nothing else in the engine.
 */
export class SearchScratch {
  capacity = 0;
  accPtr = 0;
  stampPtr = 0;
  candPtr = 0;
  outPtr = 0;
  allowPtr = 0;
  allowWords = 0;
  queryIdxPtr = 0;
  queryWPtr = 0;
  queryCap = 0;
  /** The engine's 4096-bit filter of the query's indices (assembly/sparse FILTER_BYTES). */
  readonly queryBitsPtr: number;
  epoch = 0;

  constructor(private readonly mem: SparseMemory) {
    this.queryBitsPtr = mem.alloc(512);
  }

  get byteLength(): number {
    return this.capacity * 24 + this.allowWords * 4 + this.queryCap * 12;
  }

  /** Sizes the blocks for `capacity` offsets, writes the query and the filter; returns the search's stamp. */
  begin(capacity: number, query: PreparedQuery, allow: Uint32Array | null): number {
    if (this.capacity < capacity) {
      const cap = Math.max(capacity, this.capacity * 2);
      for (const ptr of [this.accPtr, this.stampPtr, this.candPtr, this.outPtr]) this.mem.free(ptr);
      this.accPtr = this.mem.alloc(cap * 8);
      this.stampPtr = this.mem.alloc(cap * 4);
      this.candPtr = this.mem.alloc(cap * 4);
      this.outPtr = this.mem.alloc(cap * 8);
      this.mem.u32.fill(0, this.stampPtr >>> 2, (this.stampPtr >>> 2) + cap);
      this.capacity = cap;
      this.epoch = 0;
    }
    const words = (this.capacity + 31) >>> 5;
    if (this.allowWords < words) {
      this.mem.free(this.allowPtr);
      this.allowPtr = this.mem.alloc(words * 4);
      this.allowWords = words;
    }
    const qn = query.indices.length;
    if (this.queryCap < qn) {
      this.mem.free(this.queryIdxPtr);
      this.mem.free(this.queryWPtr);
      this.queryCap = Math.max(qn, 2 * this.queryCap, 64);
      this.queryIdxPtr = this.mem.alloc(this.queryCap * 4);
      this.queryWPtr = this.mem.alloc(this.queryCap * 8);
    }
    // No allocation past this point: the views below stay valid for the whole search.
    this.mem.u32.set(query.indices, this.queryIdxPtr >>> 2);
    this.mem.f64.set(query.weights, this.queryWPtr >>> 3);
    this.mem.wasm.setQuery(this.queryIdxPtr, this.queryWPtr, query.indices.length, this.queryBitsPtr);
    if (allow !== null) {
      const n = Math.min(words, allow.length);
      const at = this.allowPtr >>> 2;
      this.mem.u32.set(n === allow.length ? allow : allow.subarray(0, n), at);
      this.mem.u32.fill(0, at + n, at + this.allowWords);
    }
    if (++this.epoch === 0xffffffff) {
      this.mem.u32.fill(0, this.stampPtr >>> 2, (this.stampPtr >>> 2) + this.capacity);
      this.epoch = 1;
    }
    return this.epoch;
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

export function prunedSearch(query: PreparedQuery, lists: ReadonlyMap<number, PostingList>, store: SparseStore, mem: SparseMemory, scratch: SearchScratch, k: number, allow: Uint32Array | null): SearchResultArrays {
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
  const epoch = scratch.begin(store.capacity, query, allow);
  const { accPtr, stampPtr, candPtr } = scratch;
  const allowPtr = allow === null ? 0 : scratch.allowPtr;
  const wasm = mem.wasm;
  const acc = mem.f64;
  const u32 = mem.u32;
  const accBase = accPtr >>> 3;
  const candBase = candPtr >>> 2;
  const stampBase = stampPtr >>> 2;
  const heap = new Float64Array(k);
  let nc = 0;
  let t = 0;
  let closed = false;
  wasm.resetBest();

  // Phase 1: every posting of the strongest terms, until no unseen document can reach the top k.
  while (t < terms.length && !closed) {
    const { list, weight, hi, lo } = terms[t++];
    rHi -= hi;
    rLo -= lo;
    nc = wasm.accumulate(list.ptr, list.valuesPtr, list.length, list.kind, list.params.min, list.params.diff256, weight, accPtr, stampPtr, candPtr, nc, epoch, allowPtr);
    // The k-th best lower bound can only pass rHi if the best partial score does (a cheap
    // pre-check: the best is an over-estimate once scores can fall, which only costs a check).
    if (nc >= k && wasm.bestScore() + rLo > rHi - eps) {
      const theta = kthLargest(acc, accBase, u32, candBase, nc, k, heap) + rLo;
      if (rHi < theta - eps) {
        closed = true;
        nc = keepReachable(acc, accBase, u32, candBase, stampBase, nc, theta - eps - rHi);
      }
    }
  }

  // Phase 2: the remaining (weak) terms update the surviving candidates only.
  if (t < terms.length) u32.subarray(candBase, candBase + nc).sort();
  while (t < terms.length && nc > 0) {
    const { list, weight, hi, lo } = terms[t++];
    rHi -= hi;
    rLo -= lo;
    if (nc * (Math.log2(list.length + 1) + 1) < list.length) {
      // Few candidates: find each one in the list by binary search, moving forward only.
      let p = 0;
      for (let i = 0; i < nc && p < list.length; i++) {
        const off = u32[candBase + i];
        p = list.search(off, p);
        if (p < list.length && list.offsetAt(p) === off) acc[accBase + off] += weight * list.value(p);
      }
    } else wasm.addToStamped(list.ptr, list.valuesPtr, list.length, list.kind, list.params.min, list.params.diff256, weight, accPtr, stampPtr, epoch);
    if (nc >= k) nc = keepReachable(acc, accBase, u32, candBase, stampBase, nc, kthLargest(acc, accBase, u32, candBase, nc, k, heap) + rLo - eps - rHi);
  }

  // Survivors within the slack of the k-th best are scored exactly; the rest cannot rank.
  const floor = nc >= k ? kthLargest(acc, accBase, u32, candBase, nc, k, heap) - eps : -Infinity;
  const top = new TopK(k);
  const starts = store.startsPtr >>> 2;
  const lengths = store.lengthsPtr >>> 2;
  const converted = terms.length > 0 && terms[0].list.datatype !== 'float32';
  for (let i = 0; i < nc; i++) {
    const off = u32[candBase + i];
    if (acc[accBase + off] < floor) continue;
    const score = converted ? listScore(query, lists, off) : wasm.score(u32[starts + off], u32[lengths + off]);
    if (score === score) top.push(score, off);
  }
  return top.sorted();
}

/**
 * The score of `offset` from the posting lists' values: the query's products summed in f64 in
 * index order and rounded to f32, as the engine's score() sums the stored vector; NaN when it
 * shares no index with the query.
 */
function listScore(query: PreparedQuery, lists: ReadonlyMap<number, PostingList>, offset: number): number {
  let sum = 0;
  let shared = false;
  for (let i = 0; i < query.indices.length; i++) {
    const list = lists.get(query.indices[i]);
    const p = list === undefined ? -1 : list.find(offset);
    if (p < 0) continue;
    sum += query.weights[i] * list!.value(p);
    shared = true;
  }
  return shared ? Math.fround(sum) : NaN;
}

/** Drops candidates whose score cannot reach `floor` (and un-stamps them); keeps the order of the rest. */
function keepReachable(acc: Float64Array, accBase: number, u32: Uint32Array, candBase: number, stampBase: number, nc: number, floor: number): number {
  let w = 0;
  for (let i = 0; i < nc; i++) {
    const off = u32[candBase + i];
    if (acc[accBase + off] >= floor) u32[candBase + w++] = off;
    else u32[stampBase + off] = 0;
  }
  return w;
}

/** Scores every document allowed by `allow` (every stored one when null) from the stored vectors. */
export function plainScan(query: PreparedQuery, store: SparseStore, mem: SparseMemory, scratch: SearchScratch, k: number, allow: Uint32Array | null): SearchResultArrays {
  scratch.begin(store.capacity, query, allow);
  const m = mem.wasm.scan(store.startsPtr, store.lengthsPtr, store.count, allow === null ? 0 : scratch.allowPtr, scratch.candPtr, scratch.outPtr);
  const top = new TopK(k);
  const ids = mem.u32;
  const scores = mem.f64;
  const idBase = scratch.candPtr >>> 2;
  const scoreBase = scratch.outPtr >>> 3;
  for (let i = 0; i < m; i++) top.push(scores[scoreBase + i], ids[idBase + i]);
  return top.sorted();
}
