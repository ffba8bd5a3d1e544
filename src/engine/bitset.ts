// A fixed-size set of offsets, 32 per word, in the exact layout the engine reads as an
// allow-bitset (bit i of word i >> 5), so handing it to a search is one copy.

export class Bitset {
  readonly words: Uint32Array;

  constructor(readonly size: number) {
    this.words = new Uint32Array((size + 31) >>> 5);
  }

  static of(size: number, offsets: Iterable<number>): Bitset {
    const set = new Bitset(size);
    for (const offset of offsets) set.add(offset);
    return set;
  }

  add(offset: number): void {
    this.words[offset >>> 5] |= 1 << (offset & 31);
  }

  delete(offset: number): void {
    this.words[offset >>> 5] &= ~(1 << (offset & 31));
  }

  has(offset: number): boolean {
    return offset < this.size && (this.words[offset >>> 5] & (1 << (offset & 31))) !== 0;
  }

  count(): number {
    let total = 0;
    for (let w of this.words) {
      w -= (w >>> 1) & 0x55555555;
      w = (w & 0x33333333) + ((w >>> 2) & 0x33333333);
      total += (((w + (w >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
    return total;
  }

  /** A copy with the same size and members. */
  clone(): Bitset {
    const copy = new Bitset(this.size);
    copy.words.set(this.words);
    return copy;
  }

  /** Keeps only the members also in `other` (same size). */
  and(other: Bitset): this {
    const w = this.words;
    const o = other.words;
    for (let i = 0; i < w.length; i++) w[i] &= o[i];
    return this;
  }

  /** Adds every member of `other` (same size). */
  or(other: Bitset): this {
    const w = this.words;
    const o = other.words;
    for (let i = 0; i < w.length; i++) w[i] |= o[i];
    return this;
  }

  /** Drops every member of `other` (same size). */
  andNot(other: Bitset): this {
    const w = this.words;
    const o = other.words;
    for (let i = 0; i < w.length; i++) w[i] &= ~o[i];
    return this;
  }

  /** Complements within 0..size-1; bits past size stay clear so count() and iteration hold. */
  invert(): this {
    const w = this.words;
    for (let i = 0; i < w.length; i++) w[i] = ~w[i];
    const tail = this.size & 31;
    if (tail !== 0) w[w.length - 1] &= (1 << tail) - 1;
    return this;
  }

  isEmpty(): boolean {
    for (const w of this.words) if (w !== 0) return false;
    return true;
  }

  /** Members in increasing order. */
  *[Symbol.iterator](): IterableIterator<number> {
    const w = this.words;
    for (let i = 0; i < w.length; i++) {
      let bits = w[i];
      while (bits !== 0) {
        const low = bits & -bits;
        yield (i << 5) + 31 - Math.clz32(low);
        bits ^= low;
      }
    }
  }

  /** Calls fn for each member in increasing order (a plain loop: no iterator per call). */
  forEach(fn: (offset: number) => void): void {
    const w = this.words;
    for (let i = 0; i < w.length; i++) {
      let bits = w[i];
      while (bits !== 0) {
        const low = bits & -bits;
        fn((i << 5) + 31 - Math.clz32(low));
        bits ^= low;
      }
    }
  }
}
