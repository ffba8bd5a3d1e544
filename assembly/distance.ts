// Distance kernels over f32, float16, uint8 and int8 vectors of any length: a 16-lane (four accumulator) SIMD
// main loop, a 4-lane loop, then a scalar tail. Every kernel returns a "distance" where smaller
// is closer: -dot for Cosine and Dot, squared L2 for Euclid, L1 for Manhattan. Scores are made
// from it at the API edge (see src/engine/metric.ts).

import { METRIC_COSINE, METRIC_EUCLID, METRIC_MANHATTAN } from "./layout";
import { halfLanes, halfToF32 } from "./element";

@inline export function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) +
    f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3);
}

@inline export function hsumi(v: v128): i32 {
  return i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1) +
    i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3);
}

// The float kernels are generic over the element type of each side, A and B: f32, or u16 for
// float16 bits (stored vectors of a float16 index, widened lane-wise, see element.ts). The
// element type is a compile-time choice (sizeof folds), so <f32, f32> is the plain f32 loop.

/** Four lanes of `T` at `p` as f32x4. */
@inline export function lanes<T>(p: usize): v128 {
  if (sizeof<T>() == 2) return halfLanes(v128.load16x4_s(p));
  return v128.load(p);
}

/** Element at `p` as f32. */
@inline function scalar<T>(p: usize): f32 {
  if (sizeof<T>() == 2) return halfToF32(<u32>load<u16>(p));
  return load<f32>(p);
}

@inline export function dotT<A, B>(a: usize, b: usize, n: i32): f32 {
  const sa = <usize>sizeof<A>(), sb = <usize>sizeof<B>();
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = f32x4.add(s0, f32x4.mul(lanes<A>(a), lanes<B>(b)));
    s1 = f32x4.add(s1, f32x4.mul(lanes<A>(a + 4 * sa), lanes<B>(b + 4 * sb)));
    s2 = f32x4.add(s2, f32x4.mul(lanes<A>(a + 8 * sa), lanes<B>(b + 8 * sb)));
    s3 = f32x4.add(s3, f32x4.mul(lanes<A>(a + 12 * sa), lanes<B>(b + 12 * sb)));
    a += 16 * sa; b += 16 * sb;
  }
  for (; i + 4 <= n; i += 4) {
    s0 = f32x4.add(s0, f32x4.mul(lanes<A>(a), lanes<B>(b)));
    a += 4 * sa; b += 4 * sb;
  }
  let s = hsum(f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)));
  for (; i < n; i++) {
    s += scalar<A>(a) * scalar<B>(b);
    a += sa; b += sb;
  }
  return s;
}

@inline export function dotF32(a: usize, b: usize, n: i32): f32 {
  return dotT<f32, f32>(a, b, n);
}

// One 4-lane step of squared L2 / L1, shared by the plain and the early-abandoning kernels.
@inline function sq(x: v128, y: v128): v128 {
  const d = f32x4.sub(x, y);
  return f32x4.mul(d, d);
}

@inline function ab(x: v128, y: v128): v128 {
  return f32x4.abs(f32x4.sub(x, y));
}

@inline export function laneStep(x: v128, y: v128, l1: bool): v128 {
  return l1 ? ab(x, y) : sq(x, y);
}

/** Squared L2 (l1 = false) or L1 (l1 = true); four accumulators kept apart so additions do not wait on each other. */
@inline function diffT<A, B>(a: usize, b: usize, n: i32, l1: bool): f32 {
  const sa = <usize>sizeof<A>(), sb = <usize>sizeof<B>();
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = f32x4.add(s0, laneStep(lanes<A>(a), lanes<B>(b), l1));
    s1 = f32x4.add(s1, laneStep(lanes<A>(a + 4 * sa), lanes<B>(b + 4 * sb), l1));
    s2 = f32x4.add(s2, laneStep(lanes<A>(a + 8 * sa), lanes<B>(b + 8 * sb), l1));
    s3 = f32x4.add(s3, laneStep(lanes<A>(a + 12 * sa), lanes<B>(b + 12 * sb), l1));
    a += 16 * sa; b += 16 * sb;
  }
  for (; i + 4 <= n; i += 4) {
    s0 = f32x4.add(s0, laneStep(lanes<A>(a), lanes<B>(b), l1));
    a += 4 * sa; b += 4 * sb;
  }
  let s = hsum(f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)));
  for (; i < n; i++) {
    const d = scalar<A>(a) - scalar<B>(b);
    s += l1 ? Mathf.abs(d) : d * d;
    a += sa; b += sb;
  }
  return s;
}

