// The engine's state: one index per WebAssembly instance, kept in module globals and in flat
// regions of linear memory obtained from the TLSF heap. Nothing here is a managed object, so the
// hot loops never allocate and never touch a garbage collector.
//
// Memory layout (n = capacity in offsets, offsets are the shard's dense internal point numbers):
//
//   vecs      T[n * stride]            T = the datatype's element (f32, f16 bits as u16, or u8;
//                                      see element.ts); stride = dim rounded up to a multiple of
//                                      4 (16 for uint8, the width of one byte kernel step), padded
//                                      with 0. Cosine vectors are stored normalised (float32 and
//                                      float16; uint8 vectors are stored as given, as in Qdrant).
//                                      Kept in chunks of 2^chunkShift vectors, not one region: the
//                                      TLSF allocator caps one block at 1 GiB (BLOCK_MAXSIZE), less
//                                      than e.g. 200000 x 1536 float32 vectors, while wasm32 memory
//                                      reaches 4 GiB. `chunks` u32[ceil(n / 2^chunkShift)] holds the
//                                      chunk pointers; every chunk but the last is full, the last
//                                      grows by the capacity's doubling. vecPtr() is one table load
//                                      plus shifts. Paged vectors (pages.ts, Qdrant's `cold`) use
//                                      chunks of a few KiB, in memory only while used.
//   codes     i8 [n * codeStride]      int8 scalar codes (only with quantization); codeStride = dim
//                                      rounded up to 16, padded with code 0. Binary quantization
//                                      stores bits instead: codeStride = ceil(dim / 128) * 16 bytes.
//                                      Kept in chunks of 2^codeShift codes (`codeChunks`, a table as
//                                      `chunks`), for the same reason: codes of large indexes pass
//                                      1 GiB too. codePtr() is one table load plus shifts. codeShift
//                                      is rowShift, or a few KiB's worth when the codes are paged.
//   codeCorr  f32[n]                   per-vector additive term of the quantized dot product.
//   levels    u8 [n]                   top HNSW level of each offset; EMPTY (255) = never inserted.
//   links0    u32[n * (M0 + 1)]        level-0 adjacency, fixed width: [count, id_0 .. id_{M0-1}].
//                                      Paged links (pages.ts, the graph placed `cold`) are kept in
//                                      pages of 2^linkShift rows instead (`linkPages`, a table as
//                                      `chunks`), in memory only while used; links0 stays 0.
//   upper     u32[n]                   pointer to the node's upper-level block, 0 if level is 0.
//             block: u32[level * (M + 1)], level l (1..level) at (l - 1) * (M + 1): [count, ids].
//   deleted   u32[ceil(n / 32)]        bitset of deleted offsets (kept in the graph for routing,
//                                      never returned).
//   pending   u32[ceil(n / 32)]        bitset of stored but unlinked offsets: their vectors are
//                                      searched exactly until the optimizer links them.
//   visited   u8[n]                    visit tags; a search owns tag `visitTag`, so resetting the
//                                      visited set is one increment (cleared on wrap-around, every
//                                      255 searches: bytes keep the set a quarter of u32 tags' size
//                                      in the caches a search's random reads of it compete for).
//
// Scratch regions, sized by dim and by the largest ef seen: the query (f32[stride], its codes
// i8[codeStride], and for uint8 its bytes u8[stride]: Qdrant converts the query to the stored
// datatype too, so uint8 scores are integer sums), the result buffers (outIds u32[k], outDist f32[k]) and three binary heaps.
//
// Multivector mode (chosen once, before the first insert) stores a list of k >= 1 vectors per
// offset instead of one, so k can differ from point to point:
//
//   arena     T[arenaCap * stride]     the vectors of every offset, each list contiguous; in chunks
//                                      of 2^rowShift vectors (`arenaChunks`) that no list straddles
//                                      (listStart), so a list holds at most 2^rowShift vectors.
//   mvStart   u32[n]                   first arena vector of each offset.
//   mvCount   u32[n]                   vectors of each offset (0 = none stored).
//   listTable u32[n]                   paged lists only (pages.ts): each list's block while it is
//                                      in memory, 0 otherwise; such an arena has no chunks, its
//                                      positions place the lists in the page file.
//
// The vector chunks are not allocated then, and the query region holds `queryCount` vectors. A list stored
// again reuses its slot when it fits, else it is appended; vacuum() compacts the arena. With
// quantization, `codes` and `codeCorr` are indexed by arena vector (arenaCap of them) rather than
// by offset, and the query codes region holds queryCount codes with their corrections in
// queryCorrs f32[queryCount].

