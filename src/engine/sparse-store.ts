// The stored sparse vectors by offset (the forward side of the inverted index), in the sparse
// engine's memory. A document is a run of (index u32, value f32) pairs sorted by index, placed in
// chunks of CHUNK pairs (4 MiB) filled in turn; starts[o] is the byte address of offset o's run
// and lengths[o] its pair count (ABSENT: no document). Chunks rather than one growing arena:
// doubling a large block leaves the old one behind as a hole the linear memory never returns,
// which doubled the memory of a large index. A replaced or deleted document leaves its old run
// behind as garbage; once garbage passes half of what the chunks hold, the live runs are copied
// into fresh chunks. The exact scan scores documents here, deletes and replacements read here
// which posting lists to touch, and persistence writes it out.

import type { SparseMemory } from './sparse-memory.js';
import type { SortedSparse } from './sparse-vector.js';

/** `lengths[o]` of an offset that holds no document. */
export const ABSENT = 0xffffffff;

/** Pairs per chunk (a larger document gets a chunk of its own size). */
const CHUNK = 1 << 19;

export class SparseStore {
  /** Chunk addresses and sizes (in pairs); runs are appended to the last one. */
  private chunks: number[] = [];
  private sizes: number[] = [];
  /** Pairs used in the last chunk. */
  private fill = 0;
  /** Pairs held by chunks. */
  private held = 0;
  /** Pairs of live documents. */
  entries = 0;
  startsPtr = 0;
  lengthsPtr = 0;
  /** Offsets the starts/lengths blocks cover. */
  capacity = 0;
  /** One past the highest offset ever stored. */
  count = 0;
  /** Offsets holding a document (an empty one counts). */
  documents = 0;

  constructor(private readonly mem: SparseMemory) {
    this.reserve(64);
  }

  get byteLength(): number {
    return this.held * 8 + this.capacity * 8;
  }

  /** Pairs of the document at `offset`, or ABSENT. */
  lengthOf(offset: number): number {
    return offset < this.count ? this.mem.u32[(this.lengthsPtr >>> 2) + offset] : ABSENT;
  }

  /** Byte address of the document's first pair. */
  startOf(offset: number): number {
    return this.mem.u32[(this.startsPtr >>> 2) + offset];
  }

  has(offset: number): boolean {
    return this.lengthOf(offset) !== ABSENT;
  }

  /** Makes room for offsets below n. */
  reserve(n: number): void {
    if (n <= this.capacity) return;
    const cap = Math.max(n, this.capacity * 2);
    this.startsPtr = this.mem.realloc(this.startsPtr, cap * 4);
    this.lengthsPtr = this.mem.realloc(this.lengthsPtr, cap * 4);
    this.mem.u32.fill(ABSENT, (this.lengthsPtr >>> 2) + this.capacity, (this.lengthsPtr >>> 2) + cap);
    this.capacity = cap;
  }

  /** Stores `doc` at `offset`, replacing what was there. */
  put(offset: number, doc: SortedSparse): void {
    this.reserve(offset + 1);
    this.drop(offset);
    const n = doc.indices.length;
    const at = this.room(n);
    const u32 = this.mem.u32;
    const f32 = this.mem.f32;
    const w = at >>> 2;
    for (let i = 0; i < n; i++) {
      u32[w + 2 * i] = doc.indices[i];
      f32[w + 2 * i + 1] = doc.values[i];
    }
    u32[(this.startsPtr >>> 2) + offset] = at;
    u32[(this.lengthsPtr >>> 2) + offset] = n;
    this.entries += n;
    this.documents++;
    if (offset >= this.count) this.count = offset + 1;
    // Compact once garbage (replaced and deleted runs, unused chunk tails) passes half the chunks.
    if (this.held > 2 * CHUNK && this.entries * 2 < this.held) this.compact();
  }

  /** Forgets the document at `offset`; false if there was none. */
  drop(offset: number): boolean {
    const n = this.lengthOf(offset);
    if (n === ABSENT) return false;
    this.entries -= n;
    this.mem.u32[(this.lengthsPtr >>> 2) + offset] = ABSENT;
    this.documents--;
    return true;
  }

