// `GET /telemetry`: Qdrant's TelemetryData for this node. `details_level` sets the depth as in
// Qdrant: 0 counts collections; 1 adds per-collection aggregates, memory and the running
// environment; 2 and above give each collection's full configuration and shards. As in Qdrant, a
// caller without a node-wide grant gets only its collections and the app: no cluster, request
// statistics, memory or quota.

import type { QuiverConfig } from '../config/config.js';
import { renderConfig } from '../api/collection-config.js';
import { renderQuotaConfig } from '../quota/config.js';
import { VERSION } from '../version.js';
import type { Namer } from './anonymize.js';
import type { NodeState } from './node.js';
import { memoryTelemetry, runningEnvironment } from './process.js';
import type { DurationStats, RequestStats } from './request-stats.js';
import { localShardFigures, REPLICA_STATE } from './shard-telemetry.js';
import { vectorCount, type CollectionSnapshot } from './snapshot.js';

export interface TelemetryOptions {
  level: number;
  names: Namer;
  /** Whether the caller holds a node-wide grant. */
  nodeWide: boolean;
}

function collectionTelemetry(collection: CollectionSnapshot, level: number, node: NodeState, names: Namer) {
  const config = renderConfig(collection.record.config);
  if (level < 2) {
    return { vectors: vectorCount(collection.shards), optimizers_status: 'ok', params: config.params };
  }
  return {
    id: names(collection.record.name),
    config,
    shards: collection.shards.map((shard) => ({
      id: shard.id,
      ...(shard.key === undefined ? {} : { key: shard.key }),
      local: {
        variant_name: 'local_shard',
        ...localShardFigures(shard),
        optimizations: { status: 'ok', optimizations: { count: 0 } },
        update_queue: { length: 0, op_num: shard.lastOp },
      },
      remote: [],
      replicate_states: { [node.peerId]: REPLICA_STATE },
    })),
    transfers: [],
    resharding: [],
  };
}

/** Qdrant's OperationDurationStatistics (the bucket counts are for metrics only). */
function durationJson({ buckets: _buckets, ...stats }: DurationStats) {
  return stats;
}

function requestsTelemetry(requests: RequestStats) {
  const responses: Record<string, Record<string, ReturnType<typeof durationJson>>> = {};
  for (const [endpoint, statuses] of requests.snapshot()) {
    responses[endpoint] = Object.fromEntries([...statuses].map(([status, stats]) => [String(status), durationJson(stats)]));
  }
  return { rest: { responses }, grpc: { responses: {} } };
}

export function telemetryData(node: NodeState, config: QuiverConfig, snapshot: CollectionSnapshot[], { level, names, nodeWide }: TelemetryOptions) {
  const detailed = level >= 1;
  const nodeFigures = nodeWide
    ? {
        cluster: { enabled: false },
        requests: requestsTelemetry(node.requests),
        ...(detailed ? { memory: memoryTelemetry() } : {}),
        quota: { config: renderQuotaConfig(node.quota.config), exceeded: node.quota.exceeded() },
      }
    : {};
  return {
    id: node.processId,
    app: {
      name: 'qdrant',
      version: VERSION,
      ...(detailed ? { system: runningEnvironment(config.storage.storage_path) } : {}),
      jwt_rbac: config.service.jwt_rbac,
      startup: node.startedAt.toISOString(),
    },
    collections: {
      number_of_collections: snapshot.length,
      ...(detailed ? { collections: snapshot.map((c) => collectionTelemetry(c, level, node, names)) } : {}),
    },
    ...nodeFigures,
  };
}
