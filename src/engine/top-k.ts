// The best k (score, offset) pairs seen so far: a binary heap with the worst kept at the root.
// Order is score descending, then offset ascending, so equal scores always come out the same
// way whatever path produced them.

export class TopK {
  private readonly scores: Float64Array;
  private readonly offsets: Uint32Array;
  size = 0;

  constructor(readonly k: number) {
    this.scores = new Float64Array(k);
    this.offsets = new Uint32Array(k);
  }

  /** True when (s1, o1) ranks below (s2, o2). */
  private static worse(s1: number, o1: number, s2: number, o2: number): boolean {
    return s1 < s2 || (s1 === s2 && o1 > o2);
  }

  push(score: number, offset: number): void {
    const s = this.scores;
    const o = this.offsets;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!TopK.worse(score, offset, s[parent], o[parent])) break;
        s[i] = s[parent];
        o[i] = o[parent];
        i = parent;
      }
      s[i] = score;
      o[i] = offset;
      return;
    }
    if (this.k === 0 || !TopK.worse(s[0], o[0], score, offset)) return;
    this.siftDown(score, offset);
  }

  /** The pairs, best first. */
  sorted(): { offsets: Uint32Array; scores: Float32Array } {
    const n = this.size;
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => this.scores[b] - this.scores[a] || this.offsets[a] - this.offsets[b]);
    const offsets = new Uint32Array(n);
    const scores = new Float32Array(n);
    order.forEach((from, to) => {
      offsets[to] = this.offsets[from];
      scores[to] = this.scores[from];
    });
    return { offsets, scores };
  }

  private siftDown(score: number, offset: number): void {
    const s = this.scores;
    const o = this.offsets;
    const n = this.size;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && TopK.worse(s[child + 1], o[child + 1], s[child], o[child])) child++;
      if (!TopK.worse(s[child], o[child], score, offset)) break;
      s[i] = s[child];
      o[i] = o[child];
      i = child;
    }
    s[i] = score;
    o[i] = offset;
  }
}

/**
 * The k-th largest of values[vBase + ids[iBase + i]] for i in [0, n) (n >= k >= 1), with `heap`
 * as scratch of at least k (the arrays are views of engine memory, hence the bases).
 */
export function kthLargest(values: Float64Array, vBase: number, ids: Uint32Array, iBase: number, n: number, k: number, heap: Float64Array): number {
  // A min-heap of the k largest so far; most values fail the first comparison.
  for (let i = 0; i < k; i++) {
    let j = i;
    const v = values[vBase + ids[iBase + i]];
    while (j > 0) {
      const parent = (j - 1) >> 1;
      if (heap[parent] <= v) break;
      heap[j] = heap[parent];
      j = parent;
    }
    heap[j] = v;
  }
  for (let i = k; i < n; i++) {
    const v = values[vBase + ids[iBase + i]];
    if (v <= heap[0]) continue;
    let j = 0;
    for (;;) {
      let child = 2 * j + 1;
      if (child >= k) break;
      if (child + 1 < k && heap[child + 1] < heap[child]) child++;
      if (heap[child] >= v) break;
      heap[j] = heap[child];
      j = child;
    }
    heap[j] = v;
  }
  return heap[0];
}
