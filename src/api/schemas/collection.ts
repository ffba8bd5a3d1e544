// Collection bodies: CreateCollection and UpdateCollection with every config part they carry.
// Fields with a validator rule in Qdrant answer 422 when broken; NonZero fields are serde types
// and answer 400, as in Qdrant.

import type { SchemaObject } from 'ajv';
import { andRule, bool, float, jsonObject, map, nonZero, opt, struct, uint, unitEnum, untagged, withRule, type Schema } from './builders.js';

function atLeast(schema: SchemaObject, min: number): SchemaObject {
  return withRule(schema, { range: { min } });
}

const MEMORY = unitEnum(['cold', 'cached', 'pinned']);
/** Dense vectors and payloads live in files Qdrant maps: it refuses to pin them (422). */
const MAPPED_MEMORY = (storage: string) => opt(withRule(MEMORY, { notPinned: storage }));
export const DISTANCES = ['Cosine', 'Euclid', 'Dot', 'Manhattan'];
const DATATYPE = unitEnum(['float32', 'uint8', 'float16', 'turbo4']);

const HNSW_DIFF_FIELDS: Record<string, Schema> = {
  m: opt(uint('usize')),
  ef_construct: opt(atLeast(uint('usize'), 4)),
  full_scan_threshold: opt(atLeast(uint('usize'), 10)),
  max_indexing_threads: opt(uint('usize')),
  on_disk: opt(bool()),
  memory: opt(MEMORY),
  payload_m: opt(uint('usize')),
  inline_storage: opt(bool()),
};
const HNSW_DIFF = struct('HnswConfigDiff', {
  ...HNSW_DIFF_FIELDS,
  full_scan_threshold_kb: HNSW_DIFF_FIELDS.full_scan_threshold,
});

const WAL_DIFF = struct('WalConfigDiff', {
  wal_capacity_mb: opt(atLeast(uint('usize'), 1)),
  wal_segments_ahead: opt(uint('usize')),
  wal_retain_closed: opt(uint('usize')),
});

const OPTIMIZERS_FIELDS: Record<string, Schema> = {
  deleted_threshold: opt(withRule(float('f64'), { range: { min: 0, max: 1 }, float: 'f64' })),
  vacuum_min_vector_number: opt(atLeast(uint('usize'), 100)),
  default_segment_number: opt(uint('usize')),
  max_segment_size: opt(atLeast(uint('usize'), 1)),
  memmap_threshold: opt(uint('usize')),
  indexing_threshold: opt(uint('usize')),
  flush_interval_sec: opt(uint('u64')),
  max_optimization_threads: opt(untagged('MaxOptimizationThreads', [unitEnum(['auto']), uint('usize')])),
  prevent_unoptimized: opt(bool()),
};
// Qdrant still reads the size thresholds under their old *_kb names.
const OPTIMIZERS_DIFF = struct('OptimizersConfigDiff', {
  ...OPTIMIZERS_FIELDS,
  max_segment_size_kb: OPTIMIZERS_FIELDS.max_segment_size,
  memmap_threshold_kb: OPTIMIZERS_FIELDS.memmap_threshold,
  indexing_threshold_kb: OPTIMIZERS_FIELDS.indexing_threshold,
});

const QUANTIZATION_STORAGE = { always_ram: opt(bool()), memory: opt(MEMORY) };