@inline export function l2F32(a: usize, b: usize, n: i32): f32 {
  return diffT<f32, f32>(a, b, n, false);
}

@inline export function l1F32(a: usize, b: usize, n: i32): f32 {
  return diffT<f32, f32>(a, b, n, true);
}

// Early abandoning: squared L2 and L1 only grow as lanes are added, so once a partial sum passes
// `bound` the candidate is known to be rejected and the rest of the vector need not be read.
// Checked every 64 lanes; a returned value above `bound` is a lower bound, not the distance.
export const ABANDON_BLOCK: i32 = 64;

/** Squared L2 (l1 = false) or L1 (l1 = true), abandoned once a 64-lane partial sum passes `bound`. */
@inline function abandoningT<A, B>(a: usize, b: usize, n: i32, bound: f32, l1: bool): f32 {
  const sa = <usize>sizeof<A>(), sb = <usize>sizeof<B>();
  let s = f32x4.splat(0);
  let i = 0;
  for (; i + ABANDON_BLOCK <= n; i += ABANDON_BLOCK) {
    let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
    for (let j = 0; j < ABANDON_BLOCK; j += 16) {
      s0 = f32x4.add(s0, laneStep(lanes<A>(a), lanes<B>(b), l1));
      s1 = f32x4.add(s1, laneStep(lanes<A>(a + 4 * sa), lanes<B>(b + 4 * sb), l1));
      s2 = f32x4.add(s2, laneStep(lanes<A>(a + 8 * sa), lanes<B>(b + 8 * sb), l1));
      s3 = f32x4.add(s3, laneStep(lanes<A>(a + 12 * sa), lanes<B>(b + 12 * sb), l1));
      a += 16 * sa; b += 16 * sb;
    }
    s = f32x4.add(s, f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)));
    const partial = hsum(s);
    if (partial > bound) return partial;
  }
  return hsum(s) + diffT<A, B>(a, b, n - i, l1);
}

/** Float distance in the metric's "smaller is closer" form, allowed to stop early with any value above `bound`. */
@inline export function distBoundedT<A, B>(m: i32, a: usize, b: usize, n: i32, bound: f32): f32 {
  if (m == METRIC_EUCLID) return abandoningT<A, B>(a, b, n, bound, false);
  if (m == METRIC_MANHATTAN) return abandoningT<A, B>(a, b, n, bound, true);
  return -dotT<A, B>(a, b, n);
}

/** Float distance in the metric's "smaller is closer" form. */
@inline export function distT<A, B>(m: i32, a: usize, b: usize, n: i32): f32 {
  if (m == METRIC_EUCLID) return diffT<A, B>(a, b, n, false);
  if (m == METRIC_MANHATTAN) return diffT<A, B>(a, b, n, true);
  return -dotT<A, B>(a, b, n);
}

/** distF32, allowed to stop early with any value above `bound` once the distance must exceed it. */
@inline export function distF32Bounded(m: i32, a: usize, b: usize, n: i32, bound: f32): f32 {
  return distBoundedT<f32, f32>(m, a, b, n, bound);
}

/** f32 distance in the metric's "smaller is closer" form. */
@inline export function distF32(m: i32, a: usize, b: usize, n: i32): f32 {
  return distT<f32, f32>(m, a, b, n);
}

// uint8 kernels: both sides are bytes (Qdrant converts the query to uint8 as well), widened to
// i16 and combined with i32x4.dot_i16x8_s, so sums are exact integers as in Qdrant's
// metric_uint (i32 accumulation, converted to f32 once). 16 bytes per step: `n` is a multiple of
// 16 (the uint8 stride). Cosine is computed whole, dot / sqrt(|a|^2 |b|^2) in f32 as Qdrant
// does, since bytes cannot be stored normalised; a zero vector scores 0 (Qdrant's scalar path).

@inline function u8Lo(v: v128): v128 { return i16x8.extend_low_i8x16_u(v); }
@inline function u8Hi(v: v128): v128 { return i16x8.extend_high_i8x16_u(v); }

@inline function dotPairU8(va: v128, vb: v128): v128 {
  return i32x4.add(i32x4.dot_i16x8_s(u8Lo(va), u8Lo(vb)), i32x4.dot_i16x8_s(u8Hi(va), u8Hi(vb)));
}

/** Squared differences (l1 = false) or absolute differences (l1 = true) of 16 bytes, in 4 i32 lanes. */
@inline function diffPairU8(va: v128, vb: v128, l1: bool): v128 {
  const lo = i16x8.sub(u8Lo(va), u8Lo(vb));
  const hi = i16x8.sub(u8Hi(va), u8Hi(vb));
  if (l1) return i32x4.add(i32x4.extadd_pairwise_i16x8_s(i16x8.abs(lo)), i32x4.extadd_pairwise_i16x8_s(i16x8.abs(hi)));
  return i32x4.add(i32x4.dot_i16x8_s(lo, lo), i32x4.dot_i16x8_s(hi, hi));
}

