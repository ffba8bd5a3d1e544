// A collection's configuration (the model is src/collection/config-model.ts): built from a
// CreateCollection body with every default Qdrant 1.19 applies, patched by UpdateCollection
// bodies, and rendered back as Qdrant's CollectionInfo.

import type { JsonValue, Payload } from '../model.js';
import { vectorParamsNotInConfig } from '../messages.js';
import type {
  WireCollectionParamsDiff,
  WireCreateCollection,
  WireHnswConfigDiff,
  WireOptimizersConfigDiff,
  WireQuantizationConfig,
  WireQuantizationConfigDiff,
  WireSparseVectorParams,
  WireUpdateCollection,
  WireVectorParams,
  WireVectorParamsDiff,
  WireVectorsConfig,
  WireWalConfigDiff,
} from './types.js';
import type { IndexSchema } from '../shard/payload-index/schema.js';
import type { CollectionConfig, CollectionParams, HnswConfig, HnswOverrides, OptimizersConfig, VectorParams, VectorsConfig, WalConfig } from '../collection/config-model.js';
import { ownField, setOwnField } from '../own-fields.js';

// Qdrant's defaults (config/config.yaml); indexing_threshold went from 20000 to 10000 in 2025.
const DEFAULT_HNSW: HnswConfig = {
  m: 16,
  efConstruct: 100,
  fullScanThreshold: 10000,
  maxIndexingThreads: 0,
  onDisk: false,
  payloadM: null,
  inlineStorage: null,
  memory: null,
};

const DEFAULT_OPTIMIZER: OptimizersConfig = {
  deletedThreshold: 0.2,
  vacuumMinVectorNumber: 1000,
  defaultSegmentNumber: 0,
  maxSegmentSize: null,
  memmapThreshold: null,
  indexingThreshold: 10000,
  flushIntervalSec: 5,
  maxOptimizationThreads: null,
  preventUnoptimized: null,
};

const DEFAULT_WAL: WalConfig = { walCapacityMb: 32, walSegmentsAhead: 0, walRetainClosed: 1 };

/**
 * The configuration a validated CreateCollection body asks for. `defaultShardNumber` is used when
 * the body names none and sharding is automatic (Quiver's default is its number of shard workers).
 */
export function fromCreateRequest(body: WireCreateCollection, defaultShardNumber: number): CollectionConfig {
  const shardingMethod = body.sharding_method ?? null;
  return {
    params: {
      vectors: vectorsFromWire(body.vectors ?? {}),
      // With custom sharding the number counts shards per shard key, 1 unless told.
      shardNumber: body.shard_number ?? (shardingMethod === 'custom' ? 1 : defaultShardNumber),
      shardingMethod,
      replicationFactor: body.replication_factor ?? 1,
      writeConsistencyFactor: body.write_consistency_factor ?? 1,
      readFanOutFactor: null,
      readFanOutDelayMs: null,
      onDiskPayload: body.on_disk_payload ?? true,
      payloadStorage: body.payload ? withoutNulls(body.payload) : null,
      sparseVectors: body.sparse_vectors ? withoutNulls(body.sparse_vectors) : null,
    },
    hnsw: mergeHnsw(DEFAULT_HNSW, body.hnsw_config),
    optimizer: mergeOptimizer(DEFAULT_OPTIMIZER, body.optimizers_config ?? body.optimizer_config),
    wal: mergeWal(DEFAULT_WAL, body.wal_config),
    quantization: quantizationOf(body.quantization_config ?? body.quantization),
    strictMode: { enabled: false, ...withoutNulls(body.strict_mode_config ?? {}) },
    metadata: body.metadata ?? null,
  };
}

function vectorsFromWire(vectors: WireVectorsConfig): VectorsConfig {
  // The untagged enum's first variant wins: a single VectorParams has a numeric size.
  if (typeof vectors.size === 'number') return { unnamed: true, byName: { '': vectorParamsFromWire(vectors as WireVectorParams) } };
  const byName = Object.fromEntries(Object.entries(vectors as Record<string, WireVectorParams>).map(([name, params]) => [name, vectorParamsFromWire(params)]));
  return { unnamed: false, byName };
}

