// Scalar int8 quantization, computed as Qdrant 1.19 computes it (lib/quantization's
// encoded_vectors_u8 and quantile): one affine codebook per index, value ~= qAlpha * code +
// qOffset with code in [0, 127] (u8 codes, stored in the i8 code region: every code is >= 0, so
// the signed kernels read them unchanged), qAlpha = (hi - lo) / 127 and qOffset = lo. [lo, hi] is
// the min and max of every live vector, or with a quantile < 1 (and at least 127 vectors) the
// window Qdrant keeps of a sample of at most 5000 whole vectors (see fitCodebook). Codes are padded to
// codeStride with the code of a placeholder (0 for Dot/Cosine, qOffset for Euclid/Manhattan), and
// the padding counts in every sum, as in Qdrant. Each code carries Qdrant's additive correction.
// The codebook is fitted when quantization is enabled, refitted whenever the number of stored
// vectors doubles (up to REFIT_LIMIT, so early inserts do not freeze a poor range) and when the
// optimizer has linked every vector (refitQuantization: Qdrant fits a segment when it builds it);
// each refit re-encodes every vector. Which of these runs right after a store and which in the
// optimizer's build is training.ts's choice.
//
// Binary quantization (Qdrant's one_bit encoding) needs no codebook: a code holds one bit per
// dimension, set iff the value is > 0, and the quantized score is dim - 2 * popcount(q XOR v)
// (bigger is closer), so the distance kept here is its negation, 2 * xor - dim. Its two_bits and
// one_and_half_bits encodings and its scalar query encodings are in binary-codes.ts; they score
// with the same formula. Product quantization (codebooks, lookup tables) is product-quant.ts and
// TurboQuant (rotation, calibration, Lloyd-Max codes) turbo-quant.ts. This module is the one
// entry for encoding and code distances whatever the method, through the method's row of
// operations (quant-methods.ts); product and TurboQuant fits run in steps from training.ts, which
// decides when every method fits.
//
// Multivectors share the codebook: every vector of every list gets its own codes (indexed by
// arena vector, see layout.ts), and MaxSim on codes takes the same per-pair quantized distance.

import {
  METRIC_EUCLID, METRIC_MANHATTAN, EMPTY, dim, metric, count, codeStride, quantized, quantile,
  qAlpha, qOffset, trainedAt, levels, codeCorr, codePtr, codePtrW, vecPtr, queryCodes, queryCorr,
  setQuantState, setQueryCorr, reserveCodes, nextRandom, multi, stride, queryCount, queryCorrs,
  multiPtr, multiCount, multiStart, dtype, vecBytes, DT_F32, DT_U8, DT_T4, METRIC_COSINE,
  qMethod, QM_INT8, QM_PRODUCT, QM_TURBO, setQuantMethod, isDeleted, arenaUsed, binaryCodes, setQueryBits, queryBits, queryCodeStride,
} from "./layout";
import { turboDist, turboDistRows4, turboInRows4, useSide, SIDE_QUANT } from "./turbo-quant";
import { turbo4Decode } from "./turbo4";
import { dotF32, dotI8, hammingBits, l1I8, l2I8, l2I8Bounded, xorPopcntPlanes } from "./distance";
import { encodeScalarQuery, encodeTwoBits, fitBinaryStats } from "./binary-codes";
import { decodeElements } from "./element";
import { Heap } from "./heap";
import { safePoint } from "./pages";
import { bitsRows4, dotI8Rows4, l1I8Rows4, l2I8Rows4 } from "./rows4";
import { productDist } from "./product-quant";
import { method } from "./quant-methods";
import { abandonTraining, trainFully } from "./training";

const REFIT_LIMIT: i32 = 1 << 17;
// Qdrant's quantile window: a sample of at most QUANTILE_SAMPLE vectors, and no window below
// QUANTILE_MIN_COUNT vectors (the whole range is used then).
const QUANTILE_SAMPLE: i32 = 5000;
const QUANTILE_MIN_COUNT: i32 = 127;

