// One term's posting list: (offset, value) pairs sorted by offset in one block of the sparse
// engine's memory: the offsets u32[capacity] first, then the values, one per slot, in the
// index's datatype (sparse-datatype.ts: f32, f16 bits or uint8 codes), so the scoring loop reads
// two streams and a narrower datatype takes less memory. The block grows by doubling. A removed
// posting is not cut out at once (that moves the whole tail): its offset gets the DEAD bit and
// keeps its place, so the order and binary search still hold; the list compacts itself once dead
// entries pass a quarter of it. `max`/`min` bound every live value as stored (they only widen
// until a compaction recomputes them), which is what the pruned search needs: a bound that is
// never too small.
//
// uint8 codes depend on the list's min and max (Qdrant's per-list quantization). A change that
// may move them (a value outside the current range, the removal of an extreme code) marks the
// list stale; before a search or an image reads it, `refresh` quantizes every posting again from
// the values as given (the stored vectors), so the codes always follow Qdrant's formula over the
// list's live values.

import { dequantizeU8, fromHalf, KIND, quantizeU8, toHalf, u8Params, VALUE_BYTES, type SparseDatatype, type U8Params } from './sparse-datatype.js';
import type { SparseMemory } from './sparse-memory.js';

/** High bit of a stored offset: the posting is removed. Offsets therefore stay below 2^31. */
export const DEAD = 0x80000000;
const MASK = 0x7fffffff;

/** The value as given of `offset`'s posting in this list (from the stored vectors). */
export type OriginalValue = (offset: number) => number;

export class PostingList {
  ptr = 0;
  capacity = 0;
  /** Entries in use, dead ones included. */
  length = 0;
  dead = 0;
  /** Live postings with a non-zero value as given: the term's document frequency (Qdrant's n(q_i)). */
  nonZero = 0;
  max = -Infinity;
  min = Infinity;
  /** uint8 only: the range of the values as given the codes were made for, their parameters, and whether they must be made again (refresh). */
  range = { min: Infinity, max: -Infinity };
  params: U8Params = u8Params(Infinity, -Infinity);
  stale = false;
  readonly kind: number;
  private readonly width: number;

  constructor(private readonly mem: SparseMemory, readonly term: number, readonly datatype: SparseDatatype = 'float32') {
    this.kind = KIND[datatype];
    this.width = VALUE_BYTES[datatype];
  }

  /** A list holding `offsets` (live, ascending) and their values' stored bytes, with its stored statistics. */
  static restore(mem: SparseMemory, term: number, datatype: SparseDatatype, offsets: Uint32Array, values: Uint8Array, stats: { nonZero: number; max: number; min: number; range: { min: number; max: number } }): PostingList {
    const list = new PostingList(mem, term, datatype);
    const n = offsets.length;
    list.resize(Math.max(n, 4));
    mem.u32.set(offsets, list.ptr >>> 2);
    mem.u8.set(values.subarray(0, n * list.width), list.valuesPtr);
    list.length = n;
    list.nonZero = stats.nonZero;
    list.max = stats.max;
    list.min = stats.min;
    list.range = { ...stats.range };
    list.params = u8Params(stats.range.min, stats.range.max);
    return list;
  }

  get live(): number {
    return this.length - this.dead;
  }

  get byteLength(): number {
    return this.capacity * (4 + this.width);
  }

  /** Byte address of the values. */
  get valuesPtr(): number {
    return this.ptr + 4 * this.capacity;
  }

  /** Offset of entry p (the DEAD bit included). */
  offsetAt(p: number): number {
    return this.mem.u32[(this.ptr >>> 2) + p];
  }

  /** Value of entry p as stored (converted back to a number). */
  value(p: number): number {
    switch (this.kind) {
      case KIND.float16: return fromHalf(this.mem.u8[this.valuesPtr + 2 * p] | (this.mem.u8[this.valuesPtr + 2 * p + 1] << 8));
      case KIND.uint8: return dequantizeU8(this.mem.u8[this.valuesPtr + p], this.params);
      default: return this.mem.f32[(this.valuesPtr >>> 2) + p];
    }
  }

  /** The stored bytes of the live entries' values (after a compaction, every entry's). */
  valueBytes(): Uint8Array {
    return this.mem.u8.subarray(this.valuesPtr, this.valuesPtr + this.length * this.width);
  }

  /** Adds or revives the posting of `offset` (which must not be live in this list). */
  add(offset: number, value: number): void {
    if (value !== 0) this.nonZero++;
    const n = this.length;
    if (n === 0 || (this.offsetAt(n - 1) & MASK) < offset) {
      // New offsets come in increasing order: the common case is an append.
      this.ensure(n + 1);
      this.put(n, offset, value);
      this.length = n + 1;
      return;
    }
    const at = this.search(offset);
    if (at < n && (this.offsetAt(at) & MASK) === offset) {
      this.put(at, offset, value);
      this.dead--;
      return;
    }
    this.ensure(n + 1);
    const base = this.ptr >>> 2;
    this.mem.u32.copyWithin(base + at + 1, base + at, base + n);
    const v = this.valuesPtr;
    this.mem.u8.copyWithin(v + (at + 1) * this.width, v + at * this.width, v + n * this.width);
    this.put(at, offset, value);
    this.length = n + 1;
  }

  /** Changes the value of the live posting of `offset` (whose value as given was `old`); false if there is none. */
  update(offset: number, value: number, old: number): boolean {
    const at = this.find(offset);
    if (at < 0) return false;
    if (old !== 0) this.nonZero--;
    if (value !== 0) this.nonZero++;
    this.retireCode(at);
    this.put(at, offset, value);
    return true;
  }

