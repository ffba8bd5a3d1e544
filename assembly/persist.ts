// Serialised index: a little-endian byte image, header then regions cut to `count` offsets.
//
//   header  u32[HEADER_WORDS]: MAGIC, VERSION, dim, metric, M, efConstruct, count, entryPoint,
//           maxLevel, deletedCount, quantized (0 none, else layout.ts QM_* + 1), quantile (f32 bits; for
//           binary the query's bits per value, 1, 4 or 8), qAlpha (f32), qOffset (f32),
//           trainedAt, rng low, rng high, permuted (0/1), pendingCount, datatype (layout.ts DT_*)
//   levels  u8[count], padded to 4 bytes
//   links0  u32[count * (M0 + 1)]
//   upper   for each offset with level > 0, in offset order: u32[level * (M + 1)]
//   deleted u32[ceil(count / 32)]
//   pending u32[ceil(count / 32)]
//   vecs    T[count * stride], the datatype's elements, dimensions in stored order (turbo4: a
//           record of vecBytes bytes per offset, turbo4.ts)
//   order   u32[dim], only when permuted (see permute.ts)
//   codes   i8[count * codeStride] and codeCorr f32[count], only when quantized (bit codes for
//           binary, see layout.ts)
//   stats   f32[dim] means then f32[dim] stddevs, only for two_bits / one_and_half_bits
//           (binary-codes.ts)
//   product only when quantized is product's (5): bucket u32, then the codebook f32[dim * 256]
//           (product-quant.ts); it ends the image, so a reader finds it from the image's end.
//   turbo   only when quantized is TurboQuant's (6): its calibration and bits, last
//           (turbo-quant.ts turboWriteTrailer), so a reader finds it from the image's end too.
//
// A multivector index writes VERSION_MULTI and, in place of vecs, its lists compacted in offset
// order: counts u32[count], then T[sum(counts) * stride] (turbo4: a record per row); its codes, when quantized, follow the same order: i8[sum(counts) * codeStride], then
// codeCorr f32[sum(counts)]. A load lays the lists out in the arena's chunks (layout.ts
// listStart), so the bytes do not depend on where a list sat in memory.
//
// Images of versions 2 (dense) and 3 (multivector), written before datatypes, have a 19-word
// header and float32 vectors; they still load, as do versions 4 and 5 (written before binary
// quantization, their quantized word is 0 or 1) and 6 and 7. Images before 8 and 9 hold int8 codes
// of an older codebook (codes -127..127 around a centred offset): their codebook is fitted again
// on load, as Qdrant's is (quantize.ts), and every vector re-encoded from the stored vectors.
// Versions 10 and 11 moved turbo4 records from the codes region to the vectors' (so a quantization
// can sit on top); a turbo4 image of 8 or 9 holds its records as TurboQuant codes (records, a
// correction each, the bits4 trailer): they are read into the vectors' place and the rest skipped.

import {
  EMPTY, dim, stride, metric, M, M0, efConstruct, count, entryPoint, maxLevel, deletedCount,
  quantized, quantile, qAlpha, qOffset, trainedAt, rng, codeStride, levels, links0, upper, deleted,
  chunkShift, codeShift, vecPtr, vecPtrW, codePtr, codePtrW, codeCorr, setParams, dtype, vecBytes, DT_F32, DT_T4, setCount, setEntry, setDeletedCount, setRng, setQuantState,
  reserve, reserveCodes, pending, pendingCount, setPendingCount,
  qMethod, QM_INT8, QM_BINARY15, QM_PRODUCT, QM_TURBO, setQuantMethod, setQueryBits, binaryCodes, multi, setMulti, mvStart, mvCount, multiPtr, multiPtrW, reserveArena, setArenaUsed, multiStart, arenaRowBytes, listStart, codeMask, linksAt, linksAtW, linkShift, linkRowBytes,
} from "./layout";
import { permutation, restorePermutation } from "./permute";
import { storedVectors } from "./hnsw";
import { binaryStats, binaryStatsBytes } from "./binary-codes";
import { codebookBytes, productTailBytes, readProductTail, writeProductTail } from "./product-quant";
import { fitCodebook } from "./quantize";
import { turboReadTrailer, turboRestoreBits, turboTrailerBytes, turboWriteTrailer } from "./turbo-quant";
import { turbo4Setup } from "./turbo4";
import { REGION_CODES, REGION_LINKS, REGION_VECS, pagedCodes, pagedLinks, pagedVecs, pinPage, safePoint, unpinPage } from "./pages";

