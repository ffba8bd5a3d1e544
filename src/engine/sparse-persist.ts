// Serialised sparse index: a little-endian byte image of both sides of the index, laid out as
// they sit in the engine's memory, so loading is a handful of block copies rather than an insert
// per document (a shard opens from it instead of re-inserting every point's vector).
//
//   header   u32[7]: MAGIC, VERSION, count (offsets), documents, entries (total non-zeros),
//                    terms (lists), postings (their total live entries)
//   lengths  u32[count]: entries of each offset, ABSENT (0xffffffff) for no document
//   pairs    (index u32, value f32)[entries]: each document's run, documents in offset order
//   terms    per list, terms ascending: term u32, n u32, nonZero u32, max f32, min f32
//   postings per list in the same order: its n live (offset u32, value f32) entries

import { NotASparseIndex } from './sparse-errors.js';
import type { SparseMemory } from './sparse-memory.js';
import { PostingList } from './posting-list.js';
import { ABSENT, type SparseStore } from './sparse-store.js';

const MAGIC = 0x31505351; // "QSP1"
const VERSION = 2;
const HEADER_WORDS = 7;
const TERM_WORDS = 5;

// Typed arrays use the platform's byte order; every platform Node and browsers run on is
// little-endian, and the check keeps a big-endian one from writing images others misread.
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

export function writeImage(store: SparseStore, lists: ReadonlyMap<number, PostingList>, mem: SparseMemory): Uint8Array {
  if (!LITTLE_ENDIAN) throw new RangeError('sparse index images need a little-endian platform');
  const count = store.count;
  const entries = store.entries;
  const terms = [...lists.keys()].filter((term) => lists.get(term)!.live > 0).sort((a, b) => a - b);
  let postings = 0;
  for (const term of terms) postings += lists.get(term)!.live;
  const words = new Uint32Array(HEADER_WORDS + count + 2 * entries + TERM_WORDS * terms.length + 2 * postings);
  const f32 = new Float32Array(words.buffer);
  words.set([MAGIC, VERSION, count, store.documents, entries, terms.length, postings]);
  let w = HEADER_WORDS;
  words.set(mem.u32.subarray(store.lengthsPtr >>> 2, (store.lengthsPtr >>> 2) + count), w);
  w += count;
  w = store.copyRuns(words, w);
  let p = w + TERM_WORDS * terms.length;
  for (const term of terms) {
    const list = lists.get(term)!;
    // Only live postings are written (the view is taken after, compaction may move the block).
    if (list.dead > 0) list.compact();
    words.set([term, list.length, list.nonZero], w);
    f32[w + 3] = list.max;
    f32[w + 4] = list.min;
    w += TERM_WORDS;
    words.set(mem.u32.subarray(list.at(0), list.at(list.length)), p);
    p += 2 * list.length;
  }
  return new Uint8Array(words.buffer);
}

/** The parts of an image, checked, as views of one aligned copy of its bytes. */
export interface SparseImage {
  count: number;
  documents: number;
  lengths: Uint32Array;
  /** Every document's (index, value) pairs, in offset order. */
  pairs: Uint32Array;
  lists: { term: number; nonZero: number; max: number; min: number; entries: Uint32Array }[];
}

export function readImage(bytes: Uint8Array): SparseImage {
  if (!LITTLE_ENDIAN) throw new RangeError('sparse index images need a little-endian platform');
  if (bytes.byteLength < HEADER_WORDS * 4 || bytes.byteLength % 4 !== 0) throw new NotASparseIndex(`${bytes.byteLength} bytes`);
  // Copy into an aligned buffer: the bytes may sit at any offset of a larger buffer.
  const words = new Uint32Array(bytes.byteLength / 4);
  new Uint8Array(words.buffer).set(bytes);
  const f32 = new Float32Array(words.buffer);
  const [magic, version, count, documents, entries, terms, postings] = words;
  if (magic !== MAGIC) throw new NotASparseIndex('bad magic number');
  if (version !== VERSION) throw new NotASparseIndex(`unknown version ${version}`);
  if (words.length !== HEADER_WORDS + count + 2 * entries + TERM_WORDS * terms + 2 * postings) throw new NotASparseIndex(`${bytes.byteLength} bytes for ${count} offsets, ${entries} entries and ${postings} postings`);
  let w = HEADER_WORDS;
  const lengths = words.subarray(w, w + count);
  w += count;
  const pairs = words.subarray(w, w + 2 * entries);
  w += 2 * entries;
  let seen = 0;
  let at = 0;
  for (let o = 0; o < count; o++) {
    const n = lengths[o];
    if (n === ABSENT) continue;
    if (at + n > entries) throw new NotASparseIndex(`document at offset ${o} runs past the entries`);
    for (let i = 1; i < n; i++) if (pairs[2 * (at + i)] <= pairs[2 * (at + i - 1)]) throw new NotASparseIndex(`indices of offset ${o} are not ascending`);
    at += n;
    seen++;
  }
  if (seen !== documents || at !== entries) throw new NotASparseIndex('document count does not match the header');
  const lists: SparseImage['lists'] = [];
  let p = w + TERM_WORDS * terms;
  let total = 0;
  for (let t = 0; t < terms; t++, w += TERM_WORDS) {
    const n = words[w + 1];
    total += n;
    if (total > postings) throw new NotASparseIndex(`list of term ${words[w]} runs past the postings`);
    const listEntries = words.subarray(p, p + 2 * n);
    for (let i = 0; i < n; i++) if (listEntries[2 * i] >= count || (i > 0 && listEntries[2 * i] <= listEntries[2 * i - 2])) throw new NotASparseIndex(`postings of term ${words[w]} are not ascending offsets below ${count}`);
    lists.push({ term: words[w], nonZero: words[w + 2], max: f32[w + 3], min: f32[w + 4], entries: listEntries });
    p += 2 * n;
  }
  if (total !== postings) throw new NotASparseIndex('posting count does not match the header');
  return { count, documents, lengths, pairs, lists };
}
