// TurboQuant (Qdrant 1.18+ `turbo` quantization; docs/research/quantization.md section 3).
//
// A stored vector (as its codes encode it: quantize.ts codeSource) is zero-padded to P
// coordinates, rotated by Qdrant's deterministic randomized Hadamard transform, rescaled to
// length sqrt(P) (so each coordinate is about N(0,1)), calibrated per coordinate (TQ+:
// (x + shift) * scale, fitted on the stored vectors) and each coordinate replaced by the nearest
// Lloyd-Max centroid for N(0,1) at 4, 2 or 1 bits (1.5 bits: 1 bit over P = 3d/2 coordinates).
// A code record is the packed indices (LSB first, zero-padded to 16-byte blocks) followed by
// f32 extras: `scaling` = length / norm of the TQ+-reverted centroids (the length is 1 for Cosine;
// Manhattan keeps the length itself), then for Euclid the length. The per-vector `xm` term Qdrant
// also stores serves only its symmetric (code-to-code) scoring, which Quiver never does: graphs
// are linked with the stored f32 vectors (turbo4 storage, which has none, links on a decoded
// record scored asymmetrically: turbo4.ts).
//
// Scoring is asymmetric, as in Qdrant: the query is rotated the same way, divided by the TQ+
// scales, and dot = sum q_i * centroid(idx_i) + qm (qm = sum q_i * -shift_i) estimates the dot
// product with the reverted centroids. As Qdrant's SIMD kernels do, the rotated query is held as
// i16 (|q| <= 8127) and the centroids as i8 (scale 127 / the outermost centroid), so one 16-byte
// load of codes feeds i8x16.swizzle (the centroid table) and i32x4.dot_i16x8_s. Manhattan
// dequantizes, rotates back and takes L1, as Qdrant does.
//
// Bits are counted in halves (2: bits1, 3: bits1_5, 4: bits2, 8: bits4), so 1.5 fits an integer.
//
// Two configurations can live in one index: a turbo4 index's storage (bits4, Normal mode: its
// records are the stored vectors, turbo4.ts) and a quantization on top of it, which may be
// TurboQuant too at other bits and with TQ+ (Qdrant builds it from the dequantized turbo4
// vectors). The module state below is the active configuration's; useSide() swaps it with the
// other's when a caller of the other side comes in (a compare when it is already active, so the
// graph's inner loops, which stay on one side per pass, pay nothing more). Callers choose the
// side: turbo4.ts the storage's, the quantization's entries (quant-methods.ts, quantize.ts,
// persist.ts, the exported ones below) the quantization's. The fit state (freshShift, sample...)
// belongs to the quantization only: the storage is never calibrated.

import { safePoint } from "./pages";
import {
  EMPTY, METRIC_COSINE, METRIC_EUCLID, METRIC_MANHATTAN, dim, metric, count, levels, multi, vecBytes,
  vecPtr, multiPtr, multiCount, setCodeStride, setVecBytes, setQuantState, quantile, qAlpha, qOffset,
} from "./layout";
import { CODE_ROWS, addWork, inFitOrder } from "./fresh-codes";
import { codeSource } from "./quantize";
import { hsumi } from "./distance";

// Qdrant's rotation: three permutations (Fisher-Yates driven by Knuth's MMIX LCG), each followed by
// the chunked Walsh-Hadamard transform.
const SEED_0: u64 = 654605292835415893;
const SEED_1: u64 = 8636605637963351413;
const SEED_2: u64 = 1775280196666917949;
const LCG_A: u64 = 6364136223846793005;
const LCG_C: u64 = 1442695040888963407;

// Lloyd-Max centroids for N(0, 1), ascending (Qdrant's tables).
const CENTROIDS_1: StaticArray<f32> = [-0.7978846, 0.7978846];
const CENTROIDS_2: StaticArray<f32> = [-1.510, -0.4528, 0.4528, 1.510];
const CENTROIDS_4: StaticArray<f32> = [
  -2.733, -2.069, -1.618, -1.256, -0.9424, -0.6568, -0.3881, -0.1284,
  0.1284, 0.3881, 0.6568, 0.9424, 1.256, 1.618, 2.069, 2.733,
];

// Query and centroid integer ranges of the SIMD kernel (Qdrant's x86 query range; i8 centroids).
const QUERY_RANGE: f32 = 8127;
const CENTROID_RANGE: f32 = 127;
// Blocks of 16 code bytes summed in i32 before flushing to f32: at most 4096 coordinates, so a
// lane's sum (1024 products of at most 127 * 8127) stays inside i32.
const FLUSH_BLOCKS: i32 = 32;

// How far (in N(0, 1) units) a read-back vector's coordinates may sit from its centroids after
// the rotation's f32 rounding; centroids are at least 0.25 apart, quantization errors reach 0.13.
const GRID_TOLERANCE: f32 = 1e-3;

