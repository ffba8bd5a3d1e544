// Deterministic synthetic multivectors for the multivector benchmark and tests. Each point is a
// list of k vectors (k drawn per point) about one topic, the way the token embeddings of one
// text are: the point picks a topic (a centre plus a random low-dimensional linear image of a
// Gaussian), and each of its vectors is a draw from that topic plus a little isotropic noise.
// The low intrinsic dimension matters: isotropic noise has no near neighbours for any index.

import { gaussian, seededRandom } from './synthetic.js';

export interface MultivectorSet {
  dim: number;
  /** Every vector of every list, row after row. */
  vectors: Float32Array;
  /** Vectors in each list. */
  counts: Uint32Array;
  /** First row of each list in `vectors`. */
  starts: Uint32Array;
}

export interface MultivectorShape {
  points: number;
  dim: number;
  /** Vectors per list, drawn uniformly from minK..maxK. */
  minK: number;
  maxK: number;
  topics: number;
  /** Seed of the topics: sets sharing it (a base and its queries) share topics. */
  topicSeed: number;
  /** Seed of the points drawn from the topics. */
  seed: number;
}

const LATENT = 8;
const NOISE = 0.05;

export function syntheticMultivectors(shape: MultivectorShape): MultivectorSet {
  const { dim, topics } = shape;
  const topicRandom = seededRandom(shape.topicSeed);
  const centres = Float32Array.from({ length: topics * dim }, () => 2 * gaussian(topicRandom));
  const bases = Float32Array.from({ length: topics * LATENT * dim }, () => gaussian(topicRandom) / Math.sqrt(LATENT));
  const next = seededRandom(shape.seed);
  const counts = new Uint32Array(shape.points);
  const starts = new Uint32Array(shape.points);
  let total = 0;
  for (let i = 0; i < shape.points; i++) {
    counts[i] = shape.minK + Math.floor(next() * (shape.maxK - shape.minK + 1));
    starts[i] = total;
    total += counts[i];
  }
  const vectors = new Float32Array(total * dim);
  const z = new Float32Array(LATENT);
  for (let i = 0; i < shape.points; i++) {
    const c = Math.floor(next() * topics);
    for (let r = starts[i]; r < starts[i] + counts[i]; r++) {
      for (let l = 0; l < LATENT; l++) z[l] = gaussian(next);
      for (let j = 0; j < dim; j++) {
        let v = centres[c * dim + j] + NOISE * gaussian(next);
        for (let l = 0; l < LATENT; l++) v += z[l] * bases[(c * LATENT + l) * dim + j];
        vectors[r * dim + j] = v;
      }
    }
  }
  return { dim, vectors, counts, starts };
}

/** The list of point `i`, as one array of counts[i] * dim numbers. */
export function listOf(set: MultivectorSet, i: number): Float32Array {
  return set.vectors.subarray(set.starts[i] * set.dim, (set.starts[i] + set.counts[i]) * set.dim);
}
