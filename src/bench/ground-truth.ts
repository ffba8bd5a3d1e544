// Exact k nearest neighbours of every query, by the engine's exact scan, cached on disk keyed by
// the data's shape and a content hash so a benchmark computes it once.

import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VectorIndex, type Distance } from '../engine/index.js';
import { engineModule } from '../runtime/wasm-module.js';

export const CACHE_DIR = join(process.cwd(), '.cache', 'quiver');

function fingerprint(base: Float32Array, queries: Float32Array, dim: number, k: number, distance: Distance): string {
  const h = createHash('sha256');
  h.update(`${dim}:${k}:${distance}:`);
  h.update(new Uint8Array(base.buffer, base.byteOffset, base.byteLength));
  h.update(new Uint8Array(queries.buffer, queries.byteOffset, queries.byteLength));
  return h.digest('hex').slice(0, 16);
}

/** Row q holds the k exact neighbours of query q, closest first. */
export async function groundTruth(base: Float32Array, queries: Float32Array, dim: number, k: number, distance: Distance, log: (line: string) => void = () => {}): Promise<Uint32Array> {
  const file = join(CACHE_DIR, `gt-${fingerprint(base, queries, dim, k, distance)}.bin`);
  try {
    return new Uint32Array((await readFile(file)).buffer.slice(0));
  } catch {
    // not cached yet
  }
  const n = base.length / dim;
  const nq = queries.length / dim;
  log(`computing exact ground truth for ${nq} queries over ${n} points (cached in ${file})`);
  const index = await VectorIndex.create(await engineModule(), { dim, distance });
  index.reserve(n);
  for (let i = 0; i < n; i++) index.upsert(i, base.subarray(i * dim, (i + 1) * dim));
  const out = new Uint32Array(nq * k);
  for (let q = 0; q < nq; q++) {
    out.set(index.search(queries.subarray(q * dim, (q + 1) * dim), { limit: k, exact: true }).offsets, q * k);
  }
  await mkdir(CACHE_DIR, { recursive: true });
  await writeFile(file, new Uint8Array(out.buffer));
  return out;
}
