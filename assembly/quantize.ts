// Scalar int8 quantization. One affine codebook per index: value ~= qAlpha * code + qOffset with
// code in [-127, 127], fitted to the [lo, hi] range holding the `quantile` share of sampled
// values (1 = the whole range). The codebook is refitted whenever the number of stored vectors
// doubles, up to REFIT_LIMIT, so early inserts do not freeze a poor range; each refit re-encodes
// every vector, which keeps the total work linear.
//
// Binary quantization (Qdrant's one_bit encoding) needs no codebook: a code holds one bit per
// dimension, set iff the value is > 0, and the quantized score is dim - 2 * popcount(q XOR v)
// (bigger is closer), so the distance kept here is its negation, 2 * xor - dim. Its two_bits and
// one_and_half_bits encodings and its scalar query encodings are in binary-codes.ts; they score
// with the same formula. Product quantization (codebooks, lookup tables) is product-quant.ts,
// dispatched from here.
//
// Multivectors share the codebook: every vector of every list gets its own codes (indexed by
// arena vector, see layout.ts), and MaxSim on codes takes the same per-pair quantized distance.

import {
  METRIC_EUCLID, METRIC_MANHATTAN, EMPTY, dim, metric, count, codeStride, quantized, quantile,
  qAlpha, qOffset, trainedAt, levels, codes, codeCorr, codePtr, vecPtr, queryCodes, queryCorr,
  setQuantState, setQueryCorr, reserveCodes, nextRandom, multi, stride, queryCount, queryCorrs,
  multiPtr, multiCount, multiStart, codeVecPtr, mvCount, dtype, elemShift, DT_F32, DT_U8, METRIC_COSINE,
  qMethod, QM_BINARY, QM_PRODUCT, setQuantMethod, binaryCodes, setQueryBits, queryBits, queryCodeStride,
} from "./layout";
import { dotF32, dotI8, hammingBits, l1I8, l2I8, l2I8Bounded, xorPopcntPlanes } from "./distance";
import { binaryStatsBytes, encodeScalarQuery, encodeTwoBits, fitBinaryStats } from "./binary-codes";
import { decodeElements, elementAt } from "./element";
import { productDist, productEncode, productMaxSim, productMaybeRefit, productQuery } from "./product-quant";

const SAMPLE_LIMIT: i32 = 1 << 17;
const REFIT_LIMIT: i32 = 1 << 17;

let sample: usize = 0;
let decoded: usize = 0; // f32[stride]: a stored vector in code space (codeSource)

// Codes encode f32 values: a float32 vector as stored, a float16 or uint8 one widened. For uint8
// Cosine they encode the normalised vector, as Qdrant's quantization_preprocess for bytes does
// (Distance::preprocess_vector over the f32 values), so code dot products estimate the cosine.

/** Whether code space is the stored vector divided by its norm (uint8 Cosine). */
@inline function normalisedCodes(): bool {
  return dtype == DT_U8 && metric == METRIC_COSINE;
}

/** 1 / the norm of the stored vector at `p` when codes are normalised, else 1. */
function codeScale(p: usize): f32 {
  if (!normalisedCodes()) return 1;
  let sum: f32 = 0;
  for (let j = 0; j < dim; j++) {
    const x = elementAt(p, j);
    sum += x * x;
  }
  return sum > 0 ? 1 / Mathf.sqrt(sum) : 1;
}

/** The stored vector at `p` as the f32 vector its codes encode (`p` itself for float32). */
export function codeSource(p: usize): usize {
  if (dtype == DT_F32) return p;
  if (decoded == 0) decoded = heap.alloc(<usize>stride << 2);
  decodeElements(p, decoded, stride);
  if (normalisedCodes()) {
    const norm = Mathf.sqrt(dotF32(decoded, decoded, stride));
    if (norm > 0) for (let j = 0; j < stride; j++) store<f32>(decoded + (<usize>j << 2), load<f32>(decoded + (<usize>j << 2)) / norm);
  }
  return decoded;
}

/** Value `j` of the stored vector at `p` in code space (one read, plus its norm for uint8 Cosine). */
@inline function codeValue(p: usize, j: i32): f32 {
  return elementAt(p, j) * codeScale(p);
}

/**
 * Turns on quantization: `method` QM_INT8 (with `q`, the quantile) or a binary encoding (with
 * `q`, the query's bits per value: 1 as stored, 4 or 8 for the scalar query encodings).
 */
export function enableQuantization(q: f32, method: i32): void {
  setQuantMethod(method);
  setQuantState(true, q, 1, 0, 0);
  if (binaryCodes()) setQueryBits(<i32>q);
  reserveCodes();
  if (method == QM_BINARY) encodeAll();
  else if (count > 0) fit();
}

