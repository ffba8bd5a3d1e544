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
//   vecs    T[count * stride], the datatype's elements, dimensions in stored order (none for
//           turbo4, whose vectors are its codes)
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
// order: counts u32[count], then T[sum(counts) * stride]; its codes, when quantized, follow
// the same order: i8[sum(counts) * codeStride], then codeCorr f32[sum(counts)].
//
// Images of versions 2 (dense) and 3 (multivector), written before datatypes, have a 19-word
// header and float32 vectors; they still load, as do versions 4 and 5 (written before binary
// quantization, their quantized word is 0 or 1) and 6 and 7. Images before 8 and 9 hold int8 codes
// of an older codebook (codes -127..127 around a centred offset): their codebook is fitted again
// on load, as Qdrant's is (quantize.ts), and every vector re-encoded from the stored vectors.

import {
  EMPTY, dim, stride, metric, M, M0, efConstruct, count, entryPoint, maxLevel, deletedCount,
  quantized, quantile, qAlpha, qOffset, trainedAt, rng, codeStride, levels, links0, upper, deleted,
  copyVectors, codes, codeCorr, setParams, dtype, elemShift, DT_F32, DT_T4, setCount, setEntry, setDeletedCount, setRng, setQuantState,
  reserve, reserveCodes, pending, pendingCount, setPendingCount,
  qMethod, QM_INT8, QM_BINARY15, QM_PRODUCT, QM_TURBO, setQuantMethod, setQueryBits, binaryCodes, multi, setMulti, mvStart, mvCount, multiPtr, reserveArena, setArenaUsed, arena, multiStart, codeVecPtr,
} from "./layout";
import { permutation, restorePermutation } from "./permute";
import { storedVectors } from "./hnsw";
import { binaryStats, binaryStatsBytes } from "./binary-codes";
import { productTailBytes, readProductTail, writeProductTail } from "./product-quant";
import { fitCodebook } from "./quantize";
import { turboReadTrailer, turboRestoreBits, turboTrailerBytes, turboWriteTrailer } from "./turbo-quant";

const MAGIC: u32 = 0x31525651; // "QVR1"
const VERSION: u32 = 8;
const VERSION_MULTI: u32 = 9;
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
  vecsBytes = multi ? n * 4 + ((<usize>storedVectors() * <usize>stride) << elemShift) : dtype == DT_T4 ? 0 : (n * <usize>stride) << elemShift;
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

/** Writes the image to `out` (serializedSize() bytes). */
export function serialize(out: usize): void {
  headerBytes = HEADER_WORDS * 4;
  const size = measure();
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
  let p = out + headerBytes;
  memory.copy(p, levels, <usize>count); p += levelsBytes;
  memory.copy(p, links0, links0Bytes); p += links0Bytes;
  for (let id = 0; id < count; id++) {
    const bytes = blockBytes(id);
    if (bytes == 0) continue;
    memory.copy(p, load<u32>(upper + (<usize>id << 2)), bytes);
    p += bytes;
  }
  memory.copy(p, deleted, deletedBytes); p += deletedBytes;
  memory.copy(p, pending, deletedBytes); p += deletedBytes;
  if (multi) p = writeLists(p);
  else p = copyVectors(p, count, false);
  if (permutation() != 0) { memory.copy(p, permutation(), orderBytes); p += orderBytes; }
  if (quantized && multi) p = writeListCodes(p);
  else if (quantized) {
    memory.copy(p, codes, <usize>count * codeStride); p += <usize>count * codeStride;
    memory.copy(p, codeCorr, <usize>count * 4); p += <usize>count * 4;
  }
  if (binaryStatsBytes() != 0) memory.copy(p, binaryStats(), binaryStatsBytes());
  if (productTailBytes() != 0) writeProductTail(out + size - productTailBytes());
  if (quantized && qMethod == QM_TURBO) turboWriteTrailer(out + size - turboTrailerBytes());
}

