// Node configuration: built-in defaults, then a YAML file, then QDRANT__SECTION__KEY environment
// variables, then command-line flags, each overriding the one before. Keys use Qdrant's names.
// A value the node cannot start with is a ConfigError (src/main.ts: exit status 2).

import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { QuotaConfig } from '../quota/config.js';
import { DEFAULT_WORKER_LIMITS, type WorkerLimits } from '../worker/supervisor.js';
import { checkBoolean, checkPort, checkPositiveInteger, checkSeconds } from './checks.js';
import { checkCluster, defaultClusterConfig, etcdEndpoints, PEER_FLAGS, peerStart, type ClusterConfig, type PeerStart } from './cluster-options.js';
import { ConfigError } from './config-error.js';
import { isTransferMethod, TRANSFER_METHODS, type TransferMethod } from '../replica/transfer-method.js';

/** Qdrant's node types. */
export const NODE_TYPES = ['Normal', 'Listener'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** `storage.snapshot_download`: bounds on a snapshot download for recovery, in seconds. */
export interface DownloadLimits {
  connect_timeout_sec: number;
  response_timeout_sec: number;
  read_timeout_sec: number;
}

export interface QuiverConfig {
  service: {
    host: string;
    http_port: number;
    /** Qdrant's gRPC port (null: none). Quiver serves no gRPC; in cluster mode the peers' etcd members talk on it. */
    grpc_port: number | null;
    api_key: string | null;
    read_only_api_key: string | null;
    jwt_rbac: boolean;
    /** Qdrant's: every response on a collection's points carries the hardware it used (`usage.hardware`). */
    hardware_reporting: boolean;
    enable_tls: boolean;
    /** Quiver's explicit consent to listen beyond loopback without an API key. */
    allow_unauthenticated_bind: boolean;
    max_request_size_mb: number;
    /** Quiver's own limit on a snapshot upload (multipart), which max_request_size_mb does not cover. */
    max_snapshot_upload_mb: number;
    /** Quiver's own: how long a shutdown waits for in-flight requests before it cuts them short. */
    shutdown_timeout_sec: number;
  };
  storage: {
    storage_path: string;
    snapshots_path: string;
    /** Qdrant's `storage.quotas`: read until a quota is set through `PUT /quotas`. */
    quotas: QuotaConfig;
    /** Quiver's own bounds on a snapshot download for recovery (Qdrant has only a fixed 60 s read timeout). */
    snapshot_download: DownloadLimits;
    /** Qdrant's `storage.performance` shard transfer limits per peer (null: no limit); its other keys are not read. */
    performance: { incoming_shard_transfers_limit: number | null; outgoing_shard_transfers_limit: number | null };
    /** Qdrant's `storage.node_type`: a Listener peer's replicas take updates and serve no reads (cluster mode). */
    node_type: NodeType;
    /**
     * Qdrant's `storage.shard_transfer_method`: the method of transfers nobody named one for (an
     * operator's move or replication without `method`: this or stream_records; an automatic
     * recovery: this or wal_delta, as Qdrant chooses). Null: those defaults.
     */
    shard_transfer_method: TransferMethod | null;
  };
  tls: {
    cert: string | null;
    key: string | null;
  };
  /** Shard worker threads (Quiver's own key); defaults to the number of cores. */
  workers: number;
  /** Quiver's own bounds on each shard worker thread: memory, task duration. */
  worker_limits: WorkerLimits;
  /** Qdrant's filter syntax, `LEVEL[,target=level]...` (log-filter.ts). */
  log_level: string;
  cluster: ClusterConfig;
  /** Qdrant's --uri / --bootstrap / --reinit: how this peer enters a deployment in cluster mode. */
  peer: PeerStart;
  /** Qdrant's --storage-snapshot / --force-snapshot: a full-storage snapshot to recover at start-up. */
  recover: { storage_snapshot: string | null; force_snapshot: boolean };
}

type Tree = { [key: string]: unknown };

export function defaultConfig(): QuiverConfig {
  return {
    service: {
      host: '127.0.0.1',
      http_port: 6333,
      grpc_port: 6334,
      api_key: null,
      read_only_api_key: null,
      jwt_rbac: false,
      hardware_reporting: false,
      enable_tls: false,
      allow_unauthenticated_bind: false,
      max_request_size_mb: 32,
      max_snapshot_upload_mb: 16384,
      shutdown_timeout_sec: 30,
    },
    storage: {
      storage_path: './storage',
      snapshots_path: './snapshots',
      quotas: { enabled: false, max_resident_memory_percent: null, max_disk_usage_percent: null, release_margin_percent: null },
      // Qdrant gives up on a body that sends nothing for 60 s; the same bound serves the wait for the answer.
      snapshot_download: { connect_timeout_sec: 10, response_timeout_sec: 60, read_timeout_sec: 60 },
      // Qdrant's defaults: one transfer into and one out of each peer at a time.
      performance: { incoming_shard_transfers_limit: 1, outgoing_shard_transfers_limit: 1 },
      node_type: 'Normal',
      shard_transfer_method: null,
    },
    tls: { cert: null, key: null },
    workers: Math.max(1, availableParallelism()),
    worker_limits: { ...DEFAULT_WORKER_LIMITS },
    log_level: 'INFO',
    cluster: defaultClusterConfig(),
    peer: { uri: null, bootstrap: null, reinit: false },
    recover: { storage_snapshot: null, force_snapshot: false },
  };
}

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Copies the keys of `source` that `target` has, recursing into sections; unknown keys are ignored as Qdrant ignores them. */
function overlay(target: Tree, source: Tree): void {
  for (const [key, value] of Object.entries(source)) {
    if (!(key in target)) continue;
    if (isTree(target[key]) && isTree(value)) overlay(target[key] as Tree, value);
    else target[key] = value;
  }
}

/** QDRANT__SERVICE__HTTP_PORT=6334 -> { service: { http_port: 6334 } }; values parse as YAML scalars. */
export function fromEnvironment(env: NodeJS.ProcessEnv): Tree {
  const tree: Tree = {};
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('QDRANT__') || raw === undefined) continue;
    const path = name.slice('QDRANT__'.length).toLowerCase().split('__');
    let node = tree;
    for (const part of path.slice(0, -1)) node = (node[part] ??= {}) as Tree;
    node[path[path.length - 1]] = TEXT_SETTINGS.has(path.join('.')) ? raw : (parseYaml(raw) ?? raw);
  }
  return tree;
}

