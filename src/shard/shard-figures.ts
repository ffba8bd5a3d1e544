// A shard's figures as Qdrant's telemetry reports a local shard, shared by `/telemetry` (this
// node's shards) and `/cluster/telemetry` (each peer's replicas, src/cluster/telemetry-fan-out.ts):
// every Quiver shard is green, never being optimized. In the shard layer because both the
// cluster layer (a peer's report) and the telemetry layer read it.

import type { ShardStats } from './stats.js';

/** Vector counts by vector name ("" is the unnamed vector) over the given shards. */
export function vectorsByName(shards: ShardStats[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const shard of shards) for (const [name, n] of Object.entries(shard.vectors)) out[name] = (out[name] ?? 0) + n;
  return out;
}

export function vectorCount(shards: ShardStats[]): number {
  return Object.values(vectorsByName(shards)).reduce((a, b) => a + b, 0);
}

export function localShardFigures(shard: ShardStats) {
  return {
    status: 'green' as const,
    total_optimized_points: 0,
    vectors_size_bytes: shard.vectorsBytes,
    payloads_size_bytes: shard.payloadsBytes,
    num_points: shard.points,
    num_vectors: vectorCount([shard]),
    num_vectors_by_name: vectorsByName([shard]),
  };
}
