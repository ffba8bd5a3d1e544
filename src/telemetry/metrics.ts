// `GET /metrics`: Qdrant's node metrics in Prometheus text format: application info, collection
// figures (points, vectors, optimizations, snapshots, update queues, per collection), REST
// response counters and durations (for Qdrant's selection of point and search endpoints; timings
// only for 200 responses), hardware counters per collection (with hardware reporting), process
// memory, a cluster peer's consensus standing, and quota verdicts, exposed through prom-client:
// each scrape fills a registry of its own with the figures of the moment, in Qdrant's family order.

import { Counter, Gauge, Registry } from 'prom-client';
import type { ClusterTelemetry } from '../cluster/raft-info.js';
import type { ReplicaState } from '../replica/replica.js';
import type { HardwareMeasure, HardwareUsage } from '../shard/hardware.js';
import { vectorCount, vectorsByName } from '../shard/shard-figures.js';
import { VERSION } from '../version.js';
import type { Namer } from './anonymize.js';
import type { NodeState } from './node.js';
import { memoryTelemetry, processFigures } from './process.js';
import type { ReplicaPlacement } from './replica-placement.js';
import { REPORTED_ENDPOINTS, TIMED_STATUS } from './reported-responses.js';
import { pointCount, type CollectionSnapshot } from './snapshot.js';

type Labels = Record<string, string>;

interface Sample {
  labels: Labels;
  value: number;
}

/**
 * Adds a gauge or counter family holding `samples` to the scrape's registry. A family with no
 * samples is left out, as Qdrant leaves it out (prom-client would print its HELP and TYPE alone).
 */
function family(registry: Registry, name: string, help: string, type: 'gauge' | 'counter', samples: Sample[]): void {
  if (samples.length === 0) return;
  const config = { name, help, labelNames: Object.keys(samples[0].labels), registers: [registry] };
  if (type === 'gauge') {
    const gauge = new Gauge(config);
    for (const { labels, value } of samples) gauge.set(labels, value);
  } else {
    // A fresh counter starts at 0: incrementing it by the total sets it.
    const counter = new Counter(config);
    for (const { labels, value } of samples) counter.inc(labels, value);
  }
}

/** The single sample of an unlabelled family. */
function one(value: number): Sample[] {
  return [{ labels: {}, value }];
}

async function responseMetrics(registry: Registry, node: NodeState): Promise<void> {
  const total: Sample[] = [];
  const failed: Sample[] = [];
  const avg: Sample[] = [];
  const min: Sample[] = [];
  const max: Sample[] = [];
  for (const [key, statuses] of node.requests.snapshot()) {
    const [method, endpoint] = key.split(' ');
    if (!REPORTED_ENDPOINTS.has(endpoint)) continue;
    for (const [status, stats] of statuses) {
      const labels = { method, endpoint, status: String(status) };
      total.push({ labels, value: stats.count });
      // Qdrant files every REST response under its status code as a completed operation, so
      // none counts as failed (failures show as their 4xx/5xx statuses).
      failed.push({ labels, value: 0 });
      if (status !== TIMED_STATUS) continue;
      avg.push({ labels, value: stats.avg_duration_micros / 1e6 });
      min.push({ labels, value: stats.min_duration_micros / 1e6 });
      max.push({ labels, value: stats.max_duration_micros / 1e6 });
    }
  }
  family(registry, 'rest_responses_total', 'total number of responses', 'counter', total);
  family(registry, 'rest_responses_fail_total', 'total number of failed responses', 'counter', failed);
  family(registry, 'rest_responses_avg_duration_seconds', 'average response duration', 'gauge', avg);
  family(registry, 'rest_responses_min_duration_seconds', 'minimum response duration', 'gauge', min);
  family(registry, 'rest_responses_max_duration_seconds', 'maximum response duration', 'gauge', max);
  // The histogram lives as long as the node; it joins the scrape once it holds a series.
  if ((await node.requests.durations.get()).values.length > 0) registry.registerMetric(node.requests.durations);
}

/** Qdrant's per-collection metrics (labelled `id`, `collection_vectors` by `collection` and `vector`). */
/** Qdrant's active replicas (`ReplicaState::is_active`): a replica kept through a resharding down still counts. */
const ACTIVE: ReadonlySet<ReplicaState> = new Set<ReplicaState>(['Active', 'ReshardingScaleDown']);

/**
 * The replica gauges over every shard's replica states, as Qdrant counts them: the fewest and
 * most active replicas of a shard (0 and 0 without shards), leaving out a shard being resharded
 * up (a replica in `Resharding`), which no read or update relies on yet; and, despite the help
 * text, the number of shards with some replica not active.
 */
export function replicaGauges(shards: readonly (readonly ReplicaState[])[]): { min: number; max: number; dead: number } {
  const active = shards.filter((states) => !states.includes('Resharding')).map((states) => states.filter((s) => ACTIVE.has(s)).length);
  return {
    min: active.length ? Math.min(...active) : 0,
    max: active.length ? Math.max(...active) : 0,
    dead: shards.filter((states) => states.some((s) => !ACTIVE.has(s))).length,
  };
}

