// `GET /metrics`: Qdrant's node metrics in Prometheus text format: application info, collection
// figures (points, vectors, optimizations, snapshots, update queues, per collection), REST
// response counters and durations (for Qdrant's selection of point and search endpoints; timings
// only for 200 responses), hardware counters per collection (with hardware reporting), process
// memory, and quota verdicts.

import type { HardwareMeasure, HardwareUsage } from '../shard/hardware.js';
import { VERSION } from '../version.js';
import type { Namer } from './anonymize.js';
import type { NodeState } from './node.js';
import { memoryTelemetry, processFigures } from './process.js';
import { MetricsText, type HistogramSample, type Sample } from './prometheus.js';
import { DURATION_BUCKETS_SECONDS } from './request-stats.js';
import { pointCount, vectorCount, vectorsByName, type CollectionSnapshot } from './snapshot.js';

/** The REST endpoints Qdrant reports response metrics for. */
const REPORTED_ENDPOINTS = new Set([
  '/collections/{collection_name}/index',
  '/collections/{collection_name}/points',
  '/collections/{collection_name}/points/batch',
  '/collections/{collection_name}/points/count',
  '/collections/{collection_name}/points/delete',
  '/collections/{collection_name}/points/discover',
  '/collections/{collection_name}/points/discover/batch',
  '/collections/{collection_name}/points/facet',
  '/collections/{collection_name}/points/payload',
  '/collections/{collection_name}/points/payload/clear',
  '/collections/{collection_name}/points/payload/delete',
  '/collections/{collection_name}/points/query',
  '/collections/{collection_name}/points/query/batch',
  '/collections/{collection_name}/points/query/groups',
  '/collections/{collection_name}/points/recommend',
  '/collections/{collection_name}/points/recommend/batch',
  '/collections/{collection_name}/points/recommend/groups',
  '/collections/{collection_name}/points/scroll',
  '/collections/{collection_name}/points/search',
  '/collections/{collection_name}/points/search/batch',
  '/collections/{collection_name}/points/search/groups',
  '/collections/{collection_name}/points/search/matrix/offsets',
  '/collections/{collection_name}/points/search/matrix/pairs',
  '/collections/{collection_name}/points/vectors',
  '/collections/{collection_name}/points/vectors/delete',
]);

const TIMED_STATUS = 200;

function responseMetrics(out: MetricsText, node: NodeState): void {
  const total: Sample[] = [];
  const failed: Sample[] = [];
  const avg: Sample[] = [];
  const min: Sample[] = [];
  const max: Sample[] = [];
  const durations: HistogramSample[] = [];
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
      durations.push({
        labels,
        buckets: DURATION_BUCKETS_SECONDS.map((bound, i) => [bound, stats.buckets[i]]),
        sum: stats.total_duration_micros / 1e6,
        count: stats.count,
      });
    }
  }
  out
    .family('rest_responses_total', 'total number of responses', 'counter', total)
    .family('rest_responses_fail_total', 'total number of failed responses', 'counter', failed)
    .family('rest_responses_avg_duration_seconds', 'average response duration', 'gauge', avg)
    .family('rest_responses_min_duration_seconds', 'minimum response duration', 'gauge', min)
    .family('rest_responses_max_duration_seconds', 'maximum response duration', 'gauge', max)
    .histogram('rest_responses_duration_seconds', 'response duration histogram', durations);
}

