// Distances from one query to four stored rows at once. A graph search reads rows at random, so
// a distance costs the latency of its cache misses far more than its arithmetic (WebAssembly has
// no prefetch): one loop over four rows, each query load feeding four independent row streams,
// lets the four rows' misses overlap (docs/research/engine-profile.md measured a cold 784-d f32
// row at ~600 ns alone and ~350 ns in fours).
// Each row's float value is summed with the association of the one-row kernel it stands for
// (diffT / dotT, or abandoningT when bounded; see distance.ts), so it is bit-identical to it.
// Integer (int8 code) sums are exact in any order. The bounded kernels stop once all four rows
// are past the bound; a row past it alone is read further, which only yields a larger value.
// Rows are measured in f32 lanes (float32, or float16 widened): `n` is a multiple of 4 (the float
// strides) and of 16 for codes (codeStride).

import { METRIC_EUCLID, METRIC_MANHATTAN } from "./layout";
import { ABANDON_BLOCK, hsum, hsumi, lanes, laneStep } from "./distance";

const OP_SQ: i32 = 0;  // squared difference (L2)
const OP_ABS: i32 = 1; // absolute difference (L1)
const OP_MUL: i32 = 2; // product (dot)

@inline function opStep(x: v128, y: v128, op: i32): v128 {
  if (op == OP_MUL) return f32x4.mul(x, y);
  return laneStep(x, y, op == OP_ABS);
}

// Row r's accumulator k (of the four diffT/dotT keep apart) at acc + (4r + k) * 16.
const acc = memory.data(256, 16);

/** The 16-lane loop of diffT/dotT over `n` lanes (a multiple of 16) for four rows, from zero; leaves the accumulators in `acc`. */
@inline function blockRows4<A, B>(q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, op: i32): void {
  const sa = <usize>sizeof<A>(), sb = <usize>sizeof<B>();
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  let c0 = f32x4.splat(0), c1 = f32x4.splat(0), c2 = f32x4.splat(0), c3 = f32x4.splat(0);
  let d0 = f32x4.splat(0), d1 = f32x4.splat(0), d2 = f32x4.splat(0), d3 = f32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const x0 = lanes<A>(q), x1 = lanes<A>(q + 4 * sa), x2 = lanes<A>(q + 8 * sa), x3 = lanes<A>(q + 12 * sa);
    a0 = f32x4.add(a0, opStep(x0, lanes<B>(p0), op));
    b0 = f32x4.add(b0, opStep(x0, lanes<B>(p1), op));
    c0 = f32x4.add(c0, opStep(x0, lanes<B>(p2), op));
    d0 = f32x4.add(d0, opStep(x0, lanes<B>(p3), op));
    a1 = f32x4.add(a1, opStep(x1, lanes<B>(p0 + 4 * sb), op));
    b1 = f32x4.add(b1, opStep(x1, lanes<B>(p1 + 4 * sb), op));
    c1 = f32x4.add(c1, opStep(x1, lanes<B>(p2 + 4 * sb), op));
    d1 = f32x4.add(d1, opStep(x1, lanes<B>(p3 + 4 * sb), op));
    a2 = f32x4.add(a2, opStep(x2, lanes<B>(p0 + 8 * sb), op));
    b2 = f32x4.add(b2, opStep(x2, lanes<B>(p1 + 8 * sb), op));
    c2 = f32x4.add(c2, opStep(x2, lanes<B>(p2 + 8 * sb), op));
    d2 = f32x4.add(d2, opStep(x2, lanes<B>(p3 + 8 * sb), op));
    a3 = f32x4.add(a3, opStep(x3, lanes<B>(p0 + 12 * sb), op));
    b3 = f32x4.add(b3, opStep(x3, lanes<B>(p1 + 12 * sb), op));
    c3 = f32x4.add(c3, opStep(x3, lanes<B>(p2 + 12 * sb), op));
    d3 = f32x4.add(d3, opStep(x3, lanes<B>(p3 + 12 * sb), op));
    q += 16 * sa; p0 += 16 * sb; p1 += 16 * sb; p2 += 16 * sb; p3 += 16 * sb;
  }
  v128.store(acc, a0); v128.store(acc, a1, 16); v128.store(acc, a2, 32); v128.store(acc, a3, 48);
  v128.store(acc, b0, 64); v128.store(acc, b1, 80); v128.store(acc, b2, 96); v128.store(acc, b3, 112);
  v128.store(acc, c0, 128); v128.store(acc, c1, 144); v128.store(acc, c2, 160); v128.store(acc, c3, 176);
  v128.store(acc, d0, 192); v128.store(acc, d1, 208); v128.store(acc, d2, 224); v128.store(acc, d3, 240);
}

