// A dense index's byte image (assembly/persist.ts) moved between the engine and JS in bounded
// parts: the engine streams it region by region, so it never needs a block for the whole image
// (its allocator caps one at 1 GiB and linear memory ends at 4 GiB, while an index of e.g.
// 170000 x 1536 float32 vectors already has a 1 GiB image). Only one part is in linear memory
// at a time.

import type { EngineExports } from './exports.js';

/** Part size used unless a caller asks for another (the shard's graph store keeps parts of this size). */
export const IMAGE_PART_BYTES = 4 << 20;

/** The engine's image, as parts of at most `partBytes` bytes. */
export function saveImage(wasm: EngineExports, partBytes: number = IMAGE_PART_BYTES): Uint8Array[] {
  if (!Number.isInteger(partBytes) || partBytes < 1) throw new RangeError(`image part size must be a positive integer, got ${partBytes}`);
  const total = wasm.saveBegin() >>> 0;
  const room = Math.min(partBytes, Math.max(total, 1));
  const ptr = wasm.alloc(room) >>> 0;
  const parts: Uint8Array[] = [];
  try {
    for (let at = 0; at < total; at += room) {
      const len = Math.min(room, total - at);
      if (wasm.savePart(ptr, len) >>> 0 !== len) throw new Error(`engine wrote less of its image than its size (${total} bytes)`);
      parts.push(new Uint8Array(wasm.memory.buffer, ptr, len).slice());
    }
  } finally {
    wasm.free(ptr);
  }
  return parts;
}

/**
 * Loads an image given as consecutive parts (any sizes) into a fresh engine instance; false if
 * the bytes are not an image. Parts larger than IMAGE_PART_BYTES go in by slices of it.
 */
export function loadImage(wasm: EngineExports, parts: readonly Uint8Array[]): boolean {
  const total = parts.reduce((n, p) => n + p.byteLength, 0);
  const room = Math.max(1, Math.min(IMAGE_PART_BYTES, total));
  const ptr = wasm.alloc(room) >>> 0;
  // Linear memory may grow while the engine loads, so a view is taken after every engine call.
  const put = (bytes: Uint8Array) => new Uint8Array(wasm.memory.buffer).set(bytes, ptr);
  try {
    const head = rangeOf(parts, 0, Math.min(room, 80, total));
    put(head);
    let need = wasm.loadBegin(ptr, head.byteLength, total);
    // Each round asks for strictly more of the image's end (TurboQuant's trailer asks twice).
    while (need > 0) {
      const tail = wasm.alloc(need) >>> 0;
      new Uint8Array(wasm.memory.buffer).set(rangeOf(parts, total - need, need), tail);
      const more = wasm.loadTail(tail, need);
      wasm.free(tail);
      if (more > 0 && more <= need) return false;
      need = more;
    }
    if (need < 0) return false;
    for (const part of parts) {
      for (let at = 0; at < part.byteLength; at += room) {
        const slice = part.subarray(at, at + room);
        put(slice);
        if (!wasm.loadPart(ptr, slice.byteLength)) return false;
      }
    }
    return wasm.loadEnd() !== 0;
  } finally {
    wasm.free(ptr);
  }
}

/** Bytes [from, from + len) of the image the parts make up, copied out. */
function rangeOf(parts: readonly Uint8Array[], from: number, len: number): Uint8Array {
  const out = new Uint8Array(len);
  let start = 0;
  for (const part of parts) {
    const end = start + part.byteLength;
    const lo = Math.max(from, start), hi = Math.min(from + len, end);
    if (lo < hi) out.set(part.subarray(lo - start, hi - start), lo - from);
    start = end;
  }
  return out;
}

/** The parts as one buffer. */
export function joinParts(parts: readonly Uint8Array[]): Uint8Array {
  return parts.length === 1 ? parts[0] : rangeOf(parts, 0, parts.reduce((n, p) => n + p.byteLength, 0));
}
