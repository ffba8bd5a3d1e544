// Serialised sparse index: a little-endian byte image of both sides of the index, laid out as
// they sit in the engine's memory, so loading is a handful of block copies rather than an insert
// per document (a shard opens from it instead of re-inserting every point's vector).
//
//   header   u32[8]: MAGIC, VERSION, count (offsets), documents, entries (total non-zeros),
//                    terms (lists), postings (their total live entries), datatype (KIND)
//   lengths  u32[count]: entries of each offset, ABSENT (0xffffffff) for no document
//   pairs    (index u32, value f32)[entries]: each document's run, documents in offset order
//   terms    per list, terms ascending: term u32, n u32, nonZero u32, max f32, min f32, and the
//            range (min f32, max f32) of the values its uint8 codes were made for
//   postings per list in the same order: its n live offsets u32[n], then their values as the
//            datatype stores them, padded to 4 bytes

import { NotASparseIndex } from './sparse-errors.js';
import type { SparseMemory } from './sparse-memory.js';
import type { PostingList } from './posting-list.js';
import { KIND, VALUE_BYTES, type SparseDatatype } from './sparse-datatype.js';
import { ABSENT, type SparseStore } from './sparse-store.js';

const MAGIC = 0x31505351; // "QSP1"
const VERSION = 2;
const HEADER_WORDS = 8;
const TERM_WORDS = 7;

/** Words of a list's postings in the image: offsets, then values padded to a word. */
function postingWords(n: number, datatype: SparseDatatype): number {
  return n + Math.ceil((n * VALUE_BYTES[datatype]) / 4);
}

// Typed arrays use the platform's byte order; every platform Node and browsers run on is
// little-endian, and the check keeps a big-endian one from writing images others misread.
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The image of an index whose lists are all refreshed (no stale uint8 codes). */
export function writeImage(store: SparseStore, lists: ReadonlyMap<number, PostingList>, mem: SparseMemory, datatype: SparseDatatype): Uint8Array {
  if (!LITTLE_ENDIAN) throw new RangeError('sparse index images need a little-endian platform');
  const count = store.count;
  const entries = store.entries;
  const terms = [...lists.keys()].filter((term) => lists.get(term)!.live > 0).sort((a, b) => a - b);
  let postings = 0;
  let postingBlock = 0;
  for (const term of terms) {
    postings += lists.get(term)!.live;
    postingBlock += postingWords(lists.get(term)!.live, datatype);
  }
  const words = new Uint32Array(HEADER_WORDS + count + 2 * entries + TERM_WORDS * terms.length + postingBlock);
  const f32 = new Float32Array(words.buffer);
  const bytes = new Uint8Array(words.buffer);
  words.set([MAGIC, VERSION, count, store.documents, entries, terms.length, postings, KIND[datatype]]);
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
    f32.set([list.max, list.min, list.range.min, list.range.max], w + 3);
    w += TERM_WORDS;
    words.set(mem.u32.subarray(list.ptr >>> 2, (list.ptr >>> 2) + list.length), p);
    bytes.set(list.valueBytes(), 4 * (p + list.length));
    p += postingWords(list.length, datatype);
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
  lists: { term: number; offsets: Uint32Array; values: Uint8Array; stats: { nonZero: number; max: number; min: number; range: { min: number; max: number } } }[];
}

/** The parts of an image written with `datatype` (another datatype's image is refused). */
export function readImage(bytes: Uint8Array, datatype: SparseDatatype): SparseImage {
  if (!LITTLE_ENDIAN) throw new RangeError('sparse index images need a little-endian platform');
  if (bytes.byteLength < HEADER_WORDS * 4 || bytes.byteLength % 4 !== 0) throw new NotASparseIndex(`${bytes.byteLength} bytes`);
  // Views of the bytes where they are word-aligned, else of an aligned copy (they may sit at any
  // offset of a larger buffer); an image is as large as the index, so the copy is avoided.
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  const words = new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
  const f32 = new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
  const [magic, version, count, documents, entries, terms, postings, kind] = words;
  if (magic !== MAGIC) throw new NotASparseIndex('bad magic number');
  if (version !== VERSION) throw new NotASparseIndex(`unknown version ${version}`);
  if (kind !== KIND[datatype]) throw new NotASparseIndex(`written with another datatype than ${datatype}`);
  const fixed = HEADER_WORDS + count + 2 * entries + TERM_WORDS * terms;
  if (words.length < fixed) throw new NotASparseIndex(`${bytes.byteLength} bytes for ${count} offsets, ${entries} entries and ${terms} terms`);
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
  const all = new Uint8Array(aligned.buffer, aligned.byteOffset, aligned.byteLength);
  let p = fixed;
  let total = 0;
  for (let t = 0; t < terms; t++, w += TERM_WORDS) {
    const n = words[w + 1];
    total += n;
    if (total > postings || p + postingWords(n, datatype) > words.length) throw new NotASparseIndex(`list of term ${words[w]} runs past the postings`);
    const offsets = words.subarray(p, p + n);
    for (let i = 0; i < n; i++) if (offsets[i] >= count || (i > 0 && offsets[i] <= offsets[i - 1])) throw new NotASparseIndex(`postings of term ${words[w]} are not ascending offsets below ${count}`);
    const values = all.subarray(4 * (p + n), 4 * (p + n) + n * VALUE_BYTES[datatype]);
    lists.push({ term: words[w], offsets, values, stats: { nonZero: words[w + 2], max: f32[w + 3], min: f32[w + 4], range: { min: f32[w + 5], max: f32[w + 6] } } });
    p += postingWords(n, datatype);
  }
  if (total !== postings || p !== words.length) throw new NotASparseIndex('posting count does not match the header');
  return { count, documents, lengths, pairs, lists };
}