const MAGIC: u32 = 0x31525651; // "QVR1"
const VERSION: u32 = 10;
const VERSION_MULTI: u32 = 11;
const PRE_TURBO4_VERSION: u32 = 8;
const PRE_TURBO4_VERSION_MULTI: u32 = 9;
const PRE_PARITY_VERSION: u32 = 6;
const PRE_PARITY_VERSION_MULTI: u32 = 7;
const PRE_BINARY_VERSION: u32 = 4;
const PRE_BINARY_VERSION_MULTI: u32 = 5;
const HEADER_WORDS: usize = 20;
const OLD_VERSION: u32 = 2;
const OLD_VERSION_MULTI: u32 = 3;
const OLD_HEADER_WORDS: usize = 19;

// Header size of the image being read or written (old images have one word less).
let headerBytes: usize = HEADER_WORDS * 4;

@inline function pad4(n: usize): usize { return (n + 3) & ~3; }
@inline function word(src: usize, i: i32): u32 { return load<u32>(src + (<usize>i << 2)); }

// Region sizes for the current count and levels, refreshed by measure().
let levelsBytes: usize = 0, links0Bytes: usize = 0, upperBytes: usize = 0;
let deletedBytes: usize = 0, vecsBytes: usize = 0, orderBytes: usize = 0, codesBytes: usize = 0;

function measure(): usize {
  const n = <usize>count;
  levelsBytes = pad4(n);
  links0Bytes = n * <usize>(M0 + 1) * 4;
  upperBytes = 0;
  for (let id = 0; id < count; id++) upperBytes += blockBytes(id);
  deletedBytes = ((n + 31) >> 5) << 2;
  vecsBytes = multi ? n * 4 + <usize>storedVectors() * arenaRowBytes() : n * vecBytes;
  const coded = multi ? <usize>storedVectors() : n;
  codesBytes = quantized ? coded * <usize>codeStride + coded * 4 + binaryStatsBytes() : 0;
  orderBytes = permutation() != 0 ? <usize>dim << 2 : 0;
  if (quantized && qMethod == QM_TURBO) codesBytes += turboTrailerBytes();
  return headerBytes + levelsBytes + links0Bytes + upperBytes + deletedBytes * 2 + vecsBytes + orderBytes + codesBytes + productTailBytes();
}

/** Bytes of the upper-level block of `id` (0 for level-0 and empty offsets). */
@inline function blockBytes(id: i32): usize {
  const level = <usize>load<u8>(levels + <usize>id);
  return level == <usize>EMPTY ? 0 : level * <usize>(M + 1) * 4;
}

export function serializedSize(): usize {
  headerBytes = HEADER_WORDS * 4;
  return measure();
}

// The image is read and written as a stream of spans, each a run of linear memory (or of zero
// bytes), so neither side needs the whole image in one block: the allocator caps a block at
// 1 GiB and linear memory at 4 GiB, less than an index plus a copy of it (src/engine/image-parts.ts
// moves the parts). A stream walks the stages below in order; a stage with items (upper blocks, vector chunks, lists) gives one span per item.
const S_HEADER = 0, S_LEVELS = 1, S_PAD = 2, S_LINKS0 = 3, S_UPPER = 4, S_DELETED = 5, S_PENDING = 6;
const S_VECS = 7, S_LISTS = 8, S_ORDER = 9, S_CODES = 10, S_CORR = 11, S_STATS = 12, S_TAIL = 13, S_DONE = 14;

