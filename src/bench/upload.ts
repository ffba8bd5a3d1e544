// Loading a data set into a collection over HTTP: upserts of `batchSize` points from
// `concurrency` parallel requests (wait=false as a bulk load would, or wait=true), then polling until the
// collection is green, counts every point and answers a search: the time to a searchable index.

import { CommandError } from '../errors.js';
import type { Dataset } from './dataset.js';
import type { HttpTarget } from './http-target.js';
import type { Progress } from './progress.js';

export interface CollectionSpec {
  name: string;
  m: number;
  efConstruct: number;
  int8: boolean;
  /** shard_number (default: the server's, 1). */
  shards?: number;
}

export interface UploadTiming {
  uploadSeconds: number;
  searchableSeconds: number;
}

export async function createCollection(http: HttpTarget, data: Dataset, spec: CollectionSpec): Promise<void> {
  await http.call('DELETE', `/collections/${spec.name}`);
  await http.call('PUT', `/collections/${spec.name}`, {
    vectors: { size: data.dim, distance: data.distance },
    hnsw_config: { m: spec.m, ef_construct: spec.efConstruct },
    ...(spec.shards ? { shard_number: spec.shards } : {}),
    ...(spec.int8 ? { quantization_config: { scalar: { type: 'int8', always_ram: true } } } : {}),
  });
}

const SEARCHABLE_WITHIN_MS = 30 * 60_000;

/** A point's payload by id, for a collection whose searches filter. */
export type PayloadOf = (id: number) => Record<string, unknown>;

export async function upload(http: HttpTarget, data: Dataset, collection: string, batchSize: number, concurrency: number, wait: boolean, progress: Progress, payloadOf?: PayloadOf): Promise<UploadTiming> {
  const { dim } = data;
  const n = data.base.length / dim;
  const task = progress.start(`uploading ${n} points to ${collection} (batches of ${batchSize}, ${concurrency} at a time, wait=${wait})`, n);
  let next = 0;
  const started = performance.now();
  const sender = async () => {
    while (next < n) {
      const start = next;
      next = Math.min(n, next + batchSize);
      const points = [];
      for (let id = start; id < next; id++) points.push({ id, vector: Array.from(data.base.subarray(id * dim, (id + 1) * dim)), ...(payloadOf ? { payload: payloadOf(id) } : {}) });
      await http.call('PUT', `/collections/${collection}/points?wait=${wait}`, { points });
      task.tick(points.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, sender));
  const uploadSeconds = (performance.now() - started) / 1000;
  task.done();
  const probe = Array.from(data.queries.subarray(0, dim));
  const deadline = Date.now() + SEARCHABLE_WITHIN_MS;
  for (;;) {
    if (Date.now() > deadline) throw new CommandError(`${collection} did not become searchable with ${n} points within ${SEARCHABLE_WITHIN_MS / 1000} s`);
    const info = await http.call<{ status: string; points_count: number }>('GET', `/collections/${collection}`);
    if (info.status === 'green' && info.points_count === n) {
      const hits = await http.call<{ points: unknown[] }>('POST', `/collections/${collection}/points/query`, { query: probe, limit: 1 });
      if (hits.points.length === 1) break;
    }
    await new Promise((r) => setTimeout(r, 50)); // readiness poll interval
  }
  return { uploadSeconds, searchableSeconds: (performance.now() - started) / 1000 };
}
