// Qdrant 1.19's collection defaults (its config/config.yaml), as CollectionInfo reports them:
// facts the tests hold the server to.

export const DEFAULT_HNSW = { m: 16, ef_construct: 100, full_scan_threshold: 10000, max_indexing_threads: 0, on_disk: false };

export const DEFAULT_OPTIMIZER = {
  deleted_threshold: 0.2,
  vacuum_min_vector_number: 1000,
  default_segment_number: 0,
  max_segment_size: null,
  memmap_threshold: null,
  indexing_threshold: 10000,
  flush_interval_sec: 5,
  max_optimization_threads: null,
};

export const DEFAULT_WAL = { wal_capacity_mb: 32, wal_segments_ahead: 0, wal_retain_closed: 1 };

/** CollectionInfo.config of a collection created with only `vectors` (and a shard count). */
export function defaultCollectionConfig(vectors: unknown, shardNumber: number): Record<string, unknown> {
  return {
    params: { vectors, shard_number: shardNumber, replication_factor: 1, write_consistency_factor: 1, on_disk_payload: true },
    hnsw_config: DEFAULT_HNSW,
    optimizer_config: DEFAULT_OPTIMIZER,
    wal_config: DEFAULT_WAL,
    quantization_config: null,
    strict_mode_config: { enabled: false },
  };
}