import { REGION_VECS, REGION_CODES, REGION_LINKS, pagedVecs, pagedCodes, pagedLinks, pageIn, markDirty, pageShiftFor, coverPages, safePoint, dropPage } from "./pages";

export const EMPTY: u8 = 255;
export const MAX_LEVEL: i32 = 16;

export const METRIC_COSINE: i32 = 0;
export const METRIC_DOT: i32 = 1;
export const METRIC_EUCLID: i32 = 2;
export const METRIC_MANHATTAN: i32 = 3;

// Datatypes (Qdrant's float32 | float16 | uint8), and log2 of their element size.
export const DT_F32: i32 = 0;
export const DT_F16: i32 = 1;
export const DT_U8: i32 = 2;
// Qdrant 1.19's `turbo4`: no elements at all. The vectors themselves are kept only as 4-bit
// TurboQuant records (turbo-quant.ts, Normal mode: no TQ+), one per vector slot of the vector
// chunks (or of the arena), vecBytes bytes each; every exact distance is taken on them (see
// turbo4.ts), and the `codes` region stays free for a quantization on top, as in Qdrant.
export const DT_T4: i32 = 3;

// Index parameters.
export let dim: i32 = 0;
export let stride: i32 = 0;
export let metric: i32 = 0;
export let M: i32 = 16;
export let M0: i32 = 32;
export let efConstruct: i32 = 100;
export let levelMult: f64 = 0;
export let dtype: i32 = DT_F32;
export let elemShift: i32 = 2;
// Bytes of one stored vector (a vector chunk's or the arena's row): stride elements, or a turbo4
// record (set by turbo4.ts once its record size is known, before anything is reserved).
export let vecBytes: usize = 0;

// Graph state.
export let capacity: i32 = 0;
export let count: i32 = 0; // one past the highest offset ever inserted
export let entryPoint: i32 = -1;
export let maxLevel: i32 = -1;
export let deletedCount: i32 = 0;
export let pendingCount: i32 = 0;
export let rng: u64 = 0x9e3779b97f4a7c15;

// Vector chunks (see the layout above). A chunk holds at most 2^CHUNK_SHIFT_MAX vectors and at
// most CHUNK_BYTES_MAX bytes (so very wide vectors get smaller chunks, far below the 1 GiB cap).
const CHUNK_SHIFT_MAX: i32 = 14;
const CHUNK_BYTES_MAX: usize = 1 << 28;
export let chunkShift: i32 = CHUNK_SHIFT_MAX;
export let chunkMask: i32 = (1 << CHUNK_SHIFT_MAX) - 1;
export let chunks: usize = 0;
// Largest room taken at once for new chunks (see growChunks): under the allocator's 1 GiB block.
const ROOM_MAX: usize = 1 << 29;
// Row chunks of the arena and of the codes: 2^rowShift rows each, sized by the widest row either
// holds (an f32 row; codes and narrower elements are no wider), and the same for both, so the
// codes of a list that sits in one arena chunk sit in one code chunk.
export let rowShift: i32 = CHUNK_SHIFT_MAX;
export let rowMask: i32 = (1 << CHUNK_SHIFT_MAX) - 1;
// Chunks of the dense codes (codePtr): rowShift's, or pages when the codes are paged (pages.ts).
export let codeShift: i32 = CHUNK_SHIFT_MAX;
export let codeMask: i32 = (1 << CHUNK_SHIFT_MAX) - 1;

// Regions.
export let levels: usize = 0;
export let links0: usize = 0;
export let linkPages: usize = 0; // u32 per page of level-0 links when they are paged
export let linkShift: i32 = 0;
export let linkMask: i32 = 0;
export let upper: usize = 0;
export let deleted: usize = 0;
export let pending: usize = 0;
export let visited: usize = 0;
export let visitTag: u32 = 0;

