// The second code region of a stepped fit (training.ts): the codes every stored vector gets
// with the codebook being fitted, written a batch of vectors per step while the codebook in use
// and every code in `codes` stay as they are, and copied over `codes` when the fit is installed.
// Searches and stores between steps thus see one consistent codebook, and an image written
// meanwhile holds it. One mechanism for every method trained off the insert path: the method
// gives the encoder (its fresh codebook) and owns its codebook's swap; this module owns the
// region, the coding cursor, the fit's dimension order and the step's work count.
//
// A vector stored behind the cursor while the region is being written is coded into it too
// (storedDuringFit); one stored ahead of it is coded when the cursor gets there. Codes carry no
// correction for these methods (product and TurboQuant records hold their extras inline), so the
// region holds codes only.

import { safePoint } from "./pages";
import { EMPTY, dim, stride, count, vecBytes, levels, multi, arenaUsed, codeStride, readCodeRows, writeCodeRows, vecPtr, multiPtr, multiCount, multiStart } from "./layout";
import { codeSource } from "./quantize";

/** Vectors (rows) coded per step: a few milliseconds at 784-d for product x16 or TurboQuant bits4. */
export const CODE_ROWS: i32 = 64;

let region: usize = 0;   // u8[regionCap * codeStride]: codes with the fresh codebook, by code slot
let regionCap: i32 = 0;
let cursor: i32 = 0;     // offsets below it are coded into the region
let writing: bool = false;
let fitOrder: usize = 0; // u32[dim]: the order the fit reads vectors in (stored position -> dimension), 0 = as stored
let reordered: usize = 0; // f32[dim]: a vector in the fit's order
let encodeFresh: (src: usize, dst: usize) => void = noEncoder;
let work: i64 = 0;

function noEncoder(src: usize, dst: usize): void {}

/** Values (vector coordinates) read by the current training step: the step's size in work units. */
export function stepWork(): i64 { return work; }
export function resetWork(): void { work = 0; }
export function addWork(values: i64): void { work += values; }

/** Sets the order a fit beginning now reads the stored vectors in (u32[dim], or 0 = as stored). */
export function setFitOrder(order: usize): void { fitOrder = order; }

/** The stored vector at `p` in code space, in the order the fit reads (see setFitOrder). */
export function inFitOrder(p: usize): usize {
  const src = codeSource(p);
  if (fitOrder == 0) return src;
  if (reordered == 0) reordered = heap.alloc(<usize>dim << 2);
  for (let i = 0; i < dim; i++) store<f32>(reordered + (<usize>i << 2), load<f32>(src + (<usize>load<u32>(fitOrder + (<usize>i << 2)) << 2)));
  return reordered;
}

/** Whether the region is being written (between beginFreshCodes and install/abandon). */
export function writingFreshCodes(): bool { return writing; }

/** Starts coding every stored vector with `encoder` (the fitted codebook, reading inFitOrder vectors). */
export function beginFreshCodes(encoder: (src: usize, dst: usize) => void): void {
  encodeFresh = encoder;
  cursor = 0;
  writing = true;
}

/** Code slots in use: offsets, or arena vectors for multivectors (codes are indexed by them). */
@inline function codeSlots(): i32 { return multi ? arenaUsed : count; }

/**
 * Makes the region hold every code slot in use (stores may add slots between steps). A slot no
 * vector is coded into (an empty offset, a replaced list's rows) keeps its code, as a full
 * re-encode leaves it.
 */
function ensureRegion(): void {
  const need = codeSlots();
  if (need <= regionCap) return;
  const bytes = <usize>codeStride;
  const grown = heap.alloc(<usize>need * bytes);
  const kept = <usize>regionCap * bytes;
  readCodeRows(grown + kept, regionCap, need - regionCap);
  if (region != 0) {
    memory.copy(grown, region, kept);
    heap.free(region);
  }
  region = grown;
  regionCap = need;
}

/** Codes offsets from the cursor on until CODE_ROWS vectors are coded; true while offsets remain. */
export function freshCodesStep(): bool {
  ensureRegion();
  let rows = 0;
  while (cursor < count && rows < CODE_ROWS) {
    rows += codeFresh(cursor++);
    safePoint();
  }
  return cursor < count;
}

/** Writes the codes of offset `id`'s vector (each vector of its list) into the region; returns the vectors coded. */
function codeFresh(id: i32): i32 {
  if (!multi) {
    if (load<u8>(levels + <usize>id) == EMPTY) return 0;
    encodeFresh(inFitOrder(vecPtr(id)), region + <usize>id * <usize>codeStride);
    addWork(dim);
    return 1;
  }
  const first = multiStart(id);
  const p = multiPtr(id);
  const n = multiCount(id);
  for (let v = 0; v < n; v++) {
    encodeFresh(inFitOrder(p + <usize>v * vecBytes), region + <usize>(first + v) * <usize>codeStride);
  }
  addWork(<i64>n * <i64>dim);
  return n;
}

/** Called after offset `id` is stored: behind the cursor, its codes with the fresh codebook are written too. */
export function storedDuringFit(id: i32): void {
  if (!writing || id >= cursor) return;
  ensureRegion();
  codeFresh(id);
}

/** Copies the region over the codes in use (the fit's last step) and frees it. */
export function installFreshCodes(): void {
  ensureRegion();
  writeCodeRows(region, 0, codeSlots());
  abandonFreshCodes();
}

/** Drops the region and the fit's order (a fit installed, or given up when the method changes). */
export function abandonFreshCodes(): void {
  if (region != 0) heap.free(region);
  region = 0;
  regionCap = 0;
  writing = false;
  fitOrder = 0;
  encodeFresh = noEncoder;
}