const smallest = new Heap(); // quantile window: the lowest sampled values (negated keys)
const largest = new Heap();  // quantile window: the highest sampled values
let decoded: usize = 0; // f32[stride]: a stored vector in code space (codeSource)

// Codes encode f32 values: a float32 vector as stored, a float16 or uint8 one widened. For uint8
// Cosine they encode the normalised vector, as Qdrant's quantization_preprocess for bytes does
// (Distance::preprocess_vector over the f32 values), so code dot products estimate the cosine.

/** Whether code space is the stored vector divided by its norm (uint8 Cosine). */
@inline function normalisedCodes(): bool {
  return dtype == DT_U8 && metric == METRIC_COSINE;
}

/**
 * The stored vector at `p` as the f32 vector its codes encode (`p` itself for float32): for
 * turbo4, the dequantized vector its record stands for, as Qdrant builds a quantization on top of
 * turbo4 storage from the dequantized vectors.
 */
export function codeSource(p: usize): usize {
  if (dtype == DT_F32) return p;
  if (decoded == 0) {
    decoded = heap.alloc(<usize>stride << 2);
    memory.fill(decoded, 0, <usize>stride << 2); // turbo4 decodes dim values: the padding stays 0
  }
  if (dtype == DT_T4) {
    turbo4Decode(p, decoded);
    return decoded;
  }
  decodeElements(p, decoded, stride);
  if (normalisedCodes()) {
    const norm = Mathf.sqrt(dotF32(decoded, decoded, stride));
    if (norm > 0) for (let j = 0; j < stride; j++) store<f32>(decoded + (<usize>j << 2), load<f32>(decoded + (<usize>j << 2)) / norm);
  }
  return decoded;
}

/**
 * Turns on quantization: `kind` QM_INT8 (with `q`, the quantile), a binary encoding (with
 * `q`, the query's bits per value: 1 as stored, 4 or 8 for the scalar query encodings) or
 * QM_TURBO (its bits set first). A fit of the method in use before is given up.
 */
export function enableQuantization(q: f32, kind: i32): void {
  abandonTraining();
  setQuantMethod(kind);
  const m = method();
  m.configure(q);
  setQuantState(true, q, 1, 0, 0);
  reserveCodes();
  if (count == 0) return;
  if (m.stepped) trainFully();
  else m.fit();
}

/** configure for the binary encodings: `q` is the query's bits per value. */
export function setBinaryQueryBits(q: f32): void {
  setQueryBits(<i32>q);
}

/** Whether the codebook is due a fit (never fitted, or due by its method's rule). */
export function refitDue(): bool {
  return quantized && method().fitDue();
}

/**
 * The rule of the methods refitted as the data set keeps doubling: never fitted, or `stored`
 * reached twice what the codebook was fitted on (trainedAt), up to `limit` vectors.
 */
@inline export function doublingDue(limit: i32, stored: i32 = count): bool {
  return trainedAt == 0 || (trainedAt < limit && stored >= trainedAt * 2);
}

/** int8's rule: rows for multivectors (the arena's, a cheap upper bound of the stored ones). */
export function int8FitDue(): bool {
  return doublingDue(REFIT_LIMIT, multi ? arenaUsed : count);
}

/** The two_bits / one_and_half_bits statistics' rule (offsets). */
export function statsFitDue(): bool {
  return doublingDue(REFIT_LIMIT);
}

/** Refits a codebook fitted in one go (not the stepped methods: training.ts) when due. */
export function maybeRefit(): void {
  if (!method().stepped && refitDue()) method().fit();
}

/**
 * Refits the int8 codebook to the live vectors when they changed in number since the last fit
 * (the optimizer calls it once every vector is linked, where Qdrant builds a segment's codes).
 */
export function refitQuantization(): void {
  if (quantized && qMethod == QM_INT8 && liveVectors() != trainedAt) fitCodebook();
}