// Multivector state.
export let multi: bool = false;
export let arenaChunks: usize = 0; // u32 per chunk of the arena
export let arenaUsed: i32 = 0; // vectors appended so far (live or orphaned by a replacement)
export let arenaCap: i32 = 0;  // vectors the arena has room for
export let mvStart: usize = 0;
export let mvCount: usize = 0;
export let listTable: usize = 0; // u32[n]: each list's block when the lists are paged (pages.ts), 0 = not in memory
export let queryCount: i32 = 1; // vectors in the query region
export let queryCorrs: usize = 0; // f32[queryCount]: dot-product corrections of the query codes
let queryCap: i32 = 1;          // vectors the query region has room for

// Quantization state (codes live only while `quantized` is true).
export let quantized: bool = false;
export let quantile: f32 = 1;
export let codeStride: i32 = 0;
export let codeChunks: usize = 0; // u32 per chunk of the codes; 0 until codes exist
export let codeCorr: usize = 0;
export let qAlpha: f32 = 1; // value = qAlpha * code + qOffset
export let qOffset: f32 = 0;
export let trainedAt: i32 = 0; // vectors the int8 codebook was last fitted on; 0 = never
// Quantization method: int8 scalar codes, or binary (Qdrant's one_bit encoding: bit i of a code
// is set iff value i > 0, LSB first, the bit stream zero-padded to a multiple of 128 bits).
export const QM_INT8: i32 = 0;
export const QM_BINARY: i32 = 1;
// Qdrant's two_bits and one_and_half_bits encodings: 2 bits per dimension, or 1.5 (the second
// bits of dimension pairs OR-ed), thresholds from per-dimension statistics (binary-codes.ts).
export const QM_BINARY2: i32 = 2;
export const QM_BINARY15: i32 = 3;
// Product quantization (product-quant.ts): one centroid index byte per chunk of dimensions.
export const QM_PRODUCT: i32 = 4;
// TurboQuant (turbo-quant.ts): rotated Lloyd-Max codes plus per-vector f32 extras in each record.
export const QM_TURBO: i32 = 5;
export let qMethod: i32 = QM_INT8;
// Bits per value of the query codes: 1 = binarised as stored; 4 or 8 = Qdrant's scalar4bits /
// scalar8bits query encodings (binary only), `queryBits` bit planes per 16-byte code word.
export let queryBits: i32 = 1;
export let queryCodeStride: i32 = 0; // bytes of one query vector's codes
let queryCodeBytes: usize = 0;       // bytes the queryCodes region has room for

// Scratch.
export let query: usize = 0;
export let queryBytes: usize = 0; // u8[queryCap * stride]: the query converted to uint8
export let queryCodes: usize = 0;
export let queryCorr: f32 = 0;
export let outIds: usize = 0;
export let outDist: usize = 0;
export let outCap: i32 = 0;

export function setParams(d: i32, m: i32, mm: i32, efc: i32, seed: u64, dt: i32): void {
  dim = d;
  dtype = dt;
  elemShift = dt == DT_U8 ? 0 : dt == DT_F16 ? 1 : 2;
  stride = dt == DT_U8 ? (d + 15) & ~15 : (d + 3) & ~3;
  codeStride = (d + 15) & ~15;
  metric = mm;
  M = max(m, 2);
  M0 = M * 2;
  efConstruct = max(efc, 1);
  levelMult = 1.0 / Math.log(<f64>M);
  rng = seed ^ 0x9e3779b97f4a7c15;
  const vectorBytes = <usize>stride << elemShift;
  vecBytes = vectorBytes;
  chunkShift = CHUNK_SHIFT_MAX;
  while (chunkShift > 0 && (vectorBytes << chunkShift) > CHUNK_BYTES_MAX) chunkShift--;
  chunkMask = (1 << chunkShift) - 1;
  rowShift = CHUNK_SHIFT_MAX;
  while (rowShift > 0 && ((<usize>stride << 2) << rowShift) > CHUNK_BYTES_MAX) rowShift--;
  rowMask = (1 << rowShift) - 1;
  codeShift = rowShift;
  codeMask = rowMask;
  query = heap.alloc(<usize>stride << 2);
  memory.fill(query, 0, <usize>stride << 2);
  queryCodeStride = codeStride;
  queryCodes = heap.alloc(<usize>codeStride);
  memory.fill(queryCodes, 0, <usize>codeStride);
  queryCodeBytes = <usize>codeStride;
  queryBytes = heap.alloc(<usize>stride);
  memory.fill(queryBytes, 0, <usize>stride);
}

