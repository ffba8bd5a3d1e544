// The engine's exported surface. The host (src/engine/) owns offsets and talks in pointers:
// it writes a vector to queryPtr(), calls insert/search, and reads outIdsPtr()/outDistPtr().

import {
  setParams, stride, codeStride, query, outIds, outDist, count, capacity, entryPoint, maxLevel,
  deletedCount, quantized, quantile, metric, M, efConstruct, reserve as reserveOffsets,
  multi, setMulti, setQueryCount, multiPtr, multiCount, arenaCap, reserveArena, dtype, vecBytes,
  qMethod, codePtr, vecPtr, queryBits, trainedAt,
} from "./layout";
import { distF32, dotI8, hammingBits, l1I8, l2I8, xorPopcntPlanes } from "./distance";
import { decodeElements } from "./element";
import { bitsRows4, distRows4, dotI8Rows4, l1I8Rows4, l2I8Rows4 } from "./rows4";
import { codeDistQuery, codeDistRows4, codesInRows4, enableQuantization, refitQuantization } from "./quantize";
import { readOriginal } from "./permute";
import { turbo4, turbo4Read, turbo4ReadList, turbo4Setup } from "./turbo4";

export { insert, stash, link, linkPending, vacuum, pendingOffsets, remove, contains, liveCount, allowedCount, search, searchCost, distanceBetween, dimension, storedVectors } from "./hnsw";
export { serializedSize, saveBegin, savePart, loadBegin, loadTail, loadPart, loadEnd } from "./persist";
export { enableQuantization, refitQuantization };
export { trainStep } from "./training";
import { stepWork } from "./fresh-codes";
/** Values (vector coordinates) the last trainStep read: its size in work units (a step is bounded by them, not by time). */
export function trainStepWork(): f64 { return <f64>stepWork(); }
export { checkAsReached } from "./filter-check";
export { setPaging, trimPages, residentPageBytes } from "./pages";
export { setTurboBits, turboBits, turboPadded, turboCentroid, turboRotate, turboShiftPtr, turboScalePtr } from "./turbo-quant";
export { enableProductQuantization, productBucket, codebookPtr } from "./product-quant";

/** `datatype`: 0 float32, 1 float16, 2 uint8, 3 turbo4 (layout.ts DT_*), the element type vectors are stored in. */
export function init(dim: i32, metric: i32, m: i32, efConstruct: i32, seedLow: u32, seedHigh: u32, datatype: i32): void {
  setParams(dim, m, metric, efConstruct, <u64>seedLow | (<u64>seedHigh << 32), datatype);
  turbo4Setup();
}

export function reserve(n: i32): void { reserveOffsets(n); }

/** Pre-sizes the multivector arena for `total` vectors (appends grow it by doubling otherwise). */
export function reserveVectors(total: i32): void { if (multi) reserveArena(total); }

/**
 * Multivector mode: each offset stores a list of vectors, compared by MaxSim. Call right after
 * init, before anything is stored.
 */
export function enableMultivector(): void { setMulti(); }
export function isMultivector(): bool { return multi; }

/** Sizes the query region for `k` vectors (multivector mode) and returns where to write them. */
export function queryVectors(k: i32): usize { return setQueryCount(max(k, 1)); }

/** Vectors stored at offset `id` (multivector mode; 0 if none). */
export function vectorCount(id: i32): i32 { return id < offsetCount() ? multiCount(id) : 0; }

/** Vectors the multivector arena has room for (memory accounting). */
export function arenaCapacity(): i32 { return arenaCap; }

/** Vectors one stored list may hold (a list sits in one arena chunk). */
export { maxListRows } from "./layout";

export function alloc(bytes: usize): usize { return heap.alloc(bytes); }
export function free(ptr: usize): void { heap.free(ptr); }

export function queryPtr(): usize { return query; }
export function outIdsPtr(): usize { return outIds; }
export function outDistPtr(): usize { return outDist; }
let vecOut: usize = 0;
let vecOutCap: i32 = 0; // vectors vecOut has room for
/**
 * Stored vector `id` as f32 (the stored values, widened from float16 or uint8), in original
 * dimension order; for multivectors its whole list, rows `stride` apart. Returns where it is.
 */