/** Rebuilds a fresh instance from an image; returns false if the bytes are not a valid one. */
export function deserialize(src: usize, len: usize): bool {
  if (len < OLD_HEADER_WORDS * 4 || word(src, 0) != MAGIC) return false;
  const version = word(src, 1);
  const old = version == OLD_VERSION || version == OLD_VERSION_MULTI;
  const multiImage = version == VERSION_MULTI || version == PRE_PARITY_VERSION_MULTI || version == PRE_BINARY_VERSION_MULTI || version == OLD_VERSION_MULTI;
  if (!old && !multiImage && version != VERSION && version != PRE_PARITY_VERSION && version != PRE_BINARY_VERSION) return false;
  headerBytes = (old ? OLD_HEADER_WORDS : HEADER_WORDS) * 4;
  if (len < headerBytes) return false;
  const datatype = old ? DT_F32 : <i32>word(src, 19);
  if (datatype < 0 || datatype > DT_T4) return false;
  setParams(<i32>word(src, 2), <i32>word(src, 4), <i32>word(src, 3), <i32>word(src, 5), 0, datatype);
  if (multiImage) setMulti();
  const n = <i32>word(src, 6);
  if (len < headerBytes + <usize>n) return false;
  reserve(max(n, 1));
  setCount(n);
  setEntry(<i32>word(src, 7), <i32>word(src, 8));
  setDeletedCount(<i32>word(src, 9));
  setPendingCount(<i32>word(src, 18));
  setRng(load<u64>(src, 60));
  const quantWord = word(src, 10);
  if (quantWord > <u32>QM_BINARY15 + 1 && quantWord != <u32>QM_PRODUCT + 1 && quantWord != <u32>QM_TURBO + 1) return false;
  if (quantWord == <u32>QM_PRODUCT + 1) {
    if (!readProductTail(src + len, len)) return false;
  } else if (quantWord == <u32>QM_TURBO + 1) {
    setQuantMethod(QM_TURBO);
    if (!turboRestoreBits(src, len)) return false;
  } else if (quantWord != 0) {
    setQuantMethod(<i32>quantWord - 1);
  }
  if (quantWord != 0) {
    setQuantState(true, load<f32>(src, 44), load<f32>(src, 48), load<f32>(src, 52), <i32>word(src, 14));
    if (binaryCodes()) {
      const bits = <i32>load<f32>(src, 44);
      if (bits != 1 && bits != 4 && bits != 8) return false;
      setQueryBits(bits);
    }
    reserveCodes();
  }
  let p = src + headerBytes;
  memory.copy(levels, p, <usize>n);
  const permuted = word(src, 17) != 0;
  if (multi) {
    // measure() counts the lists from mvCount, so read the counts before checking the length.
    const at = headerBytes + pad4(<usize>n) + <usize>n * <usize>(M0 + 1) * 4 + upperSize(n) + ((((<usize>n + 31) >> 5) << 2) << 1);
    if (len < at + <usize>n * 4) return false;
    memory.copy(mvCount, src + at, <usize>n * 4);
  }
  if (len < measure() + (permuted ? <usize>dim << 2 : 0)) return false;
  p += levelsBytes;
  memory.copy(links0, p, links0Bytes); p += links0Bytes;
  for (let id = 0; id < n; id++) {
    const bytes = blockBytes(id);
    if (bytes == 0) continue;
    const block = heap.alloc(bytes);
    memory.copy(block, p, bytes);
    store<u32>(upper + (<usize>id << 2), block);
    p += bytes;
  }
  memory.copy(deleted, p, deletedBytes); p += deletedBytes;
  memory.copy(pending, p, deletedBytes); p += deletedBytes;
  if (multi) p = readLists(p, n);
  else p = copyVectors(p, n, true);
  if (permuted) { restorePermutation(p); p += <usize>dim << 2; }
  if (quantized && multi) {
    // readLists laid the lists out contiguously in offset order, as their codes were written.
    const total = <usize>storedVectors();
    memory.copy(codes, p, total * codeStride); p += total * codeStride;
    memory.copy(codeCorr, p, total * 4); p += total * 4;
  } else if (quantized) {
    memory.copy(codes, p, <usize>n * codeStride); p += <usize>n * codeStride;
    memory.copy(codeCorr, p, <usize>n * 4); p += <usize>n * 4;
  }
  if (binaryStatsBytes() != 0) memory.copy(binaryStats(), p, binaryStatsBytes());
  if (quantized && qMethod == QM_TURBO) turboReadTrailer(src, len);
  // Only int8 codes changed meaning at versions 8 and 9; product and turbo images were first written at 8/9.
  if (quantized && qMethod == QM_INT8 && version != VERSION && version != VERSION_MULTI) fitCodebook();
  return true;
}

/** Bytes of the upper-level blocks of offsets below n (levels already in place). */
function upperSize(n: i32): usize {
  let bytes: usize = 0;
  for (let id = 0; id < n; id++) bytes += blockBytes(id);
  return bytes;
}

/** Writes counts u32[count] then every list in offset order; returns the end. */
function writeLists(p: usize): usize {
  memory.copy(p, mvCount, <usize>count << 2);
  p += <usize>count << 2;
  for (let id = 0; id < count; id++) {
    const bytes = (<usize>load<u32>(mvCount + (<usize>id << 2)) * <usize>stride) << elemShift;
    if (bytes == 0) continue;
    memory.copy(p, multiPtr(id), bytes);
    p += bytes;
  }
  return p;
}

/** Writes the codes of every list in offset order, then their corrections; returns the end. */
function writeListCodes(p: usize): usize {
  for (let id = 0; id < count; id++) {
    const k = <usize>load<u32>(mvCount + (<usize>id << 2));
    memory.copy(p, codeVecPtr(multiStart(id)), k * codeStride);
    p += k * codeStride;
  }
  for (let id = 0; id < count; id++) {
    const k = <usize>load<u32>(mvCount + (<usize>id << 2));
    memory.copy(p, codeCorr + (<usize>multiStart(id) << 2), k << 2);
    p += k << 2;
  }
  return p;
}

/** Reads what writeLists wrote (counts already copied to mvCount); returns the end. */
function readLists(p: usize, n: i32): usize {
  p += <usize>n << 2;
  const total = storedVectors();
  reserveArena(max(total, 1));
  const bytes = (<usize>total * <usize>stride) << elemShift;
  memory.copy(arena, p, bytes);
  let at: u32 = 0;
  for (let id = 0; id < n; id++) {
    store<u32>(mvStart + (<usize>id << 2), at);
    at += load<u32>(mvCount + (<usize>id << 2));
  }
  setArenaUsed(total);
  return p + bytes;
}