/** Sets the bytes of one stored vector (turbo4 records: turbo4.ts); only valid before the first reserve. */
export function setVecBytes(bytes: usize): void { vecBytes = bytes; }

/** Switches to multivector storage; only valid before the first reserve or insert. */
export function setMulti(): void {
  multi = true;
}

/** Makes the query region hold `k` vectors (zero-padded past dim) and returns it. */
export function setQueryCount(k: i32): usize {
  if (k > queryCap || queryCorrs == 0) {
    const n = max(k, queryCap);
    const bytes = <usize>n * <usize>stride << 2;
    heap.free(query);
    query = heap.alloc(bytes);
    memory.fill(query, 0, bytes);
    queryCap = n;
    sizeQueryCodes(true);
    heap.free(queryBytes);
    queryBytes = heap.alloc(<usize>n * <usize>stride);
    memory.fill(queryBytes, 0, <usize>n * <usize>stride);
    if (queryCorrs != 0) heap.free(queryCorrs);
    queryCorrs = heap.alloc(<usize>n << 2);
  }
  queryCount = k;
  return query;
}

/**
 * Room for `total` vectors in the arena: grown by doubling within the first chunk, then a chunk at
 * a time (chunks are separate blocks, so nothing is copied, and a large arena never asks for twice
 * its size: past 2 GiB of rows and codes that would not fit in wasm32's 4 GiB).
 */
export function reserveArena(total: i32): void {
  if (total <= arenaCap) return;
  const cap = min(max(total, max(arenaCap * 2, 1024)), (total + rowMask) & ~rowMask);
  // Paged lists have no arena in memory: the arena positions place them in the page file.
  if (!pagedVecs) arenaChunks = growChunks(arenaChunks, rowShift, arenaRowBytes(), <usize>arenaCap, <usize>cap);
  if (quantized) {
    growDenseCodes(<usize>arenaCap, <usize>cap);
    codeCorr = grow(codeCorr, <usize>arenaCap * 4, <usize>cap * 4, 0);
  }
  arenaCap = cap;
}

export function setArenaUsed(n: i32): void { arenaUsed = n; }

/** Vectors one list may hold: an arena chunk's. */
export function maxListRows(): i32 { return 1 << rowShift; }

/** Where a list of `k` vectors goes if appended at arena vector `at`: there, or the next chunk when it would straddle one. */
@inline export function listStart(at: i32, k: i32): i32 {
  return (at & rowMask) + k > (1 << rowShift) ? (at + rowMask) & ~rowMask : at;
}

/**
 * Rewrites the arena (and the codes indexed by it) with the stored lists only (drops replaced
 * slots). Lists are taken in the order they sit in the arena, so each moves down or stays: a
 * paged region is compacted in place (a list's new rows only cover rows already moved or dead,
 * whatever is written back when), a region in memory is copied to fresh chunks.
 */
