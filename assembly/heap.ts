// A binary min-heap of (key f32, id u32) pairs in linear memory, entries interleaved as 8 bytes
// so one cache line holds eight. A max-heap is the same heap fed negated keys.

@unmanaged
export class Heap {
  base: usize = 0;
  size: i32 = 0;
  cap: i32 = 0;

  @inline clear(): void { this.size = 0; }

  @inline topKey(): f32 { return load<f32>(this.base); }
  @inline topId(): i32 { return load<i32>(this.base, 4); }
  @inline keyAt(i: i32): f32 { return load<f32>(this.base + (<usize>i << 3)); }
  @inline idAt(i: i32): i32 { return load<i32>(this.base + (<usize>i << 3), 4); }

  push(key: f32, id: i32): void {
    if (this.size == this.cap) this.growTo(max(this.cap * 2, 64));
    let i = this.size++;
    const b = this.base;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pk = load<f32>(b + (<usize>parent << 3));
      if (pk <= key) break;
      store<u64>(b + (<usize>i << 3), load<u64>(b + (<usize>parent << 3)));
      i = parent;
    }
    store<f32>(b + (<usize>i << 3), key);
    store<i32>(b + (<usize>i << 3), id, 4);
  }

  /** Removes the smallest entry; read it with topKey/topId first. */
  pop(): void {
    const n = --this.size;
    if (n == 0) return;
    const b = this.base;
    const lastKey = load<f32>(b + (<usize>n << 3));
    const last = load<u64>(b + (<usize>n << 3));
    let i = 0;
    while (true) {
      let child = 2 * i + 1;
      if (child >= n) break;
      let ck = load<f32>(b + (<usize>child << 3));
      if (child + 1 < n) {
        const rk = load<f32>(b + (<usize>(child + 1) << 3));
        if (rk < ck) { child++; ck = rk; }
      }
      if (lastKey <= ck) break;
      store<u64>(b + (<usize>i << 3), load<u64>(b + (<usize>child << 3)));
      i = child;
    }
    store<u64>(b + (<usize>i << 3), last);
  }

  growTo(n: i32): void {
    if (n <= this.cap) return;
    this.base = this.base == 0 ? heap.alloc(<usize>n << 3) : heap.realloc(this.base, <usize>n << 3);
    this.cap = n;
  }
}