// Vectors the TQ+ calibration is fitted on (Qdrant: the first 10 000), and the sample's value
// budget: 1 MB of rotated coordinates, so fitting never grows the linear memory by more (it never
// shrinks), at the price of fewer vectors when P > 26.
const FIT_VECTORS: i32 = 10000;
const FIT_VALUES: i32 = 1 << 18;

/** How many stored vectors the calibration is fitted on: refitting past that count changes nothing. */
export function turboFitLimit(): i32 { useSide(SIDE_QUANT); return min(FIT_VECTORS, max(FIT_VALUES / padded, 1)); }

let halfBits: i32 = 8;
let bitsPer: i32 = 4;     // stored bits per coordinate
let padded: i32 = 0;      // P
let codeBytes: i32 = 0;   // packed indices, padded to 16-byte blocks
let coords: i32 = 0;      // coordinates the code blocks hold (>= P)
let perms: usize = 0;     // u32[3 * P]: the permutations, as gathers x'[i] = x[perm[i]]
let shift: usize = 0;     // f32[P]: TQ+ shift
let scale: usize = 0;     // f32[P]: TQ+ scale
let work: usize = 0;      // f32[coords]: the vector being rotated
let spare: usize = 0;     // f32[coords]: gather target
let lut: v128 = i8x16.splat(0); // centroids as i8 (CENTROID_RANGE / outermost centroid)
let lutScale: f32 = 1;

// Prepared queries, one slot each: f32 factor (1 / the two integer scales), f32 qm, f32 |q|^2,
// u32 where the f32 query row is (Manhattan), then i16[coords] grouped as the kernel reads them.
const SLOT_HEADER: usize = 16;
let slots: usize = 0;
let slotCap: i32 = 0;

// The configurations' states: the active one lives in the globals above, the other here.
export const SIDE_QUANT: i32 = 0;
export const SIDE_STORAGE: i32 = 1;
class TurboState {
  halfBits: i32 = 8; bitsPer: i32 = 4; padded: i32 = 0; codeBytes: i32 = 0; coords: i32 = 0;
  perms: usize = 0; shift: usize = 0; scale: usize = 0; work: usize = 0; spare: usize = 0;
  lutLow: u64 = 0; lutHigh: u64 = 0; lutScale: f32 = 1; slots: usize = 0; slotCap: i32 = 0;
}
let side: i32 = SIDE_QUANT;
let parked: TurboState | null = null; // the inactive side's state

/** Makes side `s`'s configuration the active one (SIDE_QUANT or SIDE_STORAGE). */
@inline export function useSide(s: i32): void {
  if (s != side) swapSides(s);
}

function swapSides(s: i32): void {
  if (parked === null) parked = new TurboState();
  const p = parked!;
  const h = halfBits, b = bitsPer, pd = padded, cb = codeBytes, co = coords, pe = perms, sh = shift, sc = scale;
  const w = work, sp = spare, lo = i64x2.extract_lane(lut, 0), hi = i64x2.extract_lane(lut, 1), ls = lutScale, sl = slots, sx = slotCap;
  halfBits = p.halfBits; bitsPer = p.bitsPer; padded = p.padded; codeBytes = p.codeBytes; coords = p.coords;
  perms = p.perms; shift = p.shift; scale = p.scale; work = p.work; spare = p.spare;
  lut = i64x2.replace_lane(i64x2.splat(p.lutLow), 1, p.lutHigh); lutScale = p.lutScale; slots = p.slots; slotCap = p.slotCap;
  p.halfBits = h; p.bitsPer = b; p.padded = pd; p.codeBytes = cb; p.coords = co; p.perms = pe; p.shift = sh; p.scale = sc;
  p.work = w; p.spare = sp; p.lutLow = lo; p.lutHigh = hi; p.lutScale = ls; p.slots = sl; p.slotCap = sx;
  side = s;
}

export function setTurboBits(h: i32): void { useSide(SIDE_QUANT); halfBits = h; }
export function turboBits(): i32 { useSide(SIDE_QUANT); return halfBits; }
export function turboPadded(): i32 { useSide(SIDE_QUANT); return padded; }
export function turboShiftPtr(): usize { useSide(SIDE_QUANT); return shift; }
export function turboScalePtr(): usize { useSide(SIDE_QUANT); return scale; }

@inline function centroids(): StaticArray<f32> {
  return bitsPer == 4 ? CENTROIDS_4 : bitsPer == 2 ? CENTROIDS_2 : CENTROIDS_1;
}

/** Centroid `i` of the quantization's bit width. */
export function turboCentroid(i: i32): f32 { useSide(SIDE_QUANT); return centroids()[i]; }

/** Qdrant's padded dimension for the bit width. */
function paddedDim(d: i32, h: i32): i32 {
  if (h == 8) return (d + 1) & ~1;
  if (h == 4) return (d + 3) & ~3;
  if (h == 2) return (d + 7) & ~7;
  return ((3 * d) / 2 + 7) & ~7;
}

