// Product quantization (Qdrant's `product` quantization_config). Each vector, in stored dimension
// order, is cut into chunks of `bucket` dimensions ([0, b), [b, 2b), ...; the last may be shorter;
// bucket = 1, 2, 4, 8, 16 for compression x4 .. x64). Every chunk has its own 256 centroids, found
// by k-means on a sample of the stored vectors, and a vector's code is one byte per chunk: the
// index of the centroid nearest (squared L2, whatever the distance, first minimum wins) to its
// sub-vector. A query is scored asymmetrically: a lookup table holds, per chunk, its distance to
// each of the 256 centroids (-dot for Cosine and Dot, squared L2 for Euclid, L1 for Manhattan, the
// engine's smaller-is-closer form), and a stored vector's distance is the sum of its chunks'
// entries, so it estimates the distance to the vector rebuilt from its centroids.
//
// Training follows Qdrant's encoded_vectors_pq: with n <= 256 vectors the centroids are the vectors
// themselves (centroid k = vector k, the rest zero); otherwise a sample of min(n, 10000) vectors,
// drawn uniformly and kept in storage order, seeds k-means with its first 256 sub-vectors, and each
// chunk runs at most KMEANS_MAX_ITERATIONS rounds (assign to the nearest centroid, move each to the
// mean of its members in f64, refill an empty one with a random sample sub-vector) until the
// centroids move less than 1e-5 in all (sum of absolute changes). The sample and the refills draw
// from the index's generator, so the same inserts give the same codebook.
//
// When: Qdrant trains when the optimizer builds a segment, and so does Quiver (training.ts): a fit
// runs in bounded steps (productFitStep: gathering a group of chunks' sub-vectors, or one k-means
// round of one chunk) into a separate codebook, `fresh`, while the codebook in use and every code
// stay as they are; the vectors are then coded with `fresh` into the second code region
// (fresh-codes.ts) and both are swapped in at the end, so searches and stores between steps see
// one consistent codebook. The sample is kept as offsets (and rows), not pointers, since stores
// between steps may move the vectors. It is fitted again whenever the number of stored offsets
// doubles, until a fit has seen at least KMEANS_SAMPLE of them (later vectors are only encoded).
// The dimension order chosen for early abandoning (permute.ts) changes the chunks: a fit that
// chooses it reads the sample in that order (fresh-codes.ts inFitOrder) and the order is applied
// when the fit is installed.

// Memory: codebook f32[dim * 256], laid out dimension-major (value of stored dimension j in
// centroid k at j * 256 + k), so one SIMD step measures four centroids at once; the lookup table
// f32[queries * chunks * 256] (one table per query vector for multivectors).

import { safePoint } from "./pages";
import {
  EMPTY, METRIC_EUCLID, METRIC_MANHATTAN, dim, metric, count, stride, vecBytes, levels, quantized, trainedAt,
  multi, vecPtr, multiPtr, multiCount, mvCount, nextRandom, setQuantMethod,
  setQuantState, setCodeStride, reserveCodes, QM_PRODUCT, qMethod,
} from "./layout";
import { addWork, inFitOrder } from "./fresh-codes";
import { abandonTraining } from "./training";

const CENTROIDS: i32 = 256;
const KMEANS_SAMPLE: i32 = 10000;
const KMEANS_MAX_ITERATIONS: i32 = 100;
const KMEANS_ACCURACY: f64 = 1e-5;
// Floats gathered at once while training: chunks are trained a group at a time, so the sample's
// sub-vectors never take more than 4 MiB whatever the dimension.
const GATHER_FLOATS: i32 = 1 << 20;

let bucket: i32 = 0;   // dimensions per chunk
let chunks: i32 = 0;   // ceil(dim / bucket): code bytes per vector
let codebook: usize = 0;
let lut: usize = 0;    // f32[lutCap * chunks * 256]
let lutCap: i32 = 0;

/** Dimensions per chunk (0 before product quantization is enabled). */
export function productBucket(): i32 { return bucket; }

/** Where the codebook is (f32[dim * 256], dimension-major) and its size in bytes. */
export function codebookPtr(): usize { return codebook; }
export function codebookBytes(): usize { return <usize>dim * <usize>CENTROIDS * 4; }

/** Chooses the chunk size and allocates the codebook; codes stay empty until a fit. */
function setBucket(b: i32): void {
  bucket = b;
  chunks = (dim + b - 1) / b;
  setQuantMethod(QM_PRODUCT);
  setCodeStride(chunks);
  if (codebook == 0) codebook = heap.alloc(codebookBytes());
  memory.fill(codebook, 0, codebookBytes());
}