@inline export function dotU8(a: usize, b: usize, n: i32): i32 {
  let s0 = i32x4.splat(0), s1 = i32x4.splat(0);
  let i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = i32x4.add(s0, dotPairU8(v128.load(a), v128.load(b)));
    s1 = i32x4.add(s1, dotPairU8(v128.load(a, 16), v128.load(b, 16)));
    a += 32; b += 32;
  }
  if (i < n) s0 = i32x4.add(s0, dotPairU8(v128.load(a), v128.load(b)));
  return hsumi(i32x4.add(s0, s1));
}

/** Qdrant's uint8 cosine: one pass for the dot product and both squared norms. */
@inline export function cosineU8(a: usize, b: usize, n: i32): f32 {
  let d = i32x4.splat(0), na = i32x4.splat(0), nb = i32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const va = v128.load(a), vb = v128.load(b);
    d = i32x4.add(d, dotPairU8(va, vb));
    na = i32x4.add(na, dotPairU8(va, va));
    nb = i32x4.add(nb, dotPairU8(vb, vb));
    a += 16; b += 16;
  }
  const x = hsumi(na), y = hsumi(nb);
  if (x == 0 || y == 0) return 0;
  return <f32>hsumi(d) / Mathf.sqrt(<f32>x * <f32>y);
}

/** Squared L2 (l1 = false) or L1 of two byte vectors, abandoned every 64 bytes once past `bound`. */
@inline function diffU8(a: usize, b: usize, n: i32, bound: f32, l1: bool): i32 {
  let s = i32x4.splat(0);
  let i = 0;
  for (; i + ABANDON_BLOCK <= n; i += ABANDON_BLOCK) {
    s = i32x4.add(s, i32x4.add(
      i32x4.add(diffPairU8(v128.load(a), v128.load(b), l1), diffPairU8(v128.load(a, 16), v128.load(b, 16), l1)),
      i32x4.add(diffPairU8(v128.load(a, 32), v128.load(b, 32), l1), diffPairU8(v128.load(a, 48), v128.load(b, 48), l1))));
    a += 64; b += 64;
    if (<f32>hsumi(s) > bound) return hsumi(s);
  }
  for (; i < n; i += 16) {
    s = i32x4.add(s, diffPairU8(v128.load(a), v128.load(b), l1));
    a += 16; b += 16;
  }
  return hsumi(s);
}

/** uint8 distance in the metric's "smaller is closer" form (bound as for distF32Bounded). */
@inline export function distU8Bounded(m: i32, a: usize, b: usize, n: i32, bound: f32): f32 {
  if (m == METRIC_EUCLID) return <f32>diffU8(a, b, n, bound, false);
  if (m == METRIC_MANHATTAN) return <f32>diffU8(a, b, n, bound, true);
  if (m == METRIC_COSINE) return -cosineU8(a, b, n);
  return -<f32>dotU8(a, b, n);
}

/**
 * Distance between vectors at `a` (elements A) and `b` (elements B) of one index's kind: f32,
 * u16 (float16 bits) or u8 (bytes on both sides).
 */
@inline export function pairDistBounded<A, B>(m: i32, a: usize, b: usize, n: i32, bound: f32): f32 {
  if (sizeof<B>() == 1) return distU8Bounded(m, a, b, n, bound);
  return distBoundedT<A, B>(m, a, b, n, bound);
}


// int8 kernels: codes are sign-extended to i16 and combined with i32x4.dot_i16x8_s, which
// multiplies eight i16 pairs and adds neighbours into four i32 lanes, 16 codes per step.
// `n` must be a multiple of 16 (codeStride), which the code regions guarantee.

@inline export function dotI8(a: usize, b: usize, n: i32): i32 {
  let s0 = i32x4.splat(0), s1 = i32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const va = v128.load(a), vb = v128.load(b);
    s0 = i32x4.add(s0, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(va), i16x8.extend_low_i8x16_s(vb)));
    s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(va), i16x8.extend_high_i8x16_s(vb)));
    a += 16; b += 16;
  }
  return hsumi(i32x4.add(s0, s1));
}

// Squared differences of the low and high eight codes of 16, summed pairwise into 4 i32 lanes.
@inline function sqLowI8(va: v128, vb: v128): v128 {
  const d = i16x8.sub(i16x8.extend_low_i8x16_s(va), i16x8.extend_low_i8x16_s(vb));
  return i32x4.dot_i16x8_s(d, d);
}