const headerScratch = memory.data(<i32>HEADER_WORDS * 4);
let saving = false, failed = false;
let stage = S_DONE, item = 0;
let itemRow = 0; // rows of list `item` whose codes are streamed already (S_CODES, multivector)
let spanPtr: usize = 0, spanLen: usize = 0, spanOff: usize = 0;
let streamPos: usize = 0, streamTotal: usize = 0;
let scratch: usize = 0; // the trailer being written, or the dimension order being read
let imageVersion: u32 = 0, imagePermuted = false;
let legacyT4 = false; // loading a turbo4 image of version 8 or 9 (records where codes are now)

function startStream(save: bool, total: usize): void {
  saving = save; failed = false;
  stage = S_HEADER; item = 0; itemRow = 0;
  unpinPage();
  spanPtr = 0; spanLen = 0; spanOff = 0;
  streamPos = 0; streamTotal = total;
}

@inline function span(ptr: usize, len: usize): bool { spanPtr = ptr; spanLen = len; return true; }

/** Sets the span of item `item` of `stage` and moves `item` on; false when the stage has no more. */
function spanAt(): bool {
  const n = <usize>count;
  const first = item == 0;
  if (stage == S_UPPER) {
    while (item < count && blockBytes(item) == 0) item++;
    if (item >= count) return false;
    const id = item++;
    const bytes = blockBytes(id);
    if (!saving) store<u32>(upper + (<usize>id << 2), heap.alloc(bytes));
    return span(load<u32>(upper + (<usize>id << 2)), bytes);
  }
  if (stage == S_LINKS0 && pagedLinks) {
    // Paged links, a page at a time (the span before this one is consumed: its page may go).
    const from = item << linkShift;
    if (from >= count) return false;
    safePoint();
    const page = saving ? linksAt(from, 0) : linksAtW(from, 0);
    pinPage(REGION_LINKS, item);
    item++;
    return span(page, <usize>min(count - from, 1 << linkShift) * linkRowBytes());
  }
  if (stage == S_VECS && !multi && legacyT4) return false; // its records come where codes do
  if (!multi && (stage == S_VECS && !legacyT4 || stage == S_CODES && legacyT4)) {
    const from = item << chunkShift;
    if (from >= count) return false;
    // The span before this one is consumed: a paged index lets it go before reading the next.
    safePoint();
    const chunk = saving ? vecPtr(from) : vecPtrW(from);
    if (pagedVecs) pinPage(REGION_VECS, item);
    item++;
    return span(chunk, <usize>min(count - from, 1 << chunkShift) * vecBytes);
  }
  if (stage == S_CODES && !multi && quantized) {
    // Dense codes, a code chunk at a time (codes of large indexes are cut in chunks as vectors are).
    const from = item << codeShift;
    if (from >= count) return false;
    safePoint();
    const chunk = saving ? codePtr(from) : codePtrW(from);
    if (pagedCodes) pinPage(REGION_CODES, item);
    item++;
    return span(chunk, <usize>min(count - from, 1 << codeShift) * <usize>codeStride);
  }
  if (multi && (stage == S_LISTS || stage == S_CODES || stage == S_CORR)) {
    // Lists and their codes are written compacted in offset order, a list at a time, and read back
    // the same way into the chunks the load laid them out in (no list straddles a chunk).
    if (stage == S_CODES && !quantized && !legacyT4 || stage == S_CORR && !quantized && !legacyT4) return false;
    if (stage == S_CODES && !legacyT4) return listCodesSpan();
    if (item >= count) return false;
    const id = item++;
    const k = <usize>load<u32>(mvCount + (<usize>id << 2));
    if (k == 0) return span(0, 0);
    if (legacyT4 ? stage == S_CODES : stage == S_LISTS) {
      // The span before this one is consumed: a paged index lets it go before taking this list.
      safePoint();
      const list = saving ? multiPtr(id) : multiPtrW(id);
      if (pagedVecs) pinPage(REGION_VECS, id);
      return legacyT4 ? span(list, k * vecBytes) : span(list, k * arenaRowBytes());
    }
    if (legacyT4) return span(0, stage == S_LISTS ? 0 : k << 2);
    return span(codeCorr + (<usize>multiStart(id) << 2), k << 2);
  }
  item++;
  if (!first) return false;
  switch (stage) {
    case S_HEADER: return span(saving ? headerScratch : 0, headerBytes);
    case S_LEVELS: return span(levels, n);
    case S_PAD: return span(0, levelsBytes - n);
    case S_LINKS0: return span(links0, links0Bytes);
    case S_DELETED: return span(deleted, deletedBytes);
    case S_PENDING: return span(pending, deletedBytes);
    case S_VECS: return span(mvCount, n << 2);
    case S_ORDER:
      if (saving) return permutation() != 0 ? span(permutation(), orderBytes) : false;
      if (!imagePermuted) return false;
      scratch = heap.alloc(<usize>dim << 2);
      return span(scratch, <usize>dim << 2);
    case S_CORR: return quantized ? span(codeCorr, n << 2) : legacyT4 ? span(0, n << 2) : false;
    case S_STATS: return binaryStatsBytes() != 0 ? span(binaryStats(), binaryStatsBytes()) : false;
    case S_TAIL:
      // Loading skips what is left (the trailers were read first, see loadTail).
      if (!saving) return span(0, streamTotal - streamPos);
      return scratch != 0 ? span(scratch, trailerBytes()) : false;
  }
  return false;
}