/** Sets up the quantization's rotation, codebook and code layout for the index's dim and the configured bits. */
export function turboConfigure(): void {
  useSide(SIDE_QUANT);
  abandonTurboFit(); // its regions are sized by P
  setCodeStride(configureActive());
}

/** Sets up the turbo4 storage's configuration (bits4, never calibrated) and the stored vectors' size. */
export function turboConfigureStorage(): void {
  useSide(SIDE_STORAGE);
  halfBits = 8;
  setVecBytes(<usize>configureActive());
}

/** Sets up the active configuration for its bits; returns the bytes of one record. */
function configureActive(): i32 {
  bitsPer = halfBits == 8 ? 4 : halfBits == 4 ? 2 : 1;
  padded = paddedDim(dim, halfBits);
  codeBytes = (((padded * bitsPer) >> 3) + 15) & ~15;
  coords = (codeBytes << 3) / bitsPer;
  if (perms != 0) { heap.free(perms); heap.free(shift); heap.free(scale); heap.free(work); heap.free(spare); }
  perms = heap.alloc(<usize>padded * 12);
  buildPermutation(perms, SEED_0);
  buildPermutation(perms + (<usize>padded << 2), SEED_1);
  buildPermutation(perms + (<usize>padded << 3), SEED_2);
  shift = heap.alloc(<usize>padded << 2);
  scale = heap.alloc(<usize>padded << 2);
  resetCalibration();
  work = heap.alloc(<usize>coords << 2);
  spare = heap.alloc(<usize>coords << 2);
  const table = centroids();
  lutScale = CENTROID_RANGE / table[table.length - 1];
  const bytes = heap.alloc(16);
  memory.fill(bytes, 0, 16);
  for (let i = 0; i < table.length; i++) store<i8>(bytes + <usize>i, <i8>nearest<f32>(table[i] * lutScale));
  lut = v128.load(bytes);
  heap.free(bytes);
  return codeBytes + (metric == METRIC_EUCLID ? 8 : 4);
}

function resetCalibration(): void {
  for (let i = 0; i < padded; i++) {
    store<f32>(shift + (<usize>i << 2), 0);
    store<f32>(scale + (<usize>i << 2), 1);
  }
}

/** Fisher-Yates with the MMIX LCG, replayed on indices: x'[i] = x[perm[i]]. */
function buildPermutation(perm: usize, seed: u64): void {
  for (let i = 0; i < padded; i++) store<u32>(perm + (<usize>i << 2), i);
  let state = seed;
  for (let i = padded - 1; i >= 1; i--) {
    state = state * LCG_A + LCG_C;
    const j = <i32>((state >> 32) % <u64>(i + 1));
    const a = load<u32>(perm + (<usize>i << 2));
    store<u32>(perm + (<usize>i << 2), load<u32>(perm + (<usize>j << 2)));
    store<u32>(perm + (<usize>j << 2), a);
  }
}

/** Unnormalised in-place Walsh-Hadamard transform of the n (a power of two) floats at p, then * 1/sqrt(n). */
function wht(p: usize, n: i32): void {
  for (let h = 1; h < n; h <<= 1) {
    if (h >= 4) {
      for (let i = 0; i < n; i += h << 1) {
        for (let j = i; j < i + h; j += 4) {
          const pa = p + (<usize>j << 2);
          const pb = pa + (<usize>h << 2);
          const a = v128.load(pa);
          const b = v128.load(pb);
          v128.store(pa, f32x4.add(a, b));
          v128.store(pb, f32x4.sub(a, b));
        }
      }
    } else {
      for (let i = 0; i < n; i += h << 1) {
        for (let j = i; j < i + h; j++) {
          const pa = p + (<usize>j << 2);
          const pb = pa + (<usize>h << 2);
          const a = load<f32>(pa);
          const b = load<f32>(pb);
          store<f32>(pa, a + b);
          store<f32>(pb, a - b);
        }
      }
    }
  }
  const norm: f32 = 1 / Mathf.sqrt(<f32>n);
  if (n >= 4) {
    const s = f32x4.splat(norm);
    for (let i = 0; i < n; i += 4) v128.store(p + (<usize>i << 2), f32x4.mul(v128.load(p + (<usize>i << 2)), s));
  } else {
    for (let i = 0; i < n; i++) store<f32>(p + (<usize>i << 2), load<f32>(p + (<usize>i << 2)) * norm);
  }
}

/** The WHT over P's chunks: its binary decomposition, largest power of two first. */
function whtChunks(p: usize): void {
  let at = 0;
  for (let b = 31; b >= 0; b--) {
    const n = 1 << b;
    if ((padded & n) == 0) continue;
    wht(p + (<usize>at << 2), n);
    at += n;
  }
}

