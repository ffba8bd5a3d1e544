// What the engine and the shards need from a collection's configuration: the shard count and,
// per named vector, the index parameters with per-vector overrides applied (as Qdrant applies
// a vector's own hnsw_config and quantization_config over the collection's).

import { BadInput } from '../errors.js';
import type { CollectionConfig } from '../api/collection-config.js';
import type { WireQuantizationConfig } from '../api/types.js';
import type { ScalarQuantization } from '../engine/index.js';
import type { VectorSpec } from '../shard/shard.js';
import type { OptimizerSpec } from '../shard/optimizer/plan.js';
import type { WalSpec } from '../shard/op-log.js';

export type { CollectionConfig };

export function shardCountOf(config: CollectionConfig): number {
  return config.params.shardNumber;
}

function engineQuantization(config: WireQuantizationConfig | null): ScalarQuantization | null {
  if (config === null) return null;
  if ('scalar' in config) return { quantile: config.scalar.quantile ?? 1, alwaysRam: config.scalar.always_ram ?? undefined };
  throw new BadInput(`${Object.keys(config)[0]} quantization is not supported by this server; use scalar int8 quantization`);
}

export function optimizerSpecOf(config: CollectionConfig): OptimizerSpec {
  const { indexingThreshold, deletedThreshold, vacuumMinVectorNumber, maxOptimizationThreads } = config.optimizer;
  return { indexingThresholdKb: indexingThreshold, deletedThreshold, vacuumMinVectorNumber, maxOptimizationThreads };
}

export function walSpecOf(config: CollectionConfig): WalSpec {
  return { capacityBytes: config.wal.walCapacityMb * (1 << 20), retainClosed: config.wal.walRetainClosed };
}

export function vectorSpecsOf(config: CollectionConfig): VectorSpec[] {
  return Object.entries(config.params.vectors.byName).map(([name, v]) => {
    const hnsw = { ...config.hnsw, ...(v.hnsw ?? {}) };
    return {
      name,
      size: v.size,
      distance: v.distance,
      m: hnsw.m,
      efConstruct: hnsw.efConstruct,
      fullScanThreshold: hnsw.fullScanThreshold,
      quantization: engineQuantization(v.quantization ?? config.quantization),
    };
  });
}