/** Called after each insert: refits the codebook while the data set keeps doubling. */
export function maybeRefit(): void {
  if (!quantized || qMethod == QM_BINARY) return;
  if (qMethod == QM_PRODUCT) {
    productMaybeRefit();
    return;
  }
  if (trainedAt == 0 || (trainedAt < REFIT_LIMIT && count >= trainedAt * 2)) fit();
}

/** Writes the codes of the f32 vector at `src` to `dst`; returns its dot-product correction (0 for binary). */
export function encode(src: usize, dst: usize): f32 {
  if (binaryCodes()) {
    if (qMethod == QM_BINARY) encodeBits(src, dst);
    else encodeTwoBits(src, dst);
    return 0;
  }
  if (qMethod == QM_PRODUCT) {
    productEncode(src, dst);
    return 0;
  }
  const inv: f32 = 1 / qAlpha;
  let sum: i32 = 0;
  for (let i = 0; i < dim; i++) {
    const c = i32(nearest<f32>((load<f32>(src + (<usize>i << 2)) - qOffset) * inv));
    const code = min(max(c, -127), 127);
    store<i8>(dst + <usize>i, <i8>code);
    sum += code;
  }
  // x.y ~= a^2 sum(cx cy) + a o (sum cx + sum cy) + dim o^2: the terms of one side are stored
  // with that side, each taking half of the shared dim o^2.
  return qAlpha * qOffset * <f32>sum + <f32>dim * qOffset * qOffset * 0.5;
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
  const xor: f32 = queryBits == 1 ? <f32>hammingBits(q, p, codeStride)
    : <f32>xorPopcntPlanes(p, q, codeStride, queryBits) / <f32>((1 << queryBits) - 1);
  return -((<f32>dim - xor) - xor);
}

/** Writes the codes of the query vector at `src` to `dst`; returns its correction. */
function encodeQueryVector(src: usize, dst: usize): f32 {
  if (queryBits == 1) return encode(src, dst);
  encodeScalarQuery(src, dst);
  return 0;
}

export function encodeQuery(src: usize): void {
  if (qMethod == QM_PRODUCT) {
    productQuery(src, 1);
    return;
  }
  setQueryCorr(encodeQueryVector(src, queryCodes));
}

/** Codes of the queryCount query vectors at `src` (stride apart), with their corrections. */
export function encodeQueryList(src: usize): void {
  if (qMethod == QM_PRODUCT) {
    productQuery(src, queryCount);
    return;
  }
  for (let i = 0; i < queryCount; i++) {
    const c = encodeQueryVector(src + ((<usize>i * <usize>stride) << 2), queryCodes + <usize>i * <usize>queryCodeStride);
    store<f32>(queryCorrs + (<usize>i << 2), c);
  }
}

/** Quantized distance between query vector codes at `q` (correction qc) and arena vector `v`. */
@inline function codePairDist(q: usize, qc: f32, v: i32): f32 {
  const p = codeVecPtr(v);
  if (binaryCodes()) return bitsDist(q, p);
  if (metric == METRIC_EUCLID) return qAlpha * qAlpha * <f32>l2I8(q, p, codeStride);
  if (metric == METRIC_MANHATTAN) return qAlpha * <f32>l1I8(q, p, codeStride);
  return -(qAlpha * qAlpha * <f32>dotI8(q, p, codeStride) + qc + load<f32>(codeCorr + (<usize>v << 2)));
}

/** MaxSim distance on codes between the query list and stored offset `id`'s list. */
export function codeMaxSimQuery(id: i32): f32 {
  if (qMethod == QM_PRODUCT) return productMaxSim(id);
  const first = multiStart(id);
  const n = multiCount(id);
  let total: f32 = 0;
  for (let i = 0; i < queryCount; i++) {
    const q = queryCodes + <usize>i * <usize>queryCodeStride;
    const qc = load<f32>(queryCorrs + (<usize>i << 2));
    let best: f32 = Infinity;
    for (let j = 0; j < n; j++) best = min(best, codePairDist(q, qc, first + j));
    total += best;
  }
  return total;
}

/** Quantized distance between the query codes and stored offset `id`. */
@inline export function codeDistQuery(id: i32): f32 {
  const p = codePtr(id);
  if (binaryCodes()) return bitsDist(queryCodes, p);
  if (qMethod == QM_PRODUCT) return productDist(p);
  if (metric == METRIC_EUCLID) return qAlpha * qAlpha * <f32>l2I8(queryCodes, p, codeStride);
  if (metric == METRIC_MANHATTAN) return qAlpha * <f32>l1I8(queryCodes, p, codeStride);
  return -(qAlpha * qAlpha * <f32>dotI8(queryCodes, p, codeStride) + queryCorr +
    load<f32>(codeCorr + (<usize>id << 2)));
}

/** codeDistQuery, allowed to stop early (Euclid) once the distance must exceed `bound`. */
@inline export function codeDistQueryBounded(id: i32, bound: f32): f32 {
  if (metric != METRIC_EUCLID || binaryCodes() || qMethod == QM_PRODUCT) return codeDistQuery(id);
  const scale = qAlpha * qAlpha;
  return scale * <f32>l2I8Bounded(queryCodes, codePtr(id), codeStride, <i32>Mathf.min(Mathf.ceil(bound / scale), 2e9));
}