function permute(p: usize, k: i32): void {
  const perm = perms + (<usize>(k * padded) << 2);
  for (let i = 0; i < padded; i++) store<f32>(spare + (<usize>i << 2), load<f32>(p + (<usize>load<u32>(perm + (<usize>i << 2)) << 2)));
  memory.copy(p, spare, <usize>padded << 2);
}

function unpermute(p: usize, k: i32): void {
  const perm = perms + (<usize>(k * padded) << 2);
  for (let i = 0; i < padded; i++) store<f32>(spare + (<usize>load<u32>(perm + (<usize>i << 2)) << 2), load<f32>(p + (<usize>i << 2)));
  memory.copy(p, spare, <usize>padded << 2);
}

/** Qdrant's rotation of the P floats at p (the quantization's P), in place. */
export function turboRotate(p: usize): void {
  useSide(SIDE_QUANT);
  rotate(p);
}

/** Qdrant's rotation of the P floats at p, in place: W, then (permute, W) for each seed. */
function rotate(p: usize): void {
  whtChunks(p);
  for (let k = 0; k < 3; k++) {
    permute(p, k);
    whtChunks(p);
  }
}

/** The inverse rotation (each normalised W is its own inverse). */
export function turboRotateBack(p: usize): void {
  for (let k = 2; k >= 0; k--) {
    whtChunks(p);
    unpermute(p, k);
  }
  whtChunks(p);
}

/** Copies the dim floats at src to `work`, zero-padded, and rotates them. */
function rotateInto(src: usize): void {
  memory.copy(work, src, <usize>dim << 2);
  memory.fill(work + (<usize>dim << 2), 0, <usize>(coords - dim) << 2);
  rotate(work);
}

/** sqrt of the sum of squares of the P floats at p, summed in f64. */
function length(p: usize): f32 {
  let sum: f64 = 0;
  for (let i = 0; i < padded; i++) {
    const x = <f64>load<f32>(p + (<usize>i << 2));
    sum += x * x;
  }
  return <f32>Math.sqrt(sum);
}

/** `work` rescaled to length sqrt(P) (Cosine vectors have length 1 as stored); returns the length used. */
function rescaleWork(): f32 {
  const l2: f32 = metric == METRIC_COSINE ? 1 : length(work);
  if (l2 > 0) {
    const f = f32x4.splat(Mathf.sqrt(<f32>padded) / l2);
    for (let i = 0; i < padded; i += 4) v128.store(work + (<usize>i << 2), f32x4.mul(v128.load(work + (<usize>i << 2)), f));
  }
  return l2;
}

/** Index of the centroid for x: the number of midpoints x is above (a tie goes to the lower one). */
@inline function nearestCentroid(x: f32, table: StaticArray<f32>): i32 {
  let idx = 0;
  for (let i = 1; i < table.length; i++) if (x > (table[i - 1] + table[i]) * 0.5) idx = i;
  return idx;
}

/** Writes the code record of the f32 vector at src (dim values, as the codes encode it) to dst. */
export function turboEncode(src: usize, dst: usize): void {
  encodeCalibrated(src, dst, shift, scale);
}

/** turboEncode with the calibration being fitted (fresh-codes.ts codes the vectors with it before it is installed). */
export function turboEncodeFresh(src: usize, dst: usize): void {
  useSide(SIDE_QUANT);
  encodeCalibrated(src, dst, freshShift, freshScale);
}

/** turboEncode with the TQ+ calibration f32[P] `shifts` and `scales`. */
function encodeCalibrated(src: usize, dst: usize, shifts: usize, scales: usize): void {
  rotateInto(src);
  const l2 = rescaleWork();
  let zero = true;
  for (let i = 0; i < padded && zero; i++) if (load<f32>(work + (<usize>i << 2)) != 0) zero = false;
  const table = centroids();
  memory.fill(dst, 0, <usize>codeBytes);
  let cnSq: f64 = 0;
  for (let i = 0; i < padded; i++) {
    const sh = load<f32>(shifts + (<usize>i << 2));
    const sc = load<f32>(scales + (<usize>i << 2));
    let x = load<f32>(work + (<usize>i << 2));
    if (!zero) x = (x + sh) * sc;
    const idx = nearestCentroid(x, table);
    const c = <f64>(table[idx] / sc - sh);
    cnSq += c * c;
    const bit = i * bitsPer;
    const at = dst + <usize>(bit >> 3);
    store<u8>(at, load<u8>(at) | <u8>(idx << (bit & 7)));
  }
  const cn: f32 = metric == METRIC_COSINE && zero ? Mathf.sqrt(<f32>padded) : <f32>Math.sqrt(cnSq);
  const extras = dst + <usize>codeBytes;
  if (metric == METRIC_MANHATTAN) {
    store<f32>(extras, side == SIDE_STORAGE && onGrid(cn, table, dst) ? l2 * Mathf.sqrt(<f32>padded) / cn : l2);
    return;
  }
  store<f32>(extras, cn > 0 ? l2 / cn : 0);
  if (metric == METRIC_EUCLID) store<f32>(extras, l2, 4);
}