@inline function sqHighI8(va: v128, vb: v128): v128 {
  const d = i16x8.sub(i16x8.extend_high_i8x16_s(va), i16x8.extend_high_i8x16_s(vb));
  return i32x4.dot_i16x8_s(d, d);
}

@inline export function l2I8(a: usize, b: usize, n: i32): i32 {
  let s0 = i32x4.splat(0), s1 = i32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const va = v128.load(a), vb = v128.load(b);
    s0 = i32x4.add(s0, sqLowI8(va, vb));
    s1 = i32x4.add(s1, sqHighI8(va, vb));
    a += 16; b += 16;
  }
  return hsumi(i32x4.add(s0, s1));
}

@inline export function l1I8(a: usize, b: usize, n: i32): i32 {
  let s0 = i32x4.splat(0), s1 = i32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const va = v128.load(a), vb = v128.load(b);
    const lo = i16x8.abs(i16x8.sub(i16x8.extend_low_i8x16_s(va), i16x8.extend_low_i8x16_s(vb)));
    const hi = i16x8.abs(i16x8.sub(i16x8.extend_high_i8x16_s(va), i16x8.extend_high_i8x16_s(vb)));
    s0 = i32x4.add(s0, i32x4.extadd_pairwise_i16x8_s(lo));
    s1 = i32x4.add(s1, i32x4.extadd_pairwise_i16x8_s(hi));
    a += 16; b += 16;
  }
  return hsumi(i32x4.add(s0, s1));
}

/** l2I8 with early abandoning every 64 codes once the partial sum passes `bound`. */
@inline export function l2I8Bounded(a: usize, b: usize, n: i32, bound: i32): i32 {
  let s = i32x4.splat(0);
  let i = 0;
  for (; i + ABANDON_BLOCK <= n; i += ABANDON_BLOCK) {
    let s0 = i32x4.splat(0), s1 = i32x4.splat(0);
    for (let j = 0; j < ABANDON_BLOCK; j += 16) {
      const va = v128.load(a), vb = v128.load(b);
      s0 = i32x4.add(s0, sqLowI8(va, vb));
      s1 = i32x4.add(s1, sqHighI8(va, vb));
      a += 16; b += 16;
    }
    s = i32x4.add(s, i32x4.add(s0, s1));
    const partial = hsumi(s);
    if (partial > bound) return partial;
  }
  return hsumi(s) + l2I8(a, b, n - i);
}

// MaxSim over lists of vectors (multivectors), in the same smaller-is-closer form: the sum, over
// the `qn` query vectors at `q`, of the distance to the closest of the `pn` vectors at `p`
// (vectors `n` floats apart). With -dot, L2² and L1 as the pair distance this is Qdrant's
// score_max_similarity negated: it sums the negated similarities Qdrant sums (for Euclid the
// negated squared distances, the square root being taken of the total only, as Qdrant does).

/** MaxSim distance between two lists of f32 vectors. */
export function maxSimF32(m: i32, q: usize, qn: i32, p: usize, pn: i32, n: i32): f32 {
  return maxSimBounded<f32, f32>(m, q, qn, p, pn, n, Infinity);
}

/**
 * MaxSim distance from a list of A vectors to a list of B vectors (element kinds as for
 * pairDistBounded), allowed to stop early with any value above `bound` once the distance must
 * exceed it: for L2 and L1 every term is >= 0, so a partial sum past the bound already decides.
 */
export function maxSimBounded<A, B>(m: i32, q: usize, qn: i32, p: usize, pn: i32, n: i32, bound: f32): f32 {
  const positive = m == METRIC_EUCLID || m == METRIC_MANHATTAN;
  if (sizeof<A>() == 4 && sizeof<B>() == 4 && !positive) return -maxSimDot(q, qn, p, pn, n);
  const qs = <usize>n * sizeof<A>(), ps = <usize>n * sizeof<B>();
  let total: f32 = 0;
  for (let i = 0; i < qn; i++) {
    let best: f32 = Infinity;
    let d = p;
    for (let j = 0; j < pn; j++) {
      // L2 and L1 abandon a pair once it cannot beat the closest vector found so far.
      const x = pairDistBounded<A, B>(m, q, d, n, best);
      if (x < best) best = x;
      d += ps;
    }
    total += best;
    if (positive && total > bound) return total;
    q += qs;
  }
  return total;
}

// MaxSim of dot products, tiled: two query vectors against four stored vectors at a time, eight
// independent accumulators. One load of a stored chunk serves two query vectors and one load of
// a query chunk four stored ones, so the loop does 6 loads per 8 multiply-adds instead of 16,
// and the eight dependency chains keep the adder busy (a single dot of 128 floats is bound by
// the latency of its four chains). `n` is a multiple of 4 (the stride).