/** Qdrant's per-collection metrics (labelled `id`, `collection_vectors` by `collection` and `vector`). */
function collectionMetrics(out: MetricsText, node: NodeState, snapshot: CollectionSnapshot[], names: Namer): void {
  const perCollection = (value: (c: CollectionSnapshot) => number): Sample[] => snapshot.map((c) => ({ labels: { id: names(c.record.name) }, value: value(c) }));
  const shardCount = snapshot.reduce((n, c) => n + c.shards.length, 0);
  const snapshots = (c: CollectionSnapshot) => node.snapshots.of(c.record.name);
  out
    .family('collections_total', 'number of collections', 'gauge', [{ labels: {}, value: snapshot.length }])
    .family('collections_vector_total', 'total number of vectors in all collections', 'gauge', [
      { labels: {}, value: snapshot.reduce((n, c) => n + vectorCount(c.shards), 0) },
    ])
    .family('collection_vectors', 'amount of vectors grouped by vector name', 'gauge',
      snapshot.flatMap((c) => Object.entries(vectorsByName(c.shards)).map(([vector, value]) => ({ labels: { collection: names(c.record.name), vector }, value }))))
    // One replica per shard, always active: the extremes are 1 and nothing is dead once a shard exists.
    .family('collection_active_replicas_min', 'minimum number of active replicas across all shards', 'gauge', [{ labels: {}, value: shardCount ? 1 : 0 }])
    .family('collection_active_replicas_max', 'maximum number of active replicas across all shards', 'gauge', [{ labels: {}, value: shardCount ? 1 : 0 }])
    .family('collection_running_optimizations', 'number of currently running optimization tasks per collection', 'gauge',
      perCollection((c) => c.shards.reduce((n, s) => n + s.runningOptimizations, 0)))
    .family('collection_points', 'approximate amount of points per collection', 'gauge', perCollection(pointCount))
    .family('collection_dead_replicas', 'total amount of shard replicas in non-active state', 'gauge', [{ labels: {}, value: 0 }])
    .family('snapshot_creation_running', 'amount of snapshot creations that are currently running', 'gauge', perCollection((c) => snapshots(c).running_snapshots))
    .family('snapshot_recovery_running', 'amount of snapshot recovery operations currently running', 'gauge', perCollection((c) => snapshots(c).running_snapshot_recovery))
    .family('snapshot_created_total', 'total amount of snapshots created', 'counter', perCollection((c) => snapshots(c).total_snapshot_creations))
    // A single node transfers no shards.
    .family('collection_shard_transfer_incoming', 'incoming shard transfers currently running', 'gauge', perCollection(() => 0))
    .family('collection_shard_transfer_outgoing', 'outgoing shard transfers currently running', 'gauge', perCollection(() => 0))
    .family('collection_update_queue_length', 'number of pending operations in update queues per collection', 'gauge',
      perCollection((c) => c.shards.reduce((n, s) => n + s.queuedUpdates, 0)))
    // Quiver hides no point from reads until it is optimized.
    .family('collection_update_queue_deferred_points', "number of points currently hidden during read operations as they're not yet optimized", 'gauge', perCollection(() => 0));
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

function hardwareMetrics(out: MetricsText, hardware: [string, HardwareUsage][], names: Namer): void {
  for (const [measure, help] of HARDWARE_FAMILIES) {
    out.family(`collection_hardware_metric_${measure}`, help, 'counter', hardware.map(([name, usage]) => ({ labels: { id: names(name) }, value: usage[measure] })));
  }
}

export interface MetricsSources {
  node: NodeState;
  snapshot: CollectionSnapshot[];
  names: Namer;
  /** Hardware used per collection; null without `service.hardware_reporting`. */
  hardware: [string, HardwareUsage][] | null;
}

export function renderMetrics({ node, snapshot, names, hardware }: MetricsSources): string {
  const out = new MetricsText();
  out
    .family('app_info', 'information about qdrant server', 'gauge', [{ labels: { name: 'qdrant', version: VERSION }, value: 1 }])
    .family('app_status_recovery_mode', 'features enabled in qdrant server', 'gauge', [{ labels: {}, value: 0 }]);
  collectionMetrics(out, node, snapshot, names);
  out.family('cluster_enabled', 'is cluster support enabled', 'gauge', [{ labels: {}, value: 0 }]);
  responseMetrics(out, node);
  if (hardware) hardwareMetrics(out, hardware, names);
  const memory = memoryTelemetry();
  out
    .family('memory_active_bytes', 'Total number of bytes in active pages allocated by the application', 'gauge', [{ labels: {}, value: memory.active_bytes }])
    .family('memory_allocated_bytes', 'Total number of bytes allocated by the application', 'gauge', [{ labels: {}, value: memory.allocated_bytes }])
    .family('memory_metadata_bytes', 'Total number of bytes dedicated to metadata', 'gauge', [{ labels: {}, value: memory.metadata_bytes }])
    .family('memory_resident_bytes', 'Maximum number of bytes in physically resident data pages mapped', 'gauge', [{ labels: {}, value: memory.resident_bytes }])
    .family('memory_retained_bytes', 'Total number of bytes in virtual memory mappings', 'gauge', [{ labels: {}, value: memory.retained_bytes }]);
  const proc = processFigures();
  if (proc) {
    const one = (value: number): Sample[] => [{ labels: {}, value }];
    out
      .family('process_threads', 'count of active threads', 'gauge', one(proc.threads))
      .family('process_open_mmaps', 'count of open mmaps', 'gauge', one(proc.openMmaps))
      .family('system_max_mmaps', 'system wide limit of open mmaps', 'gauge', one(proc.systemMaxMmaps))
      .family('process_open_fds', 'count of currently open file descriptors', 'gauge', one(proc.openFds))
      .family('process_max_fds', 'limit for open file descriptors', 'gauge', one(proc.maxFds))
      .family('process_minor_page_faults_total', "count of minor page faults which didn't cause a disk access", 'counter', one(proc.minorFaults))
      .family('process_major_page_faults_total', 'count of disk accesses caused by a mmap page fault', 'counter', one(proc.majorFaults))
      .family('process_minor_page_faults_children_total', 'count of minor page faults caused by waited-for child processes', 'counter', one(proc.childMinorFaults))
      .family('process_major_page_faults_children_total', 'count of major page faults caused by waited-for child processes', 'counter', one(proc.childMajorFaults));
  }
  const exceeded = node.quota.exceeded();
  const quota: Sample[] = [];
  if (exceeded.resident_memory !== null) quota.push({ labels: { resource: 'memory' }, value: Number(exceeded.resident_memory) });
  if (exceeded.disk_usage !== null) quota.push({ labels: { resource: 'disk' }, value: Number(exceeded.disk_usage) });
  out.family('quota_exceeded', 'whether a resource quota is reached and updates consuming it are refused', 'gauge', quota);
  return out.toString();
}
