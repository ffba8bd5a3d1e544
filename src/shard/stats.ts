// What a shard holds, by the numbers: points, vectors per name, indexed points per key, sizes.

import { componentBytes } from '../engine/index.js';
import type { Shard } from './shard.js';

export interface ShardStats {
  points: number;
  vectors: Record<string, number>;
  indexedPoints: Record<string, number>;
  lastOp: number;
  /** Estimated bytes of the stored vectors (components in each vector's datatype). */
  vectorsBytes: number;
  /** Estimated bytes of the payloads (their JSON text). */
  payloadsBytes: number;
}

function payloadsBytes(shard: Shard): number {
  let bytes = 0;
  for (let offset = 0; offset < shard.size; offset++) {
    if (shard.isLive(offset)) bytes += shard.payloadBytes(offset);
  }
  return bytes;
}

export function shardStats(shard: Shard): ShardStats {
  const spec = shard.describe();
  return {
    points: shard.pointCount,
    vectors: Object.fromEntries(spec.vectors.map((v) => [v.name, shard.vectorCount(v.name)])),
    indexedPoints: Object.fromEntries(spec.indexes.map((i) => [i.key, shard.indexedPoints(i.key)])),
    lastOp: shard.lastOp,
    vectorsBytes: spec.vectors.reduce((n, v) => n + shard.storedVectorCount(v.name) * componentBytes(v.datatype ?? 'float32', v.size), 0),
    payloadsBytes: payloadsBytes(shard),
  };
}