const SCALAR = struct(
  'ScalarQuantization',
  {
    scalar: struct(
      'ScalarQuantizationConfig',
      {
        type: unitEnum(['int8']),
        quantile: opt(withRule(float('f32'), { range: { min: 0.5, max: 1 }, float: 'f32' })),
        ...QUANTIZATION_STORAGE,
      },
      { required: ['type'] },
    ),
  },
  { required: ['scalar'] },
);
const PRODUCT = struct(
  'ProductQuantization',
  {
    product: struct(
      'ProductQuantizationConfig',
      { compression: unitEnum(['x4', 'x8', 'x16', 'x32', 'x64']), ...QUANTIZATION_STORAGE },
      { required: ['compression'] },
    ),
  },
  { required: ['product'] },
);
const BINARY = struct(
  'BinaryQuantization',
  {
    binary: struct('BinaryQuantizationConfig', {
      ...QUANTIZATION_STORAGE,
      encoding: opt(unitEnum(['one_bit', 'two_bits', 'one_and_half_bits'])),
      query_encoding: opt(unitEnum(['default', 'binary', 'scalar4bits', 'scalar8bits'])),
    }),
  },
  { required: ['binary'] },
);
const TURBO = struct(
  'TurboQuantization',
  {
    turbo: struct('TurboQuantQuantizationConfig', {
      ...QUANTIZATION_STORAGE,
      bits: opt(unitEnum(['bits1', 'bits1_5', 'bits2', 'bits4'])),
    }),
  },
  { required: ['turbo'] },
);
const QUANTIZATION = untagged('QuantizationConfig', [SCALAR, PRODUCT, BINARY, TURBO]);
const QUANTIZATION_DIFF = untagged('QuantizationConfigDiff', [SCALAR, PRODUCT, BINARY, TURBO, unitEnum(['Disabled'])]);

/**
 * The most shards one request may create (a collection's shard_number, a shard key's
 * shards_number). Quiver's bound: each shard holds open files and takes a worker's time to
 * open, so Qdrant's unbounded u32 would let one request stall the server for hours.
 */
export const MAX_SHARD_NUMBER = 1000;

/** Qdrant's largest dense vector; its check is a custom rule, so it answers 422. */
export const MAX_VECTOR_SIZE = 65536;

const VECTOR_PARAMS = struct(
  'VectorParams',
  {
    size: withRule(nonZero('u64'), { range: { min: 1, max: MAX_VECTOR_SIZE } }),
    distance: unitEnum(DISTANCES),
    hnsw_config: opt(HNSW_DIFF),
    quantization_config: opt(QUANTIZATION),
    on_disk: opt(bool()),
    memory: MAPPED_MEMORY('dense vector storage'),
    datatype: opt(DATATYPE),
    multivector_config: opt(struct('MultiVectorConfig', { comparator: unitEnum(['max_sim']) }, { required: ['comparator'] })),
  },
  { required: ['size', 'distance'] },
);
const VECTORS_CONFIG = untagged('VectorsConfig', [VECTOR_PARAMS, map(VECTOR_PARAMS)]);

const SPARSE_VECTOR_PARAMS = struct('SparseVectorParams', {
  index: opt(
    struct('SparseIndexParams', {
      full_scan_threshold: opt(uint('usize')),
      on_disk: opt(bool()),
      memory: opt(MEMORY),
      datatype: opt(DATATYPE),
    }),
  ),
  modifier: opt(unitEnum(['none', 'idf'])),
});

const PAYLOAD_STORAGE = struct('PayloadStorageParams', { memory: MAPPED_MEMORY('payload storage') });

const STRICT_MODE = struct('StrictModeConfig', {
  enabled: opt(bool()),
  max_query_limit: opt(atLeast(uint('usize'), 1)),
  max_timeout: opt(atLeast(uint('usize'), 1)),
  unindexed_filtering_retrieve: opt(bool()),
  unindexed_filtering_update: opt(bool()),
  search_max_hnsw_ef: opt(uint('usize')),
  search_allow_exact: opt(bool()),
  search_max_oversampling: opt(float('f64')),
  upsert_max_batchsize: opt(uint('usize')),
  search_max_batchsize: opt(uint('usize')),
  max_collection_vector_size_bytes: opt(uint('usize')),
  read_rate_limit: opt(atLeast(uint('usize'), 1)),
  write_rate_limit: opt(atLeast(uint('usize'), 1)),
  max_collection_payload_size_bytes: opt(uint('usize')),
  max_points_count: opt(atLeast(uint('usize'), 1)),
  filter_max_conditions: opt(uint('usize')),
  condition_max_size: opt(uint('usize')),
  multivector_config: opt(
    map(struct('StrictModeMultivector', { max_vectors: opt(atLeast(uint('usize'), 1)) })),
  ),
  sparse_config: opt(map(struct('StrictModeSparse', { max_length: opt(atLeast(uint('usize'), 1)) }))),
  max_payload_index_count: opt(uint('usize')),
  max_resident_memory_percent: opt(withRule(uint('u8'), { range: { min: 1, max: 100 } })),
});

