// The stored sparse vectors by offset (the forward side of the inverted index): one arena of
// indices and one of values, each document a contiguous sorted run [start, start + length).
// A replaced or deleted document leaves its old run behind as garbage; the arena compacts once
// garbage passes half of it. The exact scan scores documents from here, deletes and replacements
// read here which posting lists to touch, and persistence writes it out.

import type { SortedSparse } from './sparse-vector.js';

/** `length` of an offset that holds no document. */
export const ABSENT = 0xffffffff;

export class SparseStore {
  indices = new Uint32Array(1024);
  values = new Float32Array(1024);
  /** Arena entries in use (garbage included). */
  used = 0;
  garbage = 0;
  starts = new Uint32Array(64);
  lengths = new Uint32Array(64).fill(ABSENT);
  /** One past the highest offset ever stored. */
  count = 0;
  /** Offsets holding a document (an empty one counts). */
  documents = 0;

  get capacity(): number {
    return this.starts.length;
  }

  get byteLength(): number {
    return this.indices.byteLength + this.values.byteLength + this.starts.byteLength + this.lengths.byteLength;
  }

  has(offset: number): boolean {
    return offset < this.count && this.lengths[offset] !== ABSENT;
  }

  /** Makes room for offsets below n. */
  reserve(n: number): void {
    if (n <= this.starts.length) return;
    const cap = Math.max(n, this.starts.length * 2);
    const starts = new Uint32Array(cap);
    starts.set(this.starts);
    const lengths = new Uint32Array(cap).fill(ABSENT);
    lengths.set(this.lengths);
    this.starts = starts;
    this.lengths = lengths;
  }

  /** Stores `doc` at `offset`, replacing what was there. */
  put(offset: number, doc: SortedSparse): void {
    this.reserve(offset + 1);
    this.drop(offset);
    const n = doc.indices.length;
    if (this.used + n > this.indices.length) this.grow(n);
    this.indices.set(doc.indices, this.used);
    this.values.set(doc.values, this.used);
    this.starts[offset] = this.used;
    this.lengths[offset] = n;
    this.used += n;
    this.documents++;
    if (offset >= this.count) this.count = offset + 1;
  }

  /** Forgets the document at `offset`; false if there was none. */
  drop(offset: number): boolean {
    if (!this.has(offset)) return false;
    this.garbage += this.lengths[offset];
    this.lengths[offset] = ABSENT;
    this.documents--;
    return true;
  }

  /** The stored document (views into the arena: valid until the next put). */
  get(offset: number): SortedSparse | null {
    if (!this.has(offset)) return null;
    const s = this.starts[offset];
    const e = s + this.lengths[offset];
    return { indices: this.indices.subarray(s, e), values: this.values.subarray(s, e) };
  }

  /** Drops the runs of replaced and deleted documents. */
  compact(): void {
    if (this.garbage > 0) this.rebuild(Math.max(1024, this.used - this.garbage));
  }

  /** Makes room for `extra` more entries: compacts when half the arena is garbage, else doubles it. */
  private grow(extra: number): void {
    const live = this.used - this.garbage;
    this.rebuild(Math.max(1024, (live + extra) * 2, this.garbage * 2 > this.used ? 0 : this.indices.length * 2));
  }

  /** Copies the live runs, in offset order, into fresh arenas of `cap` entries. */
  private rebuild(cap: number): void {
    const indices = new Uint32Array(cap);
    const values = new Float32Array(cap);
    let w = 0;
    for (let o = 0; o < this.count; o++) {
      const n = this.lengths[o];
      if (n === ABSENT) continue;
      const s = this.starts[o];
      indices.set(this.indices.subarray(s, s + n), w);
      values.set(this.values.subarray(s, s + n), w);
      this.starts[o] = w;
      w += n;
    }
    this.indices = indices;
    this.values = values;
    this.used = w;
    this.garbage = 0;
  }
}
