// One consistent read of what telemetry and metrics report about collections: each visible
// collection's record and, as Qdrant counts a node's figures over its local shards only, the
// statistics of each shard this node holds a replica of, read from that replica (in shard id
// order); on a cluster peer, the collection's other shards (held by other peers only) by id.

import type { CollectionManager, CollectionRecord } from '../collection/manager.js';
import type { ShardKey } from '../model.js';
import type { ShardStats } from '../shard/stats.js';

/** A shard of the collection: its id and, in a custom-sharded collection, its shard key. */
export interface PlacedShard {
  id: number;
  key?: ShardKey;
}

/** The statistics of this node's replica of a shard. */
export interface ShardSnapshot extends ShardStats, PlacedShard {
  /** Point updates in flight when the snapshot was taken (its update queue). */
  queuedUpdates: number;
  /** Optimizations running now. */
  runningOptimizations: number;
  /** The optimizer's failure, if it stopped on one. */
  optimizerError: string | null;
}

export interface CollectionSnapshot {
  record: CollectionRecord;
  /** The shards this node holds a replica of (on a single node, every shard). */
  shards: ShardSnapshot[];
  /** The shards only other peers hold (a cluster peer's). */
  elsewhere: PlacedShard[];
}

/** Collections the caller may see, by name; one dropped while being read is left out. */
export async function takeSnapshot(collections: CollectionManager, canSee: (name: string) => boolean): Promise<CollectionSnapshot[]> {
  const names = collections.names().filter(canSee).sort();
  const read = await Promise.all(names.map(async (name) => {
    try {
      const collection = collections.get(name);
      const placed = collection.shards.map((set) => ({ id: set.id, ...(set.shardKey === undefined ? {} : { key: set.shardKey }), local: set.localReplica, queued: set.queuedUpdates }));
      const held = placed.flatMap(({ local, ...shard }) => (local ? [{ ...shard, local }] : []));
      // The queue lengths are read before the stats, which wait for the updates queued ahead of them.
      const figures = await Promise.all(held.map(({ local }) => Promise.all([local.run({ type: 'stats' }, null), local.run({ type: 'optimizations' }, null)])));
      return {
        record: collections.record(name),
        shards: held.map(({ id, key, queued }, i) => ({
          ...figures[i][0],
          id,
          ...(key === undefined ? {} : { key }),
          queuedUpdates: queued,
          runningOptimizations: figures[i][1].running.length,
          optimizerError: figures[i][1].error,
        })),
        elsewhere: placed.filter((shard) => !shard.local).map(({ id, key }) => ({ id, ...(key === undefined ? {} : { key }) })),
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
