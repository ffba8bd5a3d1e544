// The sparse index's scoring loops, compiled to their own module (build/quiver-sparse.wasm) so
// the dense engine's globals are untouched. The host (src/engine/sparse-*.ts) owns every data
// structure and lays it out in this instance's memory through alloc/realloc/free:
//
//   posting list   a block of offsets u32[cap] (bit 31 set = removed), sorted, followed by the
//                  values at `vals`: f32, f16 bits (u16) or uint8 codes (u8) by the index's
//                  datatype (KIND_*), a uint8 code q standing for qmin + q * qscale
//   stored vectors each document a run of lengths[o] (index u32, value f32) pairs sorted by
//                  index at byte address starts[o]; lengths[o] = 0xffffffff: no document
//   search scratch acc f64[cap] partial scores, stamp u32[cap] (= epoch: the offset is a
//                  candidate of this search), cand u32[cap] candidate offsets, allow u32[] bitset
//   query          indices u32[qn] ascending, weights f64[qn], set once per search (setQuery)
//
// Kept because it is faster than the same loops in TypeScript over typed arrays. Same process,
// same data (`quiver bench sparse`: 200k documents, 200 queries), interleaved best-of-3 passes:
// the accumulation loop alone 2.4 vs 4.1 ms per query and the merge-based exact scan 80 vs 179 ms;
// the whole index, pruned top-10 1.0-1.15x faster, filtered to 10% 1.2-1.45x, build 9 vs 11-18 s;
// with the query-index filter of score() (an algorithmic gain, too) the exact scan is 3x faster.

const KIND_F32: i32 = 0;
const KIND_F16: i32 = 1;
const KIND_U8: i32 = 2;

/** The value of half-precision bits, exactly. */
@inline function fromHalf(h: u32): f32 {
  const sign = (h & 0x8000) << 16;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp == 0) {
    const v = <f32>mant * <f32>5.9604644775390625e-8; // mant x 2^-24
    return sign != 0 ? -v : v;
  }
  if (exp == 0x1f) return reinterpret<f32>(sign | 0x7f800000 | (mant << 13));
  return reinterpret<f32>(sign | ((exp + 112) << 23) | (mant << 13));
}

/** Posting p's value: T is f32, u16 (f16 bits) or u8 (a code of qmin + q * qscale, in f32 steps). */
@inline function valueAt<T>(vals: usize, p: i32, qmin: f32, qscale: f32): f64 {
  if (sizeof<T>() == 4) return <f64>load<f32>(vals + (<usize>p << 2));
  if (sizeof<T>() == 2) return <f64>fromHalf(<u32>load<u16>(vals + (<usize>p << 1)));
  return <f64>(qmin + <f32>load<u8>(vals + <usize>p) * qscale);
}

const DEAD: u32 = 0x80000000;
const ABSENT: u32 = 0xffffffff;

export function alloc(bytes: usize): usize { return heap.alloc(bytes); }
export function realloc(ptr: usize, bytes: usize): usize { return heap.realloc(ptr, bytes); }
export function free(ptr: usize): void { heap.free(ptr); }

let best: f64 = -Infinity;

/** Largest partial score written by accumulate() since resetBest(). */
export function bestScore(): f64 { return best; }
export function resetBest(): void { best = -Infinity; }

/**
 * Adds weight x value of every live posting allowed by `allow` (0: no filter) to acc; an offset
 * seen first in this search (stamp != epoch) becomes a candidate. Returns the candidate count.
 */
export function accumulate(list: usize, vals: usize, n: i32, kind: i32, qmin: f32, qscale: f32, weight: f64, acc: usize, stamp: usize, cand: usize, nc: i32, epoch: u32, allow: usize): i32 {
  if (kind == KIND_F16) return accumulateT<u16>(list, vals, n, qmin, qscale, weight, acc, stamp, cand, nc, epoch, allow);
  if (kind == KIND_U8) return accumulateT<u8>(list, vals, n, qmin, qscale, weight, acc, stamp, cand, nc, epoch, allow);
  return accumulateT<f32>(list, vals, n, qmin, qscale, weight, acc, stamp, cand, nc, epoch, allow);
}

function accumulateT<T>(list: usize, vals: usize, n: i32, qmin: f32, qscale: f32, weight: f64, acc: usize, stamp: usize, cand: usize, nc: i32, epoch: u32, allow: usize): i32 {
  let top = best;
  for (let p = 0; p < n; p++) {
    const off = load<u32>(list + (<usize>p << 2));
    if (off >= DEAD) continue;
    if (allow != 0 && (load<u32>(allow + (<usize>(off >> 5) << 2)) & (1 << (off & 31))) == 0) continue;
    let s = weight * valueAt<T>(vals, p, qmin, qscale);
    const sp = stamp + (<usize>off << 2);
    const ap = acc + (<usize>off << 3);
    if (load<u32>(sp) != epoch) {
      store<u32>(sp, epoch);
      store<u32>(cand + (<usize>nc << 2), off);
      nc++;
    } else s += load<f64>(ap);
    store<f64>(ap, s);
    if (s > top) top = s;
  }
  best = top;
  return nc;
}