/** Writes the codes of the f32 vector at `src` to `dst`; returns the correction stored with them (0 for binary). */
export function encode(src: usize, dst: usize): f32 {
  return method().encode(src, dst);
}

/** encode for int8: the codes, with the shared shift in the correction. */
export function encodeInt8Stored(src: usize, dst: usize): f32 {
  return encodeInt8(src, dst) + int8Shift();
}

/** encode for one_bit. */
export function encodeBitsStored(src: usize, dst: usize): f32 {
  encodeBits(src, dst);
  return 0;
}

/** encode for two_bits / one_and_half_bits (binary-codes.ts). */
export function encodeTwoBitsStored(src: usize, dst: usize): f32 {
  encodeTwoBits(src, dst);
  return 0;
}

/** Qdrant's int8 code of `x`: (x - offset) / alpha clamped to [0, 127], rounded half away from zero (NaN gives 0). */
@inline function int8Code(x: f32): i32 {
  const v = Mathf.min(Mathf.max((x - qOffset) / qAlpha, 0), 127);
  if (!(v >= 0)) return 0;
  const whole = Mathf.floor(v);
  return <i32>whole + (v - whole >= 0.5 ? 1 : 0);
}

/**
 * int8Code of four values, as four bytes (lowest lane first): the same operations lane-wise (f32x4
 * min/max propagate NaN as f32.min/max do, and a NaN truncates to 0, int8Code's NaN case), so the
 * same codes, without a scalar division per dimension (a query is encoded on every search).
 */
@inline function int8Codes4(x: v128): u32 {
  const v = f32x4.min(f32x4.max(f32x4.div(f32x4.sub(x, f32x4.splat(qOffset)), f32x4.splat(qAlpha)), f32x4.splat(0)), f32x4.splat(127));
  const whole = f32x4.floor(v);
  // The comparison's all-ones lanes are -1: subtracting them rounds half up.
  const c = i32x4.sub(i32x4.trunc_sat_f32x4_s(whole), f32x4.ge(f32x4.sub(v, whole), f32x4.splat(0.5)));
  const bytes = i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(c, c), i16x8.narrow_i32x4_s(c, c));
  return i32x4.extract_lane(bytes, 0);
}

/**
 * Writes the int8 codes of the f32 vector at `src` (then the padding codes) to `dst`; returns
 * Qdrant's per-vector correction without the shared shift (what a query carries): alpha * offset
 * * sum(c) for Dot/Cosine, -alpha^2 * sum(c^2) for Euclid, 0 for Manhattan. Sums run in f32 in
 * dimension order, as Qdrant's.
 */
function encodeInt8(src: usize, dst: usize): f32 {
  let i = 0;
  for (; i + 4 <= dim; i += 4) store<u32>(dst + <usize>i, int8Codes4(v128.load(src + (<usize>i << 2))));
  for (; i < dim; i++) store<u8>(dst + <usize>i, <u8>int8Code(load<f32>(src + (<usize>i << 2))));
  const pad = <u8>int8Code(metric == METRIC_EUCLID || metric == METRIC_MANHATTAN ? qOffset : 0);
  for (let i = dim; i < codeStride; i++) store<u8>(dst + <usize>i, pad);
  if (metric == METRIC_MANHATTAN) return 0;
  let sum: f32 = 0;
  if (metric == METRIC_EUCLID) {
    for (let i = 0; i < codeStride; i++) {
      const c = <f32>load<u8>(dst + <usize>i);
      sum += c * c;
    }
    return -(sum * qAlpha * qAlpha);
  }
  for (let i = 0; i < codeStride; i++) sum += <f32>load<u8>(dst + <usize>i);
  return sum * qAlpha * qOffset;
}

/** Qdrant's shift, stored with each vector's correction: padded dim * offset^2 for Dot/Cosine, 0 for L2/L1. */
@inline function int8Shift(): f32 {
  return metric == METRIC_EUCLID || metric == METRIC_MANHATTAN ? 0 : <f32>codeStride * qOffset * qOffset;
}

