// One term's posting list: (offset, value) pairs sorted by offset, in two parallel typed arrays
// that grow by doubling. A removed posting is not cut out at once (that moves the whole tail):
// its offset gets the DEAD bit and keeps its place, so the order and binary search still hold;
// the list compacts itself once dead entries outnumber a quarter of it. `max`/`min` bound every
// live value (they only widen until a compaction recomputes them), which is what the pruned
// search needs: a bound that is never too small.

/** High bit of a stored offset: the posting is removed. Offsets therefore stay below 2^31. */
export const DEAD = 0x80000000;
const MASK = 0x7fffffff;

export class PostingList {
  offsets: Uint32Array;
  values: Float32Array;
  /** Entries in use, dead ones included. */
  length = 0;
  dead = 0;
  /** Live postings with a non-zero value: the term's document frequency (Qdrant's n(q_i)). */
  nonZero = 0;
  max = -Infinity;
  min = Infinity;

  constructor(capacity = 4) {
    this.offsets = new Uint32Array(capacity);
    this.values = new Float32Array(capacity);
  }

  get live(): number {
    return this.length - this.dead;
  }

  get byteLength(): number {
    return this.offsets.byteLength + this.values.byteLength;
  }

  /** Adds or revives the posting of `offset` (which must not be live in this list). */
  add(offset: number, value: number): void {
    this.widen(value);
    if (value !== 0) this.nonZero++;
    const n = this.length;
    if (n === 0 || (this.offsets[n - 1] & MASK) < offset) {
      // New offsets come in increasing order: the common case is an append.
      this.ensure(n + 1);
      this.offsets[n] = offset;
      this.values[n] = value;
      this.length = n + 1;
      return;
    }
    const at = this.search(offset);
    if (at < n && (this.offsets[at] & MASK) === offset) {
      this.offsets[at] = offset;
      this.values[at] = value;
      this.dead--;
      return;
    }
    this.ensure(n + 1);
    this.offsets.copyWithin(at + 1, at, n);
    this.values.copyWithin(at + 1, at, n);
    this.offsets[at] = offset;
    this.values[at] = value;
    this.length = n + 1;
  }

  /** Changes the value of the live posting of `offset`; false if there is none. */
  update(offset: number, value: number): boolean {
    const at = this.find(offset);
    if (at < 0) return false;
    if (this.values[at] !== 0) this.nonZero--;
    if (value !== 0) this.nonZero++;
    this.values[at] = value;
    this.widen(value);
    return true;
  }

  /** Marks the live posting of `offset` dead; false if there is none. */
  remove(offset: number): boolean {
    const at = this.find(offset);
    if (at < 0) return false;
    this.offsets[at] |= DEAD;
    if (this.values[at] !== 0) this.nonZero--;
    this.dead++;
    if (this.dead * 4 > this.length) this.compact();
    return true;
  }

  /** Drops dead postings and recomputes the value bounds. */
  compact(): void {
    const o = this.offsets;
    const v = this.values;
    let w = 0;
    let max = -Infinity;
    let min = Infinity;
    for (let r = 0; r < this.length; r++) {
      if (o[r] >= DEAD) continue;
      o[w] = o[r];
      v[w] = v[r];
      if (v[r] > max) max = v[r];
      if (v[r] < min) min = v[r];
      w++;
    }
    this.length = w;
    this.dead = 0;
    this.max = max;
    this.min = min;
    // Give memory back when the list shrank well below its capacity.
    if (o.length > 16 && w * 4 < o.length) this.resize(Math.max(4, w * 2));
  }

  /** First position whose offset (dead bit ignored) is >= `offset`. */
  search(offset: number, from = 0): number {
    const o = this.offsets;
    let lo = from;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((o[mid] & MASK) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Position of the live posting of `offset`, or -1. */
  find(offset: number): number {
    const at = this.search(offset);
    return at < this.length && this.offsets[at] === offset ? at : -1;
  }

  private widen(value: number): void {
    if (value > this.max) this.max = value;
    if (value < this.min) this.min = value;
  }

  private ensure(n: number): void {
    if (n > this.offsets.length) this.resize(Math.max(n, this.offsets.length * 2));
  }

  private resize(capacity: number): void {
    const o = new Uint32Array(capacity);
    const v = new Float32Array(capacity);
    o.set(this.offsets.subarray(0, this.length));
    v.set(this.values.subarray(0, this.length));
    this.offsets = o;
    this.values = v;
  }
}
