// The parts of a collection's configuration Quiver keeps in Qdrant's own shape: persisted with
// the collection and reported back as given (quantization is also read, to configure the engine).
// The API's wire types for these parts are these very types.

type Opt<T> = T | null | undefined;

export type Memory = 'cold' | 'cached' | 'pinned';
export type Datatype = 'float32' | 'uint8' | 'float16' | 'turbo4';

interface QuantizationStorage {
  always_ram?: Opt<boolean>;
  memory?: Opt<Memory>;
}

export interface ScalarQuantizationConfig {
  scalar: QuantizationStorage & { type: 'int8'; quantile?: Opt<number> };
}
export interface ProductQuantizationConfig {
  product: QuantizationStorage & { compression: 'x4' | 'x8' | 'x16' | 'x32' | 'x64' };
}
export interface BinaryQuantizationConfig {
  binary: QuantizationStorage & {
    encoding?: Opt<'one_bit' | 'two_bits' | 'one_and_half_bits'>;
    query_encoding?: Opt<'default' | 'binary' | 'scalar4bits' | 'scalar8bits'>;
  };
}
export interface TurboQuantizationConfig {
  turbo: QuantizationStorage & { bits?: Opt<'bits1' | 'bits1_5' | 'bits2' | 'bits4'> };
}
export type QuantizationConfig =
  | ScalarQuantizationConfig
  | ProductQuantizationConfig
  | BinaryQuantizationConfig
  | TurboQuantizationConfig;

export interface SparseVectorParams {
  index?: Opt<{
    full_scan_threshold?: Opt<number>;
    on_disk?: Opt<boolean>;
    memory?: Opt<Memory>;
    datatype?: Opt<Datatype>;
  }>;
  modifier?: Opt<'none' | 'idf'>;
}

export interface StrictModeConfig {
  enabled?: Opt<boolean>;
  max_query_limit?: Opt<number>;
  max_timeout?: Opt<number>;
  unindexed_filtering_retrieve?: Opt<boolean>;
  unindexed_filtering_update?: Opt<boolean>;
  search_max_hnsw_ef?: Opt<number>;
  search_allow_exact?: Opt<boolean>;
  search_max_oversampling?: Opt<number>;
  upsert_max_batchsize?: Opt<number>;
  search_max_batchsize?: Opt<number>;
  max_collection_vector_size_bytes?: Opt<number>;
  read_rate_limit?: Opt<number>;
  write_rate_limit?: Opt<number>;
  max_collection_payload_size_bytes?: Opt<number>;
  max_points_count?: Opt<number>;
  filter_max_conditions?: Opt<number>;
  condition_max_size?: Opt<number>;
  multivector_config?: Opt<Record<string, { max_vectors?: Opt<number> }>>;
  sparse_config?: Opt<Record<string, { max_length?: Opt<number> }>>;
  max_payload_index_count?: Opt<number>;
  max_resident_memory_percent?: Opt<number>;
}

export interface PayloadStorageParams {
  memory?: Opt<Memory>;
}
