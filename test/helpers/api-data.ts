// Deterministic points for the REST tests, and the references they are checked against (vector
// normalisation, Qdrant's id order, float comparison).

import { rng } from './data.js';

export type Id = number | string;

/** A vector of `dim` values in [-1, 1), the same for the same seed. */
export function vectorOf(seed: number, dim: number): number[] {
  const next = rng(seed * 7919 + dim);
  return Array.from({ length: dim }, () => Math.round((next() * 2 - 1) * 1000) / 1000);
}

/** What Qdrant stores for a Cosine vector: the vector divided by its L2 norm. */
export function normalised(vector: number[]): number[] {
  const norm = Math.sqrt(vector.reduce((s, x) => s + x * x, 0));
  return vector.map((x) => x / norm);
}

/** Whether two vectors agree within f32 rounding. */
export function close(a: readonly number[] | undefined, b: readonly number[], tolerance = 1e-5): boolean {
  return a !== undefined && a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) <= tolerance);
}

/** Qdrant's order of point ids: numbers by value, then UUIDs by their canonical text. */
export function compareIds(a: Id, b: Id): number {
  if (typeof a === 'number') return typeof b === 'number' ? a - b : -1;
  if (typeof b === 'number') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A canonical (lowercase, hyphenated) UUID derived from `n`. */
export function uuidOf(n: number): string {
  const next = rng(n + 1);
  const hex = Array.from({ length: 32 }, () => Math.floor(next() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Unique collection names, so tests sharing a server never collide. */
let counter = 0;
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}_${counter}`;
}
