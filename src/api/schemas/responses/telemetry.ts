// GET /telemetry (TelemetryData) and GET /cluster/telemetry (DistributedTelemetryData). Each part
// a detail level or the caller's grant leaves out is optional, as in Qdrant. Telemetry is being
// extended on another branch; fields Quiver does not send yet are Qdrant 1.19's, optional.

import { bool, jsonObject, map, seq, str, uint, unitEnum, type Schema } from '../builders.js';
import { COLLECTION_CONFIG_TELEMETRY, COLLECTION_PARAMS, OPTIMIZERS_STATUS } from './collection.js';
import { CONSENSUS_THREAD_STATUS, REPLICA_STATE, RESHARDING_INFO, SHARD_TRANSFER_INFO, STATE_ROLE } from './cluster.js';
import { SHARD_KEY } from './points.js';
import { QUOTA_CONFIG } from './service.js';
import { anyOf, closed, COUNT, DATE_TIME, F32, nullable } from './shape.js';

const PEER_ID = uint('u64');
const SHARD_ID = uint('u32');
const SHARD_STATUS = unitEnum(['green', 'yellow', 'grey', 'red']);
const OPEN_OBJECT = jsonObject();

const DURATION_STATISTICS = closed({
  count: COUNT,
  fail_count: nullable(COUNT),
  avg_duration_micros: nullable(F32),
  min_duration_micros: nullable(F32),
  max_duration_micros: nullable(F32),
  total_duration_micros: nullable(uint('u64')),
  last_responded: nullable(DATE_TIME),
}, ['count']);

const RESPONSES = map(map(DURATION_STATISTICS));
const API_TELEMETRY = closed({ responses: RESPONSES, per_collection_responses: nullable(map(RESPONSES)) }, ['responses']);

const APP = closed({
  name: str(),
  version: str(),
  features: nullable(closed({ debug: bool(), service_debug_feature: bool(), recovery_mode: bool(), gpu: bool(), rocksdb: bool(), staging: bool() },
    ['debug', 'service_debug_feature', 'recovery_mode', 'gpu', 'rocksdb', 'staging'])),
  // Qdrant's internal feature flags and global HNSW settings: open objects Quiver does not produce.
  runtime_features: nullable(OPEN_OBJECT),
  low_memory_mode: nullable(str()),
  hnsw_global_config: nullable(OPEN_OBJECT),
  system: nullable(closed({
    distribution: nullable(str()),
    distribution_version: nullable(str()),
    is_docker: bool(),
    cores: nullable(COUNT),
    cpu_cores_used: nullable(F32),
    ram_size: nullable(COUNT),
    disk_size: nullable(COUNT),
    cpu_flags: str(),
    cpu_endian: nullable(unitEnum(['little', 'big', 'other'])),
    gpu_devices: nullable(seq(OPEN_OBJECT)),
  }, ['is_docker', 'cpu_flags'])),
  jwt_rbac: nullable(bool()),
  hide_jwt_dashboard: nullable(bool()),
  audit: nullable(OPEN_OBJECT),
  startup: DATE_TIME,
}, ['name', 'version', 'startup']);

const SHARD_FIGURES: Record<string, Schema> = {
  status: nullable(SHARD_STATUS),
  total_optimized_points: COUNT,
  vectors_size_bytes: nullable(COUNT),
  payloads_size_bytes: nullable(COUNT),
  num_points: nullable(COUNT),
  num_vectors: nullable(COUNT),
  num_vectors_by_name: nullable(map(COUNT)),
};

const PARTIAL_SNAPSHOT = closed({ ongoing_create_snapshot_requests: COUNT, is_recovering: bool(), recovery_timestamp: uint('u64') },
  ['ongoing_create_snapshot_requests', 'is_recovering', 'recovery_timestamp']);

const SHARD_CLEAN_STATUS = anyOf(unitEnum(['started', 'done', 'cancelled']), closed({ progress: OPEN_OBJECT }, ['progress']), closed({ failed: OPEN_OBJECT }, ['failed']));

const LOCAL_SHARD = closed({
  variant_name: nullable(str()),
  ...SHARD_FIGURES,
  // Segment-level telemetry: Quiver has no segments to report.
  segments: nullable(seq(OPEN_OBJECT)),
  optimizations: nullable(closed({ status: OPTIMIZERS_STATUS, optimizations: DURATION_STATISTICS, log: nullable(seq(OPEN_OBJECT)) }, ['status', 'optimizations'])),
  async_scorer: nullable(bool()),
  indexed_only_excluded_vectors: nullable(map(COUNT)),
  update_queue: nullable(closed({ length: COUNT, op_num: nullable(COUNT), deferred_points: nullable(COUNT) }, ['length'])),
}, ['total_optimized_points']);

const REPLICA_SET = closed({
  id: SHARD_ID,
  key: nullable(SHARD_KEY),
  local: nullable(LOCAL_SHARD),
  remote: seq(closed({ shard_id: SHARD_ID, peer_id: PEER_ID, searches: nullable(DURATION_STATISTICS), updates: nullable(DURATION_STATISTICS) }, ['shard_id', 'peer_id'])),
  replicate_states: map(REPLICA_STATE),
  partial_snapshot: nullable(PARTIAL_SNAPSHOT),
}, ['id', 'remote', 'replicate_states']);

