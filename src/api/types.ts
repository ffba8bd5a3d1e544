// Qdrant's wire types for the request bodies Quiver validates, as they are once a body has passed
// its schema (src/api/schemas). Optional fields may also arrive as null, which Qdrant reads as
// absent. Fields Qdrant ignores (unknown ones) may still be present on the objects.

import type { JsonValue, Payload } from '../model.js';
import type { WireCondition, WireFilter } from './filter.js';

export type { ParsedQuery } from './schemas/query.js';

// The configuration parts a collection keeps in Qdrant's shape are typed once, where the model is.
export type { QuantizationConfig as WireQuantizationConfig, SparseVectorParams as WireSparseVectorParams } from '../collection/kept-config.js';
import type { Memory as WireMemory, Datatype as WireDatatype, QuantizationConfig as WireQuantizationConfig, SparseVectorParams as WireSparseVectorParams, StrictModeConfig as WireStrictModeConfig, PayloadStorageParams as WirePayloadStorageParams } from '../collection/kept-config.js';

type Opt<T> = T | null | undefined;

export type WireDistance = 'Cosine' | 'Euclid' | 'Dot' | 'Manhattan';

/**
 * A point id as sent: a non-negative integer or a UUID in any form Qdrant reads. An integer past
 * 2^53 is a bigint once the body has passed validation (the id keyword puts its exact value in).
 */
export type WirePointId = number | bigint | string;

export type WireShardKey = string | number;
export type WireShardKeySelector = WireShardKey | WireShardKey[] | { target: WireShardKey; fallback: WireShardKey };

export interface WireCreateShardingKey {
  shard_key: WireShardKey;
  shards_number?: Opt<number>;
  replication_factor?: Opt<number>;
  placement?: Opt<number[]>;
  initial_state?: Opt<string>;
}

export interface WireDropShardingKey {
  shard_key: WireShardKey;
}

export type WireShardTransferMethod = 'stream_records' | 'snapshot' | 'wal_delta' | 'resharding_stream_records';

export interface WireShardTransfer {
  shard_id: number;
  to_shard_id?: Opt<number>;
  to_peer_id: number;
  from_peer_id: number;
  method?: Opt<WireShardTransferMethod>;
}

/** ClusterOperations: exactly one key, as the schema's untagged variants take it. */
export type WireClusterOperations =
  | { move_shard: WireShardTransfer }
  | { replicate_shard: WireShardTransfer }
  | { abort_transfer: Omit<WireShardTransfer, 'method'> }
  | { drop_replica: { shard_id: number; peer_id: number } }
  | { create_sharding_key: WireCreateShardingKey }
  | { drop_sharding_key: WireDropShardingKey }
  | { restart_transfer: WireShardTransfer & { method: WireShardTransferMethod } }
  | { start_resharding: { direction: 'up' | 'down'; peer_id?: Opt<number>; shard_key?: Opt<WireShardKey> } }
  | { abort_resharding: Record<string, never> }
  | { replicate_points: { filter?: Opt<WireFilter>; from_shard_key: WireShardKey; to_shard_key: WireShardKey } };

export interface WireHnswConfigDiff {
  m?: Opt<number>;
  ef_construct?: Opt<number>;
  full_scan_threshold?: Opt<number>;
  /** Old name of full_scan_threshold, still read by Qdrant. */
  full_scan_threshold_kb?: Opt<number>;
  max_indexing_threads?: Opt<number>;
  on_disk?: Opt<boolean>;
  memory?: Opt<WireMemory>;
  payload_m?: Opt<number>;
  inline_storage?: Opt<boolean>;
}

export interface WireWalConfigDiff {
  wal_capacity_mb?: Opt<number>;
  wal_segments_ahead?: Opt<number>;
  wal_retain_closed?: Opt<number>;
}