/** diffT/dotT's 4-lane loop and final sum for one row whose 16-lane accumulators are at `a`; stores the value at `out`. */
@inline function finishRow<A, B>(q: usize, p: usize, n: i32, op: i32, a: usize, out: usize): void {
  const sa = <usize>sizeof<A>(), sb = <usize>sizeof<B>();
  let s0 = v128.load(a);
  for (let i = 0; i + 4 <= n; i += 4) {
    s0 = f32x4.add(s0, opStep(lanes<A>(q), lanes<B>(p), op));
    q += 4 * sa; p += 4 * sb;
  }
  store<f32>(out, hsum(f32x4.add(f32x4.add(s0, v128.load(a, 16)), f32x4.add(v128.load(a, 32), v128.load(a, 48)))));
}

/** diffT (OP_SQ, OP_ABS) or dotT (OP_MUL) from `q` to four rows, to f32 out[0..3]. */
@inline function fullRows4<A, B>(q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, op: i32, out: usize): void {
  const n16 = n & ~15;
  blockRows4<A, B>(q, p0, p1, p2, p3, n16, op);
  const qa = <usize>n16 * sizeof<A>(), pb = <usize>n16 * sizeof<B>();
  finishRow<A, B>(q + qa, p0 + pb, n - n16, op, acc, out);
  finishRow<A, B>(q + qa, p1 + pb, n - n16, op, acc + 64, out + 4);
  finishRow<A, B>(q + qa, p2 + pb, n - n16, op, acc + 128, out + 8);
  finishRow<A, B>(q + qa, p3 + pb, n - n16, op, acc + 192, out + 12);
}

/** The sum of row r's four block accumulators, as abandoningT adds a block. */
@inline function blockSum(r: usize): v128 {
  const a = acc + (r << 6);
  return f32x4.add(f32x4.add(v128.load(a), v128.load(a, 16)), f32x4.add(v128.load(a, 32), v128.load(a, 48)));
}

/** abandoningT for four rows: stops once every row's 64-lane partial sum is past `bound`. */
@inline function abandoningRows4<A, B>(q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, bound: f32, op: i32, out: usize): void {
  const qStep = <usize>ABANDON_BLOCK * sizeof<A>(), pStep = <usize>ABANDON_BLOCK * sizeof<B>();
  let t0 = f32x4.splat(0), t1 = f32x4.splat(0), t2 = f32x4.splat(0), t3 = f32x4.splat(0);
  let i = 0;
  for (; i + ABANDON_BLOCK <= n; i += ABANDON_BLOCK) {
    blockRows4<A, B>(q, p0, p1, p2, p3, ABANDON_BLOCK, op);
    t0 = f32x4.add(t0, blockSum(0)); t1 = f32x4.add(t1, blockSum(1));
    t2 = f32x4.add(t2, blockSum(2)); t3 = f32x4.add(t3, blockSum(3));
    q += qStep;
    p0 += pStep; p1 += pStep; p2 += pStep; p3 += pStep;
    const h0 = hsum(t0), h1 = hsum(t1), h2 = hsum(t2), h3 = hsum(t3);
    if (h0 > bound && h1 > bound && h2 > bound && h3 > bound) {
      store<f32>(out, h0); store<f32>(out, h1, 4); store<f32>(out, h2, 8); store<f32>(out, h3, 12);
      return;
    }
  }
  // The rest of each row as abandoningT takes it: a diffT of the remaining lanes, added last.
  fullRows4<A, B>(q, p0, p1, p2, p3, n - i, op, out);
  store<f32>(out, hsum(t0) + load<f32>(out));
  store<f32>(out, hsum(t1) + load<f32>(out, 4), 4);
  store<f32>(out, hsum(t2) + load<f32>(out, 8), 8);
  store<f32>(out, hsum(t3) + load<f32>(out, 12), 12);
}