/** One bit per dimension (value > 0; zero, -0 and NaN give 0), LSB first, padding bits 0. */
function encodeBits(src: usize, dst: usize): void {
  for (let b = 0; b < codeStride; b++) {
    let byte: u32 = 0;
    const first = b << 3;
    for (let k = 0; k < 8 && first + k < dim; k++) {
      if (load<f32>(src + (<usize>(first + k) << 2)) > 0) byte |= 1 << k;
    }
    store<u8>(dst + <usize>b, <u8>byte);
  }
}

/**
 * Binary distance between the query codes at `q` and the bit code at `p`: -(zeros - xor) with
 * zeros = dim - xor (Qdrant's score, negated), xor = popcount(q XOR p), or for a scalar query
 * the plane-weighted popcount over 2^B - 1, in f32 as Qdrant computes it.
 */
@inline function bitsDist(q: usize, p: usize): f32 {
  return bitsFromXor(queryBits == 1 ? hammingBits(q, p, codeStride) : xorPopcntPlanes(p, q, codeStride, queryBits));
}

/** bitsDist's value from its integer popcount sum. */
@inline function bitsFromXor(ones: i32): f32 {
  const xor: f32 = queryBits == 1 ? <f32>ones : <f32>ones / <f32>((1 << queryBits) - 1);
  return -((<f32>dim - xor) - xor);
}

@inline function queryCodesOf(i: i32): usize {
  return queryCodes + <usize>i * <usize>queryCodeStride;
}

/** prepareQuery for int8: the codes of query vector `i`; its correction carries no shift, as in Qdrant. */
export function int8Query(src: usize, i: i32, total: i32): f32 {
  return encodeInt8(src, queryCodesOf(i));
}

/** prepareQuery for the binary encodings: coded as stored, or in the scalar query encoding. */
export function binaryQuery(src: usize, i: i32, total: i32): f32 {
  if (queryBits == 1) return encode(src, queryCodesOf(i));
  encodeScalarQuery(src, queryCodesOf(i));
  return 0;
}

export function encodeQuery(src: usize): void {
  setQueryCorr(method().prepareQuery(src, 0, 1));
}

/** Codes of the queryCount query vectors at `src` (stride apart), with their corrections. */
export function encodeQueryList(src: usize): void {
  const m = method();
  for (let i = 0; i < queryCount; i++) {
    store<f32>(queryCorrs + (<usize>i << 2), m.prepareQuery(src + ((<usize>i * <usize>stride) << 2), i, queryCount));
  }
}

// Quantized int8 distances are Qdrant's internal scores negated. For Dot/Cosine and Manhattan
// the expression is Qdrant's, operation for operation: multiplier * kernel + query correction +
// stored correction (Manhattan's corrections are 0, and -(alpha * s) equals -alpha * s). Qdrant's
// Euclid score is 2 alpha^2 dot - alpha^2 sum(cq^2) - alpha^2 sum(cv^2), the same integer
// quantity as alpha^2 sum((cq - cv)^2); the graph ranks by the latter, whose SIMD kernel can stop
// early, and int8EuclidScore restates a result in Qdrant's float form.

/** Quantized distance between int8 codes at `q` (correction qc) and the codes at `p` (stored correction pc). */
@inline function int8Dist(q: usize, qc: f32, p: usize, pc: f32): f32 {
  if (metric == METRIC_EUCLID) return qAlpha * qAlpha * <f32>l2I8(q, p, codeStride);
  if (metric == METRIC_MANHATTAN) return qAlpha * <f32>l1I8(q, p, codeStride);
  return -(qAlpha * qAlpha * <f32>dotI8(q, p, codeStride) + qc + pc);
}

/** Qdrant's Euclid distance (negated internal score) between int8 codes, as Qdrant's floats compute it. */
@inline function int8EuclidScore(q: usize, qc: f32, p: usize, pc: f32): f32 {
  return -(2 * qAlpha * qAlpha * <f32>dotI8(q, p, codeStride) + qc + pc);
}