/**
 * The next run of list codes (multivector S_CODES): a list's codes, or the part of them in one
 * code page when the codes are paged (a list's codes may then cross pages).
 */
function listCodesSpan(): bool {
  while (item < count) {
    const k = <i32>load<u32>(mvCount + (<usize>item << 2));
    if (itemRow >= k) { item++; itemRow = 0; continue; }
    const row = multiStart(item) + itemRow;
    const run = min(k - itemRow, (1 << codeShift) - (row & codeMask));
    safePoint();
    const codes = saving ? codePtr(row) : codePtrW(row);
    if (pagedCodes) pinPage(REGION_CODES, row >> codeShift);
    itemRow += run;
    return span(codes, <usize>run * <usize>codeStride);
  }
  return false;
}

/** Bytes of the trailer that ends the image (product's codebook or TurboQuant's calibration). */
function trailerBytes(): usize {
  return productTailBytes() + (quantized && qMethod == QM_TURBO ? turboTrailerBytes() : 0);
}

/** Work a loaded stage needs once all its bytes are in; false if the image is not a valid one. */
function finishStage(): bool {
  if (saving) {
    if (stage == S_TAIL && scratch != 0) { heap.free(scratch); scratch = 0; }
    return true;
  }
  // The counts are still 0 when the levels are in, so a multivector image's size is a lower bound then.
  if (stage == S_LEVELS) return streamTotal >= measure() + (imagePermuted ? <usize>dim << 2 : 0);
  if (stage == S_VECS && multi) {
    // measure() counts the lists from mvCount, so the length is checked once the counts are in.
    if (streamTotal < measure() + (imagePermuted ? <usize>dim << 2 : 0)) return false;
    // The lists are laid out in offset order as a vacuum would (listStart: none straddles a chunk).
    let at = 0;
    for (let id = 0; id < count; id++) {
      const k = <i32>load<u32>(mvCount + (<usize>id << 2));
      if (k > 0) at = listStart(at, k) + k;
    }
    reserveArena(max(at, 1));
    at = 0;
    for (let id = 0; id < count; id++) {
      const k = <i32>load<u32>(mvCount + (<usize>id << 2));
      if (k > 0) at = listStart(at, k);
      store<u32>(mvStart + (<usize>id << 2), at);
      at += k;
    }
    setArenaUsed(at);
  }
  if (stage == S_ORDER && scratch != 0) { restorePermutation(scratch); heap.free(scratch); scratch = 0; }
  return true;
}