export function compactArena(): void {
  // The offset whose list starts at each arena row, plus one (0: no list starts there).
  const used = <usize>max(arenaUsed, 1);
  const owner = grow(0, 0, used << 2, 0);
  for (let id = 0; id < count; id++) {
    if (multiCount(id) > 0) store<u32>(owner + (<usize>multiStart(id) << 2), id + 1);
  }
  let total = 0;
  for (let v = 0; v < arenaUsed; v++) {
    const o = <i32>load<u32>(owner + (<usize>v << 2));
    if (o == 0) continue;
    const k = multiCount(o - 1);
    total = listStart(total, k) + k;
  }
  const cap = <usize>max(total, 1);
  const rowBytes = arenaRowBytes();
  const freshArena = pagedVecs ? <usize>0 : growChunks(0, rowShift, rowBytes, 0, cap);
  const freshCodes = quantized && !pagedCodes ? growChunks(0, rowShift, <usize>codeStride, 0, cap) : 0;
  const freshCorr = quantized ? grow(0, 0, cap << 2, 0) : 0;
  let at = 0;
  for (let v = 0; v < arenaUsed; v++) {
    const o = <i32>load<u32>(owner + (<usize>v << 2));
    if (o == 0) continue;
    const id = o - 1;
    const k = multiCount(id);
    at = listStart(at, k);
    const list = multiPtr(id); // a paged list comes in from its old place
    if (!pagedVecs) memory.copy(rowAt(freshArena, at, rowBytes), list, <usize>k * rowBytes);
    if (quantized) {
      // Codes move with their vectors (they are indexed by arena vector).
      if (pagedCodes) {
        for (let j = 0; j < k; j++) memory.copy(codePtrW(at + j), codePtr(v + j), <usize>codeStride);
      } else {
        memory.copy(rowAt(freshCodes, at, <usize>codeStride), codePtr(v), <usize>k * <usize>codeStride);
      }
      memory.copy(freshCorr + (<usize>at << 2), codeCorr + (<usize>v << 2), <usize>k << 2);
    }
    store<u32>(mvStart + (<usize>id << 2), at);
    if (pagedVecs && at != v) markDirty(REGION_VECS, id); // written to its new place when it leaves
    at += k;
    safePoint();
  }
  heap.free(owner);
  if (!pagedVecs) {
    freeChunks(arenaChunks, rowShift, <usize>arenaCap);
    arenaChunks = freshArena;
  }
  if (quantized) {
    if (pagedCodes) {
      // Code pages past the compacted arena hold no live row: let them go unwritten.
      const per = <usize>1 << codeShift;
      for (let page = (cap + per - 1) >> codeShift; page < (<usize>arenaCap + per - 1) >> codeShift; page++) {
        dropPage(REGION_CODES, <i32>page);
      }
    } else {
      freeChunks(codeChunks, rowShift, <usize>arenaCap);
      codeChunks = freshCodes;
    }
    heap.free(codeCorr);
    codeCorr = freshCorr;
  }
  arenaCap = <i32>cap;
  arenaUsed = at;
}

/** Copies code rows [from, from + n) to the flat buffer at `dst` (codeStride bytes apart). */
export function readCodeRows(dst: usize, from: i32, n: i32): void {
  copyRows(dst, from, n, false);
}

/** Copies the flat buffer at `src` (codeStride bytes apart) to code rows [from, from + n). */
export function writeCodeRows(src: usize, from: i32, n: i32): void {
  copyRows(src, from, n, true);
}

/** Moves code rows [from, from + n) between the chunks and a flat buffer, a chunk's run at a time. */
function copyRows(flat: usize, from: i32, n: i32, into: bool): void {
  const bytes = <usize>codeStride;
  let row = from;
  const end = from + n;
  while (row < end) {
    const run = min(end - row, (1 << codeShift) - (row & codeMask));
    const p = into ? codePtrW(row) : codePtr(row);
    const q = flat + <usize>(row - from) * bytes;
    if (into) memory.copy(p, q, <usize>run * bytes);
    else memory.copy(q, p, <usize>run * bytes);
    row += run;
    safePoint();
  }
}

export function setCount(c: i32): void { count = c; }
export function setEntry(e: i32, l: i32): void { entryPoint = e; maxLevel = l; }
export function setDeletedCount(c: i32): void { deletedCount = c; }
export function setPendingCount(c: i32): void { pendingCount = c; }
export function setVisitTag(t: u32): void { visitTag = t; }
export function setRng(r: u64): void { rng = r; }
export function setQuantState(on: bool, q: f32, a: f32, o: f32, t: i32): void {
  quantized = on; quantile = q; qAlpha = a; qOffset = o; trainedAt = t;
}
export function setQueryCorr(c: f32): void { queryCorr = c; }

/** Chooses the code form; call before the code regions are reserved. Binary codes are bit streams in 16-byte words. */
export function setQuantMethod(m: i32): void {
  qMethod = m;
  codeStride = binaryCodes() ? ((binaryBits() + 127) >> 7) << 4 : (dim + 15) & ~15;
  setQueryBits(queryBits);
}

/** Whether the codes are one of Qdrant's binary encodings (bit streams scored by XOR). */
@inline export function binaryCodes(): bool {
  return qMethod == QM_BINARY || qMethod == QM_BINARY2 || qMethod == QM_BINARY15;
}