  /** Marks the live posting of `offset` (whose value as given was `old`) dead; false if there is none. */
  remove(offset: number, old: number): boolean {
    const at = this.find(offset);
    if (at < 0) return false;
    this.retireCode(at);
    this.mem.u32[(this.ptr >>> 2) + at] |= DEAD;
    if (old !== 0) this.nonZero--;
    this.dead++;
    if (this.dead * 4 > this.length) this.compact();
    return true;
  }

  /** Drops dead postings and recomputes the value bounds. */
  compact(): void {
    const u32 = this.mem.u32;
    const u8 = this.mem.u8;
    const base = this.ptr >>> 2;
    const v = this.valuesPtr;
    const width = this.width;
    let w = 0;
    for (let r = 0; r < this.length; r++) {
      const off = u32[base + r];
      if (off >= DEAD) continue;
      u32[base + w] = off;
      if (w !== r) u8.copyWithin(v + w * width, v + r * width, v + (r + 1) * width);
      w++;
    }
    this.length = w;
    this.dead = 0;
    this.bound();
    // Give memory back when the list shrank well below its capacity.
    if (this.capacity > 16 && w * 4 < this.capacity) this.resize(Math.max(4, w * 2));
  }

  /** uint8: quantizes every live posting again with the parameters of their values as given (a no-op unless stale). */
  refresh(original: OriginalValue): void {
    if (!this.stale) return;
    if (this.dead > 0) this.compact();
    this.requantize(Float32Array.from({ length: this.length }, (_, p) => original(this.offsetAt(p))));
  }

  /** uint8: quantizes every posting again from `values`, the values as given in posting order (the list has no dead postings). */
  requantize(values: Float32Array): void {
    let min = Infinity;
    let max = -Infinity;
    for (const x of values) {
      if (x < min) min = x;
      if (x > max) max = x;
    }
    this.range = { min, max };
    this.params = u8Params(min, max);
    const v = this.valuesPtr;
    const u8 = this.mem.u8;
    let lo = 255;
    let hi = 0;
    for (let p = 0; p < values.length; p++) {
      const q = quantizeU8(values[p], this.params);
      u8[v + p] = q;
      if (q < lo) lo = q;
      if (q > hi) hi = q;
    }
    this.stale = false;
    // Codes read back in their order (min + q * diff256 grows with q): the bounds are the extreme codes'.
    this.min = values.length > 0 ? dequantizeU8(lo, this.params) : Infinity;
    this.max = values.length > 0 ? dequantizeU8(hi, this.params) : -Infinity;
  }

  /** First position whose offset (dead bit ignored) is >= `offset`, searching from `from`. */
  search(offset: number, from = 0): number {
    const u32 = this.mem.u32;
    const base = this.ptr >>> 2;
    let lo = from;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((u32[base + mid] & MASK) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Position of the live posting of `offset`, or -1. */
  find(offset: number): number {
    const at = this.search(offset);
    return at < this.length && this.offsetAt(at) === offset ? at : -1;
  }

  /** Gives the block back (the list is dropped). */
  release(): void {
    this.mem.free(this.ptr);
    this.ptr = this.capacity = this.length = 0;
  }

  /** Recomputes max/min over the live values as stored. */
  private bound(): void {
    let max = -Infinity;
    let min = Infinity;
    for (let p = 0; p < this.length; p++) {
      if (this.offsetAt(p) >= DEAD) continue;
      const x = this.value(p);
      if (x > max) max = x;
      if (x < min) min = x;
    }
    this.max = max;
    this.min = min;
  }

  private put(p: number, offset: number, value: number): void {
    this.mem.u32[(this.ptr >>> 2) + p] = offset;
    const v = this.valuesPtr;
    switch (this.kind) {
      case KIND.float16: {
        const h = toHalf(value);
        this.mem.u8[v + 2 * p] = h & 0xff;
        this.mem.u8[v + 2 * p + 1] = h >>> 8;
        break;
      }
      case KIND.uint8: {
        // A value outside the codes' range (or a first one) moves the parameters. A stale list's
        // codes and bounds are all made again before anything reads them: nothing to do now.
        if (this.live === 0 || !(value >= this.range.min && value <= this.range.max)) this.stale = true;
        if (this.stale) return;
        this.mem.u8[v + p] = quantizeU8(value, this.params);
        break;
      }
      default:
        this.mem.f32[(v >>> 2) + p] = value;
    }
    this.widen(this.value(p));
  }

  /** uint8: the removal or change of an extreme code may narrow the parameters. */
  private retireCode(p: number): void {
    if (this.kind !== KIND.uint8) return;
    const q = this.mem.u8[this.valuesPtr + p];
    if (q === 0 || q === 255) this.stale = true;
  }

  private widen(value: number): void {
    if (value > this.max) this.max = value;
    if (value < this.min) this.min = value;
  }

  private ensure(n: number): void {
    if (n > this.capacity) this.resize(Math.max(n, 4, this.capacity * 2));
  }

  /** Re-sizes the block, moving the values to follow the offsets (a move before shrinking, after growing). */
  private resize(capacity: number): void {
    const bytes = this.length * this.width;
    if (capacity < this.capacity) {
      // Shrinking: the values move down first, into what the cut block keeps.
      this.mem.u8.copyWithin(this.ptr + 4 * capacity, this.valuesPtr, this.valuesPtr + bytes);
      this.ptr = this.mem.realloc(this.ptr, capacity * (4 + this.width));
    } else {
      const from = 4 * this.capacity;
      this.ptr = this.mem.realloc(this.ptr, capacity * (4 + this.width));
      this.mem.u8.copyWithin(this.ptr + 4 * capacity, this.ptr + from, this.ptr + from + bytes);
    }
    this.capacity = capacity;
  }
}