/**
 * distBoundedT (bounded) or distT from `q` to the rows at p0..p3, to f32 out[0..3]: with
 * `bounded`, L2 and L1 may stop with any value above `bound` once a row's distance must exceed it.
 */
export function distRows4<A, B>(m: i32, q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, bound: f32, bounded: bool, out: usize): void {
  if (m == METRIC_EUCLID) {
    if (bounded) abandoningRows4<A, B>(q, p0, p1, p2, p3, n, bound, OP_SQ, out);
    else fullRows4<A, B>(q, p0, p1, p2, p3, n, OP_SQ, out);
  } else if (m == METRIC_MANHATTAN) {
    if (bounded) abandoningRows4<A, B>(q, p0, p1, p2, p3, n, bound, OP_ABS, out);
    else fullRows4<A, B>(q, p0, p1, p2, p3, n, OP_ABS, out);
  } else {
    fullRows4<A, B>(q, p0, p1, p2, p3, n, OP_MUL, out);
    for (let r: usize = 0; r < 16; r += 4) store<f32>(out + r, -load<f32>(out + r));
  }
}

// int8 codes, 0..127 for the stored rows and the query (Qdrant's u8 codes, see quantize.ts
// int8Code), so the even bytes masked and the odd bytes shifted down are already their i16
// values: two instructions per 16 codes where sign extension takes three or four on x64, and the
// query's halves are split once for all four rows. Sums in i32 lanes, exact in any order.
const I8_SQ: i32 = 0;
const I8_ABS: i32 = 1;
const I8_DOT: i32 = 2;

@inline function evens(v: v128): v128 { return v128.and(v, i16x8.splat(0xff)); }
@inline function odds(v: v128): v128 { return i16x8.shr_u(v, 8); }

/** 16 codes of a row against the query's even and odd halves (xe, xo), summed pairwise into 4 i32 lanes. */
@inline function codeStep(xe: v128, xo: v128, y: v128, op: i32): v128 {
  const ye = evens(y), yo = odds(y);
  if (op == I8_DOT) return i32x4.add(i32x4.dot_i16x8_s(xe, ye), i32x4.dot_i16x8_s(xo, yo));
  const de = i16x8.sub(xe, ye), dd = i16x8.sub(xo, yo);
  if (op == I8_ABS) return i32x4.add(i32x4.extadd_pairwise_i16x8_s(i16x8.abs(de)), i32x4.extadd_pairwise_i16x8_s(i16x8.abs(dd)));
  return i32x4.add(i32x4.dot_i16x8_s(de, de), i32x4.dot_i16x8_s(dd, dd));
}

/**
 * Integer sums over `n` codes (a multiple of 16) from `q` to four code rows, to i32 out[0..3];
 * I8_SQ stops once every row's 64-code partial sum is past `bound` (l2I8Bounded's check).
 */
