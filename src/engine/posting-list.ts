// One term's posting list: (offset, value) pairs sorted by offset, interleaved in one block of
// the sparse engine's memory (entry p: offset u32 at ptr + 8p, value f32 at ptr + 8p + 4, so the
// scoring loop reads one stream), growing by doubling. A removed posting is not cut out at once
// (that moves the whole tail): its offset gets the DEAD bit and keeps its place, so the order
// and binary search still hold; the list compacts itself once dead entries pass a quarter of it.
// `max`/`min` bound every live value (they only widen until a compaction recomputes them), which
// is what the pruned search needs: a bound that is never too small.

import type { SparseMemory } from './sparse-memory.js';

/** High bit of a stored offset: the posting is removed. Offsets therefore stay below 2^31. */
export const DEAD = 0x80000000;
const MASK = 0x7fffffff;

export class PostingList {
  ptr = 0;
  capacity = 0;
  /** Entries in use, dead ones included. */
  length = 0;
  dead = 0;
  /** Live postings with a non-zero value: the term's document frequency (Qdrant's n(q_i)). */
  nonZero = 0;
  max = -Infinity;
  min = Infinity;

  constructor(private readonly mem: SparseMemory) {}

  /** A list holding `entries` (live (offset, value) pairs, offsets ascending) with their stored statistics. */
  static restore(mem: SparseMemory, entries: Uint32Array, nonZero: number, max: number, min: number): PostingList {
    const list = new PostingList(mem);
    const n = entries.length / 2;
    list.resize(Math.max(n, 4));
    mem.u32.set(entries, list.at(0));
    list.length = n;
    list.nonZero = nonZero;
    list.max = max;
    list.min = min;
    return list;
  }

  get live(): number {
    return this.length - this.dead;
  }

  get byteLength(): number {
    return this.capacity * 8;
  }

  /** Word index of entry p's offset in the engine memory (its value is the next word). */
  at(p: number): number {
    return (this.ptr >>> 2) + 2 * p;
  }

  /** Adds or revives the posting of `offset` (which must not be live in this list). */
  add(offset: number, value: number): void {
    this.widen(value);
    if (value !== 0) this.nonZero++;
    const n = this.length;
    if (n === 0 || (this.mem.u32[this.at(n - 1)] & MASK) < offset) {
      // New offsets come in increasing order: the common case is an append.
      this.ensure(n + 1);
      this.put(n, offset, value);
      this.length = n + 1;
      return;
    }
    const at = this.search(offset);
    if (at < n && (this.mem.u32[this.at(at)] & MASK) === offset) {
      this.put(at, offset, value);
      this.dead--;
      return;
    }
    this.ensure(n + 1);
    this.mem.u32.copyWithin(this.at(at + 1), this.at(at), this.at(n));
    this.put(at, offset, value);
    this.length = n + 1;
  }

  /** Changes the value of the live posting of `offset`; false if there is none. */
  update(offset: number, value: number): boolean {
    const at = this.find(offset);
    if (at < 0) return false;
    const f32 = this.mem.f32;
    const v = this.at(at) + 1;
    if (f32[v] !== 0) this.nonZero--;
    if (value !== 0) this.nonZero++;
    f32[v] = value;
    this.widen(value);
    return true;
  }

  /** Marks the live posting of `offset` dead; false if there is none. */
  remove(offset: number): boolean {
    const at = this.find(offset);
    if (at < 0) return false;
    this.mem.u32[this.at(at)] |= DEAD;
    if (this.mem.f32[this.at(at) + 1] !== 0) this.nonZero--;
    this.dead++;
    if (this.dead * 4 > this.length) this.compact();
    return true;
  }

  /** Drops dead postings and recomputes the value bounds. */
  compact(): void {
    const u32 = this.mem.u32;
    const f32 = this.mem.f32;
    const base = this.at(0);
    let w = 0;
    let max = -Infinity;
    let min = Infinity;
    for (let r = 0; r < this.length; r++) {
      const off = u32[base + 2 * r];
      if (off >= DEAD) continue;
      const x = f32[base + 2 * r + 1];
      u32[base + 2 * w] = off;
      f32[base + 2 * w + 1] = x;
      if (x > max) max = x;
      if (x < min) min = x;
      w++;
    }
    this.length = w;
    this.dead = 0;
    this.max = max;
    this.min = min;
    // Give memory back when the list shrank well below its capacity.
    if (this.capacity > 16 && w * 4 < this.capacity) this.resize(Math.max(4, w * 2));
  }

  /** First position whose offset (dead bit ignored) is >= `offset`, searching from `from`. */
  search(offset: number, from = 0): number {
    const u32 = this.mem.u32;
    const base = this.at(0);
    let lo = from;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((u32[base + 2 * mid] & MASK) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Position of the live posting of `offset`, or -1. */
  find(offset: number): number {
    const at = this.search(offset);
    return at < this.length && this.mem.u32[this.at(at)] === offset ? at : -1;
  }

  /** Gives the block back (the list is dropped). */
  release(): void {
    this.mem.free(this.ptr);
    this.ptr = this.capacity = this.length = 0;
  }

  private put(p: number, offset: number, value: number): void {
    const w = this.at(p);
    this.mem.u32[w] = offset;
    this.mem.f32[w + 1] = value;
  }

  private widen(value: number): void {
    if (value > this.max) this.max = value;
    if (value < this.min) this.min = value;
  }

  private ensure(n: number): void {
    if (n > this.capacity) this.resize(Math.max(n, 4, this.capacity * 2));
  }

  private resize(capacity: number): void {
    this.ptr = this.mem.realloc(this.ptr, capacity * 8);
    this.capacity = capacity;
  }
}