/** Adds weight x value of every live posting whose offset is already a candidate. */
export function addToStamped(list: usize, vals: usize, n: i32, kind: i32, qmin: f32, qscale: f32, weight: f64, acc: usize, stamp: usize, epoch: u32): void {
  if (kind == KIND_F16) addToStampedT<u16>(list, vals, n, qmin, qscale, weight, acc, stamp, epoch);
  else if (kind == KIND_U8) addToStampedT<u8>(list, vals, n, qmin, qscale, weight, acc, stamp, epoch);
  else addToStampedT<f32>(list, vals, n, qmin, qscale, weight, acc, stamp, epoch);
}

function addToStampedT<T>(list: usize, vals: usize, n: i32, qmin: f32, qscale: f32, weight: f64, acc: usize, stamp: usize, epoch: u32): void {
  for (let p = 0; p < n; p++) {
    const off = load<u32>(list + (<usize>p << 2));
    if (off >= DEAD || load<u32>(stamp + (<usize>off << 2)) != epoch) continue;
    const ap = acc + (<usize>off << 3);
    store<f64>(ap, load<f64>(ap) + weight * valueAt<T>(vals, p, qmin, qscale));
  }
}

// The query of the current search (setQuery), and a 4096-bit filter of its indices: a document
// entry whose bit is clear cannot be a query index, so most entries cost one load and one test
// instead of a step of a two-list merge with its unpredictable branches.
const FILTER_BYTES: u32 = 512;
const FILTER_BITS: u32 = FILTER_BYTES << 3;
let filter: usize = 0;
let queryIdx: usize = 0;
let queryW: usize = 0;
let queryN: i32 = 0;

@inline function slot(index: u32): u32 { return (index * 0x9e3779b1) >> 20; }

/**
 * Sets the query (indices u32[qn] ascending, weights f64[qn]) that score() and scan() use, with
 * `bits` a host block of FILTER_BITS / 8 bytes for its filter (the host allocates every block,
 * so memory never grows behind its views).
 */
export function setQuery(qi: usize, qw: usize, qn: i32, bits: usize): void {
  filter = bits;
  memory.fill(filter, 0, FILTER_BITS >> 3);
  for (let i = 0; i < qn; i++) {
    const h = slot(load<u32>(qi + (<usize>i << 2)));
    const w = filter + (<usize>(h >> 5) << 2);
    store<u32>(w, load<u32>(w) | (1 << (h & 31)));
  }
  queryIdx = qi;
  queryW = qw;
  queryN = qn;
}

/**
 * The exact score of the document of n pairs at `doc` for the query: the dot product over shared
 * indices, summed in f64 in index order and rounded to f32; NaN when no index is shared.
 */
export function score(doc: usize, n: u32): f64 {
  let sum: f64 = 0;
  let shared = false;
  let lo = 0;
  for (let j: u32 = 0; j < n; j++) {
    const pair = doc + (<usize>j << 3);
    const index = load<u32>(pair);
    const h = slot(index);
    if ((load<u32>(filter + (<usize>(h >> 5) << 2)) & (1 << (h & 31))) == 0) continue;
    // Binary search among the query indices not passed yet (both lists ascend).
    let a = lo;
    let b = queryN;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (load<u32>(queryIdx + (<usize>mid << 2)) < index) a = mid + 1;
      else b = mid;
    }
    lo = a;
    if (a < queryN && load<u32>(queryIdx + (<usize>a << 2)) == index) {
      sum += load<f64>(queryW + (<usize>a << 3)) * <f64>load<f32>(pair, 4);
      shared = true;
      lo = a + 1;
    }
  }
  return shared ? <f64><f32>sum : NaN;
}

/**
 * Scores every stored document of offsets [0, count) allowed by `allow` (0: all); writes each
 * match's offset to outIds and score to outScores. Returns the number of matches.
 */
export function scan(starts: usize, lengths: usize, count: u32, allow: usize, outIds: usize, outScores: usize): i32 {
  let m = 0;
  for (let o: u32 = 0; o < count; o++) {
    if (allow != 0) {
      const word = load<u32>(allow + (<usize>(o >> 5) << 2));
      if (word == 0) { o |= 31; continue; }
      if ((word & (1 << (o & 31))) == 0) continue;
    }
    const n = load<u32>(lengths + (<usize>o << 2));
    if (n == ABSENT || n == 0) continue;
    const r = score(<usize>load<u32>(starts + (<usize>o << 2)), n);
    if (r != r) continue;
    store<u32>(outIds + (<usize>m << 2), o);
    store<f64>(outScores + (<usize>m << 3), r);
    m++;
  }
  return m;
}
