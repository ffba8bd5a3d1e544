// `GET /telemetry`: Qdrant's TelemetryData for this node. `details_level` sets the depth as in
// Qdrant: 0 counts collections; 1 adds per-collection aggregates, the build's features, the
// running environment, memory, each collection's hardware usage and the search thread pool; 2
// and above give each collection's full configuration, shards (each with this node's replica, the
// other peers' replicas and every replica's state, from `placement`) and snapshot activity; as in
// Qdrant, figures count this node's replicas only. As in Qdrant, a caller without a node-wide
// grant gets only its collections (and their hardware usage) and the app: no cluster, request
// statistics, memory, search pool or quota.

import type { ClusterTelemetry } from '../cluster/raft-info.js';
import type { QuiverConfig } from '../config/config.js';
import { renderConfig } from '../api/collection-config.js';
import { renderQuotaConfig } from '../quota/config.js';
import { VERSION } from '../version.js';
import type { Namer } from './anonymize.js';
import type { NodeState } from './node.js';
import type { HardwareUsage } from '../shard/hardware.js';
import { withClusterConfig } from './cluster-config-telemetry.js';
import { memoryTelemetry, runningEnvironment } from './process.js';
import type { DurationStats, RequestStats } from './request-stats.js';
import { localShardFigures, vectorCount } from '../shard/shard-figures.js';
import type { ReplicaPlacement } from './replica-placement.js';
import type { CollectionSnapshot, PlacedShard, ShardSnapshot } from './snapshot.js';

export interface TelemetryOptions {
  level: number;
  names: Namer;
  /** Whether the caller holds a node-wide grant. */
  nodeWide: boolean;
  /** Hardware used per collection since the node started. */
  hardware: ReadonlyMap<string, HardwareUsage>;
  /** Shard worker threads: where searches run. */
  workers: number;
  /** The `cluster` section (for a node-wide caller). */
  cluster: ClusterTelemetry;
  /** Where each shard's replicas are and their states. */
  placement: ReplicaPlacement;
}

/**
 * Qdrant's build features as they hold for Quiver: it serves with its release engine build, has
 * no debug service endpoints, recovery mode, GPU support or staging features, and stores in
 * LevelDB rather than RocksDB.
 */
const APP_FEATURES = { debug: false, service_debug_feature: false, recovery_mode: false, gpu: false, rocksdb: false, staging: false };

/** Threads Node's libuv pool runs file and LevelDB work on (UV_THREADPOOL_SIZE, 4 by default). */
function ioThreads(): number {
  const configured = Number(process.env.UV_THREADPOOL_SIZE);
  return Number.isInteger(configured) && configured > 0 ? configured : 4;
}

/**
 * Qdrant's SearchThreadPoolTelemetry: Quiver runs every search on its shard worker threads
 * (CPU-bound, so always in the high-CPU mode), and file and store I/O on libuv's pool.
 */
function searchPool(workers: number) {
  return { mode: 'high_cpu', high_cpu_threads: workers, high_io_threads: ioThreads() };
}

/** Hardware usage per collection: every collection for a node-wide grant, else the visible ones. */
function hardwareTelemetry(options: TelemetryOptions, snapshot: CollectionSnapshot[]) {
  const visible = new Set(snapshot.map((c) => c.record.name));
  const entries = [...options.hardware].filter(([name]) => options.nodeWide || visible.has(name));
  return { collection_data: Object.fromEntries(entries.map(([name, usage]) => [options.names(name), { ...usage }])) };
}

/**
 * Qdrant's ReplicaSetTelemetry of one shard: this node's replica (`held`; null where it holds
 * none), the other peers' replicas, and every replica's state. Quiver does not time the requests
 * it sends to other peers' replicas, so their `searches` and `updates` statistics are null.
 */
function shardTelemetry(shard: PlacedShard, held: ShardSnapshot | null, collection: string, placement: ReplicaPlacement) {
  const replicas = placement.replicasOf(collection, shard.id);
  return {
    id: shard.id,
    ...(shard.key === undefined ? {} : { key: shard.key }),
    local: held && {
      variant_name: 'local_shard',
      ...localShardFigures(held),
      optimizations: { status: held.optimizerError === null ? 'ok' : { error: held.optimizerError }, optimizations: { count: 0 } },
      update_queue: { length: held.queuedUpdates, op_num: held.lastOp },
    },
    remote: [...replicas.keys()].filter((peer) => peer !== placement.self).map((peer) => ({ shard_id: shard.id, peer_id: peer, searches: null, updates: null })),
    replicate_states: Object.fromEntries([...replicas].map(([peer, state]) => [String(peer), state])),
  };
}

function collectionTelemetry(collection: CollectionSnapshot, level: number, placement: ReplicaPlacement, names: Namer) {
  const config = renderConfig(collection.record.config);
  if (level < 2) {
    return { vectors: vectorCount(collection.shards), optimizers_status: 'ok', params: config.params };
  }
  const shards = [...collection.shards.map((held) => ({ shard: held, held })), ...collection.elsewhere.map((shard) => ({ shard, held: null }))]
    .sort((a, b) => a.shard.id - b.shard.id);
  return {
    id: names(collection.record.name),
    config,
    shards: shards.map(({ shard, held }) => shardTelemetry(shard, held, collection.record.name, placement)),
    transfers: placement.transfersOf(collection.record.name),
    resharding: [],
  };
}

function requestsTelemetry(requests: RequestStats) {
  const responses: Record<string, Record<string, DurationStats>> = {};
  for (const [endpoint, statuses] of requests.snapshot()) {
    responses[endpoint] = Object.fromEntries([...statuses].map(([status, stats]) => [String(status), stats]));
  }
  return { rest: { responses }, grpc: { responses: {} } };
}

export function telemetryData(node: NodeState, config: QuiverConfig, snapshot: CollectionSnapshot[], options: TelemetryOptions) {
  const { level, names, nodeWide } = options;
  const detailed = level >= 1;
  const nodeFigures = nodeWide
    ? {
        cluster: withClusterConfig(options.cluster, config.cluster, level),
        requests: requestsTelemetry(node.requests),
        ...(detailed ? { memory: memoryTelemetry() } : {}),
        ...(detailed ? { hardware: hardwareTelemetry(options, snapshot) } : {}),
        ...(detailed ? { search_pool: searchPool(options.workers) } : {}),
        quota: { config: renderQuotaConfig(node.quota.config), exceeded: node.quota.exceeded() },
      }
    : detailed ? { hardware: hardwareTelemetry(options, snapshot) } : {};
  return {
    id: node.processId,
    app: {
      name: 'qdrant',
      version: VERSION,
      ...(detailed ? { features: APP_FEATURES, system: runningEnvironment(config.storage.storage_path, node.cpu) } : {}),
      jwt_rbac: config.service.jwt_rbac,
      startup: node.startedAt.toISOString(),
    },
    collections: {
      number_of_collections: snapshot.length,
      ...(detailed ? {
        collections: snapshot.map((c) => collectionTelemetry(c, level, options.placement, names)),
        snapshots: level >= 2 ? snapshot.map((c) => ({ id: names(c.record.name), ...node.snapshots.of(c.record.name) })) : [],
      } : {}),
    },
    ...nodeFigures,
  };
}