/**
 * Whether `work` (a rescaled vector) is the centroids coded at `rec` times sqrt(P) / cn, up to
 * rounding: the vector is a Manhattan turbo4 vector read back (decoded as centroids times
 * length / sqrt(P)), whose own length is the record's times cn / sqrt(P). The turbo4 store then
 * keeps the record's length, so a point the shard stores again from its read-back vectors (its
 * persisted records, a snapshot's) keeps its vector instead of shrinking it. A measured vector is never on the grid: its coordinates sit up to half a centroid gap away.
 */
function onGrid(cn: f32, table: StaticArray<f32>, rec: usize): bool {
  if (cn == 0) return false;
  const f: f32 = cn / Mathf.sqrt(<f32>padded);
  const mask = (1 << bitsPer) - 1;
  for (let i = 0; i < padded; i++) {
    const bit = i * bitsPer;
    const idx = (<i32>load<u8>(rec + <usize>(bit >> 3)) >> (bit & 7)) & mask;
    if (Mathf.abs(load<f32>(work + (<usize>i << 2)) * f - table[idx]) > GRID_TOLERANCE) return false;
  }
  return true;
}

/** Makes room for `k` prepared queries. */
function ensureSlots(k: i32): void {
  if (k <= slotCap && slots != 0) return;
  if (slots != 0) heap.free(slots);
  slotCap = max(k, 1);
  slots = heap.alloc(<usize>slotCap * slotBytes());
}

@inline function slotBytes(): usize { return SLOT_HEADER + (<usize>coords << 1); }
@inline function slotPtr(i: i32): usize { return slots + <usize>i * slotBytes(); }

/** Prepares query vector `i` (dim f32 values at src, as preprocessed for the stored vectors) for turboDist. */
export function turboPrepareQuery(src: usize, i: i32, total: i32): void {
  rotateInto(src);
  prepareWork(src, i, total);
}

/**
 * Prepares stored record `rec` as query `i` (storage that keeps only records: turbo4.ts), decoded
 * straight into the rotated coordinates the estimator works in, with no rotation; for Manhattan,
 * whose distance reads the query's original coordinates, it is decoded to `row` (dim floats) and
 * prepared from there.
 */
export function turboPrepareRecord(rec: usize, row: usize, i: i32, total: i32): void {
  if (metric == METRIC_MANHATTAN) {
    turboDecode(rec, row);
    turboPrepareQuery(row, i, total);
    return;
  }
  turboDecodeRotated(rec, work);
  memory.fill(work + (<usize>padded << 2), 0, <usize>(coords - padded) << 2);
  prepareWork(row, i, total);
}

/** Fills slot `i` from the rotated query in `work` (`src`: where its original coordinates are, for Manhattan). */
function prepareWork(src: usize, i: i32, total: i32): void {
  ensureSlots(total);
  const slot = slotPtr(i);
  store<u32>(slot, <u32>src, 12);
  const ql2 = length(work);
  let qm: f64 = 0;
  let peak: f32 = 0;
  for (let j = 0; j < padded; j++) {
    const p = work + (<usize>j << 2);
    const x = load<f32>(p);
    qm -= <f64>x * <f64>load<f32>(shift + (<usize>j << 2));
    const y = x / load<f32>(scale + (<usize>j << 2));
    store<f32>(p, y);
    peak = max(peak, Mathf.abs(y));
  }
  const qScale: f32 = peak > 0 ? QUERY_RANGE / peak : 0;
  store<f32>(slot, qScale > 0 ? 1 / (qScale * lutScale) : 0);
  store<f32>(slot, <f32>qm, 4);
  store<f32>(slot, ql2 * ql2, 8);
  // The kernel reads, per 16-byte block of codes and per position s of a coordinate in its byte,
  // the 16 coordinates (block * 16 + lane) * perByte + s, lane 0..15.
  const perByte = 8 / bitsPer;
  const q16 = slot + SLOT_HEADER;
  for (let j = 0; j < coords; j++) {
    const lane = (j / perByte) & 15;
    const block = j / (perByte << 4);
    const s = j % perByte;
    const v: i16 = j < padded ? <i16>nearest<f32>(load<f32>(work + (<usize>j << 2)) * qScale) : 0;
    store<i16>(q16 + (<usize>(((block * perByte + s) << 4) + lane) << 1), v);
  }
}

