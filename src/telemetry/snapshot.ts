// One consistent read of what telemetry and metrics report about collections: each visible
// collection's record and the statistics of each of its shards (in shard id order).

import type { CollectionManager, CollectionRecord } from '../collection/manager.js';
import type { ShardKey } from '../model.js';
import type { ShardStats } from '../shard/stats.js';

/** A shard's statistics with its id and, in a custom-sharded collection, its shard key. */
export interface ShardSnapshot extends ShardStats {
  id: number;
  key?: ShardKey;
  /** Point updates in flight when the snapshot was taken (its update queue). */
  queuedUpdates: number;
  /** Optimizations running now. */
  runningOptimizations: number;
  /** The optimizer's failure, if it stopped on one. */
  optimizerError: string | null;
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
      // Read before the stats, which wait for the updates queued ahead of them.
      const queued = placements.map((p) => p.queuedUpdates);
      const [stats, optimizations] = await Promise.all([collection.stats(), collection.optimizations()]);
      return {
        record: collections.record(name),
        shards: stats.map((s, i) => ({
          ...s,
          id: placements[i].id,
          ...(placements[i].shardKey === undefined ? {} : { key: placements[i].shardKey }),
          queuedUpdates: queued[i],
          runningOptimizations: optimizations[i].running.length,
          optimizerError: optimizations[i].error,
        })),
      };
    } catch {
      return null;
    }
  }));
  return read.filter((c): c is CollectionSnapshot => c !== null);
}

export function pointCount(collection: CollectionSnapshot): number {
  return collection.shards.reduce((n, s) => n + s.points, 0);
}
