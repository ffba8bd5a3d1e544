// Qdrant's two_bits and one_and_half_bits binary encodings, and its scalar query encodings for
// every binary encoding (lib/quantization encoded_vectors_binary.rs in Qdrant 1.19).
//
// Two bits per dimension j come from the z-score z = (v - mean_j) / stddev_j of the value:
// z <= -2/3 gives (0, 0), -2/3 < z < 2/3 gives (1, 0), z >= 2/3 gives (1, 1); a dimension whose
// stddev is below f32 epsilon gives (v > 0, 0). two_bits puts the first bit of dimension j at
// bit j and the second at bit dim + j; one_and_half_bits ORs the second bits of dimension pairs
// (2k, 2k + 1) into bit dim + k. The statistics (mean and sample stddev per dimension, Welford in
// f64, kept as f32) are fitted over every stored vector, as Qdrant fits them over a segment when
// it builds its quantized storage; quantize.ts refits them as the index doubles.
//
// Codes of these encodings are laid out in the vectors' original dimension order, as Qdrant's
// are: the pairs of one_and_half_bits depend on it, and the engine may store Euclid/Manhattan
// vectors in another order (permute.ts).
//
// A scalar query (4 or 8 bits per value) is first extended to the code layout (q for one_bit,
// q ++ q for two_bits, q ++ max of each pair for one_and_half_bits), then each value e becomes
// round((e + m) / delta) mod 2^B with m = max |e| and delta = 2m / (2^B - 1) (0 if delta is at
// most f32 epsilon), stored as B bit planes per 16-byte code word (distance.ts xorPopcntPlanes).

import { safePoint } from "./pages";
import {
  EMPTY, QM_BINARY, QM_BINARY2, QM_BINARY15, dim, count, levels, multi, qMethod, codeStride, queryBits, queryCodeStride,
  binaryBits, vecPtr, multiPtr, multiCount, stride, vecBytes,
} from "./layout";
import { permutation } from "./permute";
import { codeSource } from "./quantize";

const SIGMAS: f32 = 2.0 / 3.0;

let stats: usize = 0;    // f32[2 * dim]: mean of each dimension, then its stddev
let ordered: usize = 0;  // f32[dim]: a vector in original dimension order
let extended: usize = 0; // f32[2 * dim]: a query extended to the code layout

function ensureRegions(): void {
  if (stats != 0) return;
  stats = heap.alloc(<usize>dim << 3);
  memory.fill(stats, 0, <usize>dim << 3);
  ordered = heap.alloc(<usize>dim << 2);
  extended = heap.alloc(<usize>dim << 3);
}

/** The statistics region (f32 means then f32 stddevs, dim each), for persist.ts. */
export function binaryStats(): usize {
  ensureRegions();
  return stats;
}

/** Bytes of the statistics the current method keeps (0 for one_bit and int8). */
export function binaryStatsBytes(): usize {
  return needsStats() ? <usize>dim << 3 : 0;
}

@inline function needsStats(): bool {
  return qMethod == QM_BINARY2 || qMethod == QM_BINARY15;
}

/** The f32 vector at `src` in the dimension order of the codes (original order for two_bits / one_and_half_bits). */
function inCodeOrder(src: usize): usize {
  const order = permutation();
  if (order == 0 || qMethod == QM_BINARY) return src;
  for (let i = 0; i < dim; i++) {
    store<f32>(ordered + (<usize>load<u32>(order + (<usize>i << 2)) << 2), load<f32>(src + (<usize>i << 2)));
  }
  return ordered;
}