export interface WireOptimizersConfigDiff {
  deleted_threshold?: Opt<number>;
  vacuum_min_vector_number?: Opt<number>;
  default_segment_number?: Opt<number>;
  max_segment_size?: Opt<number>;
  max_segment_size_kb?: Opt<number>;
  memmap_threshold?: Opt<number>;
  memmap_threshold_kb?: Opt<number>;
  indexing_threshold?: Opt<number>;
  indexing_threshold_kb?: Opt<number>;
  flush_interval_sec?: Opt<number>;
  max_optimization_threads?: Opt<number | 'auto'>;
  prevent_unoptimized?: Opt<boolean>;
}

export type WireQuantizationConfigDiff = WireQuantizationConfig | 'Disabled';

export interface WireVectorParams {
  size: number;
  distance: WireDistance;
  hnsw_config?: Opt<WireHnswConfigDiff>;
  quantization_config?: Opt<WireQuantizationConfig>;
  on_disk?: Opt<boolean>;
  memory?: Opt<WireMemory>;
  datatype?: Opt<WireDatatype>;
  multivector_config?: Opt<{ comparator: 'max_sim' }>;
}

/** PUT /collections/{name}/vectors/{vector}: a new dense or sparse vector's immutable parts. */
export type WireVectorNameConfig =
  | { dense: { size: number; distance: WireDistance; multivector_config?: Opt<{ comparator: 'max_sim' }>; datatype?: Opt<WireDatatype> } }
  | { sparse: { modifier?: Opt<'none' | 'idf'>; datatype?: Opt<WireDatatype> } };

/** One unnamed vector's params, or params by vector name. */
export type WireVectorsConfig = WireVectorParams | Record<string, WireVectorParams>;

export interface WireCreateCollection {
  vectors?: WireVectorsConfig;
  shard_number?: Opt<number>;
  sharding_method?: Opt<'auto' | 'custom'>;
  replication_factor?: Opt<number>;
  write_consistency_factor?: Opt<number>;
  on_disk_payload?: Opt<boolean>;
  payload?: Opt<WirePayloadStorageParams>;
  hnsw_config?: Opt<WireHnswConfigDiff>;
  wal_config?: Opt<WireWalConfigDiff>;
  optimizers_config?: Opt<WireOptimizersConfigDiff>;
  /** Alias of optimizers_config. */
  optimizer_config?: Opt<WireOptimizersConfigDiff>;
  quantization_config?: Opt<WireQuantizationConfig>;
  /** Alias of quantization_config. */
  quantization?: Opt<WireQuantizationConfig>;
  sparse_vectors?: Opt<Record<string, WireSparseVectorParams>>;
  strict_mode_config?: Opt<WireStrictModeConfig>;
  metadata?: Opt<Payload>;
}

export interface WireVectorParamsDiff {
  hnsw_config?: Opt<WireHnswConfigDiff>;
  quantization_config?: Opt<WireQuantizationConfigDiff>;
  on_disk?: Opt<boolean>;
  memory?: Opt<WireMemory>;
}

export interface WireCollectionParamsDiff {
  replication_factor?: Opt<number>;
  write_consistency_factor?: Opt<number>;
  read_fan_out_factor?: Opt<number>;
  read_fan_out_delay_ms?: Opt<number>;
  on_disk_payload?: Opt<boolean>;
  payload?: Opt<WirePayloadStorageParams>;
}

export interface WireUpdateCollection {
  vectors?: Opt<Record<string, WireVectorParamsDiff>>;
  optimizers_config?: Opt<WireOptimizersConfigDiff>;
  optimizer_config?: Opt<WireOptimizersConfigDiff>;
  params?: Opt<WireCollectionParamsDiff>;
  hnsw_config?: Opt<WireHnswConfigDiff>;
  quantization_config?: Opt<WireQuantizationConfigDiff>;
  quantization?: Opt<WireQuantizationConfigDiff>;
  sparse_vectors?: Opt<Record<string, WireSparseVectorParams>>;
  strict_mode_config?: Opt<WireStrictModeConfig>;
  metadata?: Opt<Payload>;
}

export interface WireSparseVector {
  indices: number[];
  values: number[];
}