@inline function codeRows4(q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, op: i32, bound: i32, out: usize): void {
  let s0 = i32x4.splat(0), s1 = i32x4.splat(0), s2 = i32x4.splat(0), s3 = i32x4.splat(0);
  let i = 0;
  while (i < n) {
    const end = min(i + ABANDON_BLOCK, n);
    for (; i < end; i += 16) {
      const x = v128.load(q);
      const xe = evens(x), xo = odds(x);
      s0 = i32x4.add(s0, codeStep(xe, xo, v128.load(p0), op));
      s1 = i32x4.add(s1, codeStep(xe, xo, v128.load(p1), op));
      s2 = i32x4.add(s2, codeStep(xe, xo, v128.load(p2), op));
      s3 = i32x4.add(s3, codeStep(xe, xo, v128.load(p3), op));
      q += 16; p0 += 16; p1 += 16; p2 += 16; p3 += 16;
    }
    if (op == I8_SQ && hsumi(s0) > bound && hsumi(s1) > bound && hsumi(s2) > bound && hsumi(s3) > bound) break;
  }
  store<i32>(out, hsumi(s0)); store<i32>(out, hsumi(s1), 4); store<i32>(out, hsumi(s2), 8); store<i32>(out, hsumi(s3), 12);
}

/** Squared L2 sums of int8 codes to four rows (see codeRows4), stopping once all four pass `bound`. */
export function l2I8Rows4(q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, bound: i32, out: usize): void {
  codeRows4(q, p0, p1, p2, p3, n, I8_SQ, bound, out);
}

/** L1 sums of int8 codes to four rows. */
export function l1I8Rows4(q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, out: usize): void {
  codeRows4(q, p0, p1, p2, p3, n, I8_ABS, i32.MAX_VALUE, out);
}

/** Dot products of int8 codes with four rows. */
export function dotI8Rows4(q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, out: usize): void {
  codeRows4(q, p0, p1, p2, p3, n, I8_DOT, i32.MAX_VALUE, out);
}

// Bit codes (quantize.ts bitsDist): popcounts of XORs, integer sums exact in any order, so four
// rows give hammingBits / xorPopcntPlanes's values exactly. Each query word (or its planes) is
// loaded once for the four rows, and the byte popcounts are summed in u8 lanes as long as they
// cannot overflow (widening is most of a popcount's cost): across BYTE_WORDS words of a one-bit
// query, and across the planes of weight 1..8 of a scalar query.

// A byte's popcount is at most 8: 31 words sum to at most 248 in a u8 lane.
const BYTE_WORDS: i32 = 31;
// Planes 0..3 weigh 1, 2, 4, 8: at most 8 * 15 = 120 in a u8 lane.
const BYTE_PLANES: i32 = 4;

/** u8 lanes summed pairwise twice, to four i32 lanes. */
@inline function widen(x: v128): v128 {
  return i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(x));
}

/** One-bit query: popcount(q XOR row) over `n` bytes of four rows, to i32 out[0..3]. */
@inline function hammingRows4(q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, out: usize): void {
  let s0 = i32x4.splat(0), s1 = i32x4.splat(0), s2 = i32x4.splat(0), s3 = i32x4.splat(0);
  let i = 0;
  while (i < n) {
    const end = min(i + (BYTE_WORDS << 4), n);
    let c0 = i8x16.splat(0), c1 = i8x16.splat(0), c2 = i8x16.splat(0), c3 = i8x16.splat(0);
    for (; i < end; i += 16) {
      const x = v128.load(q);
      c0 = i8x16.add(c0, i8x16.popcnt(v128.xor(x, v128.load(p0))));
      c1 = i8x16.add(c1, i8x16.popcnt(v128.xor(x, v128.load(p1))));
      c2 = i8x16.add(c2, i8x16.popcnt(v128.xor(x, v128.load(p2))));
      c3 = i8x16.add(c3, i8x16.popcnt(v128.xor(x, v128.load(p3))));
      q += 16; p0 += 16; p1 += 16; p2 += 16; p3 += 16;
    }
    s0 = i32x4.add(s0, widen(c0)); s1 = i32x4.add(s1, widen(c1));
    s2 = i32x4.add(s2, widen(c2)); s3 = i32x4.add(s3, widen(c3));
  }
  store<i32>(out, hsumi(s0)); store<i32>(out, hsumi(s1), 4); store<i32>(out, hsumi(s2), 8); store<i32>(out, hsumi(s3), 12);
}