const COLLECTION = closed({
  id: str(),
  init_time_ms: nullable(uint('u64')),
  config: nullable(COLLECTION_CONFIG_TELEMETRY),
  shards: nullable(seq(REPLICA_SET)),
  transfers: nullable(seq(SHARD_TRANSFER_INFO)),
  resharding: nullable(seq(RESHARDING_INFO)),
  shard_clean_tasks: nullable(map(SHARD_CLEAN_STATUS)),
}, ['id']);

const AGGREGATED_COLLECTION = closed({ vectors: COUNT, optimizers_status: OPTIMIZERS_STATUS, params: COLLECTION_PARAMS }, ['vectors', 'optimizers_status', 'params']);

const COLLECTIONS = closed({
  number_of_collections: COUNT,
  max_collections: nullable(COUNT),
  collections: nullable(seq(anyOf(COLLECTION, AGGREGATED_COLLECTION))),
  snapshots: nullable(seq(closed({
    id: str(), running_snapshots: nullable(COUNT), running_snapshot_recovery: nullable(COUNT), total_snapshot_creations: nullable(COUNT),
  }, ['id']))),
}, ['number_of_collections']);

const CLUSTER = closed({
  enabled: bool(),
  status: nullable(closed({
    number_of_peers: COUNT, term: uint('u64'), commit: uint('u64'), pending_operations: COUNT, role: nullable(STATE_ROLE), is_voter: bool(),
    peer_id: nullable(PEER_ID), consensus_thread_status: CONSENSUS_THREAD_STATUS,
  }, ['number_of_peers', 'term', 'commit', 'pending_operations', 'is_voter', 'consensus_thread_status'])),
  config: nullable(OPEN_OBJECT),
  peers: nullable(map(closed({ uri: str() }, ['uri']))),
  peer_metadata: nullable(map(OPEN_OBJECT)),
  metadata: nullable(OPEN_OBJECT),
  resharding_enabled: nullable(bool()),
}, ['enabled']);

const MEMORY = closed({ active_bytes: COUNT, allocated_bytes: COUNT, metadata_bytes: COUNT, resident_bytes: COUNT, retained_bytes: COUNT },
  ['active_bytes', 'allocated_bytes', 'metadata_bytes', 'resident_bytes', 'retained_bytes']);

export const TELEMETRY_DATA = closed({
  id: str(),
  app: nullable(APP),
  collections: COLLECTIONS,
  cluster: nullable(CLUSTER),
  requests: nullable(closed({ rest: API_TELEMETRY, grpc: API_TELEMETRY }, ['rest', 'grpc'])),
  memory: nullable(MEMORY),
  // Hardware counters per collection (with `service.hardware_reporting`): being added on another branch.
  hardware: nullable(closed({ collection_data: map(OPEN_OBJECT) }, ['collection_data'])),
  search_pool: nullable(closed({ mode: str(), high_cpu_threads: COUNT, high_io_threads: COUNT }, ['mode', 'high_cpu_threads', 'high_io_threads'])),
  quota: nullable(closed({ config: QUOTA_CONFIG, exceeded: closed({ resident_memory: nullable(bool()), disk_usage: nullable(bool()) }) }, ['config', 'exceeded'])),
}, ['id', 'collections']);

const DISTRIBUTED_REPLICA = closed({
  peer_id: PEER_ID,
  state: REPLICA_STATE,
  ...SHARD_FIGURES,
  total_optimized_points: nullable(COUNT),
  shard_cleaning_status: nullable(SHARD_CLEAN_STATUS),
  partial_snapshot: nullable(PARTIAL_SNAPSHOT),
}, ['peer_id', 'state']);

export const DISTRIBUTED_TELEMETRY_DATA = closed({
  collections: map(closed({
    id: str(),
    shards: nullable(seq(closed({ id: SHARD_ID, key: nullable(SHARD_KEY), replicas: seq(DISTRIBUTED_REPLICA) }, ['id', 'replicas']))),
    reshardings: nullable(seq(RESHARDING_INFO)),
    shard_transfers: nullable(seq(SHARD_TRANSFER_INFO)),
  }, ['id'])),
  cluster: nullable(closed({
    enabled: bool(),
    number_of_peers: nullable(uint('u64')),
    peers: map(closed({
      uri: str(),
      responsive: bool(),
      details: nullable(closed({
        version: str(), role: nullable(STATE_ROLE), is_voter: bool(), term: uint('u64'), commit: uint('u64'), num_pending_operations: uint('u64'),
        consensus_thread_status: CONSENSUS_THREAD_STATUS,
      }, ['version', 'is_voter', 'term', 'commit', 'num_pending_operations', 'consensus_thread_status'])),
    }, ['uri', 'responsive'])),
  }, ['enabled', 'peers'])),
}, ['collections']);