/** Inference inputs Qdrant accepts in place of a vector; Quiver has no inference. */
export type WireInferenceInput =
  | { text: string; model: string; options?: Opt<Payload> }
  | { image: JsonValue; model: string; options?: Opt<Payload> }
  | { object: JsonValue; model: string; options?: Opt<Payload> };

export type WireVector = number[] | WireSparseVector | number[][] | WireInferenceInput;

/** A point's vectors: the unnamed dense vector, a multivector, named vectors, or an inference input. */
export type WireVectorStruct = number[] | number[][] | Record<string, WireVector> | WireInferenceInput;

export type WireBatchVectorStruct =
  | number[][]
  | number[][][]
  | Record<string, WireVector[]>
  | WireInferenceInput[];

export interface WirePointStruct {
  id: WirePointId;
  vector: WireVectorStruct;
  payload?: Opt<Payload>;
}

export interface WireBatch {
  ids: WirePointId[];
  vectors: WireBatchVectorStruct;
  payloads?: Opt<Array<Opt<Payload>>>;
}

export type WireUpdateMode = 'upsert' | 'insert_only' | 'update_only';

interface WireInsertOptions {
  shard_key?: Opt<WireShardKeySelector>;
  update_filter?: Opt<WireFilter>;
  update_mode?: Opt<WireUpdateMode>;
}

export interface WirePointsList extends WireInsertOptions {
  points: WirePointStruct[];
}

export interface WirePointsBatch extends WireInsertOptions {
  batch: WireBatch;
}

export type WirePointInsertOperations = WirePointsBatch | WirePointsList;

export type WireWithPayload = boolean | string[] | { include: string[] } | { exclude: string[] };
export type WireWithVector = boolean | string[];

export interface WirePointRequest {
  shard_key?: Opt<WireShardKeySelector>;
  ids: WirePointId[];
  with_payload?: Opt<WireWithPayload>;
  with_vector?: WireWithVector;
}

export type WirePointsSelector =
  | { points: WirePointId[]; shard_key?: Opt<WireShardKeySelector> }
  | { filter: WireFilter; shard_key?: Opt<WireShardKeySelector> };

export interface WirePointVectors {
  id: WirePointId;
  vector: WireVectorStruct;
}

export interface WireUpdateVectors {
  points: WirePointVectors[];
  shard_key?: Opt<WireShardKeySelector>;
  update_filter?: Opt<WireFilter>;
}

export interface WireDeleteVectors {
  points?: Opt<WirePointId[]>;
  filter?: Opt<WireFilter>;
  vector: string[];
  shard_key?: Opt<WireShardKeySelector>;
}

export interface WireSetPayload {
  payload: Payload;
  points?: Opt<WirePointId[]>;
  filter?: Opt<WireFilter>;
  shard_key?: Opt<WireShardKeySelector>;
  key?: Opt<string>;
}

export interface WireDeletePayload {
  keys: string[];
  points?: Opt<WirePointId[]>;
  filter?: Opt<WireFilter>;
  shard_key?: Opt<WireShardKeySelector>;
}

export type WireUpdateOperation =
  | { upsert: WirePointInsertOperations }
  | { delete: WirePointsSelector }
  | { set_payload: WireSetPayload }
  | { overwrite_payload: WireSetPayload }
  | { delete_payload: WireDeletePayload }
  | { clear_payload: WirePointsSelector }
  | { update_vectors: WireUpdateVectors }
  | { delete_vectors: WireDeleteVectors };

export interface WireUpdateOperations {
  operations: WireUpdateOperation[];
}

export interface WireOrderBy {
  key: string;
  direction?: Opt<'asc' | 'desc'>;
  start_from?: Opt<number | bigint | string>;
}

export interface WireScrollRequest {
  shard_key?: Opt<WireShardKeySelector>;
  offset?: Opt<WirePointId>;
  limit?: Opt<number>;
  filter?: Opt<WireFilter>;
  with_payload?: Opt<WireWithPayload>;
  with_vector?: WireWithVector;
  order_by?: Opt<string | WireOrderBy>;
}

export interface WireCountRequest {
  shard_key?: Opt<WireShardKeySelector>;
  filter?: Opt<WireFilter>;
  exact?: boolean;
}

