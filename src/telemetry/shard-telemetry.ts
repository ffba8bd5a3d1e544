// Per-shard figures shared by `/telemetry` (a local shard) and `/cluster/telemetry` (a replica):
// every Quiver shard is a single local replica, always Active, never being optimized.

import type { ShardStats } from '../shard/stats.js';
import { vectorCount, vectorsByName } from './snapshot.js';

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

export const REPLICA_STATE = 'Active';
