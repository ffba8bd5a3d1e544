// Serialised sparse index: a little-endian byte image of the stored vectors only. The posting
// lists are rebuilt on load by inserting the documents in offset order, which only appends, so
// loading costs about what the lists occupy and the image is half the size of both sides.
//
//   header  u32[5]: MAGIC, VERSION, count (offsets), documents, entries (total non-zeros)
//   lengths u32[count]: entries of each offset, ABSENT (0xffffffff) for no document
//   indices u32[entries]: each document's indices, ascending, documents in offset order
//   values  f32[entries]: the matching values

import { NotASparseIndex } from './sparse-errors.js';
import type { SparseMemory } from './sparse-memory.js';
import { ABSENT, type SparseStore } from './sparse-store.js';
import type { SortedSparse } from './sparse-vector.js';

const MAGIC = 0x31505351; // "QSP1"
const VERSION = 1;
const HEADER_WORDS = 5;

// Typed arrays use the platform's byte order; every platform Node and browsers run on is
// little-endian, and the check keeps a big-endian one from writing images others misread.
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

export function writeImage(store: SparseStore, mem: SparseMemory): Uint8Array {
  if (!LITTLE_ENDIAN) throw new RangeError('sparse index images need a little-endian platform');
  const count = store.count;
  const entries = store.entries;
  const words = new Uint32Array(HEADER_WORDS + count + 2 * entries);
  words.set([MAGIC, VERSION, count, store.documents, entries]);
  const u32 = mem.u32;
  const f32 = mem.f32;
  const lengths = store.lengthsPtr >>> 2;
  const starts = store.startsPtr >>> 2;
  words.set(u32.subarray(lengths, lengths + count), HEADER_WORDS);
  const indices = words.subarray(HEADER_WORDS + count, HEADER_WORDS + count + entries);
  const values = new Float32Array(words.buffer, (HEADER_WORDS + count + entries) * 4, entries);
  let w = 0;
  for (let o = 0; o < count; o++) {
    const n = u32[lengths + o];
    if (n === ABSENT) continue;
    const s = u32[starts + o] >>> 2;
    for (let i = 0; i < n; i++) {
      indices[w + i] = u32[s + 2 * i];
      values[w + i] = f32[s + 2 * i + 1];
    }
    w += n;
  }
  return new Uint8Array(words.buffer);
}

/** Calls `reserve(count)` once, then `put` for each stored document in offset order. */
export function readImage(bytes: Uint8Array, put: (offset: number, doc: SortedSparse) => void, reserve: (count: number) => void): void {
  if (!LITTLE_ENDIAN) throw new RangeError('sparse index images need a little-endian platform');
  if (bytes.byteLength < HEADER_WORDS * 4 || bytes.byteLength % 4 !== 0) throw new NotASparseIndex(`${bytes.byteLength} bytes`);
  // Copy into an aligned buffer: the bytes may sit at any offset of a larger buffer.
  const words = new Uint32Array(bytes.byteLength / 4);
  new Uint8Array(words.buffer).set(bytes);
  const [magic, version, count, documents, entries] = words;
  if (magic !== MAGIC) throw new NotASparseIndex('bad magic number');
  if (version !== VERSION) throw new NotASparseIndex(`unknown version ${version}`);
  if (words.length !== HEADER_WORDS + count + 2 * entries) throw new NotASparseIndex(`${bytes.byteLength} bytes for ${count} offsets and ${entries} entries`);
  const lengths = words.subarray(HEADER_WORDS, HEADER_WORDS + count);
  const indices = words.subarray(HEADER_WORDS + count, HEADER_WORDS + count + entries);
  const values = new Float32Array(words.buffer, (HEADER_WORDS + count + entries) * 4, entries);
  reserve(count);
  let at = 0;
  let seen = 0;
  for (let o = 0; o < count; o++) {
    const n = lengths[o];
    if (n === ABSENT) continue;
    if (at + n > entries) throw new NotASparseIndex(`document at offset ${o} runs past the entries`);
    const doc = { indices: indices.subarray(at, at + n), values: values.subarray(at, at + n) };
    for (let i = 1; i < n; i++) if (doc.indices[i] <= doc.indices[i - 1]) throw new NotASparseIndex(`indices of offset ${o} are not ascending`);
    put(o, doc);
    at += n;
    seen++;
  }
  if (seen !== documents || at !== entries) throw new NotASparseIndex('document count does not match the header');
}
