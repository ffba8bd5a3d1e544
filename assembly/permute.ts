// Dimension order for early abandoning (distance.ts): stored vectors and queries keep their
// dimensions in decreasing order of variance, so the partial sums of L2 and L1 grow fastest at
// the start and far candidates are abandoned after a block or two. Distances do not depend on
// the order, so the graph is unaffected. The order is fitted once, when the index first holds
// FIT_AT vectors (re-permuting those in place); Cosine and Dot never abandon and keep identity.
// Product and TurboQuant codes depend on it: their trainer (training.ts) chooses it as a fit
// begins and applies it when the fit is installed, the others right after a vector is stored.

import {
  EMPTY, METRIC_EUCLID, METRIC_MANHATTAN, dim, stride, metric, count, levels, query, quantized,
  vecPtr, vecPtrW, codePtr, codePtrW, multi, dtype, DT_F16, DT_U8, DT_T4, binaryCodes, qMethod, QM_INT8,
} from "./layout";
import { elementAt } from "./element";
import { Heap } from "./heap";
import { safePoint } from "./pages";
import { codeSource, encode } from "./quantize";
import { addWork } from "./fresh-codes";

const FIT_AT: i32 = 1024;
const SAMPLE: i32 = 4096;

let order: usize = 0;   // u32[dim]: order[i] = original dimension stored at position i
let scratch: usize = 0; // f32[stride], also used for i8 codes
let fitted: bool = false; // the order is applied (vectors and queries are stored in it)
let chosen: bool = false; // the order is computed (applied or about to be)

export function permutation(): usize { return fitted ? order : 0; }

/** Installs an order read from a serialised image. */
export function restorePermutation(src: usize): void {
  ensureRegions();
  memory.copy(order, src, <usize>dim << 2);
  fitted = chosen = true;
}

function ensureRegions(): void {
  if (order != 0) return;
  order = heap.alloc(<usize>dim << 2);
  scratch = heap.alloc(<usize>stride << 2);
}

/** Reorders the f32 vector at p (original order) into stored order. */
function forwardF32(p: usize): void {
  for (let i = 0; i < dim; i++) {
    store<f32>(scratch + (<usize>i << 2), load<f32>(p + (<usize>load<u32>(order + (<usize>i << 2)) << 2)));
  }
  memory.copy(p, scratch, <usize>dim << 2);
}

/** Reorders the bytes at p (int8 codes, uint8 vectors) into stored order. */
function forwardBytes(p: usize): void {
  for (let i = 0; i < dim; i++) store<u8>(scratch + <usize>i, load<u8>(p + <usize>load<u32>(order + (<usize>i << 2))));
  memory.copy(p, scratch, <usize>dim);
}

function forwardHalves(p: usize): void {
  for (let i = 0; i < dim; i++) store<u16>(scratch + (<usize>i << 1), load<u16>(p + (<usize>load<u32>(order + (<usize>i << 2)) << 1)));
  memory.copy(p, scratch, <usize>dim << 1);
}

/** Reorders a stored vector (of the index's datatype) into stored order. */
function forwardStored(p: usize): void {
  if (dtype == DT_U8) forwardBytes(p);
  else if (dtype == DT_F16) forwardHalves(p);
  else forwardF32(p);
}

/** Puts the query region into stored order (no-op before the order is fitted). */
export function permuteQuery(): void {
  if (fitted) forwardF32(query);
}

/** Writes stored vector `id` as f32 (its stored values, widened), in original order, at `out`. */
export function readOriginal(id: i32, out: usize): void {
  const p = vecPtr(id);
  for (let i = 0; i < dim; i++) {
    const at = fitted ? <usize>load<u32>(order + (<usize>i << 2)) : <usize>i;
    store<f32>(out + (at << 2), elementAt(p, i));
  }
}

/** Fits and applies the order when due (after a store of a method fitted on the insert path, see training.ts). */
export function maybeFitPermutation(): void {
  if (!orderDue()) return;
  chooseOrder();
  applyOrder();
}

/** Whether the order should be fitted now (it never is for multivector lists: their arena is not a per-offset stride of vecs). */
export function orderDue(): bool {
  return !chosen && !multi && dtype != DT_T4 && count >= FIT_AT && (metric == METRIC_EUCLID || metric == METRIC_MANHATTAN);
}

/** Fits the order to the stored vectors (by decreasing variance) without applying it; returns it (order[i] = dimension at position i). */
export function chooseOrder(): usize {
  ensureRegions();
  const mean = heap.alloc(<usize>dim << 3);
  const sq = heap.alloc(<usize>dim << 3);
  memory.fill(mean, 0, <usize>dim << 3);
  memory.fill(sq, 0, <usize>dim << 3);
  let n = 0;
  for (let id = 0; id < count && n < SAMPLE; id++) {
    if (load<u8>(levels + <usize>id) == EMPTY) continue;
    const p = vecPtr(id);
    for (let j = 0; j < dim; j++) {
      const x = <f64>elementAt(p, j);
      store<f64>(mean + (<usize>j << 3), load<f64>(mean + (<usize>j << 3)) + x);
      store<f64>(sq + (<usize>j << 3), load<f64>(sq + (<usize>j << 3)) + x * x);
    }
    n++;
    safePoint();
  }
  const byVariance = new Heap();
  for (let j = 0; j < dim; j++) {
    const m = load<f64>(mean + (<usize>j << 3)) / n;
    byVariance.push(-<f32>(load<f64>(sq + (<usize>j << 3)) / n - m * m), j);
  }
  for (let i = 0; i < dim; i++) {
    store<u32>(order + (<usize>i << 2), byVariance.topId());
    byVariance.pop();
  }
  heap.free(byVariance.base);
  heap.free(changetype<usize>(byVariance));
  heap.free(mean);
  heap.free(sq);
  addWork(<i64>n * <i64>dim);
  chosen = true;
  return order;
}

/** Forgets an order chosen by a fit that was given up before applying it (training.ts), so the next fit chooses again. */
export function forgetChosenOrder(): void {
  if (!fitted) chosen = false;
}

/**
 * Applies the chosen order: permutes every stored vector in place and redoes the codes that
 * depend on it (int8 codes move with their dimensions, bit codes are encoded again); a stepped
 * fit (product, TurboQuant) applying it installs its codes, made in that order, right after.
 */
export function applyOrder(): void {
  if (fitted || !chosen) return;
  // Fitted before the codes are redone: binary encodings that keep original order read it.
  fitted = true;
  for (let id = 0; id < count; id++) {
    if (load<u8>(levels + <usize>id) == EMPTY) continue;
    forwardStored(vecPtrW(id));
    if (quantized && binaryCodes()) encode(codeSource(vecPtr(id)), codePtrW(id));
    else if (quantized && qMethod == QM_INT8) forwardBytes(codePtrW(id));
    safePoint();
  }
  // Every stored vector moved: the one training step not bounded by a batch (the first fit past FIT_AT only).
  addWork(<i64>count * <i64>dim);
}
