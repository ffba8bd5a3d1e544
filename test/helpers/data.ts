// Seeded synthetic data and exact references for engine tests.

export { seededRandom as rng, gaussian } from '../../src/bench/synthetic.js';
import { seededRandom as rng, gaussian } from '../../src/bench/synthetic.js';

/**
 * n points of dimension dim in `clusters` clusters (row-major). Each cluster is a random centre
 * plus a random linear image of a `latent`-dimensional Gaussian and a little isotropic noise, so
 * the data has a low intrinsic dimension as real embeddings do (an isotropic 128-d Gaussian has
 * no near neighbours worth the name, for any index).
 */
export function clustered(n: number, dim: number, clusters: number, seed: number, latent = 10, noise = 0.05): Float32Array {
  const next = rng(seed);
  const centres = new Float32Array(clusters * dim);
  for (let i = 0; i < centres.length; i++) centres[i] = 2 * gaussian(next);
  const bases = new Float32Array(clusters * latent * dim);
  for (let i = 0; i < bases.length; i++) bases[i] = gaussian(next) / Math.sqrt(latent);
  const out = new Float32Array(n * dim);
  const z = new Float32Array(latent);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(next() * clusters);
    for (let l = 0; l < latent; l++) z[l] = gaussian(next);
    for (let j = 0; j < dim; j++) {
      let v = centres[c * dim + j] + noise * gaussian(next);
      for (let l = 0; l < latent; l++) v += z[l] * bases[(c * latent + l) * dim + j];
      out[i * dim + j] = v;
    }
  }
  return out;
}

export function uniform(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  const next = rng(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * next();
  return out;
}

export function row(data: Float32Array, dim: number, i: number): Float32Array {
  return data.subarray(i * dim, (i + 1) * dim);
}