/** Sum over the query vectors of their largest dot product with any stored vector. */
export function maxSimDot(q: usize, qn: i32, p: usize, pn: i32, n: i32): f32 {
  const step = <usize>n << 2;
  let total: f32 = 0;
  let i = 0;
  for (; i + 2 <= qn; i += 2) {
    const q0 = q, q1 = q + step;
    let best0: f32 = -Infinity, best1: f32 = -Infinity;
    let d = p;
    let j = 0;
    for (; j + 4 <= pn; j += 4) {
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
      // Six running pointers, so each load is a plain pointer (no per-load address arithmetic).
      let x0p = q0, x1p = q1, y0p = d, y1p = d + step, y2p = d + 2 * step, y3p = d + 3 * step;
      const end = q0 + step;
      while (x0p < end) {
        const x0 = v128.load(x0p), x1 = v128.load(x1p);
        const y0 = v128.load(y0p), y1 = v128.load(y1p), y2 = v128.load(y2p), y3 = v128.load(y3p);
        a0 = f32x4.add(a0, f32x4.mul(x0, y0)); b0 = f32x4.add(b0, f32x4.mul(x1, y0));
        a1 = f32x4.add(a1, f32x4.mul(x0, y1)); b1 = f32x4.add(b1, f32x4.mul(x1, y1));
        a2 = f32x4.add(a2, f32x4.mul(x0, y2)); b2 = f32x4.add(b2, f32x4.mul(x1, y2));
        a3 = f32x4.add(a3, f32x4.mul(x0, y3)); b3 = f32x4.add(b3, f32x4.mul(x1, y3));
        x0p += 16; x1p += 16; y0p += 16; y1p += 16; y2p += 16; y3p += 16;
      }
      best0 = max(best0, max(max(hsum(a0), hsum(a1)), max(hsum(a2), hsum(a3))));
      best1 = max(best1, max(max(hsum(b0), hsum(b1)), max(hsum(b2), hsum(b3))));
      d += 4 * step;
    }
    for (; j < pn; j++) {
      best0 = max(best0, dotF32(q0, d, n));
      best1 = max(best1, dotF32(q1, d, n));
      d += step;
    }
    total += best0 + best1;
    q += 2 * step;
  }
  if (i < qn) {
    let best: f32 = -Infinity;
    let d = p;
    for (let j = 0; j < pn; j++) {
      best = max(best, dotF32(q, d, n));
      d += step;
    }
    total += best;
  }
  return total;
}

/** Set bits of a XOR b over `n` bytes (n a multiple of 16): the Hamming distance of two bit codes. */
export function hammingBits(a: usize, b: usize, n: i32): i32 {
  let acc = i32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const bits = i8x16.popcnt(v128.xor(v128.load(a + <usize>i), v128.load(b + <usize>i)));
    acc = i32x4.add(acc, i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(bits)));
  }
  return i32x4.extract_lane(acc, 0) + i32x4.extract_lane(acc, 1) + i32x4.extract_lane(acc, 2) + i32x4.extract_lane(acc, 3);
}

/**
 * Qdrant's asymmetric binary score: sum over bit positions of |stored bit - query code|, the
 * query codes held as `bits` planes per 16-byte word of `v` (plane b of word w at q + (w * bits
 * + b) * 16 holds bit b of the codes of that word's positions), so each plane is one XOR and
 * popcount, weighted 2^b. Returns sum_b popcount(v XOR plane_b) << b over `n` bytes of `v`.
 */
export function xorPopcntPlanes(v: usize, q: usize, n: i32, bits: i32): i32 {
  let acc = i32x4.splat(0);
  let plane = q;
  for (let i = 0; i < n; i += 16) {
    const word = v128.load(v + <usize>i);
    // Per lane at most 16 set bits per plane, weighted at most 128: the sum fits 16 bits.
    let sum = i16x8.splat(0);
    for (let b = 0; b < bits; b++) {
      const ones = i16x8.extadd_pairwise_i8x16_u(i8x16.popcnt(v128.xor(word, v128.load(plane))));
      sum = i16x8.add(sum, i16x8.shl(ones, b));
      plane += 16;
    }
    acc = i32x4.add(acc, i32x4.extadd_pairwise_i16x8_u(sum));
  }
  return i32x4.extract_lane(acc, 0) + i32x4.extract_lane(acc, 1) + i32x4.extract_lane(acc, 2) + i32x4.extract_lane(acc, 3);
}