/** sum q_i * centroid(idx_i) over the codes at rec, in the integer form (scaled back by the caller). */
function dotCodes(q16: usize, rec: usize): f32 {
  const perByte = 8 / bitsPer;
  const mask = i8x16.splat(<i8>(<i32>(1 << bitsPer) - 1));
  const blocks = codeBytes >> 4;
  let total: f32 = 0;
  let q = q16;
  for (let b0 = 0; b0 < blocks; b0 += FLUSH_BLOCKS) {
    let acc = i32x4.splat(0);
    const end = min(blocks, b0 + FLUSH_BLOCKS);
    for (let b = b0; b < end; b++) {
      const bytes = v128.load(rec + (<usize>b << 4));
      for (let s = 0; s < perByte; s++) {
        acc = codeStep(bytes, s, mask, q, acc);
        q += 32;
      }
    }
    total += <f32>hsumi(acc);
  }
  return total;
}

/**
 * The centroids of 16 codes (bits s * bitsPer.. of each byte of `bytes`) against query lanes at q,
 * added to acc. The bytes are shifted as i16 lanes (one instruction on x64, where an i8x16 shift
 * takes several): a high byte's bits shifted into the low byte land above the mask, so the
 * indices are the same.
 */
@inline function codeStep(bytes: v128, s: i32, mask: v128, q: usize, acc: v128): v128 {
  const c = i8x16.swizzle(lut, v128.and(i16x8.shr_u(bytes, <u32>(s * bitsPer)), mask));
  acc = i32x4.add(acc, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(c), v128.load(q)));
  return i32x4.add(acc, i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(c), v128.load(q, 16)));
}

/** Row r's dotCodes total of the four-row kernel, at rowTotals + 4r. */
const rowTotals = memory.data(16, 16);

/**
 * dotCodes for the four records at r0..r3, to rowTotals[0..3]: each query block is loaded once
 * for the four rows (their cache misses overlap), and each row's integer sums are flushed to f32
 * at the same blocks as dotCodes (integer sums are exact in any order), so the same values.
 */
function dotCodesRows4(q16: usize, r0: usize, r1: usize, r2: usize, r3: usize): void {
  const perByte = 8 / bitsPer;
  const mask = i8x16.splat(<i8>(<i32>(1 << bitsPer) - 1));
  const blocks = codeBytes >> 4;
  let t0: f32 = 0, t1: f32 = 0, t2: f32 = 0, t3: f32 = 0;
  let q = q16;
  for (let b0 = 0; b0 < blocks; b0 += FLUSH_BLOCKS) {
    let a0 = i32x4.splat(0), a1 = i32x4.splat(0), a2 = i32x4.splat(0), a3 = i32x4.splat(0);
    const end = min(blocks, b0 + FLUSH_BLOCKS);
    for (let b = b0; b < end; b++) {
      const at = <usize>b << 4;
      const x0 = v128.load(r0 + at), x1 = v128.load(r1 + at), x2 = v128.load(r2 + at), x3 = v128.load(r3 + at);
      for (let s = 0; s < perByte; s++) {
        a0 = codeStep(x0, s, mask, q, a0);
        a1 = codeStep(x1, s, mask, q, a1);
        a2 = codeStep(x2, s, mask, q, a2);
        a3 = codeStep(x3, s, mask, q, a3);
        q += 32;
      }
    }
    t0 += <f32>hsumi(a0); t1 += <f32>hsumi(a1); t2 += <f32>hsumi(a2); t3 += <f32>hsumi(a3);
  }
  store<f32>(rowTotals, t0); store<f32>(rowTotals, t1, 4); store<f32>(rowTotals, t2, 8); store<f32>(rowTotals, t3, 12);
}

/** turboDist's value from the dotCodes total `codes` of prepared query `slot` and the record at rec. */
@inline function distFromCodes(slot: usize, codes: f32, rec: usize): f32 {
  const extras = rec + <usize>codeBytes;
  const dot = codes * load<f32>(slot) + load<f32>(slot, 4);
  const scaling = load<f32>(extras);
  if (metric == METRIC_EUCLID) {
    const l2 = load<f32>(extras, 4);
    return load<f32>(slot, 8) + l2 * l2 - 2 * dot * scaling;
  }
  return -(dot * scaling);
}

/** Quantized distance (smaller is closer) between prepared query `i` and the code record at rec. */
export function turboDist(i: i32, rec: usize): f32 {
  const slot = slotPtr(i);
  if (metric == METRIC_MANHATTAN) return manhattan(<usize>load<u32>(slot, 12), rec, load<f32>(rec + <usize>codeBytes));
  return distFromCodes(slot, dotCodes(slot + SLOT_HEADER, rec), rec);
}

/** Whether turboDistRows4 serves the metric (Manhattan dequantizes each record: no table kernel). */
export function turboInRows4(): bool { return metric != METRIC_MANHATTAN; }

/** turboDist from prepared query 0 to the records at r0..r3, to f32 out[0..3], the same values four rows at a time. */
export function turboDistRows4(r0: usize, r1: usize, r2: usize, r3: usize, out: usize): void {
  const slot = slotPtr(0);
  dotCodesRows4(slot + SLOT_HEADER, r0, r1, r2, r3);
  store<f32>(out, distFromCodes(slot, load<f32>(rowTotals), r0));
  store<f32>(out, distFromCodes(slot, load<f32>(rowTotals, 4), r1), 4);
  store<f32>(out, distFromCodes(slot, load<f32>(rowTotals, 8), r2), 8);
  store<f32>(out, distFromCodes(slot, load<f32>(rowTotals, 12), r3), 12);
}