/** Scalar query of `bits` planes per word at q: sum_b popcount(row XOR plane_b) << b over `n` bytes of four rows, to i32 out[0..3]. */
@inline function planesRows4(bits: i32, q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, out: usize): void {
  let s0 = i32x4.splat(0), s1 = i32x4.splat(0), s2 = i32x4.splat(0), s3 = i32x4.splat(0);
  const low = min(bits, BYTE_PLANES);
  for (let i = 0; i < n; i += 16) {
    const w0 = v128.load(p0), w1 = v128.load(p1), w2 = v128.load(p2), w3 = v128.load(p3);
    let c0 = i8x16.splat(0), c1 = i8x16.splat(0), c2 = i8x16.splat(0), c3 = i8x16.splat(0);
    let b = 0;
    for (; b < low; b++) {
      const plane = v128.load(q);
      c0 = i8x16.add(c0, i8x16.shl(i8x16.popcnt(v128.xor(w0, plane)), b));
      c1 = i8x16.add(c1, i8x16.shl(i8x16.popcnt(v128.xor(w1, plane)), b));
      c2 = i8x16.add(c2, i8x16.shl(i8x16.popcnt(v128.xor(w2, plane)), b));
      c3 = i8x16.add(c3, i8x16.shl(i8x16.popcnt(v128.xor(w3, plane)), b));
      q += 16;
    }
    // Per i16 lane: at most 240 from the low planes, then 16 set bits per plane weighted up to 128.
    let t0 = i16x8.extadd_pairwise_i8x16_u(c0), t1 = i16x8.extadd_pairwise_i8x16_u(c1);
    let t2 = i16x8.extadd_pairwise_i8x16_u(c2), t3 = i16x8.extadd_pairwise_i8x16_u(c3);
    for (; b < bits; b++) {
      const plane = v128.load(q);
      t0 = i16x8.add(t0, i16x8.shl(i16x8.extadd_pairwise_i8x16_u(i8x16.popcnt(v128.xor(w0, plane))), b));
      t1 = i16x8.add(t1, i16x8.shl(i16x8.extadd_pairwise_i8x16_u(i8x16.popcnt(v128.xor(w1, plane))), b));
      t2 = i16x8.add(t2, i16x8.shl(i16x8.extadd_pairwise_i8x16_u(i8x16.popcnt(v128.xor(w2, plane))), b));
      t3 = i16x8.add(t3, i16x8.shl(i16x8.extadd_pairwise_i8x16_u(i8x16.popcnt(v128.xor(w3, plane))), b));
      q += 16;
    }
    s0 = i32x4.add(s0, i32x4.extadd_pairwise_i16x8_u(t0)); s1 = i32x4.add(s1, i32x4.extadd_pairwise_i16x8_u(t1));
    s2 = i32x4.add(s2, i32x4.extadd_pairwise_i16x8_u(t2)); s3 = i32x4.add(s3, i32x4.extadd_pairwise_i16x8_u(t3));
    p0 += 16; p1 += 16; p2 += 16; p3 += 16;
  }
  store<i32>(out, hsumi(s0)); store<i32>(out, hsumi(s1), 4); store<i32>(out, hsumi(s2), 8); store<i32>(out, hsumi(s3), 12);
}

/**
 * hammingBits (bits 1) or xorPopcntPlanes (bits > 1: `bits` planes of query codes per 16-byte
 * word at `q`) over `n` bytes (a multiple of 16) of four bit-code rows, to i32 out[0..3].
 */
export function bitsRows4(bits: i32, q: usize, p0: usize, p1: usize, p2: usize, p3: usize, n: i32, out: usize): void {
  if (bits == 1) hammingRows4(q, p0, p1, p2, p3, n, out);
  else planesRows4(bits, q, p0, p1, p2, p3, n, out);
}