function collectionMetrics(registry: Registry, node: NodeState, snapshot: CollectionSnapshot[], placement: ReplicaPlacement, names: Namer): void {
  const perCollection = (value: (c: CollectionSnapshot) => number): Sample[] => snapshot.map((c) => ({ labels: { id: names(c.record.name) }, value: value(c) }));
  const snapshots = (c: CollectionSnapshot) => node.snapshots.of(c.record.name);
  family(registry, 'collections_total', 'number of collections', 'gauge', one(snapshot.length));
  family(registry, 'collections_vector_total', 'total number of vectors in all collections', 'gauge', one(snapshot.reduce((n, c) => n + vectorCount(c.shards), 0)));
  family(registry, 'collection_vectors', 'amount of vectors grouped by vector name', 'gauge',
    snapshot.flatMap((c) => Object.entries(vectorsByName(c.shards)).map(([vector, value]) => ({ labels: { collection: names(c.record.name), vector }, value }))));
  // Every shard's replicas, whether or not this node holds one of them (its figures count its own only).
  const replicas = replicaGauges(snapshot.flatMap((c) => [...c.shards, ...c.elsewhere].map((shard) => [...placement.replicasOf(c.record.name, shard.id).values()])));
  family(registry, 'collection_active_replicas_min', 'minimum number of active replicas across all shards', 'gauge', one(replicas.min));
  family(registry, 'collection_active_replicas_max', 'maximum number of active replicas across all shards', 'gauge', one(replicas.max));
  family(registry, 'collection_running_optimizations', 'number of currently running optimization tasks per collection', 'gauge',
    perCollection((c) => c.shards.reduce((n, s) => n + s.runningOptimizations, 0)));
  family(registry, 'collection_points', 'approximate amount of points per collection', 'gauge', perCollection(pointCount));
  family(registry, 'collection_dead_replicas', 'total amount of shard replicas in non-active state', 'gauge', one(replicas.dead));
  family(registry, 'snapshot_creation_running', 'amount of snapshot creations that are currently running', 'gauge', perCollection((c) => snapshots(c).running_snapshots));
  family(registry, 'snapshot_recovery_running', 'amount of snapshot recovery operations currently running', 'gauge', perCollection((c) => snapshots(c).running_snapshot_recovery));
  family(registry, 'snapshot_created_total', 'total amount of snapshots created', 'counter', perCollection((c) => snapshots(c).total_snapshot_creations));
  // This peer's transfers (a single node has none).
  const transfers = (c: CollectionSnapshot, into: boolean) => placement.transfersOf(c.record.name).filter((t) => (into ? t.to : t.from) === placement.self).length;
  family(registry, 'collection_shard_transfer_incoming', 'incoming shard transfers currently running', 'gauge', perCollection((c) => transfers(c, true)));
  family(registry, 'collection_shard_transfer_outgoing', 'outgoing shard transfers currently running', 'gauge', perCollection((c) => transfers(c, false)));
  family(registry, 'collection_update_queue_length', 'number of pending operations in update queues per collection', 'gauge',
    perCollection((c) => c.shards.reduce((n, s) => n + s.queuedUpdates, 0)));
  // Quiver hides no point from reads until it is optimized.
  family(registry, 'collection_update_queue_deferred_points', "number of points currently hidden during read operations as they're not yet optimized", 'gauge', perCollection(() => 0));
}

/** The `collection_hardware_metric_*` counters (reported with `service.hardware_reporting`), labelled `id`. */
const HARDWARE_FAMILIES: [HardwareMeasure, string][] = [
  ['cpu', 'CPU measurements of a collection'],
  ['payload_io_read', 'Total IO payload read metrics of a collection'],
  ['payload_index_io_read', 'Total IO payload index read metrics of a collection'],
  ['payload_index_io_write', 'Total IO payload index write metrics of a collection'],
  ['payload_io_write', 'Total IO payload write metrics of a collection'],
  ['vector_io_read', 'Total IO vector read metrics of a collection'],
  ['vector_io_write', 'Total IO vector write metrics of a collection'],
];

function hardwareMetrics(registry: Registry, hardware: [string, HardwareUsage][], names: Namer): void {
  for (const [measure, help] of HARDWARE_FAMILIES) {
    family(registry, `collection_hardware_metric_${measure}`, help, 'counter', hardware.map(([name, usage]) => ({ labels: { id: names(name) }, value: usage[measure] })));
  }
}