/**
 * Turns on product quantization with `b` dimensions per chunk. Nothing is fitted here: the fit is
 * due (trainedAt 0) and runs where fits run (training.ts); a fit of the method in use before is
 * given up.
 */
export function enableProductQuantization(b: i32): void {
  abandonTraining();
  setBucket(b);
  setQuantState(true, 1, 1, 0, 0);
  reserveCodes();
}

/** Whether the codebook is due a fit: never fitted, or the stored offsets doubled since (up to KMEANS_SAMPLE). */
export function productRefitDue(): bool {
  return trainedAt == 0 || (trainedAt < KMEANS_SAMPLE && count >= trainedAt * 2);
}

// ---- Sampling -----------------------------------------------------------------------------

let pickedIds: usize = 0;  // i32[sampled]: offsets of the sampled vectors, in storage order
let pickedRows: usize = 0; // i32[sampled]: their rows (multivectors; 0 otherwise)
let pickedCap: i32 = 0;

/** Stored vectors (every vector of every list for multivectors). */
function vectorTotal(): i32 {
  let n = 0;
  for (let id = 0; id < count; id++) {
    if (multi) n += <i32>load<u32>(mvCount + (<usize>id << 2));
    else if (load<u8>(levels + <usize>id) != EMPTY) n++;
  }
  return n;
}

/** Picks `s` of the `n` stored vectors uniformly (selection sampling keeps storage order). */
function pick(n: i32, s: i32): void {
  if (s > pickedCap) {
    if (pickedIds != 0) { heap.free(pickedIds); heap.free(pickedRows); }
    pickedIds = heap.alloc(<usize>s << 2);
    pickedRows = heap.alloc(<usize>s << 2);
    pickedCap = s;
  }
  let seen = 0, taken = 0;
  for (let id = 0; id < count && taken < s; id++) {
    const k = multi ? multiCount(id) : (load<u8>(levels + <usize>id) != EMPTY ? 1 : 0);
    for (let v = 0; v < k && taken < s; v++) {
      const take = s == n || <i32>(nextRandom() % <u64>(n - seen)) < s - taken;
      seen++;
      if (!take) continue;
      store<i32>(pickedIds + (<usize>taken << 2), id);
      store<i32>(pickedRows + (<usize>(taken++) << 2), v);
    }
  }
}

/** Where sampled vector `i` is stored now (a list replaced meanwhile by a shorter one gives its last row). */
function sampledPtr(i: i32): usize {
  const id = load<i32>(pickedIds + (<usize>i << 2));
  if (!multi) return vecPtr(id);
  const row = min(load<i32>(pickedRows + (<usize>i << 2)), max(multiCount(id) - 1, 0));
  return multiPtr(id) + <usize>row * vecBytes;
}

// ---- Training -----------------------------------------------------------------------------

let fresh: usize = 0;    // f32[dim * 256]: the codebook being fitted (dimension-major, as `codebook`)
let gathered: usize = 0; // f32: a group of chunks' sub-vectors, chunk-major, each chunk [s][width]
let assign: usize = 0;   // u8[s]
let sums: usize = 0;     // f64[256 * bucket]
let members: usize = 0;  // i32[256]

// The fit in progress (see the header): its sample size, the offsets it was drawn from, the
// gathered group of chunks [groupFirst, groupLast), the chunk being fitted and its k-means round
// (-1: not seeded yet).
let sampled: i32 = 0;
let fittedOffsets: i32 = 0;
let groupSize: i32 = 0;
let groupFirst: i32 = 0;
let groupLast: i32 = 0;
let chunkAt: i32 = 0;
let round: i32 = -1;

@inline function chunkWidth(c: i32): i32 { return min(bucket, dim - c * bucket); }

/**
 * Starts a fit over the stored vectors (read in the fit's order, fresh-codes.ts); false when
 * nothing is stored. Draws the sample (the index's generator).
 */
export function beginProductFit(): bool {
  const n = vectorTotal();
  if (n == 0) return false;
  const s = min(n, KMEANS_SAMPLE);
  pick(n, s);
  if (fresh == 0) fresh = heap.alloc(codebookBytes());
  memory.fill(fresh, 0, codebookBytes());
  groupSize = min(max(1, GATHER_FLOATS / (s * bucket)), chunks);
  gathered = heap.alloc(<usize>groupSize * <usize>s * <usize>bucket << 2);
  assign = heap.alloc(<usize>s);
  sums = heap.alloc(<usize>CENTROIDS * <usize>bucket << 3);
  members = heap.alloc(<usize>CENTROIDS << 2);
  sampled = s;
  fittedOffsets = count;
  groupFirst = groupLast = chunkAt = 0;
  round = -1;
  return true;
}