/** Bits of one binary code before padding: dim, 2 dim, or dim + ceil(dim / 2). */
export function binaryBits(): i32 {
  if (qMethod == QM_BINARY2) return dim << 1;
  if (qMethod == QM_BINARY15) return dim + ((dim + 1) >> 1);
  return dim;
}

/** Query codes of `bits` planes per code word (1 = as stored); sizes the query codes region. */
export function setQueryBits(bits: i32): void {
  queryBits = bits;
  queryCodeStride = codeStride * bits;
  sizeQueryCodes(false);
}

/** Makes the queryCodes region hold queryCap query codes (`fresh`: reallocate and zero it anyway). */
function sizeQueryCodes(fresh: bool): void {
  const bytes = <usize>queryCap * <usize>queryCodeStride;
  if (!fresh && bytes <= queryCodeBytes) return;
  heap.free(queryCodes);
  queryCodes = heap.alloc(bytes);
  memory.fill(queryCodes, 0, bytes);
  queryCodeBytes = bytes;
}

/** Sets the code size for a method whose codes setQuantMethod does not size (product quantization). */
export function setCodeStride(bytes: i32): void { codeStride = bytes; }

/** Grows `ptr` from `oldBytes` to `newBytes`, filling the new tail with `fill`. */
function grow(ptr: usize, oldBytes: usize, newBytes: usize, fill: u8): usize {
  const p = ptr == 0 ? heap.alloc(newBytes) : heap.realloc(ptr, newBytes);
  memory.fill(p + oldBytes, fill, newBytes - oldBytes);
  return p;
}

/** Makes room for offsets [0, n). Regions keep their contents; new slots are empty. */
export function reserve(n: i32): void {
  if (n <= capacity) return;
  const old = <usize>capacity;
  const cap = <usize>n;
  // The vectors, the largest region, come last: the allocator grows linear memory by at least
  // its current size whenever it runs out (TLSF's growMemory), so allocating the small regions
  // first keeps an up-front reserve from doubling the memory (a float16 index would otherwise
  // take as much linear memory as a float32 one).
  if (multi) {
    mvStart = grow(mvStart, old * 4, cap * 4, 0);
    mvCount = grow(mvCount, old * 4, cap * 4, 0);
    if (pagedVecs) {
      listTable = grow(listTable, old * 4, cap * 4, 0);
      coverPages(REGION_VECS, cap);
    }
  }
  levels = grow(levels, old, cap, EMPTY);
  if (pagedLinks) {
    if (linkPages == 0) { linkShift = pageShiftFor(linkRowBytes()); linkMask = (1 << linkShift) - 1; }
    linkPages = growTable(linkPages, REGION_LINKS, linkShift, old, cap);
  } else {
    links0 = grow(links0, old * (M0 + 1) * 4, cap * (M0 + 1) * 4, 0);
  }
  upper = grow(upper, old * 4, cap * 4, 0);
  deleted = grow(deleted, ((old + 31) >> 5) << 2, ((cap + 31) >> 5) << 2, 0);
  pending = grow(pending, ((old + 31) >> 5) << 2, ((cap + 31) >> 5) << 2, 0);
  visited = grow(visited, old, cap, 0);
  if (quantized && !multi) {
    growDenseCodes(old, cap);
    codeCorr = grow(codeCorr, old * 4, cap * 4, 0);
  }
  if (!multi && pagedVecs) {
    // Pages are sized once, when the table is made (a turbo4 record's size is known by then).
    if (chunks == 0) { chunkShift = pageShiftFor(vecBytes); chunkMask = (1 << chunkShift) - 1; }
    chunks = growTable(chunks, REGION_VECS, chunkShift, old, cap);
  } else if (!multi) {
    chunks = growChunks(chunks, chunkShift, vecBytes, old, cap);
  }
  capacity = n;
}

/** Grows the codes' table (rows by offset, or by arena row) from room for `old` rows to `cap`: chunks, or pages when paged. */
function growDenseCodes(old: usize, cap: usize): void {
  if (!pagedCodes) {
    codeChunks = growChunks(codeChunks, codeShift, <usize>codeStride, old, cap);
    return;
  }
  if (codeChunks == 0) { codeShift = pageShiftFor(<usize>codeStride); codeMask = (1 << codeShift) - 1; }
  codeChunks = growTable(codeChunks, REGION_CODES, codeShift, old, cap);
}