/** Moves to the next non-empty span; false when the image is done or not a valid one. */
function nextSpan(): bool {
  while (stage < S_DONE) {
    if (spanAt()) { spanOff = 0; if (spanLen > 0) return true; continue; }
    if (!finishStage()) { failed = true; return false; }
    stage++;
    item = 0;
    itemRow = 0;
  }
  return false;
}

/** Moves up to `len` bytes between the stream and `p`; returns how many moved. */
function pump(p: usize, len: usize): usize {
  let done: usize = 0;
  while (done < len) {
    if (spanOff == spanLen && !nextSpan()) break;
    const n = min(len - done, spanLen - spanOff);
    if (saving) {
      if (spanPtr != 0) memory.copy(p + done, spanPtr + spanOff, n);
      else memory.fill(p + done, 0, n);
    } else if (spanPtr != 0) memory.copy(spanPtr + spanOff, p + done, n);
    spanOff += n; done += n; streamPos += n;
  }
  return done;
}

/** Starts writing the image in parts; returns its size in bytes (serializedSize()). */
export function saveBegin(): usize {
  headerBytes = HEADER_WORDS * 4;
  const size = measure();
  const out = headerScratch;
  store<u32>(out, MAGIC);
  store<u32>(out, multi ? VERSION_MULTI : VERSION, 4);
  store<u32>(out, dim, 8);
  store<u32>(out, metric, 12);
  store<u32>(out, M, 16);
  store<u32>(out, efConstruct, 20);
  store<u32>(out, count, 24);
  store<i32>(out, entryPoint, 28);
  store<i32>(out, maxLevel, 32);
  store<u32>(out, deletedCount, 36);
  store<u32>(out, quantized ? <u32>qMethod + 1 : 0, 40);
  store<f32>(out, quantile, 44);
  store<f32>(out, qAlpha, 48);
  store<f32>(out, qOffset, 52);
  store<u32>(out, trainedAt, 56);
  store<u64>(out, rng, 60);
  store<u32>(out, permutation() != 0 ? 1 : 0, 68);
  store<u32>(out, pendingCount, 72);
  store<u32>(out, dtype, 76);
  if (scratch != 0) heap.free(scratch);
  const tail = trailerBytes();
  scratch = tail != 0 ? heap.alloc(tail) : 0;
  if (productTailBytes() != 0) writeProductTail(scratch);
  if (quantized && qMethod == QM_TURBO) turboWriteTrailer(scratch);
  startStream(true, size);
  return size;
}

/** Writes the next `len` bytes of the image to `out`; returns how many (less only at the end). */
export function savePart(out: usize, len: usize): usize {
  return saving ? pump(out, len) : 0;
}

/**
 * Starts loading an image of `total` bytes from its first `len` bytes at `head` (at least the
 * header): sets up a fresh instance. Returns how many bytes of the image's end loadTail needs
 * (0: none), or -1 if the bytes are not a valid image.
 */
