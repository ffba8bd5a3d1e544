// A collection's configuration as Quiver persists it, and what the engine and the shards need of
// it: the shard count and, per named vector, the index parameters with per-vector overrides
// applied (as Qdrant applies a vector's own hnsw_config and quantization_config over the
// collection's). The parts Quiver acts on are plain fields; the parts kept in Qdrant's shapes
// (sparse vector params, strict mode, storage placement, quantization) are read where they act.

import { BadInput } from '../errors.js';
import type { Distance, Quantization, SparseDatatype } from '../engine/index.js';
import type { Payload } from '../model.js';
import type { SparseVectorSpec, VectorPaging, VectorSpec } from '../shard/shard.js';
import { DEFAULT_SPARSE_FULL_SCAN_THRESHOLD } from '../engine/index.js';
import type { OptimizerSpec } from '../shard/optimizer/plan.js';
import type { WalSpec } from '../shard/op-log.js';
import type { BinaryQuantizationConfig, Datatype, Memory, PayloadStorageParams, QuantizationConfig, SparseVectorParams, StrictModeConfig } from './kept-config.js';

export interface HnswConfig {
  m: number;
  efConstruct: number;
  fullScanThreshold: number;
  maxIndexingThreads: number;
  onDisk: boolean | null;
  payloadM: number | null;
  inlineStorage: boolean | null;
  memory: Memory | null;
}

/** Per-vector HNSW overrides: only the fields that were set. */
export type HnswOverrides = Partial<HnswConfig>;

export interface OptimizersConfig {
  deletedThreshold: number;
  vacuumMinVectorNumber: number;
  defaultSegmentNumber: number;
  maxSegmentSize: number | null;
  memmapThreshold: number | null;
  indexingThreshold: number | null;
  flushIntervalSec: number;
  /** null: no limit ("auto"). */
  maxOptimizationThreads: number | null;
  preventUnoptimized: boolean | null;
}

export interface WalConfig {
  walCapacityMb: number;
  walSegmentsAhead: number;
  walRetainClosed: number;
}

export interface VectorParams {
  size: number;
  distance: Distance;
  hnsw: HnswOverrides | null;
  quantization: QuantizationConfig | null;
  onDisk: boolean | null;
  memory: Memory | null;
  datatype: Datatype | null;
  multivector: { comparator: 'max_sim' } | null;
}

export interface VectorsConfig {
  /** One unnamed vector (stored under DEFAULT_VECTOR), as opposed to a map of named ones. */
  unnamed: boolean;
  byName: Record<string, VectorParams>;
}

export interface CollectionParams {
  vectors: VectorsConfig;
  shardNumber: number;
  shardingMethod: 'auto' | 'custom' | null;
  replicationFactor: number;
  writeConsistencyFactor: number;
  readFanOutFactor: number | null;
  readFanOutDelayMs: number | null;
  onDiskPayload: boolean;
  payloadStorage: PayloadStorageParams | null;
  sparseVectors: Record<string, SparseVectorParams> | null;
}

export interface CollectionConfig {
  params: CollectionParams;
  hnsw: HnswConfig;
  optimizer: OptimizersConfig;
  wal: WalConfig;
  quantization: QuantizationConfig | null;
  strictMode: StrictModeConfig;
  metadata: Payload | null;
}


export function shardCountOf(config: CollectionConfig): number {
  return config.params.shardNumber;
}

function engineQuantization(config: QuantizationConfig | null): Quantization | null {
  if (config === null) return null;
  if ('scalar' in config) return { quantile: config.scalar.quantile ?? 1 };
  if ('binary' in config) return binaryQuantization(config.binary);
  if ('product' in config) return { method: 'product', compression: config.product.compression };
  if ('turbo' in config) return { method: 'turbo', bits: config.turbo.bits ?? 'bits4' };
  throw new BadInput(`${Object.keys(config)[0]} quantization is not supported by this server; use scalar int8, binary, product or turbo quantization`);
}

/**
 * Binary quantization: every encoding and query encoding of Qdrant's; null, "default" and
 * "binary" query encodings binarise the query as the stored vectors are.
 */