/** Fits the per-dimension mean and sample stddev over every stored vector (every vector of every list). */
export function fitBinaryStats(): void {
  ensureRegions();
  const means = heap.alloc(<usize>dim << 3);
  const m2 = heap.alloc(<usize>dim << 3);
  memory.fill(means, 0, <usize>dim << 3);
  memory.fill(m2, 0, <usize>dim << 3);
  let n = 0;
  for (let id = 0; id < count; id++) {
    if (load<u8>(levels + <usize>id) == EMPTY) continue;
    const rows = multi ? multiCount(id) : 1;
    const first = multi ? multiPtr(id) : vecPtr(id);
    for (let r = 0; r < rows; r++) {
      const v = inCodeOrder(codeSource(first + <usize>r * vecBytes));
      n++;
      for (let j = 0; j < dim; j++) {
        const x = <f64>load<f32>(v + (<usize>j << 2));
        const mean = means + (<usize>j << 3);
        const delta = x - load<f64>(mean);
        store<f64>(mean, load<f64>(mean) + delta / <f64>n);
        store<f64>(m2 + (<usize>j << 3), load<f64>(m2 + (<usize>j << 3)) + delta * (x - load<f64>(mean)));
      }
    }
    safePoint();
  }
  for (let j = 0; j < dim; j++) {
    store<f32>(stats + (<usize>j << 2), <f32>load<f64>(means + (<usize>j << 3)));
    const sd = n > 1 ? Math.sqrt(load<f64>(m2 + (<usize>j << 3)) / <f64>(n - 1)) : 0;
    store<f32>(stats + (<usize>(dim + j) << 2), <f32>sd);
  }
  heap.free(means);
  heap.free(m2);
}

@inline function setBit(dst: usize, i: i32): void {
  const p = dst + <usize>(i >> 3);
  store<u8>(p, <u32>load<u8>(p) | (1 << (i & 7)));
}

/** Writes the two_bits or one_and_half_bits code of the f32 vector at `src` (stored order) to `dst`. */
export function encodeTwoBits(src: usize, dst: usize): void {
  ensureRegions();
  const v = inCodeOrder(src);
  memory.fill(dst, 0, <usize>codeStride);
  const pairs = qMethod != QM_BINARY2;
  for (let j = 0; j < dim; j++) {
    const x = load<f32>(v + (<usize>j << 2));
    const sd = load<f32>(stats + (<usize>(dim + j) << 2));
    let first = false, second = false;
    if (sd < F32.EPSILON) {
      first = x > 0;
    } else {
      const z = (x - load<f32>(stats + (<usize>j << 2))) / sd;
      first = z > -SIGMAS;
      second = z >= SIGMAS;
    }
    if (first) setBit(dst, j);
    if (second) setBit(dst, dim + (pairs ? j >> 1 : j));
  }
}

/** Rust's f32::round of a non-negative value (half away from zero), exactly. */
@inline function roundHalfUp(x: f32): f32 {
  const r = Mathf.floor(x);
  return x - r >= 0.5 ? r + 1 : r;
}

/** Writes the scalar query code (queryBits bits per value, bit planes) of the f32 query at `src` to `dst`. */
export function encodeScalarQuery(src: usize, dst: usize): void {
  ensureRegions();
  const q = inCodeOrder(src);
  const n = binaryBits();
  memory.copy(extended, q, <usize>dim << 2);
  for (let i = dim; i < n; i++) {
    const j = i - dim;
    let e: f32;
    if (qMethod == QM_BINARY2) e = load<f32>(q + (<usize>j << 2));
    else {
      const a = load<f32>(q + (<usize>(j << 1) << 2));
      e = (j << 1) + 1 < dim ? Mathf.max(a, load<f32>(q + (<usize>((j << 1) + 1) << 2))) : a;
    }
    store<f32>(extended + (<usize>i << 2), e);
  }
  let m: f32 = 0;
  for (let i = 0; i < n; i++) m = Mathf.max(m, Mathf.abs(load<f32>(extended + (<usize>i << 2))));
  const top = (1 << queryBits) - 1;
  const lo = -m;
  const delta = (m - lo) / <f32>top;
  memory.fill(dst, 0, <usize>queryCodeStride);
  for (let i = 0; i < n; i++) {
    const scaled: f32 = delta > F32.EPSILON ? (load<f32>(extended + (<usize>i << 2)) - lo) / delta : 0;
    const code = <i32>roundHalfUp(scaled) & top; // mod 2^B
    const plane = dst + <usize>(((i >> 7) * queryBits) << 4) + <usize>((i & 127) >> 3);
    for (let b = 0; b < queryBits; b++) {
      if ((code >> b) & 1) store<u8>(plane + <usize>(b << 4), <u32>load<u8>(plane + <usize>(b << 4)) | (1 << (i & 7)));
    }
  }
}
