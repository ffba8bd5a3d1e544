// The shape of a benchmark's JSON result file (and of what the CLI prints and plots).

import type { Datatype, Distance } from '../engine/index.js';
import type { IndexBytes } from './runners.js';
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
  /** Multivector mode: the shape of the lists (dataset.base counts points, not vectors). */
  multivector?: { vectors: number; minK: number; maxK: number; queryK: number };
}
