// A synthetic set shaped like text embeddings (OpenAI's 1536-d by default), generated from a seed
// and cached on disk. Real embeddings are normalised, gather in topics of very unequal size, vary
// within a topic along a few directions far more than along the rest (their intrinsic dimension
// is low), and, once centred, have mixed signs in every dimension. Each vector here is
//   normalise(centre[c] + basis[c] . z + noise)
// with centres drawn around the origin (so sign bits carry information, as binary quantization
// needs), a per-topic basis of LATENT directions with decaying scales (anisotropic spread), z a
// standard gaussian and small isotropic noise. Rows come from one stream, so row i is the same
// whatever the number of rows; the last `queries` rows are held out as queries.

import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import type { Progress } from './progress.js';
import { seededRandom } from './synthetic.js';

export interface EmbeddingSpec {
  /** Rows in all (base and queries). */
  rows: number;
  dim: number;
  clusters: number;
  seed: number;
}

/** Directions of within-topic variation per topic. */
const LATENT = 32;
/** Per-dimension standard deviation of a topic's spread along its basis, relative to the centres' 1. */
const SPREAD = 1;
/** Per-dimension standard deviation of the isotropic noise. */
const NOISE = 0.35;
/** Bumped when the generator changes, so an older cache file is not taken for this one. */
const VERSION = 1;

/** Gaussians from a uniform source, both Box-Muller outputs used. */
function gaussians(next: () => number): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const g = spare;
      spare = null;
      return g;
    }
    const r = Math.sqrt(-2 * Math.log(Math.max(next(), 1e-12)));
    const a = 2 * Math.PI * next();
    spare = r * Math.sin(a);
    return r * Math.cos(a);
  };
}

/** Fills `out` (spec.rows x spec.dim, row-major) with the set; `tick` is called per row. */
export function fillEmbeddings(spec: EmbeddingSpec, out: Float32Array, tick: () => void = () => {}): void {
  const { dim, clusters } = spec;
  const next = seededRandom(spec.seed);
  const gauss = gaussians(next);
  const centres = new Float32Array(clusters * dim);
  for (let i = 0; i < centres.length; i++) centres[i] = gauss();
  // basis[c] is dim x LATENT, row-major, column i scaled by 1/sqrt(i+1) and all by `norm` so the
  // spread's variance per dimension is SPREAD^2: a few directions dominate, as in real embeddings.
  let harmonic = 0;
  for (let i = 0; i < LATENT; i++) harmonic += 1 / (i + 1);
  const norm = SPREAD / Math.sqrt(harmonic);
  const scale = Float32Array.from({ length: LATENT }, (_, i) => norm / Math.sqrt(i + 1));
  const basis = new Float32Array(clusters * dim * LATENT);
  for (let i = 0; i < basis.length; i++) basis[i] = gauss() * scale[i % LATENT];
  const z = new Float32Array(LATENT);
  for (let row = 0; row < spec.rows; row++) {
    // Topic sizes are skewed: u^2 favours the first topics (the largest gets ~1/sqrt(clusters) of the rows).
    const c = Math.min(clusters - 1, Math.floor(clusters * next() ** 2));
    for (let i = 0; i < LATENT; i++) z[i] = gauss();
    const centre = c * dim;
    const at = row * dim;
    let sum = 0;
    for (let j = 0; j < dim; j++) {
      const b = (c * dim + j) * LATENT;
      let x = centres[centre + j] + NOISE * gauss();
      for (let i = 0; i < LATENT; i++) x += basis[b + i] * z[i];
      out[at + j] = x;
      sum += x * x;
    }
    const inv = 1 / Math.sqrt(sum);
    for (let j = 0; j < dim; j++) out[at + j] *= inv;
    tick();
  }
}

export function embeddingCacheFile(spec: EmbeddingSpec, cacheDir: string): string {
  return join(cacheDir, `embeddings-v${VERSION}-${spec.rows}x${spec.dim}-c${spec.clusters}-s${spec.seed}.f32`);
}

/** Reads up to out.byteLength bytes of `file` into `out`; true when the file holds exactly that many. */
async function readExactly(file: string, out: Float32Array): Promise<boolean> {
  const handle = await open(file, 'r').catch(() => null);
  if (!handle) return false;
  try {
    if ((await handle.stat()).size !== out.byteLength) return false;
    const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    // In chunks: one read is capped at 2 GiB, and the set is read into place without a copy.
    for (let at = 0; at < bytes.byteLength;) {
      const { bytesRead } = await handle.read(bytes, at, Math.min(1 << 28, bytes.byteLength - at), at);
      if (bytesRead === 0) return false;
      at += bytesRead;
    }
    return true;
  } finally {
    await handle.close();
  }
}

async function writeAll(file: string, data: Float32Array): Promise<void> {
  const handle = await open(file, 'w');
  try {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    for (let at = 0; at < bytes.byteLength;) at += (await handle.write(bytes, at, Math.min(1 << 28, bytes.byteLength - at), at)).bytesWritten;
  } finally {
    await handle.close();
  }
}

/** The set of `spec`, from the cache when a file of exactly its size is there, else generated and cached. */
export async function loadEmbeddings(spec: EmbeddingSpec, cacheDir: string, progress: Progress): Promise<Float32Array> {
  const out = new Float32Array(spec.rows * spec.dim);
  const file = embeddingCacheFile(spec, cacheDir);
  if (await readExactly(file, out)) {
    progress.note(`embeddings: reusing ${file}`);
    return out;
  }
  const task = progress.start(`embeddings: generating ${spec.rows} x ${spec.dim} (${spec.clusters} topics, seed ${spec.seed})`, spec.rows);
  fillEmbeddings(spec, out, () => task.tick());
  task.done();
  await mkdir(cacheDir, { recursive: true });
  await writeAll(file, out);
  return out;
}