/** Grows a paged region's table (pages of 2^shift rows, none resident yet) from `old` rows to `cap`. */
function growTable(table: usize, region: i32, shift: i32, old: usize, cap: usize): usize {
  const per = <usize>1 << shift;
  const had: usize = table == 0 ? 0 : (old + per - 1) >> shift;
  const need = max((cap + per - 1) >> shift, 1);
  if (need > had || table == 0) table = grow(table, had << 2, need << 2, 0);
  coverPages(region, need);
  return table;
}

/**
 * Grows the chunked rows of table `table` (chunks of 2^shift rows of `bytes` bytes) from room for
 * `old` rows to `cap`: fills the last chunk, then adds chunks. Returns the table (it may move).
 */
function growChunks(table: usize, shift: i32, bytes: usize, old: usize, cap: usize): usize {
  const per = <usize>1 << shift;
  const had: usize = table == 0 ? 0 : (old + per - 1) >> shift;
  const need = (cap + per - 1) >> shift;
  if (need > had || table == 0) table = grow(table, had << 2, max(need, 1) << 2, 0);
  // The allocator grows linear memory by at least its current size whenever a block does not fit
  // (TLSF's growMemory), so chunks allocated one by one would double it again and again (60000
  // Fashion-MNIST vectors took 240 MB of linear memory instead of one region's 196). Taking the
  // room of every new chunk at once, then giving it back, grows it once; the chunks are carved
  // from that free block.
  let fresh: usize = 0;
  for (let c = had; c < need; c++) fresh += min(cap - (c << shift), per) * bytes;
  if (fresh > 0 && fresh < ROOM_MAX) heap.free(heap.alloc(fresh));
  for (let c = old >> shift; c < need; c++) {
    const from = c << shift;
    const have = old > from ? min(old - from, per) : 0;
    const want = min(cap - from, per);
    if (want == have) continue;
    const slot = table + (c << 2);
    store<u32>(slot, grow(<usize>load<u32>(slot), have * bytes, want * bytes, 0));
  }
  return table;
}

/** Frees the chunks of `table` (room for `cap` rows of 2^shift per chunk) and the table. */
function freeChunks(table: usize, shift: i32, cap: usize): void {
  if (table == 0) return;
  const n = (cap + (<usize>1 << shift) - 1) >> shift;
  for (let c: usize = 0; c < n; c++) {
    const chunk = <usize>load<u32>(table + (c << 2));
    if (chunk != 0) heap.free(chunk);
  }
  heap.free(table);
}

/** Row `row` of the chunked rows of `table` (rows of `bytes` bytes, 2^rowShift per chunk). */
@inline export function rowAt(table: usize, row: i32, bytes: usize): usize {
  return <usize>load<u32>(table + (<usize>(row >> rowShift) << 2)) + <usize>(row & rowMask) * bytes;
}

/** Allocates the code regions for the current capacity (first training). */
export function reserveCodes(): void {
  if (codeChunks != 0) return;
  const cap = <usize>(multi ? arenaCap : capacity);
  growDenseCodes(0, cap);
  codeCorr = grow(0, 0, cap * 4, 0);
}

export function ensureOut(k: i32): void {
  if (k <= outCap) return;
  outIds = outIds == 0 ? heap.alloc(<usize>k << 2) : heap.realloc(outIds, <usize>k << 2);
  outDist = outDist == 0 ? heap.alloc(<usize>k << 2) : heap.realloc(outDist, <usize>k << 2);
  outCap = k;
}

@inline export function vecPtr(id: i32): usize {
  let chunk = <usize>load<u32>(chunks + (<usize>(id >> chunkShift) << 2));
  // 0 only for a page of paged vectors not in memory (pages.ts); never taken otherwise.
  if (chunk == 0) chunk = pageIn(REGION_VECS, id >> chunkShift);
  return chunk + <usize>(id & chunkMask) * vecBytes;
}