export const CREATE_COLLECTION = struct('CreateCollection', {
  vectors: VECTORS_CONFIG,
  shard_number: opt(andRule(atLeast(uint('u32'), 1), { range: { max: MAX_SHARD_NUMBER } })),
  sharding_method: opt(unitEnum(['auto', 'custom'])),
  replication_factor: opt(atLeast(uint('u32'), 1)),
  write_consistency_factor: opt(atLeast(uint('u32'), 1)),
  on_disk_payload: opt(bool()),
  payload: opt(PAYLOAD_STORAGE),
  hnsw_config: opt(HNSW_DIFF),
  wal_config: opt(WAL_DIFF),
  optimizers_config: opt(OPTIMIZERS_DIFF),
  optimizer_config: opt(OPTIMIZERS_DIFF),
  quantization_config: opt(QUANTIZATION),
  quantization: opt(QUANTIZATION),
  sparse_vectors: opt(map(SPARSE_VECTOR_PARAMS)),
  strict_mode_config: opt(STRICT_MODE),
  metadata: opt(jsonObject()),
});

const VECTOR_PARAMS_DIFF = struct('VectorParamsDiff', {
  hnsw_config: opt(HNSW_DIFF),
  quantization_config: opt(QUANTIZATION_DIFF),
  on_disk: opt(bool()),
  memory: MAPPED_MEMORY('dense vector storage'),
});

const COLLECTION_PARAMS_DIFF = struct('CollectionParamsDiff', {
  replication_factor: opt(nonZero('u32')),
  write_consistency_factor: opt(nonZero('u32')),
  read_fan_out_factor: opt(uint('u32')),
  read_fan_out_delay_ms: opt(uint('u64')),
  on_disk_payload: opt(bool()),
  payload: opt(PAYLOAD_STORAGE),
});

/** PUT /collections/{name}/vectors/{vector}: the immutable parts of a new dense or sparse vector. */
export const VECTOR_NAME_CONFIG = untagged('VectorNameConfig', [
  struct('DenseVectorNameConfig', {
    dense: struct('DenseVectorConfig', {
      size: withRule(uint('usize'), { range: { min: 1, max: MAX_VECTOR_SIZE } }),
      distance: unitEnum(DISTANCES),
      multivector_config: VECTOR_PARAMS.properties.multivector_config,
      datatype: opt(DATATYPE),
    }, { required: ['size', 'distance'] }),
  }, { required: ['dense'] }),
  struct('SparseVectorNameConfig', {
    sparse: struct('SparseVectorConfig', { modifier: opt(unitEnum(['none', 'idf'])), datatype: opt(DATATYPE) }),
  }, { required: ['sparse'] }),
]);

export const UPDATE_COLLECTION = struct('UpdateCollection', {
  vectors: opt(map(VECTOR_PARAMS_DIFF)),
  optimizers_config: opt(OPTIMIZERS_DIFF),
  optimizer_config: opt(OPTIMIZERS_DIFF),
  params: opt(COLLECTION_PARAMS_DIFF),
  hnsw_config: opt(HNSW_DIFF),
  quantization_config: opt(QUANTIZATION_DIFF),
  quantization: opt(QUANTIZATION_DIFF),
  sparse_vectors: opt(map(SPARSE_VECTOR_PARAMS)),
  strict_mode_config: opt(STRICT_MODE),
  metadata: opt(jsonObject()),
});