  /** The value at `index` of the document at `offset` (which must hold it). */
  valueOf(offset: number, index: number): number {
    const u32 = this.mem.u32;
    const w = this.startOf(offset) >>> 2;
    let lo = 0;
    let hi = this.lengthOf(offset);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (u32[w + 2 * mid] < index) lo = mid + 1;
      else hi = mid;
    }
    return this.mem.f32[w + 2 * lo + 1];
  }

  /** A copy of the stored document, or null. */
  get(offset: number): SortedSparse | null {
    const n = this.lengthOf(offset);
    if (n === ABSENT) return null;
    const w = this.startOf(offset) >>> 2;
    const indices = new Uint32Array(n);
    const values = new Float32Array(n);
    const u32 = this.mem.u32;
    const f32 = this.mem.f32;
    for (let i = 0; i < n; i++) {
      indices[i] = u32[w + 2 * i];
      values[i] = f32[w + 2 * i + 1];
    }
    return { indices, values };
  }

  /** Calls `visit` with every stored (index, value) pair, documents in offset order. */
  forEachPair(visit: (index: number, value: number) => void): void {
    const u32 = this.mem.u32;
    const f32 = this.mem.f32;
    this.forEachRun((w, n) => {
      for (let i = 0; i < n; i++) visit(u32[w + 2 * i], f32[w + 2 * i + 1]);
    });
  }

  /** Writes every document's pairs, in offset order, into `out` from word `at`; returns the word after them. */
  copyRuns(out: Uint32Array, at: number): number {
    const u32 = this.mem.u32;
    this.forEachRun((from, n) => {
      out.set(u32.subarray(from, from + 2 * n), at);
      at += 2 * n;
    });
    return at;
  }

  /** Calls `visit` with each stored document's first word (index, value pairs) and pair count, in offset order. */
  private forEachRun(visit: (word: number, pairs: number) => void): void {
    const u32 = this.mem.u32;
    const starts = this.startsPtr >>> 2;
    const lengths = this.lengthsPtr >>> 2;
    for (let o = 0; o < this.count; o++) {
      const n = u32[lengths + o];
      if (n !== ABSENT) visit(u32[starts + o] >>> 2, n);
    }
  }

  /**
   * Takes the documents of an image (an empty store only): `lengths` per offset and every
   * document's pairs in offset order, copied into one chunk.
   */
  restore(lengths: Uint32Array, pairs: Uint32Array, documents: number): void {
    const entries = pairs.length / 2;
    this.reserve(lengths.length);
    const at = entries > 0 ? this.room(entries) : 0;
    const u32 = this.mem.u32;
    u32.set(pairs, at >>> 2);
    u32.set(lengths, this.lengthsPtr >>> 2);
    const starts = this.startsPtr >>> 2;
    let next = at;
    for (let o = 0; o < lengths.length; o++) {
      if (lengths[o] === ABSENT) continue;
      u32[starts + o] = next;
      next += lengths[o] * 8;
    }
    this.entries = entries;
    this.documents = documents;
    this.count = lengths.length;
  }

  /** Copies the live runs, in offset order, into fresh chunks and frees the old ones. */
  compact(): void {
    const old = this.chunks;
    this.chunks = [];
    this.sizes = [];
    this.fill = 0;
    this.held = 0;
    const starts = this.startsPtr >>> 2;
    const lengths = this.lengthsPtr >>> 2;
    for (let o = 0; o < this.count; o++) {
      const n = this.mem.u32[lengths + o];
      if (n === ABSENT) continue;
      const to = this.room(n);
      const from = this.mem.u32[starts + o];
      this.mem.u32.copyWithin(to >>> 2, from >>> 2, (from >>> 2) + 2 * n);
      this.mem.u32[starts + o] = to;
    }
    for (const ptr of old) this.mem.free(ptr);
  }

  /** Address of n free pairs at the end of the last chunk, starting a new chunk if needed. */
  private room(n: number): number {
    const last = this.chunks.length - 1;
    if (last < 0 || this.fill + n > this.sizes[last]) {
      const size = Math.max(CHUNK, n);
      this.chunks.push(this.mem.alloc(size * 8));
      this.sizes.push(size);
      this.held += size;
      this.fill = 0;
    }
    const at = this.chunks[this.chunks.length - 1] + this.fill * 8;
    this.fill += n;
    return at;
  }
}