export function readVector(id: i32): usize {
  const k = multi ? max(multiCount(id), 1) : 1;
  if (k > vecOutCap) {
    if (vecOut != 0) heap.free(vecOut);
    vecOut = heap.alloc((<usize>k * <usize>stride) << 2);
    vecOutCap = k;
  }
  // Lists are stored in original order (no permutation in multivector mode).
  if (multi && turbo4()) turbo4ReadList(id, vecOut);
  else if (multi) decodeElements(multiPtr(id), vecOut, multiCount(id) * stride);
  else if (turbo4()) turbo4Read(id, vecOut);
  else readOriginal(id, vecOut);
  return vecOut;
}
export function indexDatatype(): i32 { return dtype; }
/** Bytes of one stored vector (its padded stride of elements, or its turbo4 record). */
export function vectorBytes(): i32 { return <i32>vecBytes; }
export function vecStride(): i32 { return stride; }
export function offsetCount(): i32 { return count; }
export function offsetCapacity(): i32 { return capacity; }
export function entry(): i32 { return entryPoint; }
export function topLevel(): i32 { return maxLevel; }
export function deletedOffsets(): i32 { return deletedCount; }
export function isQuantized(): bool { return quantized; }
/** Vectors (offsets for product) the codebook was last fitted on; 0 = never. */
export function trainedVectors(): i32 { return trainedAt; }
/** Quantization method (layout.ts QM_*: 0 int8, 1 binary one_bit, 2 two_bits, 3 one_and_half_bits, 4 product, 5 turbo); meaningful when quantized. */
export function quantizationMethod(): i32 { return qMethod; }
/** Where offset `id`'s codes are (codeBytes() of them, dimensions in stored order; dense indexes). */
export function codesPtr(id: i32): usize { return codePtr(id); }
export function codeBytes(): i32 { return codeStride; }
/** Where offset `id`'s stored vector is (vectorBytes() of it: elements in stored order, or a turbo4 record; dense indexes). */
export function storedPtr(id: i32): usize { return vecPtr(id); }
export function indexMetric(): i32 { return metric; }
export function indexM(): i32 { return M; }
export function indexEfConstruct(): i32 { return efConstruct; }
export function indexQuantile(): f32 { return quantile; }
/** Bits per value of binary query codes: 1 (binarised as stored), 4 or 8 (scalar query encodings). */
export function queryCodeBits(): i32 { return queryBits; }

/** Raw f32 kernel over two host buffers of `n` floats (the metric's smaller-is-closer form). */
export function kernelF32(metric: i32, a: usize, b: usize, n: i32): f32 {
  return distF32(metric, a, b, n);
}

/** Raw int8 kernel over two host buffers of `n` codes (n a multiple of 16): 0 dot, 1 L2², 2 L1. */
export function kernelI8(kind: i32, a: usize, b: usize, n: i32): i32 {
  if (kind == 0) return dotI8(a, b, n);
  if (kind == 1) return l2I8(a, b, n);
  return l1I8(a, b, n);
}

/**
 * Raw four-row f32 kernel (rows4.ts distRows4): distances from `q` to the rows whose pointers are
 * u32 rows[0..3], written to f32 out[0..3]; with `bounded`, L2/L1 may stop past `bound`.
 */
export function kernelF32Rows4(metric: i32, q: usize, rows: usize, n: i32, bound: f32, bounded: bool, out: usize): void {
  distRows4<f32, f32>(metric, q, load<u32>(rows), load<u32>(rows, 4), load<u32>(rows, 8), load<u32>(rows, 12), n, bound, bounded, out);
}

/** Raw four-row int8 kernel (rows4.ts), i32 sums to out[0..3]: 0 dot, 1 L2² (stopping once all four pass `bound`), 2 L1. */
export function kernelI8Rows4(kind: i32, q: usize, rows: usize, n: i32, bound: i32, out: usize): void {
  const a = <usize>load<u32>(rows), b = <usize>load<u32>(rows, 4), c = <usize>load<u32>(rows, 8), d = <usize>load<u32>(rows, 12);
  if (kind == 0) dotI8Rows4(q, a, b, c, d, n, out);
  else if (kind == 1) l2I8Rows4(q, a, b, c, d, n, bound, out);
  else l1I8Rows4(q, a, b, c, d, n, out);
}

/**
 * Raw binary kernel over two host buffers of bit codes, `n` bytes of `a` (a multiple of 16):
 * with bits 1 popcount(a XOR b), else Qdrant's plane-weighted popcount against `bits` planes of
 * query codes at `b` per 16-byte word of `a` (distance.ts xorPopcntPlanes).
 */
export function kernelBits(bits: i32, a: usize, b: usize, n: i32): i32 {
  return bits == 1 ? hammingBits(a, b, n) : xorPopcntPlanes(a, b, n, bits);
}

/** Raw four-row binary kernel (rows4.ts bitsRows4): kernelBits from the rows whose pointers are u32 rows[0..3] to `b`, i32 out[0..3]. */
export function kernelBitsRows4(bits: i32, b: usize, rows: usize, n: i32, out: usize): void {
  bitsRows4(bits, b, load<u32>(rows), load<u32>(rows, 4), load<u32>(rows, 8), load<u32>(rows, 12), n, out);
}

/** The graph's quantized distance from the last search's query codes to stored offset `id` (one-row kernel; dense indexes). */
export function codeDistance(id: i32): f32 { return codeDistQuery(id); }

/**
 * The same for the offsets u32 ids[0..3] at once, to f32 out[0..3], with the four-row kernel the
 * graph uses (quantize.ts codeDistRows4); false (nothing written) if the method has none.
 */
export function codeDistancesRows4(ids: usize, out: usize): bool {
  if (!codesInRows4()) return false;
  codeDistRows4(load<i32>(ids), load<i32>(ids, 4), load<i32>(ids, 8), load<i32>(ids, 12), false, Infinity, out);
  return true;
}