/**
 * One bounded step of the fit in progress: gathering the next group of chunks, or seeding or one
 * k-means round of the current chunk. False once every chunk's centroids are fitted (nothing done).
 */
export function productFitStep(): bool {
  if (chunkAt >= chunks) return false;
  if (chunkAt >= groupLast) {
    groupFirst = chunkAt;
    groupLast = min(chunkAt + groupSize, chunks);
    gather(sampled, groupFirst, groupLast);
    return true;
  }
  const xs = gathered + ((<usize>(chunkAt - groupFirst) * <usize>sampled * <usize>bucket) << 2);
  addWork(<i64>sampled * <i64>chunkWidth(chunkAt));
  if (sampled <= CENTROIDS) {
    seedCentroids(xs, sampled, chunkAt);
    chunkAt++;
  } else {
    if (round < 0) {
      seedKmeans(xs, chunkAt);
      round = 0;
    }
    const settled = kmeansRound(xs, sampled, chunkAt);
    if (settled || ++round >= KMEANS_MAX_ITERATIONS) {
      chunkAt++;
      round = -1;
    }
  }
  return true;
}

/** Writes the code of the vector at `src` (in the fit's order) with the codebook being fitted. */
export function productEncodeFresh(src: usize, dst: usize): void {
  encodeWith(fresh, src, dst);
}

/** Makes the fitted codebook the one in use (the last step, with the codes of fresh-codes.ts). */
export function installProductFit(): void {
  memory.copy(codebook, fresh, codebookBytes());
  abandonProductFit();
  setQuantState(true, 1, 1, 0, max(fittedOffsets, 1));
}

/** Frees the fit's scratch regions (installed, or given up when the method changes). */
export function abandonProductFit(): void {
  if (gathered == 0) return;
  heap.free(gathered);
  heap.free(assign);
  heap.free(sums);
  heap.free(members);
  gathered = 0;
}

/** Copies the sampled vectors' sub-vectors of chunks [first, last) (in the fit's order) into `gathered`. */
function gather(s: i32, first: i32, last: i32): void {
  for (let i = 0; i < s; i++) {
    const src = inFitOrder(sampledPtr(i));
    for (let c = first; c < last; c++) {
      const w = chunkWidth(c);
      const dst = gathered + ((<usize>(c - first) * <usize>s * <usize>bucket + <usize>i * <usize>w) << 2);
      memory.copy(dst, src + (<usize>(c * bucket) << 2), <usize>w << 2);
    }
    safePoint();
  }
  addWork(<i64>s * <i64>dim);
}

/** Centroid k of chunk c in the codebook being fitted := the sub-vector at `x` (width w). */
@inline function setCentroid(c: i32, k: i32, x: usize, w: i32): void {
  const base = fresh + ((<usize>(c * bucket) * <usize>CENTROIDS + <usize>k) << 2);
  for (let j = 0; j < w; j++) store<f32>(base + ((<usize>j * <usize>CENTROIDS) << 2), load<f32>(x + (<usize>j << 2)));
}

/** n <= 256 vectors: each is its own centroid (the rest stay zero). */
function seedCentroids(xs: usize, s: i32, c: i32): void {
  const w = chunkWidth(c);
  for (let k = 0; k < s; k++) setCentroid(c, k, xs + ((<usize>k * <usize>w) << 2), w);
}

/** k-means starts from the sample's first 256 sub-vectors. */
function seedKmeans(xs: usize, c: i32): void {
  const w = chunkWidth(c);
  for (let k = 0; k < CENTROIDS; k++) setCentroid(c, k, xs + ((<usize>k * <usize>w) << 2), w);
}