function vectorParamsFromWire(params: WireVectorParams): VectorParams {
  return {
    size: params.size,
    distance: params.distance,
    hnsw: params.hnsw_config ? hnswOverrides(params.hnsw_config) : null,
    quantization: quantizationOf(params.quantization_config),
    onDisk: params.on_disk ?? null,
    memory: params.memory ?? null,
    datatype: params.datatype ?? null,
    multivector: params.multivector_config ?? null,
  };
}

function hnswOverrides(diff: WireHnswConfigDiff): HnswOverrides {
  return definedOnly({
    m: diff.m,
    efConstruct: diff.ef_construct,
    fullScanThreshold: diff.full_scan_threshold ?? diff.full_scan_threshold_kb,
    maxIndexingThreads: diff.max_indexing_threads,
    onDisk: diff.on_disk,
    payloadM: diff.payload_m,
    inlineStorage: diff.inline_storage,
    memory: diff.memory,
  });
}

function mergeHnsw(base: HnswConfig, diff: WireHnswConfigDiff | null | undefined): HnswConfig {
  return diff ? { ...base, ...hnswOverrides(diff) } : base;
}

function mergeOptimizer(base: OptimizersConfig, diff: WireOptimizersConfigDiff | null | undefined): OptimizersConfig {
  if (!diff) return base;
  const threads = diff.max_optimization_threads;
  return {
    ...base,
    ...definedOnly({
      deletedThreshold: diff.deleted_threshold,
      vacuumMinVectorNumber: diff.vacuum_min_vector_number,
      defaultSegmentNumber: diff.default_segment_number,
      maxSegmentSize: diff.max_segment_size ?? diff.max_segment_size_kb,
      memmapThreshold: diff.memmap_threshold ?? diff.memmap_threshold_kb,
      indexingThreshold: diff.indexing_threshold ?? diff.indexing_threshold_kb,
      flushIntervalSec: diff.flush_interval_sec,
      preventUnoptimized: diff.prevent_unoptimized,
    }),
    // "auto" is the absence of a limit.
    ...(threads === undefined || threads === null ? {} : { maxOptimizationThreads: threads === 'auto' ? null : threads }),
  };
}

function mergeWal(base: WalConfig, diff: WireWalConfigDiff | null | undefined): WalConfig {
  if (!diff) return base;
  return {
    ...base,
    ...definedOnly({
      walCapacityMb: diff.wal_capacity_mb,
      walSegmentsAhead: diff.wal_segments_ahead,
      walRetainClosed: diff.wal_retain_closed,
    }),
  };
}

function quantizationOf(config: WireQuantizationConfig | null | undefined): WireQuantizationConfig | null {
  return config ? withoutNulls(config) : null;
}

/** The configuration after a validated UpdateCollection body; `config` is left untouched. */
export function applyUpdate(config: CollectionConfig, patch: WireUpdateCollection): CollectionConfig {
  const quantization = patch.quantization_config ?? patch.quantization;
  return {
    params: applyParams(
      {
        ...config.params,
        vectors: patch.vectors ? updateVectors(config.params.vectors, patch.vectors) : config.params.vectors,
        sparseVectors: patch.sparse_vectors
          ? updateSparseVectors(config.params.sparseVectors, patch.sparse_vectors)
          : config.params.sparseVectors,
      },
      patch.params,
    ),
    hnsw: mergeHnsw(config.hnsw, patch.hnsw_config),
    optimizer: mergeOptimizer(config.optimizer, patch.optimizers_config ?? patch.optimizer_config),
    wal: config.wal,
    quantization: quantization ? quantizationUpdate(quantization) : config.quantization,
    strictMode: patch.strict_mode_config ? { ...config.strictMode, ...withoutNulls(patch.strict_mode_config) } : config.strictMode,
    metadata: patch.metadata ? mergeMetadata(config.metadata, patch.metadata) : config.metadata,
  };
}

function applyParams(params: CollectionParams, diff: WireCollectionParamsDiff | null | undefined): CollectionParams {
  if (!diff) return params;
  return {
    ...params,
    ...definedOnly({
      replicationFactor: diff.replication_factor,
      writeConsistencyFactor: diff.write_consistency_factor,
      readFanOutFactor: diff.read_fan_out_factor,
      readFanOutDelayMs: diff.read_fan_out_delay_ms,
      onDiskPayload: diff.on_disk_payload,
      payloadStorage: diff.payload ? withoutNulls(diff.payload) : undefined,
    }),
  };
}