export function loadBegin(head: usize, len: usize, total: usize): i32 {
  const src = head;
  failed = true;
  saving = false;
  if (len < OLD_HEADER_WORDS * 4 || total < len || word(src, 0) != MAGIC) return -1;
  const version = word(src, 1);
  const old = version == OLD_VERSION || version == OLD_VERSION_MULTI;
  const multiImage = version == VERSION_MULTI || version == PRE_TURBO4_VERSION_MULTI || version == PRE_PARITY_VERSION_MULTI || version == PRE_BINARY_VERSION_MULTI || version == OLD_VERSION_MULTI;
  if (!old && !multiImage && version != VERSION && version != PRE_TURBO4_VERSION && version != PRE_PARITY_VERSION && version != PRE_BINARY_VERSION) return -1;
  headerBytes = (old ? OLD_HEADER_WORDS : HEADER_WORDS) * 4;
  if (len < headerBytes) return -1;
  const datatype = old ? DT_F32 : <i32>word(src, 19);
  if (datatype < 0 || datatype > DT_T4) return -1;
  const quantWord = word(src, 10);
  if (quantWord > <u32>QM_BINARY15 + 1 && quantWord != <u32>QM_PRODUCT + 1 && quantWord != <u32>QM_TURBO + 1) return -1;
  setParams(<i32>word(src, 2), <i32>word(src, 4), <i32>word(src, 3), <i32>word(src, 5), 0, datatype);
  turbo4Setup();
  if (multiImage) setMulti();
  const n = <i32>word(src, 6);
  if (total < headerBytes + <usize>n) return -1;
  reserve(max(n, 1));
  setCount(n);
  setEntry(<i32>word(src, 7), <i32>word(src, 8));
  setDeletedCount(<i32>word(src, 9));
  setPendingCount(<i32>word(src, 18));
  setRng(load<u64>(src, 60));
  imageVersion = version;
  imagePermuted = word(src, 17) != 0;
  legacyT4 = datatype == DT_T4 && (version == PRE_TURBO4_VERSION || version == PRE_TURBO4_VERSION_MULTI);
  startStream(false, total);
  if (quantWord != 0 && !legacyT4) {
    setQuantState(false, load<f32>(src, 44), load<f32>(src, 48), load<f32>(src, 52), <i32>word(src, 14));
    if (quantWord == <u32>QM_PRODUCT + 1) { setQuantMethod(QM_PRODUCT); return 4 + <i32>codebookBytes(); }
    if (quantWord == <u32>QM_TURBO + 1) { setQuantMethod(QM_TURBO); return 4; }
    setQuantMethod(<i32>quantWord - 1);
    if (!startCodes()) return -1;
  }
  return 0;
}

/**
 * Reads the image's last `len` bytes at `src` (what loadBegin asked for): the trailer that says
 * how the codes are formed. Returns 0 when done, more bytes of the end if it needs them, -1 if
 * they are not valid.
 */
export function loadTail(src: usize, len: usize): i32 {
  if (failed || saving || stage != S_HEADER || len > streamTotal) return -1;
  if (qMethod == QM_PRODUCT) {
    if (!readProductTail(src + len, len)) return -1;
  } else {
    if (!turboRestoreBits(src, len)) {
      // The last word gives the bits, and with them the trailer's size: ask for all of it once.
      const h = len >= 4 ? load<u32>(src + len - 4) : 0;
      const need = turboTrailerBytes();
      return (h == 2 || h == 3 || h == 4 || h == 8) && len < need && need <= streamTotal ? <i32>need : -1;
    }
    turboReadTrailer(src, len);
  }
  return startCodes() ? 0 : -1;
}

/** Turns the codes on once their form is known (the header's state, and the trailer's). */
function startCodes(): bool {
  setQuantState(true, quantile, qAlpha, qOffset, trainedAt);
  if (binaryCodes()) {
    const bits = <i32>quantile;
    if (bits != 1 && bits != 4 && bits != 8) return false;
    setQueryBits(bits);
  }
  reserveCodes();
  return true;
}

/** Reads the next `len` bytes of the image (from its start, header included) at `src`. */
export function loadPart(src: usize, len: usize): bool {
  if (failed || saving || streamPos + len > streamTotal) return false;
  return pump(src, len) == len && !failed;
}

/** Ends a load once every byte went through loadPart; false if the image was not a valid one. */
export function loadEnd(): bool {
  if (failed || saving || spanOff < spanLen || nextSpan() || failed || stage != S_DONE) return false;
  // Only int8 codes changed meaning at versions 8 and 9; product and turbo images were first written at 8/9.
  const current = imageVersion == VERSION || imageVersion == VERSION_MULTI || imageVersion == PRE_TURBO4_VERSION || imageVersion == PRE_TURBO4_VERSION_MULTI;
  if (quantized && qMethod == QM_INT8 && !current) fitCodebook();
  return true;
}
