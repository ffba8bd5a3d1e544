// Seeded synthetic data and exact references for engine tests.

/** mulberry32: small seeded generator so failures reproduce. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function gaussian(next: () => number): number {
  const u = Math.max(next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
}

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