function binaryQuantization(config: BinaryQuantizationConfig['binary']): Quantization {
  const query = config.query_encoding ?? 'default';
  return {
    method: 'binary',
    encoding: config.encoding ?? 'one_bit',
    ...(query === 'scalar4bits' || query === 'scalar8bits' ? { queryEncoding: query } : {}),
  };
}


export function optimizerSpecOf(config: CollectionConfig): OptimizerSpec {
  const { indexingThreshold, deletedThreshold, vacuumMinVectorNumber, maxOptimizationThreads } = config.optimizer;
  return { indexingThresholdKb: indexingThreshold, deletedThreshold, vacuumMinVectorNumber, maxOptimizationThreads };
}

export function walSpecOf(config: CollectionConfig): WalSpec {
  return { capacityBytes: config.wal.walCapacityMb * (1 << 20), retainClosed: config.wal.walRetainClosed };
}

/**
 * Where Qdrant keeps a vector's originals or an HNSW graph: `memory` over the deprecated
 * `on_disk` (true: cold), else cached.
 */
function placedMemory(placed: { memory?: Memory | null; onDisk?: boolean | null }): Memory {
  return placed.memory ?? (placed.onDisk === true ? 'cold' : 'cached');
}

/**
 * Where Qdrant keeps quantized codes: the quantization's `memory` over the deprecated
 * `always_ram` (true: pinned), else where the originals are.
 */
function codeMemory(q: QuantizationConfig, originals: Memory): Memory {
  const storage = Object.values(q)[0] as { memory?: Memory | null; always_ram?: boolean | null };
  return storage.memory ?? (storage.always_ram === true ? 'pinned' : originals);
}

/**
 * The regions the engine pages (reads on demand): those placed `cold` (dense rows and multivector
 * lists alike, their codes, the HNSW graph). `cached` and `pinned` data stay in the engine's
 * memory (Qdrant's page cache may drop cached pages under pressure; an engine's linear memory
 * cannot).
 */
function pagingOf(v: VectorParams, q: QuantizationConfig | null, hnsw: HnswConfig): VectorPaging | null {
  const originals = placedMemory(v);
  const paging = { vectors: originals === 'cold', codes: q !== null && codeMemory(q, originals) === 'cold', graph: placedMemory(hnsw) === 'cold' };
  return paging.vectors || paging.codes || paging.graph ? paging : null;
}

export function vectorSpecsOf(config: CollectionConfig): VectorSpec[] {
  return Object.entries(config.params.vectors.byName).map(([name, v]) => {
    const hnsw = { ...config.hnsw, ...(v.hnsw ?? {}) };
    const quantizationConfig = v.quantization ?? config.quantization;
    const quantization = engineQuantization(quantizationConfig);
    return {
      name,
      size: v.size,
      distance: v.distance,
      m: hnsw.m,
      efConstruct: hnsw.efConstruct,
      fullScanThreshold: hnsw.fullScanThreshold,
      quantization,
      multivector: v.multivector ?? null,
      datatype: v.datatype ?? 'float32',
      paging: pagingOf(v, quantizationConfig, hnsw),
    };
  });
}

/** Refuses (BadInput) a configuration the engine cannot serve; checked before one is stored. */
export function checkServable(config: CollectionConfig): CollectionConfig {
  vectorSpecsOf(config);
  sparseSpecsOf(config);
  return config;
}

/** The engine's form of a sparse index datatype (Qdrant's default float32). */
function sparseDatatypeOf(datatype: Datatype | null): SparseDatatype {
  if (datatype === null || datatype === 'float32' || datatype === 'float16' || datatype === 'uint8') return datatype ?? 'float32';
  throw new BadInput(`sparse vector index datatype ${datatype} is not supported; use float32, float16 or uint8`);
}

export function sparseSpecsOf(config: CollectionConfig): SparseVectorSpec[] {
  return Object.entries(config.params.sparseVectors ?? {}).map(([name, v]) => ({
    name,
    fullScanThreshold: v.index?.full_scan_threshold ?? DEFAULT_SPARSE_FULL_SCAN_THRESHOLD,
    datatype: sparseDatatypeOf(v.index?.datatype ?? null),
    idf: v.modifier === 'idf',
  }));
}
