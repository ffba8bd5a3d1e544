// Scalar int8 quantization. One affine codebook per index: value ~= qAlpha * code + qOffset with
// code in [-127, 127], fitted to the [lo, hi] range holding the `quantile` share of sampled
// values (1 = the whole range). The codebook is refitted whenever the number of stored vectors
// doubles, up to REFIT_LIMIT, so early inserts do not freeze a poor range; each refit re-encodes
// every vector, which keeps the total work linear.

import {
  METRIC_EUCLID, METRIC_MANHATTAN, EMPTY, dim, metric, count, codeStride, quantized, quantile,
  qAlpha, qOffset, trainedAt, levels, codes, codeCorr, codePtr, vecPtr, queryCodes, queryCorr,
  setQuantState, setQueryCorr, reserveCodes, nextRandom, multi,
} from "./layout";
import { dotI8, l1I8, l2I8, l2I8Bounded } from "./distance";

const SAMPLE_LIMIT: i32 = 1 << 17;
const REFIT_LIMIT: i32 = 1 << 17;

let sample: usize = 0;

export function enableQuantization(q: f32): void {
  if (multi) return; // codes are one per offset; lists of vectors have none (see index.ts)
  setQuantState(true, q, 1, 0, 0);
  reserveCodes();
  if (count > 0) fit();
}

/** Called after each insert: refits the codebook while the data set keeps doubling. */
export function maybeRefit(): void {
  if (!quantized) return;
  if (trainedAt == 0 || (trainedAt < REFIT_LIMIT && count >= trainedAt * 2)) fit();
}

/** Writes the codes of the f32 vector at `src` to `dst`; returns its dot-product correction. */
export function encode(src: usize, dst: usize): f32 {
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

export function encodeQuery(src: usize): void {
  setQueryCorr(encode(src, queryCodes));
}

/** Quantized distance between the query codes and stored offset `id`. */
@inline export function codeDistQuery(id: i32): f32 {
  const p = codePtr(id);
  if (metric == METRIC_EUCLID) return qAlpha * qAlpha * <f32>l2I8(queryCodes, p, codeStride);
  if (metric == METRIC_MANHATTAN) return qAlpha * <f32>l1I8(queryCodes, p, codeStride);
  return -(qAlpha * qAlpha * <f32>dotI8(queryCodes, p, codeStride) + queryCorr +
    load<f32>(codeCorr + (<usize>id << 2)));
}

/** codeDistQuery, allowed to stop early (Euclid) once the distance must exceed `bound`. */
@inline export function codeDistQueryBounded(id: i32, bound: f32): f32 {
  if (metric != METRIC_EUCLID) return codeDistQuery(id);
  const scale = qAlpha * qAlpha;
  return scale * <f32>l2I8Bounded(queryCodes, codePtr(id), codeStride, <i32>Mathf.min(Mathf.ceil(bound / scale), 2e9));
}

function fit(): void {
  if (sample == 0) sample = heap.alloc(<usize>SAMPLE_LIMIT << 2);
  let n = 0;
  if (<i64>count * dim <= <i64>SAMPLE_LIMIT) {
    for (let id = 0; id < count; id++) {
      if (load<u8>(levels + <usize>id) == EMPTY) continue;
      for (let j = 0; j < dim; j++) store<f32>(sample + (<usize>(n++) << 2), load<f32>(vecPtr(id) + (<usize>j << 2)));
    }
  } else {
    for (let s = 0; s < SAMPLE_LIMIT; s++) {
      const r = nextRandom();
      const id = <i32>((r & 0xffffffff) % <u64>count);
      if (load<u8>(levels + <usize>id) == EMPTY) continue;
      const j = <i32>((r >> 32) % <u64>dim);
      store<f32>(sample + (<usize>(n++) << 2), load<f32>(vecPtr(id) + (<usize>j << 2)));
    }
  }
  if (n == 0) return;
  const tail = <f64>(1 - quantile) * 0.5;
  const lo = select(sample, n, <i32>Math.floor(tail * <f64>(n - 1)));
  const hi = select(sample, n, <i32>Math.ceil((1 - tail) * <f64>(n - 1)));
  const alpha: f32 = hi > lo ? (hi - lo) / 254 : 1;
  setQuantState(true, quantile, alpha, lo + 127 * alpha, max(count, 1));
  reserveCodes();
  for (let id = 0; id < count; id++) {
    if (load<u8>(levels + <usize>id) == EMPTY) continue;
    store<f32>(codeCorr + (<usize>id << 2), encode(vecPtr(id), codePtr(id)));
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