/** Settings whose value is opaque text: a key like `0123` or `a: b` must not be read as YAML. */
const TEXT_SETTINGS = new Set(['service.api_key', 'service.read_only_api_key', 'tls.cert', 'tls.key', 'log_level']);

const FLAGS = {
  'config-path': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'storage-path': { type: 'string' },
  'snapshots-path': { type: 'string' },
  workers: { type: 'string' },
  'allow-unauthenticated-bind': { type: 'boolean' },
  'storage-snapshot': { type: 'string' },
  'force-snapshot': { type: 'boolean' },
  ...PEER_FLAGS,
} as const;

export function loadConfig(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): QuiverConfig {
  const flags = parseFlags(argv);
  const config = defaultConfig();
  const file = flags['config-path'] ?? env.QUIVER_CONFIG_PATH ?? 'config/config.yaml';
  if (existsSync(file)) {
    const parsed: unknown = parseYaml(readFileSync(file, 'utf8'));
    if (isTree(parsed)) overlay(config as unknown as Tree, parsed);
  } else if (flags['config-path']) {
    throw new ConfigError(`config file not found: ${file}`);
  }
  overlay(config as unknown as Tree, fromEnvironment(env));
  if (flags.host) config.service.host = flags.host;
  if (flags.port) config.service.http_port = Number(flags.port);
  if (flags['storage-path']) config.storage.storage_path = flags['storage-path'];
  if (flags['snapshots-path']) config.storage.snapshots_path = flags['snapshots-path'];
  if (flags.workers) config.workers = Number(flags.workers);
  if (flags['allow-unauthenticated-bind']) config.service.allow_unauthenticated_bind = true;
  if (flags['storage-snapshot']) config.recover.storage_snapshot = flags['storage-snapshot'];
  if (flags['force-snapshot']) config.recover.force_snapshot = true;
  config.peer = peerStart(flags, env);
  config.cluster.etcd.endpoints = etcdEndpoints(config.cluster.etcd.endpoints);
  validate(config);
  return config;
}

/** The command line; an unknown flag or a flag without its value is a ConfigError, as clap refuses them. */
function parseFlags(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: FLAGS, strict: true }).values;
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function validate(config: QuiverConfig): void {
  checkPort('service.http_port', config.service.http_port, true);
  checkPositiveInteger('workers', config.workers);
  for (const [key, value] of Object.entries(config.storage.snapshot_download)) checkSeconds(`storage.snapshot_download.${key}`, value);
  checkSeconds('service.shutdown_timeout_sec', config.service.shutdown_timeout_sec);
  for (const [key, value] of Object.entries(config.storage.performance)) {
    if (value !== null && !(Number.isInteger(value) && value >= 0)) throw new ConfigError(`invalid storage.performance.${key}: ${String(value)} (a whole number of transfers, or null)`);
  }
  const method = config.storage.shard_transfer_method;
  if (method !== null && !isTransferMethod(method)) throw new ConfigError(`invalid storage.shard_transfer_method: ${String(method)} (${TRANSFER_METHODS.join(', ')}, or null)`);
  if (!NODE_TYPES.includes(config.storage.node_type)) throw new ConfigError(`invalid storage.node_type: ${String(config.storage.node_type)} (Normal or Listener)`);
  checkBoolean('service.hardware_reporting', config.service.hardware_reporting);
  const limits = config.worker_limits;
  checkSeconds('worker_limits.task_timeout_sec', limits.task_timeout_sec);
  checkSeconds('worker_limits.deadline_grace_sec', limits.deadline_grace_sec);
  if (limits.memory_mb !== null && !(Number.isInteger(limits.memory_mb) && limits.memory_mb > 0)) throw new ConfigError(`invalid worker_limits.memory_mb: ${limits.memory_mb} (a positive number of MiB, or null)`);
  if (typeof config.log_level !== 'string') throw new ConfigError(`invalid log_level: ${String(config.log_level)} (a level such as INFO, or a filter such as INFO,raft::raft=warn)`);
  checkCluster(config.cluster, config.service);
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.');
}
