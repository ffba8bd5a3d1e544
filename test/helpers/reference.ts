// Plain JS reference distances (Qdrant conventions) and brute-force top-k.

import type { Distance } from '../../src/engine/index.js';

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Qdrant's score of b for query a. */
export function score(distance: Distance, a: ArrayLike<number>, b: ArrayLike<number>): number {
  switch (distance) {
    case 'Cosine': {
      const norms = Math.sqrt(dot(a, a)) * Math.sqrt(dot(b, b));
      return norms === 0 ? 0 : dot(a, b) / norms;
    }
    case 'Dot':
      return dot(a, b);
    case 'Euclid': {
      let s = 0;
      for (let i = 0; i < a.length; i++) s += (a[i] - b[i]) ** 2;
      return Math.sqrt(s);
    }
    case 'Manhattan': {
      let s = 0;
      for (let i = 0; i < a.length; i++) s += Math.abs(a[i] - b[i]);
      return s;
    }
  }
}

export function better(distance: Distance, x: number, y: number): boolean {
  return distance === 'Cosine' || distance === 'Dot' ? x > y : x < y;
}

/** Exact top-k offsets among rows accepted by `allow`. */
export function bruteForce(distance: Distance, data: Float32Array, dim: number, query: ArrayLike<number>, k: number, allow: (i: number) => boolean = () => true): number[] {
  const n = data.length / dim;
  const scored: { i: number; s: number }[] = [];
  for (let i = 0; i < n; i++) {
    if (!allow(i)) continue;
    scored.push({ i, s: score(distance, query, data.subarray(i * dim, (i + 1) * dim)) });
  }
  scored.sort((x, y) => (better(distance, x.s, y.s) ? -1 : better(distance, y.s, x.s) ? 1 : x.i - y.i));
  return scored.slice(0, k).map((x) => x.i);
}

export function recall(found: ArrayLike<number>, truth: number[]): number {
  const t = new Set(truth);
  let hit = 0;
  for (let i = 0; i < found.length; i++) if (t.has(found[i])) hit++;
  return truth.length === 0 ? 1 : hit / truth.length;
}