/** vecPtr for a row about to be written: a paged row's page is written back when it leaves. */
@inline export function vecPtrW(id: i32): usize {
  const p = vecPtr(id);
  if (pagedVecs) markDirty(REGION_VECS, id >> chunkShift);
  return p;
}

/** Bytes of one arena vector: its elements, or its turbo4 record (turbo4.ts). */
@inline export function arenaRowBytes(): usize {
  return vecBytes;
}

/** First vector of offset `id`'s list (multivector mode); its rows are contiguous. */
@inline export function multiPtr(id: i32): usize {
  if (!pagedVecs) return rowAt(arenaChunks, <i32>load<u32>(mvStart + (<usize>id << 2)), arenaRowBytes());
  const p = <usize>load<u32>(listTable + (<usize>id << 2));
  return p != 0 ? p : pageIn(REGION_VECS, id);
}

/** multiPtr for a list about to be written in place (see vecPtrW). */
@inline export function multiPtrW(id: i32): usize {
  const p = multiPtr(id);
  if (pagedVecs) markDirty(REGION_VECS, id);
  return p;
}

@inline export function multiCount(id: i32): i32 {
  return <i32>load<u32>(mvCount + (<usize>id << 2));
}

/** First arena vector of offset `id`'s list. */
@inline export function multiStart(id: i32): i32 {
  return <i32>load<u32>(mvStart + (<usize>id << 2));
}

/** Codes of offset `id` (of arena vector `id` in multivector mode). */
@inline export function codePtr(id: i32): usize {
  let chunk = <usize>load<u32>(codeChunks + (<usize>(id >> codeShift) << 2));
  if (chunk == 0) chunk = pageIn(REGION_CODES, id >> codeShift);
  return chunk + <usize>(id & codeMask) * <usize>codeStride;
}

/** codePtr for a row about to be written (see vecPtrW). */
@inline export function codePtrW(id: i32): usize {
  const p = codePtr(id);
  if (pagedCodes) markDirty(REGION_CODES, id >> codeShift);
  return p;
}

/** Bytes of one node's level-0 links: its count and M0 ids. */
@inline export function linkRowBytes(): usize {
  return <usize>(M0 + 1) << 2;
}

@inline export function linksAt(id: i32, level: i32): usize {
  if (level == 0) {
    if (!pagedLinks) return links0 + <usize>id * linkRowBytes();
    let page = <usize>load<u32>(linkPages + (<usize>(id >> linkShift) << 2));
    if (page == 0) page = pageIn(REGION_LINKS, id >> linkShift);
    return page + <usize>(id & linkMask) * linkRowBytes();
  }
  return <usize>load<u32>(upper + (<usize>id << 2)) + <usize>(level - 1) * <usize>(M + 1) * 4;
}

/** linksAt for links about to be written (see vecPtrW); upper levels are never paged. */
@inline export function linksAtW(id: i32, level: i32): usize {
  const p = linksAt(id, level);
  if (pagedLinks && level == 0) markDirty(REGION_LINKS, id >> linkShift);
  return p;
}

@inline export function isDeleted(id: i32): bool {
  return (load<u32>(deleted + ((<usize>id >> 5) << 2)) & (1 << (id & 31))) != 0;
}

@inline export function bitSet(bits: usize, id: i32): bool {
  return (load<u32>(bits + ((<usize>id >> 5) << 2)) & (1 << (id & 31))) != 0;
}

@inline export function isPending(id: i32): bool {
  return bitSet(pending, id);
}

/** Sets or clears bit `id` of the bitset at `bits`. */
export function setBit(bits: usize, id: i32, on: bool): void {
  const p = bits + ((<usize>id >> 5) << 2);
  const mask: u32 = 1 << (id & 31);
  const word = load<u32>(p);
  store<u32>(p, on ? word | mask : word & ~mask);
}

export function setDeletedBit(id: i32, on: bool): void {
  setBit(deleted, id, on);
}

/** splitmix64: a small deterministic generator, so an index built twice is the same graph. */
export function nextRandom(): u64 {
  rng += 0x9e3779b97f4a7c15;
  let z = rng;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

/** Uniform in (0, 1]. */
export function nextUnit(): f64 {
  return (<f64>(nextRandom() >> 11) + 1.0) / 9007199254740992.0;
}
