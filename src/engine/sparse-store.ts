// The stored sparse vectors by offset (the forward side of the inverted index), in the sparse
// engine's memory: one arena of indices (u32) and one of values (f32), each document a
// contiguous sorted run [starts[o], starts[o] + lengths[o]). A replaced or deleted document leaves
// its old run behind as garbage; the arena compacts once garbage passes half of it. The exact
// scan scores documents here, deletes and replacements read here which posting lists to touch,
// and persistence writes it out.

import type { SparseMemory } from './sparse-memory.js';
import type { SortedSparse } from './sparse-vector.js';

/** `lengths[o]` of an offset that holds no document. */
export const ABSENT = 0xffffffff;

export class SparseStore {
  indicesPtr = 0;
  valuesPtr = 0;
  /** Arena capacity in entries. */
  arena = 0;
  /** Arena entries in use (garbage included). */
  used = 0;
  garbage = 0;
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
    return this.arena * 8 + this.capacity * 8;
  }

  /** Entries of the document at `offset`, or ABSENT. */
  lengthOf(offset: number): number {
    return offset < this.count ? this.mem.u32[(this.lengthsPtr >>> 2) + offset] : ABSENT;
  }

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
    if (this.used + n > this.arena) this.grow(n);
    this.mem.u32.set(doc.indices, (this.indicesPtr >>> 2) + this.used);
    this.mem.f32.set(doc.values, (this.valuesPtr >>> 2) + this.used);
    this.mem.u32[(this.startsPtr >>> 2) + offset] = this.used;
    this.mem.u32[(this.lengthsPtr >>> 2) + offset] = n;
    this.used += n;
    this.documents++;
    if (offset >= this.count) this.count = offset + 1;
  }

  /** Forgets the document at `offset`; false if there was none. */
  drop(offset: number): boolean {
    const n = this.lengthOf(offset);
    if (n === ABSENT) return false;
    this.garbage += n;
    this.mem.u32[(this.lengthsPtr >>> 2) + offset] = ABSENT;
    this.documents--;
    return true;
  }

  /** A copy of the stored document, or null. */
  get(offset: number): SortedSparse | null {
    const n = this.lengthOf(offset);
    if (n === ABSENT) return null;
    const s = this.startOf(offset);
    return {
      indices: this.mem.u32.slice((this.indicesPtr >>> 2) + s, (this.indicesPtr >>> 2) + s + n),
      values: this.mem.f32.slice((this.valuesPtr >>> 2) + s, (this.valuesPtr >>> 2) + s + n),
    };
  }

  /** Drops the runs of replaced and deleted documents. */
  compact(): void {
    if (this.garbage > 0) this.rebuild(Math.max(1024, this.used - this.garbage));
  }

  /** Makes room for `extra` more entries: compacts when half the arena is garbage, else doubles it. */
  private grow(extra: number): void {
    const live = this.used - this.garbage;
    if (this.garbage * 2 > this.used) this.rebuild(Math.max(1024, (live + extra) * 2));
    else {
      const cap = Math.max(1024, this.used + extra, this.arena * 2);
      this.indicesPtr = this.mem.realloc(this.indicesPtr, cap * 4);
      this.valuesPtr = this.mem.realloc(this.valuesPtr, cap * 4);
      this.arena = cap;
    }
  }

  /** Copies the live runs, in offset order, into fresh arenas of `cap` entries. */
  private rebuild(cap: number): void {
    const indicesPtr = this.mem.alloc(cap * 4);
    const valuesPtr = this.mem.alloc(cap * 4);
    const u32 = this.mem.u32;
    const f32 = this.mem.f32;
    const si = this.indicesPtr >>> 2;
    const sv = this.valuesPtr >>> 2;
    const di = indicesPtr >>> 2;
    const dv = valuesPtr >>> 2;
    const starts = this.startsPtr >>> 2;
    const lengths = this.lengthsPtr >>> 2;
    let w = 0;
    for (let o = 0; o < this.count; o++) {
      const n = u32[lengths + o];
      if (n === ABSENT) continue;
      const s = u32[starts + o];
      u32.copyWithin(di + w, si + s, si + s + n);
      f32.copyWithin(dv + w, sv + s, sv + s + n);
      u32[starts + o] = w;
      w += n;
    }
    this.mem.free(this.indicesPtr);
    this.mem.free(this.valuesPtr);
    this.indicesPtr = indicesPtr;
    this.valuesPtr = valuesPtr;
    this.arena = cap;
    this.used = w;
    this.garbage = 0;
  }
}