/** Whether unrescored results need codeScoreQuery's form (int8 Euclid). */
export function restatesScores(): bool {
  return qMethod == QM_INT8 && metric == METRIC_EUCLID;
}

/**
 * Quantized distance between query vector `i` (codes at `q`, correction qc) and the codes at `p`
 * (code slot `slot`, whose correction int8 reads); `qdrantForm` takes int8 Euclid in Qdrant's
 * float form (int8EuclidScore). The one per-method branch of scoring: see quant-methods.ts.
 */
@inline function codeDist(i: i32, q: usize, qc: f32, p: usize, slot: i32, qdrantForm: bool): f32 {
  if (qMethod == QM_INT8) {
    const pc = load<f32>(codeCorr + (<usize>slot << 2));
    if (qdrantForm && metric == METRIC_EUCLID) return int8EuclidScore(q, qc, p, pc);
    return int8Dist(q, qc, p, pc);
  }
  if (qMethod == QM_TURBO) {
    useSide(SIDE_QUANT);
    return turboDist(i, p);
  }
  if (qMethod == QM_PRODUCT) return productDist(i, p);
  return bitsDist(q, p);
}

/**
 * MaxSim distance on codes between the query list and stored offset `id`'s list; `qdrantForm`
 * computes each pair as Qdrant's floats do (see int8EuclidScore).
 */
export function codeMaxSimQuery(id: i32, qdrantForm: bool = false): f32 {
  const first = multiStart(id);
  const n = multiCount(id);
  let total: f32 = 0;
  for (let i = 0; i < queryCount; i++) {
    const q = queryCodes + <usize>i * <usize>queryCodeStride;
    const qc = load<f32>(queryCorrs + (<usize>i << 2));
    let best: f32 = Infinity;
    for (let j = 0; j < n; j++) best = min(best, codeDist(i, q, qc, codePtr(first + j), first + j, qdrantForm));
    total += best;
  }
  return total;
}

/** Quantized distance between the query codes and stored offset `id`. */
@inline export function codeDistQuery(id: i32): f32 {
  return codeDist(0, queryCodes, queryCorr, codePtr(id), id, false);
}

/** The quantized distance of a result as Qdrant reports it (differs from codeDistQuery's float form for int8 Euclid only). */
export function codeScoreQuery(id: i32): f32 {
  if (multi) return codeMaxSimQuery(id, true);
  if (qMethod != QM_INT8 || metric != METRIC_EUCLID) return codeDistQuery(id);
  return int8EuclidScore(queryCodes, queryCorr, codePtr(id), load<f32>(codeCorr + (<usize>id << 2)));
}

/** codeDistQuery, allowed to stop early (Euclid) once the distance must exceed `bound`. */
@inline export function codeDistQueryBounded(id: i32, bound: f32): f32 {
  if (metric != METRIC_EUCLID || qMethod != QM_INT8) return codeDistQuery(id);
  const scale = qAlpha * qAlpha;
  return scale * <f32>l2I8Bounded(queryCodes, codePtr(id), codeStride, <i32>Mathf.min(Mathf.ceil(bound / scale), 2e9));
}

/** Whether codeDistRows4 measures this index's codes (int8, binary, and TurboQuant but for Manhattan). */
@inline export function codesInRows4(): bool {
  return qMethod == QM_INT8 || binaryCodes() || (qMethod == QM_TURBO && turboInRows4());
}

/**
 * codeDistQueryBounded (bounded) or codeDistQuery from the query codes to offsets a..d, to f32
 * out[0..3], four code rows at a time (see rows4.ts): the same integer sums and the same float
 * expressions, so the same values, except that a Euclid row past the bound may read further and
 * return a larger value above it.
 */