function processMetrics(registry: Registry): void {
  const memory = memoryTelemetry();
  family(registry, 'memory_active_bytes', 'Total number of bytes in active pages allocated by the application', 'gauge', one(memory.active_bytes));
  family(registry, 'memory_allocated_bytes', 'Total number of bytes allocated by the application', 'gauge', one(memory.allocated_bytes));
  family(registry, 'memory_metadata_bytes', 'Total number of bytes dedicated to metadata', 'gauge', one(memory.metadata_bytes));
  family(registry, 'memory_resident_bytes', 'Maximum number of bytes in physically resident data pages mapped', 'gauge', one(memory.resident_bytes));
  family(registry, 'memory_retained_bytes', 'Total number of bytes in virtual memory mappings', 'gauge', one(memory.retained_bytes));
  const proc = processFigures();
  if (!proc) return;
  family(registry, 'process_threads', 'count of active threads', 'gauge', one(proc.threads));
  family(registry, 'process_open_mmaps', 'count of open mmaps', 'gauge', one(proc.openMmaps));
  family(registry, 'system_max_mmaps', 'system wide limit of open mmaps', 'gauge', one(proc.systemMaxMmaps));
  family(registry, 'process_open_fds', 'count of currently open file descriptors', 'gauge', one(proc.openFds));
  family(registry, 'process_max_fds', 'limit for open file descriptors', 'gauge', one(proc.maxFds));
  family(registry, 'process_minor_page_faults_total', "count of minor page faults which didn't cause a disk access", 'counter', one(proc.minorFaults));
  family(registry, 'process_major_page_faults_total', 'count of disk accesses caused by a mmap page fault', 'counter', one(proc.majorFaults));
  family(registry, 'process_minor_page_faults_children_total', 'count of minor page faults caused by waited-for child processes', 'counter', one(proc.childMinorFaults));
  family(registry, 'process_major_page_faults_children_total', 'count of major page faults caused by waited-for child processes', 'counter', one(proc.childMajorFaults));
}

export interface MetricsSources {
  node: NodeState;
  snapshot: CollectionSnapshot[];
  names: Namer;
  /** Hardware used per collection; null without `service.hardware_reporting`. */
  hardware: [string, HardwareUsage][] | null;
  /** Where the shards' replicas are and their states (on a single node, one Active replica each). */
  placement: ReplicaPlacement;
  /** The node's `cluster` telemetry at details level 1 (anonymized as the scrape asks). */
  cluster: ClusterTelemetry;
}

/**
 * A cluster peer's consensus families, from the status of its `cluster` telemetry as Qdrant
 * derives them: peers and term always; commit (labelled with the peer id), pending operations and
 * voter only when the status names the peer, which anonymized telemetry does not.
 */
function consensusMetrics(registry: Registry, status: NonNullable<ClusterTelemetry['status']>): void {
  family(registry, 'cluster_peers_total', 'total number of cluster peers', 'gauge', one(status.number_of_peers));
  family(registry, 'cluster_term', 'current cluster term', 'counter', one(status.term));
  if (status.peer_id === undefined) return;
  family(registry, 'cluster_commit', 'index of last committed (finalized) operation cluster peer is aware of', 'counter', [{ labels: { peer_id: String(status.peer_id) }, value: status.commit }]);
  family(registry, 'cluster_pending_operations_total', 'total number of pending operations for cluster peer', 'gauge', one(status.pending_operations));
  family(registry, 'cluster_voter', 'is cluster peer a voter or learner', 'gauge', one(Number(status.is_voter)));
}

/** The exposition's content type (Prometheus text format 0.0.4), as Qdrant serves it. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export async function renderMetrics({ node, snapshot, names, hardware, placement, cluster }: MetricsSources): Promise<string> {
  // A registry per scrape: its families hold this scrape's figures only, named as the caller may see them.
  const registry = new Registry();
  family(registry, 'app_info', 'information about qdrant server', 'gauge', [{ labels: { name: 'qdrant', version: VERSION }, value: 1 }]);
  family(registry, 'app_status_recovery_mode', 'features enabled in qdrant server', 'gauge', one(0));
  collectionMetrics(registry, node, snapshot, placement, names);
  family(registry, 'cluster_enabled', 'is cluster support enabled', 'gauge', one(Number(cluster.enabled)));
  if (cluster.status) consensusMetrics(registry, cluster.status);
  await responseMetrics(registry, node);
  if (hardware) hardwareMetrics(registry, hardware, names);
  processMetrics(registry);
  const exceeded = node.quota.exceeded();
  const quota: Sample[] = [];
  if (exceeded.resident_memory !== null) quota.push({ labels: { resource: 'memory' }, value: Number(exceeded.resident_memory) });
  if (exceeded.disk_usage !== null) quota.push({ labels: { resource: 'disk' }, value: Number(exceeded.disk_usage) });
  family(registry, 'quota_exceeded', 'whether a resource quota is reached and updates consuming it are refused', 'gauge', quota);
  // prom-client separates families by a blank line; Qdrant writes them back to back. Escaping
  // leaves no other empty line (HELP texts and label values carry newlines as `\n`).
  return (await registry.metrics()).replaceAll('\n\n', '\n');
}
