// Collections as Qdrant answers about them: the list, existence, aliases, and CollectionInfo
// with the whole CollectionConfig (also part of telemetry) and the payload schema.

import { bool, jsonObject, map, seq, str, uint, unitEnum, type Schema } from '../builders.js';
import { DISTANCES } from '../collection.js';
import { SNOWBALL_LANGUAGES, STOPWORD_LANGUAGES, PAYLOAD_SCHEMA_TYPES } from '../payload-index.js';
import { anyOf, closed, COUNT, F32, F64, nullable, tagged } from './shape.js';

const MEMORY = nullable(unitEnum(['cold', 'cached', 'pinned']));

const HNSW_FIELDS: Record<string, Schema> = {
  m: COUNT,
  ef_construct: COUNT,
  full_scan_threshold: COUNT,
  max_indexing_threads: COUNT,
  on_disk: nullable(bool()),
  memory: MEMORY,
  payload_m: nullable(COUNT),
  inline_storage: nullable(bool()),
};
/** The collection's HnswConfig: every size set. */
const HNSW_CONFIG = closed(HNSW_FIELDS, ['m', 'ef_construct', 'full_scan_threshold']);
/** A vector's HnswConfigDiff: only what it overrides. */
const HNSW_DIFF = closed(Object.fromEntries(Object.entries(HNSW_FIELDS).map(([key, schema]) => [key, nullable(schema)])));

const QUANTIZATION_STORAGE = { always_ram: nullable(bool()), memory: MEMORY };
const QUANTIZATION = anyOf(
  tagged('scalar', closed({ type: unitEnum(['int8']), quantile: nullable(F32), ...QUANTIZATION_STORAGE }, ['type'])),
  tagged('product', closed({ compression: unitEnum(['x4', 'x8', 'x16', 'x32', 'x64']), ...QUANTIZATION_STORAGE }, ['compression'])),
  tagged('binary', closed({
    ...QUANTIZATION_STORAGE,
    encoding: nullable(unitEnum(['one_bit', 'two_bits', 'one_and_half_bits'])),
    query_encoding: nullable(unitEnum(['default', 'binary', 'scalar4bits', 'scalar8bits'])),
  })),
  tagged('turbo', closed({ ...QUANTIZATION_STORAGE, bits: nullable(unitEnum(['bits1', 'bits1_5', 'bits2', 'bits4'])) })),
);

const DATATYPE = nullable(unitEnum(['float32', 'uint8', 'float16', 'turbo4']));

const VECTOR_PARAMS = closed({
  size: { ...uint('u64'), minimum: 1 },
  distance: unitEnum(DISTANCES),
  hnsw_config: nullable(HNSW_DIFF),
  quantization_config: nullable(QUANTIZATION),
  on_disk: nullable(bool()),
  memory: MEMORY,
  datatype: DATATYPE,
  multivector_config: nullable(closed({ comparator: unitEnum(['max_sim']) }, ['comparator'])),
}, ['size', 'distance']);

const SPARSE_VECTOR_PARAMS = closed({
  index: nullable(closed({ full_scan_threshold: nullable(COUNT), on_disk: nullable(bool()), memory: MEMORY, datatype: DATATYPE })),
  modifier: nullable(unitEnum(['none', 'idf'])),
});

const COUNT_AT_LEAST_1 = { ...uint('u32'), minimum: 1 };

export const COLLECTION_PARAMS = closed({
  vectors: anyOf(VECTOR_PARAMS, map(VECTOR_PARAMS)),
  shard_number: COUNT_AT_LEAST_1,
  sharding_method: nullable(unitEnum(['auto', 'custom'])),
  replication_factor: COUNT_AT_LEAST_1,
  write_consistency_factor: COUNT_AT_LEAST_1,
  read_fan_out_factor: nullable(uint('u32')),
  read_fan_out_delay_ms: nullable(uint('u64')),
  on_disk_payload: nullable(bool()),
  payload: nullable(closed({ memory: MEMORY })),
  sparse_vectors: nullable(map(SPARSE_VECTOR_PARAMS)),
});

const OPTIMIZERS_CONFIG = closed({
  deleted_threshold: F64,
  vacuum_min_vector_number: COUNT,
  default_segment_number: COUNT,
  max_segment_size: nullable(COUNT),
  memmap_threshold: nullable(COUNT),
  indexing_threshold: nullable(COUNT),
  flush_interval_sec: uint('u64'),
  max_optimization_threads: nullable(COUNT),
  prevent_unoptimized: nullable(bool()),
}, ['default_segment_number', 'flush_interval_sec']);

const WAL_CONFIG = closed({ wal_capacity_mb: COUNT, wal_segments_ahead: COUNT, wal_retain_closed: COUNT }, ['wal_capacity_mb', 'wal_segments_ahead']);