/** One k-means round of chunk c (assign, then move each centroid to its members' mean); true once the centroids settled. */
function kmeansRound(xs: usize, s: i32, c: i32): bool {
  const w = chunkWidth(c);
  const j0 = c * bucket;
  memory.fill(sums, 0, <usize>CENTROIDS * <usize>w << 3);
  memory.fill(members, 0, <usize>CENTROIDS << 2);
  for (let i = 0; i < s; i++) {
    const x = xs + ((<usize>i * <usize>w) << 2);
    const k = nearest(fresh, x, j0, w);
    store<u8>(assign + <usize>i, <u8>k);
    const at = members + (<usize>k << 2);
    store<i32>(at, load<i32>(at) + 1);
    for (let j = 0; j < w; j++) {
      const sp = sums + ((<usize>k * <usize>w + <usize>j) << 3);
      store<f64>(sp, load<f64>(sp) + <f64>load<f32>(x + (<usize>j << 2)));
    }
  }
  let moved: f64 = 0;
  for (let k = 0; k < CENTROIDS; k++) {
    const m = load<i32>(members + (<usize>k << 2));
    const refill = m == 0 ? xs + ((<usize>(nextRandom() % <u64>s) * <usize>w) << 2) : 0;
    for (let j = 0; j < w; j++) {
      const at = fresh + ((<usize>(j0 + j) * <usize>CENTROIDS + <usize>k) << 2);
      const next: f32 = m == 0 ? load<f32>(refill + (<usize>j << 2)) : <f32>(load<f64>(sums + ((<usize>k * <usize>w + <usize>j) << 3)) / <f64>m);
      moved += Math.abs(<f64>next - <f64>load<f32>(at));
      store<f32>(at, next);
    }
  }
  return moved < KMEANS_ACCURACY;
}

let dists: usize = 0; // f32[256]: a sub-vector's squared distance to each centroid of its chunk

/**
 * Index of the centroid of `book` nearest (squared L2) to the sub-vector at `x` of width `w` whose
 * chunk's first dimension is j0; ties go to the lowest index. The distances to four centroids take one
 * SIMD step per dimension, dimensions are taken four at a time (their values splatted once per
 * block), and the terms are added in dimension order, as a scalar sum would.
 */
function nearest(book: usize, x: usize, j0: i32, w: i32): i32 {
  if (dists == 0) dists = heap.alloc(<usize>CENTROIDS << 2);
  const rowBytes = <usize>CENTROIDS << 2;
  for (let j = 0; j < w; j += 4) {
    const bw = min(4, w - j);
    const rows = book + (<usize>(j0 + j) * rowBytes);
    const xp = x + (<usize>j << 2);
    const x0 = f32x4.splat(load<f32>(xp));
    const x1 = f32x4.splat(bw > 1 ? load<f32>(xp, 4) : 0);
    const x2 = f32x4.splat(bw > 2 ? load<f32>(xp, 8) : 0);
    const x3 = f32x4.splat(bw > 3 ? load<f32>(xp, 12) : 0);
    for (let g: usize = 0; g < rowBytes; g += 16) {
      const at = rows + g;
      let d = f32x4.sub(x0, v128.load(at));
      let acc = j == 0 ? f32x4.mul(d, d) : f32x4.add(v128.load(dists + g), f32x4.mul(d, d));
      if (bw > 1) { d = f32x4.sub(x1, v128.load(at + rowBytes)); acc = f32x4.add(acc, f32x4.mul(d, d)); }
      if (bw > 2) { d = f32x4.sub(x2, v128.load(at + 2 * rowBytes)); acc = f32x4.add(acc, f32x4.mul(d, d)); }
      if (bw > 3) { d = f32x4.sub(x3, v128.load(at + 3 * rowBytes)); acc = f32x4.add(acc, f32x4.mul(d, d)); }
      v128.store(dists + g, acc);
    }
  }
  // Each lane keeps its first minimum; then the lanes are compared by value, then index.
  let best = f32x4.splat(Infinity);
  let bestIdx = i32x4(0, 1, 2, 3);
  let idx = bestIdx;
  const step = i32x4.splat(4);
  for (let g: usize = 0; g < rowBytes; g += 16) {
    const acc = v128.load(dists + g);
    const closer = f32x4.lt(acc, best);
    best = v128.bitselect(acc, best, closer);
    bestIdx = v128.bitselect(idx, bestIdx, closer);
    idx = i32x4.add(idx, step);
  }
  let b = f32x4.extract_lane(best, 0);
  let bi = i32x4.extract_lane(bestIdx, 0);
  for (let lane: u8 = 1; lane < 4; lane++) {
    const v = lane == 1 ? f32x4.extract_lane(best, 1) : lane == 2 ? f32x4.extract_lane(best, 2) : f32x4.extract_lane(best, 3);
    const vi = lane == 1 ? i32x4.extract_lane(bestIdx, 1) : lane == 2 ? i32x4.extract_lane(bestIdx, 2) : i32x4.extract_lane(bestIdx, 3);
    if (v < b || (v == b && vi < bi)) { b = v; bi = vi; }
  }
  return bi;
}

// ---- Encoding and scoring -----------------------------------------------------------------

/** Writes the code of the f32 vector at `src` (stored order, code space) to `dst`: one byte per chunk. */
export function productEncode(src: usize, dst: usize): void {
  encodeWith(codebook, src, dst);
}

