// One consistent read of what telemetry and metrics report about collections: each visible
// collection's record and the statistics of each of its shards (in shard id order).

import type { CollectionManager, CollectionRecord } from '../collection/manager.js';
import type { ShardKey } from '../model.js';
import type { ShardStats } from '../shard/stats.js';

/** A shard's statistics with its id and, in a custom-sharded collection, its shard key. */
export interface ShardSnapshot extends ShardStats {
  id: number;
  key?: ShardKey;
}

export interface CollectionSnapshot {
  record: CollectionRecord;
  shards: ShardSnapshot[];
}

/** Collections the caller may see, by name; one dropped while being read is left out. */
export async function takeSnapshot(collections: CollectionManager, canSee: (name: string) => boolean): Promise<CollectionSnapshot[]> {
  const names = collections.names().filter(canSee).sort();
  const read = await Promise.all(names.map(async (name) => {
    try {
      const collection = collections.get(name);
      const placements = collection.shards;
      const stats = await collection.stats();
      return { record: collections.record(name), shards: stats.map((s, i) => ({ ...s, id: placements[i].id, ...(placements[i].shardKey === undefined ? {} : { key: placements[i].shardKey }) })) };
    } catch {
      return null;
    }
  }));
  return read.filter((c): c is CollectionSnapshot => c !== null);
}

export function pointCount(collection: CollectionSnapshot): number {
  return collection.shards.reduce((n, s) => n + s.points, 0);
}

/** Vector counts by vector name ("" is the unnamed vector) over the given shards. */
export function vectorsByName(shards: ShardStats[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const shard of shards) for (const [name, n] of Object.entries(shard.vectors)) out[name] = (out[name] ?? 0) + n;
  return out;
}

export function vectorCount(shards: ShardStats[]): number {
  return Object.values(vectorsByName(shards)).reduce((a, b) => a + b, 0);
}
