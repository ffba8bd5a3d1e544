// The set-up the quantization tests through the server share: points of uniform f32 values in
// [-1, 1), one named vector per distance (named by its distance in lower case) holding each
// point, on one shard (unrescored Euclid/Manhattan scores shown are not in internal order, see
// README, quantization) with graphs built at once, and a bounded wait on those graphs.

import type { QdrantClient } from '@qdrant/js-client-rest';
import type { Distance } from '../../src/engine/index.js';
import type { Hit } from './hits.js';
import { better } from './reference.js';

export const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];

export const vectorName = (distance: Distance): string => distance.toLowerCase();

/** `count` vectors of `dim` f32 values uniform in [-1, 1), drawn from `next` in order. */
export function uniformVectors(next: () => number, count: number, dim: number): number[][] {
  return Array.from({ length: count }, () => Array.from({ length: dim }, () => Math.fround(2 * next() - 1)));
}

/** Creates `collection` with one vector per distance under `quantization_config` and upserts `points` (ids 1..n) into each. */
export async function createPerDistance(
  client: QdrantClient, collection: string, dim: number, quantizationConfig: unknown, points: number[][], distances: Distance[] = DISTANCES,
): Promise<void> {
  await client.createCollection(collection, {
    vectors: Object.fromEntries(distances.map((d) => [vectorName(d), { size: dim, distance: d }])),
    quantization_config: quantizationConfig as never,
    shard_number: 1,
    optimizers_config: { indexing_threshold: 1 },
  });
  await client.upsert(collection, { wait: true, points: points.map((p, i) => ({ id: i + 1, vector: Object.fromEntries(distances.map((d) => [vectorName(d), p])) })) });
}

/** Waits (60 s at most) until `collection` is green with `vectors` vectors indexed. */
export async function waitIndexed(client: QdrantClient, collection: string, vectors: number): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 200) {
    const info = await client.getCollection(collection);
    if ((info.indexed_vectors_count ?? 0) >= vectors && info.status === 'green') return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${collection}: the graphs were not built (${JSON.stringify(await client.getCollection(collection))})`);
}

/** The best `limit` hits by the distance's order, ties by id. */
export function ranked(distance: Distance, scored: Hit[], limit: number): Hit[] {
  return scored.sort((x, y) => (better(distance, x.score, y.score) ? -1 : better(distance, y.score, x.score) ? 1 : x.id - y.id)).slice(0, limit);
}
