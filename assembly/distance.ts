// Distance kernels over f32 and int8 vectors of any length: a 16-lane (four accumulator) SIMD
// main loop, a 4-lane loop, then a scalar tail. Every kernel returns a "distance" where smaller
// is closer: -dot for Cosine and Dot, squared L2 for Euclid, L1 for Manhattan. Scores are made
// from it at the API edge (see src/engine/metric.ts).

import { METRIC_EUCLID, METRIC_MANHATTAN } from "./layout";

@inline function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) +
    f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3);
}

@inline function hsumi(v: v128): i32 {
  return i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1) +
    i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3);
}

@inline export function dotF32(a: usize, b: usize, n: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = f32x4.add(s0, f32x4.mul(v128.load(a), v128.load(b)));
    s1 = f32x4.add(s1, f32x4.mul(v128.load(a, 16), v128.load(b, 16)));
    s2 = f32x4.add(s2, f32x4.mul(v128.load(a, 32), v128.load(b, 32)));
    s3 = f32x4.add(s3, f32x4.mul(v128.load(a, 48), v128.load(b, 48)));
    a += 64; b += 64;
  }
  for (; i + 4 <= n; i += 4) {
    s0 = f32x4.add(s0, f32x4.mul(v128.load(a), v128.load(b)));
    a += 16; b += 16;
  }
  let s = hsum(f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)));
  for (; i < n; i++) {
    s += load<f32>(a) * load<f32>(b);
    a += 4; b += 4;
  }
  return s;
}

// One 16-lane step of squared L2 / L1: four independent 4-lane products added to four
// accumulators (kept apart so the additions do not wait on each other). Shared by the plain and
// the early-abandoning kernels.
@inline function sq(x: v128, y: v128): v128 {
  const d = f32x4.sub(x, y);
  return f32x4.mul(d, d);
}

@inline function ab(x: v128, y: v128): v128 {
  return f32x4.abs(f32x4.sub(x, y));
}

@inline export function l2F32(a: usize, b: usize, n: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = f32x4.add(s0, sq(v128.load(a), v128.load(b)));
    s1 = f32x4.add(s1, sq(v128.load(a, 16), v128.load(b, 16)));
    s2 = f32x4.add(s2, sq(v128.load(a, 32), v128.load(b, 32)));
    s3 = f32x4.add(s3, sq(v128.load(a, 48), v128.load(b, 48)));
    a += 64; b += 64;
  }
  for (; i + 4 <= n; i += 4) {
    s0 = f32x4.add(s0, sq(v128.load(a), v128.load(b)));
    a += 16; b += 16;
  }
  let s = hsum(f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)));
  for (; i < n; i++) {
    const d = load<f32>(a) - load<f32>(b);
    s += d * d;
    a += 4; b += 4;
  }
  return s;
}

@inline export function l1F32(a: usize, b: usize, n: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = f32x4.add(s0, ab(v128.load(a), v128.load(b)));
    s1 = f32x4.add(s1, ab(v128.load(a, 16), v128.load(b, 16)));
    s2 = f32x4.add(s2, ab(v128.load(a, 32), v128.load(b, 32)));
    s3 = f32x4.add(s3, ab(v128.load(a, 48), v128.load(b, 48)));
    a += 64; b += 64;
  }
  for (; i + 4 <= n; i += 4) {
    s0 = f32x4.add(s0, ab(v128.load(a), v128.load(b)));
    a += 16; b += 16;
  }
  let s = hsum(f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)));
  for (; i < n; i++) {
    s += Mathf.abs(load<f32>(a) - load<f32>(b));
    a += 4; b += 4;
  }
  return s;
}

// Early abandoning: squared L2 and L1 only grow as lanes are added, so once a partial sum passes
// `bound` the candidate is known to be rejected and the rest of the vector need not be read.
// Checked every 64 lanes; a returned value above `bound` is a lower bound, not the distance.
const ABANDON_BLOCK: i32 = 64;

/** Squared L2 (l1 = false) or L1 (l1 = true), abandoned once a 64-lane partial sum passes `bound`. */
@inline function abandoningF32(a: usize, b: usize, n: i32, bound: f32, l1: bool): f32 {
  let s = f32x4.splat(0);
  let i = 0;
  for (; i + ABANDON_BLOCK <= n; i += ABANDON_BLOCK) {
    let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
    for (let j = 0; j < ABANDON_BLOCK; j += 16) {
      s0 = f32x4.add(s0, l1 ? ab(v128.load(a), v128.load(b)) : sq(v128.load(a), v128.load(b)));
      s1 = f32x4.add(s1, l1 ? ab(v128.load(a, 16), v128.load(b, 16)) : sq(v128.load(a, 16), v128.load(b, 16)));
      s2 = f32x4.add(s2, l1 ? ab(v128.load(a, 32), v128.load(b, 32)) : sq(v128.load(a, 32), v128.load(b, 32)));
      s3 = f32x4.add(s3, l1 ? ab(v128.load(a, 48), v128.load(b, 48)) : sq(v128.load(a, 48), v128.load(b, 48)));
      a += 64; b += 64;
    }
    s = f32x4.add(s, f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)));
    const partial = hsum(s);
    if (partial > bound) return partial;
  }
  return hsum(s) + (l1 ? l1F32(a, b, n - i) : l2F32(a, b, n - i));
}

/** distF32, allowed to stop early with any value above `bound` once the distance must exceed it. */
@inline export function distF32Bounded(m: i32, a: usize, b: usize, n: i32, bound: f32): f32 {
  if (m == METRIC_EUCLID) return abandoningF32(a, b, n, bound, false);
  if (m == METRIC_MANHATTAN) return abandoningF32(a, b, n, bound, true);
  return -dotF32(a, b, n);
}

/** f32 distance in the metric's "smaller is closer" form. */
@inline export function distF32(m: i32, a: usize, b: usize, n: i32): f32 {
  if (m == METRIC_EUCLID) return l2F32(a, b, n);
  if (m == METRIC_MANHATTAN) return l1F32(a, b, n);
  return -dotF32(a, b, n);
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

/** MaxSim distance between two lists of vectors. */
export function maxSimF32(m: i32, q: usize, qn: i32, p: usize, pn: i32, n: i32): f32 {
  return maxSimF32Bounded(m, q, qn, p, pn, n, Infinity);
}

/**
 * maxSimF32 allowed to stop early with any value above `bound` once the distance must exceed it:
 * for L2 and L1 every term is >= 0, so a partial sum past the bound already decides.
 */
export function maxSimF32Bounded(m: i32, q: usize, qn: i32, p: usize, pn: i32, n: i32, bound: f32): f32 {
  if (m != METRIC_EUCLID && m != METRIC_MANHATTAN) return -maxSimDot(q, qn, p, pn, n);
  const step = <usize>n << 2;
  let total: f32 = 0;
  for (let i = 0; i < qn; i++) {
    let best: f32 = Infinity;
    let d = p;
    for (let j = 0; j < pn; j++) {
      // L2 and L1 abandon a pair once it cannot beat the closest vector found so far.
      const x = distF32Bounded(m, q, d, n, best);
      if (x < best) best = x;
      d += step;
    }
    total += best;
    if (total > bound) return total;
    q += step;
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
