// The data a benchmark runs on: base vectors to index and queries, with their distance. Four
// sources: Fashion-MNIST from Debian, seeded synthetic clusters, a seeded embedding-like set
// (cached on disk), or a user's vector file.

import { basename } from 'node:path';
import { DISTANCES, type Distance } from '../engine/index.js';
import { CommandError } from '../errors.js';
import { loadEmbeddings } from './embeddings.js';
import { loadFashionMnist } from './fashion-mnist.js';
import type { Progress } from './progress.js';
import { clusteredVectors, seededRandom } from './synthetic.js';
import { readVectorFile } from './vector-file.js';

export interface Dataset {
  name: string;
  dim: number;
  distance: Distance;
  /** Row-major vectors to index. */
  base: Float32Array;
  /** Row-major query vectors. */
  queries: Float32Array;
}

export interface DatasetOptions {
  /** "fashion-mnist", "synthetic", "embeddings", or a path to a .fvecs/.npy/.json file. */
  source: string;
  /** How many queries to use (Fashion-MNIST: the first N of 10000; files: the last N rows held out unless a query file is given). */
  queries?: number;
  /** Overrides the source's own distance (Fashion-MNIST is Euclid, files default to Euclid). */
  distance?: Distance;
  /** Synthetic and embedding sets: number of base vectors, dimension, clusters, seed (defaults per source). */
  size?: number;
  dim?: number;
  clusters?: number;
  seed?: number;
  /** Files: a separate file of queries. */
  queryFile?: string;
  /** Fashion-MNIST: the directory of Debian's IDX files. */
  fashionMnistDir: string;
  /** Where generated embedding sets are cached. */
  cacheDir: string;
}

/** Sizes of the embedding-like set when not given: OpenAI's 1536-d, 200000 of them in 256 topics. */
export const EMBEDDING_DEFAULTS = { size: 200000, dim: 1536, clusters: 256 };

export async function loadDataset(options: DatasetOptions, progress: Progress): Promise<Dataset> {
  if (options.distance && !DISTANCES.includes(options.distance)) throw new CommandError(`unknown distance "${options.distance}" (one of ${DISTANCES.join(', ')})`);
  if (options.source === 'fashion-mnist') {
    const data = await loadFashionMnist(options.fashionMnistDir);
    const nq = Math.min(options.queries ?? data.queries.length / data.dim, data.queries.length / data.dim);
    const distance = options.distance ?? data.distance;
    return { name: distance === 'Euclid' ? data.name : `fashion-mnist-784-${distance.toLowerCase()}`, dim: data.dim, distance, base: data.base, queries: data.queries.slice(0, nq * data.dim) };
  }
  if (options.source === 'synthetic') {
    const size = options.size ?? 10000;
    const dim = options.dim ?? 128;
    const nq = options.queries ?? 1000;
    const distance = options.distance ?? 'Cosine';
    const all = clusteredVectors(size + nq, dim, options.clusters ?? 32, seededRandom(options.seed ?? 7));
    return { name: `synthetic-${size}x${dim}-${distance.toLowerCase()}`, dim, distance, base: all.slice(0, size * dim), queries: all.slice(size * dim) };
  }
  if (options.source === 'embeddings') {
    const size = options.size ?? EMBEDDING_DEFAULTS.size;
    const dim = options.dim ?? EMBEDDING_DEFAULTS.dim;
    const nq = options.queries ?? 1000;
    const distance = options.distance ?? 'Cosine';
    const all = await loadEmbeddings({ rows: size + nq, dim, clusters: options.clusters ?? EMBEDDING_DEFAULTS.clusters, seed: options.seed ?? 7 }, options.cacheDir, progress);
    // Views, not copies: the full set is 1.2 GB.
    return { name: `embeddings-${size}x${dim}-${distance.toLowerCase()}`, dim, distance, base: all.subarray(0, size * dim), queries: all.subarray(size * dim) };
  }
  const table = await readVectorFile(options.source);
  const distance = options.distance ?? 'Euclid';
  const name = basename(options.source);
  if (options.queryFile) {
    const queries = await readVectorFile(options.queryFile);
    if (queries.dim !== table.dim) throw new CommandError(`${options.queryFile}: dimension ${queries.dim} differs from the base file's ${table.dim}`);
    const nq = Math.min(options.queries ?? Infinity, queries.data.length / queries.dim);
    return { name, dim: table.dim, distance, base: table.data, queries: queries.data.slice(0, nq * table.dim) };
  }
  const rows = table.data.length / table.dim;
  const nq = options.queries ?? Math.max(1, Math.min(1000, Math.floor(rows / 10)));
  if (nq >= rows) throw new CommandError(`${options.source}: ${rows} vectors cannot hold out ${nq} queries; pass --queries N below ${rows} or --query-file`);
  const cut = (rows - nq) * table.dim;
  return { name, dim: table.dim, distance, base: table.data.slice(0, cut), queries: table.data.slice(cut) };
}

export function rowsOf(data: Float32Array, dim: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let i = 0; i < data.length / dim; i++) out.push(data.subarray(i * dim, (i + 1) * dim));
  return out;
}