export type WirePayloadSchemaType = 'keyword' | 'integer' | 'float' | 'geo' | 'text' | 'bool' | 'datetime' | 'uuid';

/** Index parameters: a type plus options of that type, kept as sent. */
export interface WirePayloadSchemaParams {
  type: WirePayloadSchemaType;
  [option: string]: JsonValue;
}

export type WirePayloadFieldSchema = WirePayloadSchemaType | WirePayloadSchemaParams;

export interface WireCreateFieldIndex {
  field_name: string;
  field_schema?: Opt<WirePayloadFieldSchema>;
}

export type WireAliasOperation =
  | { create_alias: { collection_name: string; alias_name: string } }
  | { delete_alias: { alias_name: string } }
  | { rename_alias: { old_alias_name: string; new_alias_name: string } };

export interface WireChangeAliases {
  actions: WireAliasOperation[];
}

export interface WireQuantizationSearchParams {
  ignore?: boolean;
  rescore?: Opt<boolean>;
  oversampling?: Opt<number>;
}

export interface WireSearchParams {
  hnsw_ef?: Opt<number>;
  exact?: boolean;
  quantization?: Opt<WireQuantizationSearchParams>;
  indexed_only?: boolean;
  /** Qdrant 1.19: the population sparse IDF statistics come from (default "global": all of the shard's vectors). */
  idf?: Opt<'global' | { corpus: WireFilter }>;
}

export type WireNamedVectorStruct = number[] | { name: string; vector: number[] | WireSparseVector };

export interface WireSearchRequest {
  shard_key?: Opt<WireShardKeySelector>;
  vector: WireNamedVectorStruct;
  filter?: Opt<WireFilter>;
  params?: Opt<WireSearchParams>;
  limit: number;
  offset?: Opt<number>;
  with_payload?: Opt<WireWithPayload>;
  with_vector?: Opt<WireWithVector>;
  score_threshold?: Opt<number>;
}

export interface WireSearchRequestBatch {
  searches: WireSearchRequest[];
}

export type WireVectorInput = number[] | number[][] | WireSparseVector | WireInferenceInput | WirePointId;

export type WireRecommendStrategy = 'average_vector' | 'best_score' | 'sum_scores';

export interface WireRecommendInput {
  positive?: Opt<WireVectorInput[]>;
  negative?: Opt<WireVectorInput[]>;
  strategy?: Opt<WireRecommendStrategy>;
}

export interface WireLookupLocation {
  collection: string;
  vector?: Opt<string>;
  shard_key?: Opt<WireShardKeySelector>;
}

export type WireFusion = 'rrf' | 'dbsf';

export interface WireContextPair {
  positive: WireVectorInput;
  negative: WireVectorInput;
}

export type WireContextInput = WireContextPair | WireContextPair[] | null;

export interface WireMmr {
  diversity?: Opt<number>;
  candidates_limit?: Opt<number>;
}

export interface WireRelevanceFeedbackInput {
  target: WireVectorInput;
  feedback: { example: WireVectorInput; score: number }[];
  strategy: { naive: { a: number; b: number; c: number } };
}

export type WireQueryInterface =
  | WireVectorInput
  | { nearest: WireVectorInput; mmr?: Opt<WireMmr> }
  | { recommend: WireRecommendInput }
  | { discover: { target: WireVectorInput; context: WireContextInput } }
  | { context: WireContextInput }
  | { fusion: WireFusion }
  | { rrf: { k?: Opt<number>; weights?: Opt<number[]> } }
  | { order_by: string | WireOrderBy }
  | { sample: 'random' }
  | WireFormulaQuery
  | { relevance_feedback: WireRelevanceFeedbackInput };

/** A decay's parameters: `x` and `target` are expressions, midpoint and scale constants. */
export interface WireDecayParams {
  x: WireExpression;
  target?: Opt<WireExpression>;
  scale?: Opt<number>;
  midpoint?: Opt<number>;
}