const LIMIT = nullable(COUNT);
const FLAG = nullable(bool());
// StrictModeConfigOutput: every limit optional (strict mode is being extended on another branch;
// this is Qdrant 1.19's full set).
const STRICT_MODE_CONFIG = closed({
  enabled: FLAG,
  max_query_limit: LIMIT,
  max_timeout: LIMIT,
  unindexed_filtering_retrieve: FLAG,
  unindexed_filtering_update: FLAG,
  search_max_hnsw_ef: LIMIT,
  search_allow_exact: FLAG,
  search_max_oversampling: nullable(F64),
  upsert_max_batchsize: LIMIT,
  search_max_batchsize: LIMIT,
  max_collection_vector_size_bytes: LIMIT,
  read_rate_limit: LIMIT,
  write_rate_limit: LIMIT,
  max_collection_payload_size_bytes: LIMIT,
  max_points_count: LIMIT,
  filter_max_conditions: LIMIT,
  condition_max_size: LIMIT,
  multivector_config: nullable(map(closed({ max_vectors: LIMIT }))),
  sparse_config: nullable(map(closed({ max_length: LIMIT }))),
  max_payload_index_count: LIMIT,
  max_resident_memory_percent: LIMIT,
});

const CONFIG_FIELDS = {
  params: COLLECTION_PARAMS,
  hnsw_config: HNSW_CONFIG,
  optimizer_config: OPTIMIZERS_CONFIG,
  wal_config: nullable(WAL_CONFIG),
  quantization_config: nullable(QUANTIZATION),
  strict_mode_config: nullable(STRICT_MODE_CONFIG),
  metadata: nullable(jsonObject()),
};

export const COLLECTION_CONFIG = closed(CONFIG_FIELDS, ['params', 'hnsw_config', 'optimizer_config']);

/** CollectionConfigTelemetry: the config as telemetry reports it, with the WAL always and the collection's uuid. */
export const COLLECTION_CONFIG_TELEMETRY = closed({ ...CONFIG_FIELDS, wal_config: WAL_CONFIG, uuid: nullable(str()) }, ['params', 'hnsw_config', 'optimizer_config', 'wal_config']);

function indexParams(type: string, fields: Record<string, Schema>): Schema {
  return closed({ type: unitEnum([type]), ...fields, on_disk: nullable(bool()), memory: MEMORY, enable_hnsw: nullable(bool()) }, ['type']);
}

const STOPWORDS = anyOf(
  unitEnum(STOPWORD_LANGUAGES),
  closed({ languages: nullable(seq(unitEnum(STOPWORD_LANGUAGES))), custom: nullable(seq(str())) }),
);
const STEMMER = anyOf(
  closed({ type: unitEnum(['snowball']), language: unitEnum(SNOWBALL_LANGUAGES) }, ['type', 'language']),
  closed({ type: unitEnum(['none']) }, ['type']),
);
const INDEX_PARAMS = anyOf(
  indexParams('keyword', { is_tenant: FLAG, prefix: FLAG }),
  indexParams('integer', { lookup: FLAG, range: FLAG, is_principal: FLAG }),
  indexParams('float', { is_principal: FLAG }),
  indexParams('geo', {}),
  indexParams('text', {
    tokenizer: unitEnum(['prefix', 'whitespace', 'word', 'multilingual']),
    min_token_len: LIMIT,
    max_token_len: LIMIT,
    lowercase: FLAG,
    ascii_folding: FLAG,
    phrase_matching: FLAG,
    stopwords: nullable(STOPWORDS),
    stemmer: nullable(STEMMER),
  }),
  indexParams('bool', {}),
  indexParams('datetime', { is_principal: FLAG }),
  indexParams('uuid', { is_tenant: FLAG }),
);

const PAYLOAD_INDEX_INFO = closed({ data_type: unitEnum(PAYLOAD_SCHEMA_TYPES), params: nullable(INDEX_PARAMS), points: COUNT }, ['data_type', 'points']);

/** OptimizersStatus: "ok" or {"error": ...}. */
export const OPTIMIZERS_STATUS = anyOf(unitEnum(['ok']), tagged('error', str()));

export const COLLECTION_INFO = closed({
  status: unitEnum(['green', 'yellow', 'grey', 'red']),
  optimizer_status: OPTIMIZERS_STATUS,
  // Not sent by Quiver yet: collection warnings are being added on another branch.
  warnings: seq(closed({ message: str() }, ['message'])),
  indexed_vectors_count: nullable(COUNT),
  points_count: nullable(COUNT),
  segments_count: COUNT,
  config: COLLECTION_CONFIG,
  payload_schema: map(PAYLOAD_INDEX_INFO),
  // deferred_points: not sent by Quiver yet (the update queue is being reworked on another branch).
  update_queue: nullable(closed({ length: COUNT, deferred_points: nullable(COUNT) }, ['length'])),
}, ['status', 'optimizer_status', 'segments_count', 'config', 'payload_schema']);

export const COLLECTIONS_RESPONSE = closed({ collections: seq(closed({ name: str() }, ['name'])) }, ['collections']);

export const COLLECTION_EXISTENCE = closed({ exists: bool() }, ['exists']);

export const ALIASES_RESPONSE = closed({
  aliases: seq(closed({ alias_name: str(), collection_name: str() }, ['alias_name', 'collection_name'])),
}, ['aliases']);
