// Exact k nearest neighbours of every query, by the engine's exact scan, cached on disk keyed by
// the data's shape and a content hash so a benchmark computes it once.

import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VectorIndex } from '../engine/index.js';
import { engineModule } from '../runtime/wasm-module.js';
import type { Dataset } from './dataset.js';
import type { Progress } from './progress.js';

export const DEFAULT_CACHE_DIR = join('.cache', 'quiver');

export interface GroundTruth {
  k: number;
  /** Row q holds the k exact neighbours of query q (base offsets), closest first. */
  ids: Uint32Array;
  /** The cache file the ids are stored in (raw little-endian u32). */
  file: string;
}

function fingerprint(data: Dataset, k: number): string {
  const h = createHash('sha256');
  h.update(`${data.dim}:${k}:${data.distance}:`);
  h.update(new Uint8Array(data.base.buffer, data.base.byteOffset, data.base.byteLength));
  h.update(new Uint8Array(data.queries.buffer, data.queries.byteOffset, data.queries.byteLength));
  return h.digest('hex').slice(0, 16);
}

/** The cached ids of `file` when it holds exactly `count` offsets below `n`, else null (absent, truncated or foreign). */
async function cached(file: string, count: number, n: number): Promise<Uint32Array | null> {
  const bytes = await readFile(file).catch(() => null);
  if (!bytes || bytes.byteLength !== count * 4) return null;
  const ids = new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return ids.every((id) => id < n) ? ids : null;
}

export async function groundTruth(data: Dataset, k: number, cacheDir: string, progress: Progress): Promise<GroundTruth> {
  const file = join(cacheDir, `gt-${fingerprint(data, k)}.bin`);
  const { dim } = data;
  const n = data.base.length / dim;
  const nq = data.queries.length / dim;
  const reused = await cached(file, nq * k, n);
  if (reused) {
    progress.note(`ground truth: reusing ${file}`);
    return { k, ids: reused, file };
  }
  const index = await VectorIndex.create(await engineModule(), { dim, distance: data.distance });
  index.reserve(n);
  const loading = progress.start(`ground truth: loading ${n} vectors`, n);
  for (let i = 0; i < n; i++) {
    // Stored unlinked: an exact scan needs no graph, so none is built.
    index.stash(i, data.base.subarray(i * dim, (i + 1) * dim));
    loading.tick();
  }
  loading.done();
  const ids = new Uint32Array(nq * k);
  const scanning = progress.start(`ground truth: exact top ${k} of ${nq} queries`, nq);
  for (let q = 0; q < nq; q++) {
    ids.set(index.search(data.queries.subarray(q * dim, (q + 1) * dim), { limit: k, exact: true }).offsets, q * k);
    scanning.tick();
  }
  scanning.done();
  await mkdir(cacheDir, { recursive: true });
  await writeFile(file, new Uint8Array(ids.buffer));
  return { k, ids, file };
}
