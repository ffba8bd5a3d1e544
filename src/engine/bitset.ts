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
}