/** L1 between the query row at q and the dequantized, rotated-back vector of the record at rec. */
function manhattan(q: usize, rec: usize, l2: f32): f32 {
  const table = centroids();
  const mask = (1 << bitsPer) - 1;
  const f: f32 = l2 / Mathf.sqrt(<f32>padded);
  for (let i = 0; i < padded; i++) {
    const bit = i * bitsPer;
    const idx = (<i32>load<u8>(rec + <usize>(bit >> 3)) >> (bit & 7)) & mask;
    const c = table[idx] / load<f32>(scale + (<usize>i << 2)) - load<f32>(shift + (<usize>i << 2));
    store<f32>(work + (<usize>i << 2), c * f);
  }
  turboRotateBack(work);
  let sum: f32 = 0;
  for (let j = 0; j < dim; j++) sum += Mathf.abs(load<f32>(q + (<usize>j << 2)) - load<f32>(work + (<usize>j << 2)));
  return sum;
}

// ---- Fitting TQ+ (Qdrant's median / stddev version), in bounded steps (training.ts) ----
// Over the first turboFitLimit() stored vectors, rotated and rescaled, shift_i = -median and
// scale_i = 1 / the population stddev of coordinate i; a flat coordinate keeps 0 and 1. The
// calibration is fitted into freshShift / freshScale while the one in use scores and codes as
// before; the vectors are then coded with it (fresh-codes.ts) and both are swapped in at the end.
// A step handles at most CODE_ROWS vectors' worth of values (CODE_ROWS * P): gathering CODE_ROWS
// sample vectors, or the statistics of CODE_ROWS * P / n coordinates over the n sampled.

let freshShift: usize = 0; // f32[P]: the calibration being fitted
let freshScale: usize = 0;
let sample: usize = 0;     // f32[sampleCap * P]: the sample, rotated and rescaled, vector by vector
let column: usize = 0;     // f32[sampleCap]: one coordinate of the sample
let sampleCap: i32 = 0;
let sampled: i32 = 0;      // vectors in the sample so far
let gatherId: i32 = 0;     // the next offset (and row of its list) to sample
let gatherRow: i32 = 0;
let gathering: bool = false;
let coordAt: i32 = 0;      // the next coordinate to calibrate
let fittedOffsets: i32 = 0;

/** Starts a fit over the stored vectors (read in the fit's order, fresh-codes.ts); false when nothing is stored. */
export function beginTurboFit(): bool {
  useSide(SIDE_QUANT);
  if (count == 0) return false;
  abandonTurboFit();
  sampleCap = turboFitLimit();
  sample = heap.alloc(<usize>sampleCap * <usize>padded << 2);
  column = heap.alloc(<usize>sampleCap << 2);
  freshShift = heap.alloc(<usize>padded << 2);
  freshScale = heap.alloc(<usize>padded << 2);
  for (let i = 0; i < padded; i++) {
    store<f32>(freshShift + (<usize>i << 2), 0);
    store<f32>(freshScale + (<usize>i << 2), 1);
  }
  sampled = gatherId = gatherRow = coordAt = 0;
  gathering = true;
  fittedOffsets = count;
  return true;
}

/** One bounded step of the fit in progress; false once the calibration is fitted (nothing done). */
export function turboFitStep(): bool {
  useSide(SIDE_QUANT);
  if (gathering) {
    gatherSample();
    return true;
  }
  if (coordAt >= padded || sampled == 0) return false;
  const end = min(padded, coordAt + max(1, CODE_ROWS * padded / sampled));
  addWork(<i64>(end - coordAt) * <i64>sampled);
  for (; coordAt < end; coordAt++) calibrate(coordAt);
  return true;
}

/** Adds up to CODE_ROWS stored vectors, in offset order, to the sample; ends the gathering at the limit or the last offset. */
function gatherSample(): void {
  const end = min(sampled + CODE_ROWS, sampleCap);
  while (sampled < end && gatherId < count) {
    const id = gatherId;
    if (multi) {
      if (gatherRow < multiCount(id)) {
        addSample(multiPtr(id) + <usize>(gatherRow++) * vecBytes);
        continue;
      }
      gatherRow = 0;
    } else if (load<u8>(levels + <usize>id) != EMPTY) {
      addSample(vecPtr(id));
    }
    gatherId++;
    safePoint();
  }
  gathering = sampled < sampleCap && gatherId < count;
}