export function codeDistRows4(a: i32, b: i32, c: i32, d: i32, bounded: bool, bound: f32, out: usize): void {
  const pa = codePtr(a), pb = codePtr(b), pc = codePtr(c), pd = codePtr(d);
  if (binaryCodes()) {
    bitsRows4(queryBits, queryCodes, pa, pb, pc, pd, codeStride, out);
    for (let r: usize = 0; r < 16; r += 4) store<f32>(out + r, bitsFromXor(load<i32>(out + r)));
    return;
  }
  if (qMethod == QM_TURBO) {
    useSide(SIDE_QUANT);
    turboDistRows4(pa, pb, pc, pd, out);
    return;
  }
  const scale = qAlpha * qAlpha;
  if (metric == METRIC_EUCLID) {
    l2I8Rows4(queryCodes, pa, pb, pc, pd, codeStride, bounded ? <i32>Mathf.min(Mathf.ceil(bound / scale), 2e9) : i32.MAX_VALUE, out);
    for (let r: usize = 0; r < 16; r += 4) store<f32>(out + r, scale * <f32>load<i32>(out + r));
  } else if (metric == METRIC_MANHATTAN) {
    l1I8Rows4(queryCodes, pa, pb, pc, pd, codeStride, out);
    for (let r: usize = 0; r < 16; r += 4) store<f32>(out + r, qAlpha * <f32>load<i32>(out + r));
  } else {
    dotI8Rows4(queryCodes, pa, pb, pc, pd, codeStride, out);
    store<f32>(out, -(scale * <f32>load<i32>(out) + queryCorr + load<f32>(codeCorr + (<usize>a << 2))));
    store<f32>(out, -(scale * <f32>load<i32>(out, 4) + queryCorr + load<f32>(codeCorr + (<usize>b << 2))), 4);
    store<f32>(out, -(scale * <f32>load<i32>(out, 8) + queryCorr + load<f32>(codeCorr + (<usize>c << 2))), 8);
    store<f32>(out, -(scale * <f32>load<i32>(out, 12) + queryCorr + load<f32>(codeCorr + (<usize>d << 2))), 12);
  }
}

/** Encodes every vector of every stored list with the current codebook. */
function encodeLists(): void {
  for (let id = 0; id < count; id++) {
    const first = multiStart(id);
    const p = multiPtr(id);
    for (let v = 0; v < multiCount(id); v++) {
      store<f32>(codeCorr + (<usize>(first + v) << 2), encode(codeSource(p + <usize>v * vecBytes), codePtrW(first + v)));
    }
    safePoint(); // between lists nothing holds a row (pages.ts)
  }
}

// The vectors a fit reads: every live (not deleted) stored vector, each row of each list for
// multivectors, in offset order; Qdrant fits a segment's codebook on its points' vectors.
let cursorId: i32 = 0;
let cursorRow: i32 = 0;

/** The next live stored vector (in the datatype's elements), or 0 past the last. */
function nextLive(): usize {
  // The fits read one vector at a time: the one returned before is done with (pages.ts).
  safePoint();
  while (cursorId < count) {
    const id = cursorId;
    if (load<u8>(levels + <usize>id) == EMPTY || isDeleted(id)) {
      cursorId++;
      continue;
    }
    if (!multi) {
      cursorId++;
      return vecPtr(id);
    }
    if (cursorRow < multiCount(id)) return multiPtr(id) + <usize>(cursorRow++) * vecBytes;
    cursorId++;
    cursorRow = 0;
  }
  return 0;
}

@inline function rewind(): void {
  cursorId = 0;
  cursorRow = 0;
}

/** Number of live stored vectors (rows, for multivectors). */
function liveVectors(): i32 {
  rewind();
  let n = 0;
  while (nextLive() != 0) n++;
  return n;
}

/** Fits the codebook of a method fitted in one go and re-encodes every stored vector (see fitInt8, fitTwoBits). */
export function fitCodebook(): void {
  method().fit();
}

/** fit for two_bits / one_and_half_bits: their statistics (binary-codes.ts), then every code. */
export function fitTwoBits(): void {
  fitBinaryStats();
  setQuantState(true, quantile, 1, 0, max(count, 1));
  encodeAll();
}

