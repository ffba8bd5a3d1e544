// Seeded randomness and synthetic clustered vectors for benchmarks and tests (mulberry32, so a
// failing run reproduces).

export { seededRandom } from '../engine/seeded-random.js';

export function gaussian(next: () => number): number {
  return Math.sqrt(-2 * Math.log(Math.max(next(), 1e-12))) * Math.cos(2 * Math.PI * next());
}

export function clusteredVectors(n: number, dim: number, clusters: number, next: () => number): Float32Array {
  const centres = Float32Array.from({ length: clusters * dim }, () => gaussian(next));
  const out = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(next() * clusters);
    for (let j = 0; j < dim; j++) out[i * dim + j] = centres[c * dim + j] + 0.3 * gaussian(next);
  }
  return out;
}
