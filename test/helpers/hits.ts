// Comparing the hits a server answered with those a test's exact reference computed.

import type { Test } from 'tap';

export interface Hit {
  id: number;
  score: number;
}

/** Ids (numeric in these tests) and scores of an answer's points, each score read as the f32 the server holds. */
export function brief(points: { id: string | number; score: number }[]): Hit[] {
  return points.map((p) => ({ id: Number(p.id), score: Math.fround(p.score) }));
}

/** Same ids in the same order, scores equal within `tolerance` relative to the larger of 1 and the expected score. */
export function sameHits(t: Test, actual: Hit[], expected: Hit[], what: string, tolerance = 1e-5): void {
  t.same(actual.map((h) => h.id), expected.map((h) => h.id), `${what}: ids`);
  const off = actual.filter((h, i) => Math.abs(h.score - expected[i].score) > tolerance * Math.max(1, Math.abs(expected[i].score)));
  t.same(off, [], `${what}: scores`);
}

/** Printed f32s (Qdrant's short forms, `0.15`) read back as the f32 values the server holds. */
export function asF32(values: readonly number[]): number[] {
  return values.map(Math.fround);
}

/** A printed sparse vector with its values read back as f32s (see asF32). */
export function sparseAsF32(vector: unknown): unknown {
  const v = vector as { indices: number[]; values: number[] } | undefined;
  return v && { indices: v.indices, values: asF32(v.values) };
}