/**
 * Fits the int8 codebook to the live vectors as Qdrant does and re-encodes every stored vector.
 * Whole range: min and max of every value (alpha = offset = 0 with no vectors). Quantile q < 1
 * with n >= 127 vectors: k = min(n, 5000) vectors drawn uniformly without replacement (every one
 * when n <= 5000), their L = k * dim values, cut = max(1, min((L - 1) / 2, floor(k (1 - q) / 2))),
 * Qdrant's cut counted in vectors, not values; the window is the sorted values s[cut + 1 ..
 * L - cut - 1] (Qdrant's two selections), used if it holds at least 2 values.
 */
export function fitInt8(): void {
  rewind();
  let lo = F32.MAX_VALUE, hi = -F32.MAX_VALUE;
  let n = 0;
  for (let p = nextLive(); p != 0; p = nextLive()) {
    const src = codeSource(p);
    for (let j = 0; j < dim; j++) {
      const x = load<f32>(src + (<usize>j << 2));
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    n++;
  }
  if (n == 0) lo = hi = 0;
  if (quantile < 1 && n >= QUANTILE_MIN_COUNT) quantileWindow(n, lo, hi);
  else setCodebook(lo, hi, n);
}

/** Fits [lo, hi] to Qdrant's quantile window of a sample of the n live vectors (whole range [lo, hi] if the window is too small). */
function quantileWindow(n: i32, lo: f32, hi: f32): void {
  const k = min(n, QUANTILE_SAMPLE);
  const values = <i64>k * <i64>dim;
  const cut = <i32>max<i64>(1, min<i64>((values - 1) / 2, <i64>(<f32>k * (1 - quantile) / 2)));
  if (values < 4 || values - 2 * <i64>cut - 1 < 2) {
    setCodebook(lo, hi, n);
    return;
  }
  // Only the cut + 2 lowest and cut + 1 highest values matter: s[cut + 1] is the (cut + 2)-th
  // smallest and s[L - cut - 1] the (cut + 1)-th largest, so two small heaps replace a sort.
  smallest.clear();
  largest.clear();
  rewind();
  let left = k;
  for (let t = 0; left > 0; t++) {
    const p = nextLive();
    // Selection sampling: vector t is taken with probability left / (n - t).
    if (k < n && <f64>(nextRandom() >> 11) * (1.0 / 9007199254740992.0) * <f64>(n - t) >= <f64>left) continue;
    left--;
    const src = codeSource(p);
    for (let j = 0; j < dim; j++) keepExtremes(load<f32>(src + (<usize>j << 2)), cut);
  }
  setCodebook(-smallest.topKey(), largest.topKey(), n);
}

/** Offers `x` to the heaps of the cut + 2 smallest and cut + 1 largest values. */
@inline function keepExtremes(x: f32, cut: i32): void {
  if (smallest.size < cut + 2) smallest.push(-x, 0);
  else if (-x > smallest.topKey()) { smallest.pop(); smallest.push(-x, 0); }
  if (largest.size < cut + 1) largest.push(x, 0);
  else if (x > largest.topKey()) { largest.pop(); largest.push(x, 0); }
}

/** Sets alpha = (hi - lo) / 127 and offset = lo (fitted on n vectors) and re-encodes every stored vector. */
function setCodebook(lo: f32, hi: f32, n: i32): void {
  setQuantState(true, quantile, (hi - lo) / 127, lo, max(n, 1));
  reserveCodes();
  encodeAll();
}

/** Encodes every stored vector (or every vector of every list) with the current codes. */
export function encodeAll(): void {
  if (multi) {
    encodeLists();
    return;
  }
  for (let id = 0; id < count; id++) {
    if (load<u8>(levels + <usize>id) == EMPTY) continue;
    store<f32>(codeCorr + (<usize>id << 2), encode(codeSource(vecPtr(id)), codePtrW(id)));
    safePoint();
  }
}