function addSample(p: usize): void {
  const src = inFitOrder(p); // a turbo4 record is decoded on the storage's side
  useSide(SIDE_QUANT);
  rotateInto(src);
  rescaleWork();
  memory.copy(sample + (<usize>sampled * <usize>padded << 2), work, <usize>padded << 2);
  sampled++;
  addWork(padded);
}

/** Fits coordinate i's shift and scale to the sample. */
function calibrate(i: i32): void {
  const n = sampled;
  let sum: f64 = 0;
  for (let r = 0; r < n; r++) {
    const x = load<f32>(sample + ((<usize>r * <usize>padded + <usize>i) << 2));
    store<f32>(column + (<usize>r << 2), x);
    sum += <f64>x;
  }
  const mean = sum / <f64>n;
  let sq: f64 = 0;
  for (let r = 0; r < n; r++) {
    const d = <f64>load<f32>(column + (<usize>r << 2)) - mean;
    sq += d * d;
  }
  const sigma = <f32>Math.sqrt(sq / <f64>n);
  if (sigma <= f32.EPSILON) return;
  store<f32>(freshShift + (<usize>i << 2), -kthSmallest(column, n, n >> 1));
  store<f32>(freshScale + (<usize>i << 2), 1 / sigma);
}

/** Makes the fitted calibration the one in use (the last step, with the codes of fresh-codes.ts). */
export function installTurboFit(): void {
  useSide(SIDE_QUANT);
  memory.copy(shift, freshShift, <usize>padded << 2);
  memory.copy(scale, freshScale, <usize>padded << 2);
  abandonTurboFit();
  setQuantState(true, quantile, qAlpha, qOffset, max(fittedOffsets, 1));
}

/** Frees the fit's regions (installed, or given up when the method or the bits change). */
export function abandonTurboFit(): void {
  if (sample == 0) return;
  heap.free(sample);
  heap.free(column);
  heap.free(freshShift);
  heap.free(freshScale);
  sample = column = freshShift = freshScale = 0;
  gathering = false;
}

// Persisted form (a trailing section of the image, only for turbo): shift f32[P], scale f32[P],
// then the half-bits word last, so a reader finds it from the image's end.

export function turboTrailerBytes(): usize { useSide(SIDE_QUANT); return (<usize>padded << 3) + 4; }

export function turboWriteTrailer(p: usize): void {
  useSide(SIDE_QUANT);
  memory.copy(p, shift, <usize>padded << 2);
  memory.copy(p + (<usize>padded << 2), scale, <usize>padded << 2);
  store<u32>(p + (<usize>padded << 3), halfBits);
}

/** Configures from the half-bits word ending an image of `len` bytes at src; false if it is not one. */
export function turboRestoreBits(src: usize, len: usize): bool {
  if (len < 4) return false;
  const h = <i32>load<u32>(src + len - 4);
  if (h != 2 && h != 3 && h != 4 && h != 8) return false;
  setTurboBits(h);
  turboConfigure();
  return len >= turboTrailerBytes();
}

/** Reads the calibration of the trailer ending at src + len. */
export function turboReadTrailer(src: usize, len: usize): void {
  useSide(SIDE_QUANT);
  const p = src + len - turboTrailerBytes();
  memory.copy(shift, p, <usize>padded << 2);
  memory.copy(scale, p + (<usize>padded << 2), <usize>padded << 2);
}

/** k-th smallest of buf[0..n) (quickselect, reorders buf). */
function kthSmallest(buf: usize, n: i32, k: i32): f32 {
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

// Decoding, for storage that keeps only the codes (the turbo4 datatype, turbo4.ts): a record read
// back as the vector it stands for. Dot, Cosine and Euclid scale the TQ+-reverted centroids by
// `scaling` (length / centroid norm), the vector the asymmetric score measures against (its length
// is the stored one); Manhattan by length / sqrt(P), as its dequantization does.

/** Writes the P rotated-domain values record `rec` stands for to `out`. */
function turboDecodeRotated(rec: usize, out: usize): void {
  const table = centroids();
  const mask = (1 << bitsPer) - 1;
  const extra = load<f32>(rec + <usize>codeBytes);
  const f: f32 = metric == METRIC_MANHATTAN ? extra / Mathf.sqrt(<f32>padded) : extra;
  for (let i = 0; i < padded; i++) {
    const bit = i * bitsPer;
    const idx = (<i32>load<u8>(rec + <usize>(bit >> 3)) >> (bit & 7)) & mask;
    const c = table[idx] / load<f32>(scale + (<usize>i << 2)) - load<f32>(shift + (<usize>i << 2));
    store<f32>(out + (<usize>i << 2), c * f);
  }
}

/** Writes the dim values record `rec` stands for, rotated back to the original coordinates, to `out`. */
export function turboDecode(rec: usize, out: usize): void {
  turboDecodeRotated(rec, work);
  memory.fill(work + (<usize>padded << 2), 0, <usize>(coords - padded) << 2);
  turboRotateBack(work);
  memory.copy(out, work, <usize>dim << 2);
}
