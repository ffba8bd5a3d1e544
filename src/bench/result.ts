// The shape of a benchmark's JSON result file (and of what the CLI prints and plots).

import type { Datatype, Distance } from '../engine/index.js';
import type { IndexBytes } from './runners.js';
import type { OpenLoopSummary } from './open-loop.js';
import type { Clock, SweepPoint } from './sweep.js';

export type BenchMode = 'engine' | 'server' | 'ingest' | 'multivector';

/** One index configuration of one engine, measured at each ef of the sweep. */
export interface Series {
  engine: string;
  m: number | null;
  efConstruct: number | null;
  /** Engine mode: index build; server mode: upload until searchable. */
  buildSeconds: number;
  /** Bytes the index holds (engine mode), null when not measurable (server mode). */
  memoryBytes: number | null;
  /** Engine mode: the index's data as its library accounts for it, and the full-precision vectors' share of it. */
  indexBytes?: IndexBytes;
  /** Engine mode, Quiver's engines: the element type vectors were stored in. */
  datatype?: Datatype;
  points: SweepPoint[];
}

export interface IngestRow {
  /** The upserts' `wait`: false answers once the write is durable, true once it is applied. */
  wait: boolean;
  batchSize: number;
  concurrency: number;
  points: number;
  /** From the first upsert until the last one is acknowledged. */
  uploadSeconds: number;
  pointsPerSecond: number;
  /** From the first upsert until the collection is green, counts every point and answers searches. */
  searchableSeconds: number;
  /** recall@k of a default search right after it became searchable. */
  recall: number;
}

/** The server hot-path loads (issue 16's table), one row each. */
export const HOT_PATH_LOADS = ['http-floor', 'query', 'batch', 'filter', 'filter-unindexed', 'open-loop', 'upsert', 'start'] as const;
export type HotPathLoad = typeof HOT_PATH_LOADS[number];

/** One load of the server hot path. */
export interface LoadRow {
  load: HotPathLoad;
  /** Requests answered in the timed window (start: 0). */
  requests: number;
  /** Length of the timed window. */
  seconds: number;
  requestsPerSecond: number;
  /** What one request carries, counted: queries (query loads), points (upsert); null for start. */
  unit: 'queries' | 'points' | null;
  /** Units per second: requests x queries per request, or points per second. */
  perSecond: number | null;
  /** Per-request latency (open loop: from each request's due time); null where not measured. */
  p50Ms: number | null;
  p99Ms: number | null;
  /** The load generator's own CPU over the window: this process's user + system time over wall time (1 = one core busy). */
  generatorCpu: number | null;
  /** open-loop: offered rate, late and dropped requests. */
  openLoop?: OpenLoopSummary;
  /** start: milliseconds from spawning a server on empty storage until GET /readyz answers 200. */
  readyMs?: number;
  /** http-floor: the floor server's CPU per request over the window (microseconds, user + system). */
  serverCpuPerRequestUs?: number;
}

/** Server mode's hot-path table and the in-process engine it is compared with. */
export interface HotPath {
  m: number;
  efConstruct: number;
  ef: number;
  shards: number;
  /** Keep-alive connections (--concurrency). */
  connections: number;
  /** recall@k of single queries over HTTP (the untimed warm-up pass over every query). */
  recall: number;
  /** The machine's 1, 5 and 15 minute load averages as the loads began: other work sharing its cores. */
  loadAverage: number[];
  rows: LoadRow[];
  /** The same data and graph built in this process: one thread's queries per second at the same ef, by wall clock and by CPU time. */
  engine: { name: string; qps: number; cpuQps: number; recall: number };
  /** Served single queries per second over the engine's in-process queries per second. */
  servedToEngine: number | null;
  /** Served single queries per second over the HTTP floor's requests per second (both loads run). */
  servedToFloor: number | null;
  /**
   * With http-floor: the machine's cores over the generator's and floor server's CPU per request
   * plus one in-process search per shard, the single queries per second no server on this HTTP
   * stack and engine could pass here with the generator on the same machine.
   */
  singleQueryCeiling: number | null;
}

export interface BenchResult {
  mode: BenchMode;
  command: string;
  startedAt: string;
  machine: { node: string; platform: string; arch: string; cpus: number; cpuModel: string };
  target: string;
  /** Engine mode: what QPS was counted in (wall clock, or this process's CPU time). */
  clock?: Clock;
  /** Requests in flight at once against the target (server and ingest modes); null in engine mode. */
  concurrency: number | null;
  dataset: { name: string; dim: number; distance: Distance; base: number; queries: number };
  k: number;
  groundTruth: { file: string; k: number };
  series: Series[];
  ingest: IngestRow[];
  /** Server mode with hot-path loads (--loads). */
  hotPath?: HotPath;
  /** Multivector mode: the shape of the lists (dataset.base counts points, not vectors). */
  multivector?: { vectors: number; minK: number; maxK: number; queryK: number };
}