function quantizationUpdate(diff: WireQuantizationConfigDiff): WireQuantizationConfig | null {
  return diff === 'Disabled' ? null : withoutNulls(diff);
}

function updateVectors(vectors: VectorsConfig, diffs: Record<string, WireVectorParamsDiff>): VectorsConfig {
  const byName = { ...vectors.byName };
  for (const [name, diff] of Object.entries(diffs)) {
    const current = ownField(byName, name);
    if (!current) throw vectorParamsNotInConfig(name);
    const quantization = diff.quantization_config;
    setOwnField(byName, name, {
      ...current,
      hnsw: diff.hnsw_config ? { ...current.hnsw, ...hnswOverrides(diff.hnsw_config) } : current.hnsw,
      quantization: quantization ? quantizationUpdate(quantization) : current.quantization,
      onDisk: diff.on_disk ?? current.onDisk,
      memory: diff.memory ?? current.memory,
    });
  }
  return { ...vectors, byName };
}

function updateSparseVectors(
  current: Record<string, WireSparseVectorParams> | null,
  diffs: Record<string, WireSparseVectorParams>,
): Record<string, WireSparseVectorParams> {
  const updated = { ...current };
  for (const [name, diff] of Object.entries(diffs)) {
    const params = ownField(updated, name);
    if (!params) throw vectorParamsNotInConfig(name);
    const index = diff.index ? { ...params.index, ...withoutNulls(diff.index) } : params.index;
    setOwnField(updated, name, withoutNulls({ ...params, modifier: diff.modifier ?? params.modifier, index }));
  }
  return updated;
}

// Metadata updates merge by key; a key set to null is removed.
function mergeMetadata(current: Payload | null, patch: Payload): Payload {
  const merged: Payload = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else setOwnField(merged, key, value);
  }
  return merged;
}

/** What a shard set reports about a collection, for GET /collections/{name}. */
export interface CollectionStats {
  status: 'green' | 'yellow' | 'grey' | 'red';
  pointsCount: number;
  indexedVectorsCount: number;
  segmentsCount: number;
  /** Updates accepted but not applied yet. */
  updateQueueLength: number;
  /** An optimizer's failure, reported as optimizer_status {"error": ...}. */
  optimizerError?: string | null;
  /** Payload indexes by field: the schema they were created with and how many points they hold. */
  payloadIndexes: Record<string, { schema: IndexSchema; points: number }>;
}

/**
 * Qdrant's warnings about a configuration, per dense vector (the unnamed one is named ''): its
 * `hnsw_config.inline_storage` (its own over the collection's) is ignored on a multivector, and
 * without quantization (its own or the collection's).
 */
export function collectionWarnings(config: CollectionConfig): { message: string }[] {
  const warnings: { message: string }[] = [];
  // In vector name order, as Qdrant keeps named vectors.
  for (const [name, vector] of Object.entries(config.params.vectors.byName).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const inline = vector.hnsw?.inlineStorage ?? config.hnsw.inlineStorage;
    if (!inline) continue;
    const prefix = `The \`hnsw_config.inline_storage\` option for vector '${name}'`;
    if (vector.multivector) warnings.push({ message: `${prefix} is not compatible with multivectors. This option will be ignored.` });
    else if (!(vector.quantization ?? config.quantization)) warnings.push({ message: `${prefix} requires quantization to be enabled. This option will be ignored.` });
  }
  return warnings;
}

/** Qdrant 1.19's CollectionInfo JSON; `warnings` only when there are some, as Qdrant leaves it out. */
export function renderCollectionInfo(config: CollectionConfig, stats: CollectionStats): Record<string, JsonValue> {
  const warnings = collectionWarnings(config);
  return {
    status: stats.status,
    optimizer_status: stats.optimizerError ? { error: stats.optimizerError } : 'ok',
    ...(warnings.length ? { warnings } : {}),
    indexed_vectors_count: stats.indexedVectorsCount,
    points_count: stats.pointsCount,
    segments_count: stats.segmentsCount,
    config: renderConfig(config),
    payload_schema: Object.fromEntries(
      Object.entries(stats.payloadIndexes).map(([field, index]) => [field, renderPayloadIndex(index.schema, index.points)]),
    ),
    update_queue: { length: stats.updateQueueLength },
  };
}