/** Qdrant's formula Expression: a constant, a variable, a condition, or an operation. */
export type WireExpression =
  | number
  | string
  | WireCondition
  | { geo_distance: { origin: { lon: number; lat: number }; to: string } }
  | { datetime: string }
  | { datetime_key: string }
  | { mult: WireExpression[] }
  | { sum: WireExpression[] }
  | { neg: WireExpression }
  | { abs: WireExpression }
  | { div: { left: WireExpression; right: WireExpression; by_zero_default?: Opt<number> } }
  | { sqrt: WireExpression }
  | { pow: { base: WireExpression; exponent: WireExpression } }
  | { exp: WireExpression }
  | { log10: WireExpression }
  | { ln: WireExpression }
  | { lin_decay: WireDecayParams }
  | { exp_decay: WireDecayParams }
  | { gauss_decay: WireDecayParams };

export interface WireFormulaQuery {
  formula: WireExpression;
  defaults?: Record<string, JsonValue>;
}

export interface WirePrefetch {
  prefetch?: Opt<WirePrefetch | WirePrefetch[]>;
  query?: Opt<WireQueryInterface>;
  using?: Opt<string>;
  lookup_from?: Opt<WireLookupLocation>;
  filter?: Opt<WireFilter>;
  params?: Opt<WireSearchParams>;
  score_threshold?: Opt<number>;
  limit?: Opt<number>;
}

export interface WireRecommendRequest {
  shard_key?: Opt<WireShardKeySelector>;
  positive?: WireVectorInput[];
  negative?: WireVectorInput[];
  strategy?: Opt<WireRecommendStrategy>;
  filter?: Opt<WireFilter>;
  params?: Opt<WireSearchParams>;
  limit: number;
  offset?: Opt<number>;
  with_payload?: Opt<WireWithPayload>;
  with_vector?: Opt<WireWithVector>;
  score_threshold?: Opt<number>;
  using?: Opt<string>;
  lookup_from?: Opt<WireLookupLocation>;
}

export interface WireRecommendRequestBatch {
  searches: WireRecommendRequest[];
}

export interface WireQueryRequest {
  shard_key?: Opt<WireShardKeySelector>;
  prefetch?: Opt<WirePrefetch | WirePrefetch[]>;
  query?: Opt<WireQueryInterface>;
  using?: Opt<string>;
  lookup_from?: Opt<WireLookupLocation>;
  filter?: Opt<WireFilter>;
  params?: Opt<WireSearchParams>;
  score_threshold?: Opt<number>;
  limit?: Opt<number>;
  offset?: Opt<number>;
  with_vector?: Opt<WireWithVector>;
  with_payload?: Opt<WireWithPayload>;
}

export interface WireQueryRequestBatch {
  searches: WireQueryRequest[];
}

export interface WireFacetRequest {
  shard_key?: Opt<WireShardKeySelector>;
  key: string;
  limit?: Opt<number>;
  filter?: Opt<WireFilter>;
  exact?: Opt<boolean>;
}

export type WireWithLookup = string | { collection: string; with_payload?: Opt<WireWithPayload>; with_vectors?: Opt<WireWithVector> };

export interface WireGrouping {
  group_by: string;
  group_size?: Opt<number>;
  limit?: Opt<number>;
  with_lookup?: Opt<WireWithLookup>;
}

export type WireSearchGroupsRequest = WireSearchRequest & WireGrouping;
export type WireRecommendGroupsRequest = WireRecommendRequest & WireGrouping;
export type WireQueryGroupsRequest = WireQueryRequest & WireGrouping;

export interface WireDiscoverRequest extends Omit<WireSearchRequest, 'vector'> {
  target?: Opt<WireVectorInput>;
  context?: Opt<WireContextPair[]>;
  using?: Opt<string>;
  lookup_from?: Opt<WireLookupLocation>;
}

export interface WireDiscoverRequestBatch {
  searches: WireDiscoverRequest[];
}

export interface WireSearchMatrixRequest {
  shard_key?: Opt<WireShardKeySelector>;
  filter?: Opt<WireFilter>;
  sample?: Opt<number>;
  limit?: Opt<number>;
  using?: Opt<string>;
}