/** Fills `sample` with values of the stored lists (all, or a random sample); returns how many. */
function sampleLists(): i32 {
  let total: i64 = 0;
  for (let id = 0; id < count; id++) total += <i64>load<u32>(mvCount + (<usize>id << 2));
  let n = 0;
  if (total * dim <= <i64>SAMPLE_LIMIT) {
    for (let id = 0; id < count; id++) {
      const p = multiPtr(id);
      // Vectors are stride apart; copy dim values of each.
      for (let v = 0; v < multiCount(id); v++) {
        const src = codeSource(p + ((<usize>v * <usize>stride) << elemShift));
        for (let j = 0; j < dim; j++) store<f32>(sample + (<usize>(n++) << 2), load<f32>(src + (<usize>j << 2)));
      }
    }
    return n;
  }
  for (let s = 0; s < SAMPLE_LIMIT; s++) {
    const r = nextRandom();
    const id = <i32>((r & 0xffffffff) % <u64>count);
    const k = multiCount(id);
    if (k == 0) continue;
    const v = <i32>(((r >> 32) & 0xffff) % <u64>k);
    const j = <i32>((r >> 48) % <u64>dim);
    store<f32>(sample + (<usize>(n++) << 2), codeValue(multiPtr(id) + ((<usize>v * <usize>stride) << elemShift), j));
  }
  return n;
}

/** Encodes every vector of every stored list with the current codebook. */
function encodeLists(): void {
  for (let id = 0; id < count; id++) {
    const first = multiStart(id);
    const p = multiPtr(id);
    for (let v = 0; v < multiCount(id); v++) {
      store<f32>(codeCorr + (<usize>(first + v) << 2), encode(codeSource(p + ((<usize>v * <usize>stride) << elemShift)), codeVecPtr(first + v)));
    }
  }
}

function fit(): void {
  if (binaryStatsBytes() != 0) {
    // two_bits / one_and_half_bits: refit the statistics their thresholds come from.
    fitBinaryStats();
    setQuantState(true, quantile, 1, 0, max(count, 1));
    encodeAll();
    return;
  }
  if (sample == 0) sample = heap.alloc(<usize>SAMPLE_LIMIT << 2);
  if (multi) {
    fitRange(sampleLists());
    return;
  }
  let n = 0;
  if (<i64>count * dim <= <i64>SAMPLE_LIMIT) {
    for (let id = 0; id < count; id++) {
      if (load<u8>(levels + <usize>id) == EMPTY) continue;
      const src = codeSource(vecPtr(id));
      for (let j = 0; j < dim; j++) store<f32>(sample + (<usize>(n++) << 2), load<f32>(src + (<usize>j << 2)));
    }
  } else {
    for (let s = 0; s < SAMPLE_LIMIT; s++) {
      const r = nextRandom();
      const id = <i32>((r & 0xffffffff) % <u64>count);
      if (load<u8>(levels + <usize>id) == EMPTY) continue;
      const j = <i32>((r >> 32) % <u64>dim);
      store<f32>(sample + (<usize>(n++) << 2), codeValue(vecPtr(id), j));
    }
  }
  fitRange(n);
}

/** Fits the codebook to the first `n` values of `sample` and re-encodes every stored vector. */
function fitRange(n: i32): void {
  if (n == 0) return;
  const tail = <f64>(1 - quantile) * 0.5;
  const lo = select(sample, n, <i32>Math.floor(tail * <f64>(n - 1)));
  const hi = select(sample, n, <i32>Math.ceil((1 - tail) * <f64>(n - 1)));
  const alpha: f32 = hi > lo ? (hi - lo) / 254 : 1;
  setQuantState(true, quantile, alpha, lo + 127 * alpha, max(count, 1));
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
    store<f32>(codeCorr + (<usize>id << 2), encode(codeSource(vecPtr(id)), codePtr(id)));
  }
}

/** k-th smallest of buf[0..n) (quickselect, reorders buf). */
function select(buf: usize, n: i32, k: i32): f32 {
  let left = 0, right = n - 1;
  while (left < right) {
    const pivot = load<f32>(buf + (<usize>((left + right) >> 1) << 2));
    let i = left, j = right;
    while (i <= j) {
      while (load<f32>(buf + (<usize>i << 2)) < pivot) i++;
      while (load<f32>(buf + (<usize>j << 2)) > pivot) j--;
      if (i <= j) {
        const t = load<f32>(buf + (<usize>i << 2));
        store<f32>(buf + (<usize>i << 2), load<f32>(buf + (<usize>j << 2)));
        store<f32>(buf + (<usize>j << 2), t);
        i++; j--;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else break;
  }
  return load<f32>(buf + (<usize>k << 2));
}