/** Qdrant's CollectionConfig JSON; optional parts Qdrant skips when unset are left out. */
export function renderConfig(config: CollectionConfig): Record<string, JsonValue> {
  const { params } = config;
  const rendered: Record<string, JsonValue> = {
    params: definedOnly({
      vectors: renderVectorsConfig(params.vectors),
      shard_number: params.shardNumber,
      sharding_method: params.shardingMethod,
      replication_factor: params.replicationFactor,
      write_consistency_factor: params.writeConsistencyFactor,
      read_fan_out_factor: params.readFanOutFactor,
      read_fan_out_delay_ms: params.readFanOutDelayMs,
      on_disk_payload: params.onDiskPayload,
      payload: params.payloadStorage as JsonValue,
      sparse_vectors: params.sparseVectors as JsonValue,
    }),
    hnsw_config: renderHnsw(config.hnsw),
    optimizer_config: renderOptimizer(config.optimizer),
    wal_config: {
      wal_capacity_mb: config.wal.walCapacityMb,
      wal_segments_ahead: config.wal.walSegmentsAhead,
      wal_retain_closed: config.wal.walRetainClosed,
    },
    quantization_config: config.quantization as JsonValue,
    strict_mode_config: config.strictMode as JsonValue,
  };
  if (config.metadata) rendered.metadata = config.metadata;
  return rendered;
}

function renderVectorsConfig(vectors: VectorsConfig): JsonValue {
  if (vectors.unnamed) return renderVectorParams(vectors.byName['']);
  return Object.fromEntries(Object.entries(vectors.byName).map(([name, params]) => [name, renderVectorParams(params)]));
}

function renderVectorParams(params: VectorParams): JsonValue {
  return definedOnly({
    size: params.size,
    distance: params.distance,
    hnsw_config: params.hnsw ? renderHnsw(params.hnsw) : null,
    quantization_config: params.quantization as JsonValue,
    on_disk: params.onDisk,
    memory: params.memory,
    datatype: params.datatype,
    multivector_config: params.multivector,
  });
}

function renderHnsw(hnsw: HnswOverrides): Record<string, JsonValue> {
  return definedOnly({
    m: hnsw.m,
    ef_construct: hnsw.efConstruct,
    full_scan_threshold: hnsw.fullScanThreshold,
    max_indexing_threads: hnsw.maxIndexingThreads,
    on_disk: hnsw.onDisk,
    memory: hnsw.memory,
    payload_m: hnsw.payloadM,
    inline_storage: hnsw.inlineStorage,
  });
}

// The unset size thresholds and thread limit are written as null, as Qdrant does.
function renderOptimizer(optimizer: OptimizersConfig): Record<string, JsonValue> {
  const rendered: Record<string, JsonValue> = {
    deleted_threshold: optimizer.deletedThreshold,
    vacuum_min_vector_number: optimizer.vacuumMinVectorNumber,
    default_segment_number: optimizer.defaultSegmentNumber,
    max_segment_size: optimizer.maxSegmentSize,
    memmap_threshold: optimizer.memmapThreshold,
    indexing_threshold: optimizer.indexingThreshold,
    flush_interval_sec: optimizer.flushIntervalSec,
    max_optimization_threads: optimizer.maxOptimizationThreads,
  };
  if (optimizer.preventUnoptimized !== null) rendered.prevent_unoptimized = optimizer.preventUnoptimized;
  return rendered;
}

function renderPayloadIndex(schema: IndexSchema, points: number): JsonValue {
  if (typeof schema === 'string') return { data_type: schema, points };
  const params: Record<string, unknown> = withoutNulls({ ...schema });
  // A text index without a tokenizer uses (and reports) the word tokenizer.
  if (params.type === 'text' && params.tokenizer === undefined) params.tokenizer = 'word';
  return { data_type: schema.type, params: params as JsonValue, points };
}

/** The object without its undefined and null fields (Qdrant's skip_serializing_if = is_none). */
function definedOnly<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], null | undefined> } {
  const kept = Object.entries(fields).filter(([, v]) => v !== undefined && v !== null);
  return Object.fromEntries(kept) as { [K in keyof T]?: Exclude<T[K], null | undefined> };
}

/** A copy of a wire object with null fields dropped at every depth (they mean "not set"). */
function withoutNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutNulls) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, withoutNulls(v)]),
  ) as T;
}