/** productEncode with the centroids of `book`. */
function encodeWith(book: usize, src: usize, dst: usize): void {
  for (let c = 0; c < chunks; c++) {
    store<u8>(dst + <usize>c, <u8>nearest(book, src + (<usize>(c * bucket) << 2), c * bucket, chunkWidth(c)));
  }
}

@inline function tableBytes(): usize { return <usize>chunks * <usize>CENTROIDS << 2; }

/** Builds the lookup table of query vector `i` of `total` (its f32 values at `src`). */
export function productPrepareQuery(src: usize, i: i32, total: i32): void {
  if (total > lutCap) {
    if (lut != 0) heap.free(lut);
    lut = heap.alloc(<usize>total * tableBytes());
    lutCap = total;
  }
  buildTable(src, lut + <usize>i * tableBytes());
}

/** table[c * 256 + k] = the distance between the query's chunk c and centroid k of chunk c. */
function buildTable(q: usize, table: usize): void {
  const euclid = metric == METRIC_EUCLID, manhattan = metric == METRIC_MANHATTAN;
  for (let c = 0; c < chunks; c++) {
    const w = chunkWidth(c);
    const rows = codebook + ((<usize>(c * bucket) * <usize>CENTROIDS) << 2);
    const out = table + ((<usize>c * <usize>CENTROIDS) << 2);
    for (let g = 0; g < CENTROIDS; g += 4) {
      let acc = f32x4.splat(0);
      let p = rows + (<usize>g << 2);
      for (let j = 0; j < w; j++) {
        const qj = f32x4.splat(load<f32>(q + (<usize>(c * bucket + j) << 2)));
        const cj = v128.load(p);
        if (euclid) {
          const d = f32x4.sub(qj, cj);
          acc = f32x4.add(acc, f32x4.mul(d, d));
        } else if (manhattan) {
          acc = f32x4.add(acc, f32x4.abs(f32x4.sub(qj, cj)));
        } else {
          acc = f32x4.sub(acc, f32x4.mul(qj, cj));
        }
        p += <usize>CENTROIDS << 2;
      }
      v128.store(out + (<usize>g << 2), acc);
    }
  }
}

/** Sum over chunks of the table entry each code byte selects (four running sums, then added). */
@inline function tableSum(table: usize, code: usize): f32 {
  let s0: f32 = 0, s1: f32 = 0, s2: f32 = 0, s3: f32 = 0;
  let c = 0;
  for (; c + 4 <= chunks; c += 4) {
    const bytes = load<u32>(code + <usize>c);
    const row = table + ((<usize>c * <usize>CENTROIDS) << 2);
    s0 += load<f32>(row + ((<usize>(bytes & 0xff)) << 2));
    s1 += load<f32>(row + ((<usize>CENTROIDS + <usize>((bytes >> 8) & 0xff)) << 2));
    s2 += load<f32>(row + ((<usize>(2 * CENTROIDS) + <usize>((bytes >> 16) & 0xff)) << 2));
    s3 += load<f32>(row + ((<usize>(3 * CENTROIDS) + <usize>(bytes >> 24)) << 2));
  }
  for (; c < chunks; c++) {
    s0 += load<f32>(table + ((<usize>c * <usize>CENTROIDS + <usize>load<u8>(code + <usize>c)) << 2));
  }
  return (s0 + s1) + (s2 + s3);
}

/** Quantized distance between query vector `i` (its table) and the codes at `code`. */
@inline export function productDist(i: i32, code: usize): f32 {
  return tableSum(lut + <usize>i * tableBytes(), code);
}

// ---- Persistence (persist.ts): a trailing section, present only for product quantization ----

/** Bytes of the trailing section: bucket u32, then the codebook. */
export function productTailBytes(): usize {
  return quantized && qMethod == QM_PRODUCT ? 4 + codebookBytes() : 0;
}

export function writeProductTail(p: usize): void {
  store<u32>(p, bucket);
  memory.copy(p + 4, codebook, codebookBytes());
}

/**
 * Reads the section that ends the image at `end` (dim already set): sets the chunking and the
 * codebook; false if it does not hold a valid bucket.
 */
export function readProductTail(end: usize, len: usize): bool {
  const bytes: usize = 4 + codebookBytes();
  if (len < bytes) return false;
  const p = end - bytes;
  const b = <i32>load<u32>(p);
  if (b != 1 && b != 2 && b != 4 && b != 8 && b != 16) return false;
  setBucket(b);
  memory.copy(codebook, p + 4, codebookBytes());
  return true;
}
