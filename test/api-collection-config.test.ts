// Collection configuration: Qdrant 1.19's defaults, updates, and the CollectionInfo JSON.

import t from 'tap';
import {
  applyUpdate,
  fromCreateRequest,
  renderCollectionInfo,
  renderConfig,
  type CollectionStats,
} from '../src/api/collection-config.js';
import { BadInput } from '../src/errors.js';
import { defaultCollectionConfig } from './helpers/qdrant-defaults.js';

const EMPTY_STATS: CollectionStats = {
  status: 'green',
  pointsCount: 0,
  indexedVectorsCount: 0,
  segmentsCount: 4,
  updateQueueLength: 0,
  payloadIndexes: {},
};

t.test('a collection created with vectors only gets every Qdrant default', async (t) => {
  const config = fromCreateRequest({ vectors: { size: 4, distance: 'Dot' } }, 1);
  t.same(renderCollectionInfo(config, EMPTY_STATS), {
    status: 'green',
    optimizer_status: 'ok',
    indexed_vectors_count: 0,
    points_count: 0,
    segments_count: 4,
    config: defaultCollectionConfig({ size: 4, distance: 'Dot' }, 1),
    payload_schema: {},
    update_queue: { length: 0 },
  });
});

t.test('CollectionInfo carries every field Qdrant 1.19 requires, with the right types', async (t) => {
  const info = renderCollectionInfo(fromCreateRequest({}, 2), { ...EMPTY_STATS, pointsCount: 3, indexedVectorsCount: 2 });
  for (const field of ['status', 'optimizer_status', 'segments_count', 'config', 'payload_schema']) t.ok(field in info, field);
  t.equal(info.points_count, 3);
  t.equal(info.indexed_vectors_count, 2);
  const config = info.config as Record<string, Record<string, unknown>>;
  for (const field of ['params', 'hnsw_config', 'optimizer_config']) t.ok(field in config, `config.${field}`);
  for (const field of ['m', 'ef_construct', 'full_scan_threshold']) t.type(config.hnsw_config[field], 'number', field);
  for (const field of ['default_segment_number', 'flush_interval_sec']) t.type(config.optimizer_config[field], 'number', field);
  for (const field of ['wal_capacity_mb', 'wal_segments_ahead']) t.type(config.wal_config[field], 'number', field);
  t.same(config.params.vectors, {}, 'a collection without vectors reports an empty map');
  t.equal(config.params.shard_number, 2);
});

t.test('the shard number', async (t) => {
  t.equal(fromCreateRequest({}, 6).params.shardNumber, 6, 'Quiver\'s default when none is asked for');
  t.equal(fromCreateRequest({ shard_number: 3 }, 6).params.shardNumber, 3);
  t.equal(fromCreateRequest({ sharding_method: 'custom' }, 6).params.shardNumber, 1, 'one shard per shard key under custom sharding');
  t.same(renderConfig(fromCreateRequest({ sharding_method: 'custom' }, 6)).params, {
    vectors: {},
    shard_number: 1,
    sharding_method: 'custom',
    replication_factor: 1,
    write_consistency_factor: 1,
    on_disk_payload: true,
  });
});

t.test('everything a create request sets is kept, nulls meaning "not set"', async (t) => {
  const config = fromCreateRequest(
    {
      vectors: {
        image: {
          size: 512,
          distance: 'Cosine',
          hnsw_config: { m: 8, ef_construct: null },
          quantization_config: { scalar: { type: 'int8', quantile: 0.99, always_ram: null } },
          on_disk: true,
          datatype: 'float16',
        },
        text: { size: 8, distance: 'Euclid' },
      },
      replication_factor: 2,
      write_consistency_factor: 2,
      on_disk_payload: false,
      payload: { memory: 'cold' },
      hnsw_config: { m: 32, full_scan_threshold_kb: 500, payload_m: 4, on_disk: null },
      wal_config: { wal_segments_ahead: 2, wal_capacity_mb: null },
      optimizer_config: { indexing_threshold_kb: 0, max_optimization_threads: 'auto', max_segment_size: 1000, prevent_unoptimized: true },
      quantization: { binary: { always_ram: true, encoding: null } },
      sparse_vectors: { keywords: { modifier: 'idf', index: null } },
      strict_mode_config: { enabled: true, max_query_limit: 50, search_allow_exact: null },
      metadata: { team: 'search', nested: { a: null } },
    },
    1,
  );
  t.same(renderConfig(config), {
    params: {
      vectors: {
        image: {
          size: 512,
          distance: 'Cosine',
          hnsw_config: { m: 8 },
          quantization_config: { scalar: { type: 'int8', quantile: 0.99 } },
          on_disk: true,
          datatype: 'float16',
        },
        text: { size: 8, distance: 'Euclid' },
      },
      shard_number: 1,
      replication_factor: 2,
      write_consistency_factor: 2,
      on_disk_payload: false,
      payload: { memory: 'cold' },
      sparse_vectors: { keywords: { modifier: 'idf' } },
    },
    hnsw_config: { m: 32, ef_construct: 100, full_scan_threshold: 500, max_indexing_threads: 0, on_disk: false, payload_m: 4 },
    optimizer_config: {
      deleted_threshold: 0.2,
      vacuum_min_vector_number: 1000,
      default_segment_number: 0,
      max_segment_size: 1000,
      memmap_threshold: null,
      indexing_threshold: 0,
      flush_interval_sec: 5,
      max_optimization_threads: null,
      prevent_unoptimized: true,
    },
    wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 2, wal_retain_closed: 1 },
    quantization_config: { binary: { always_ram: true } },
    strict_mode_config: { enabled: true, max_query_limit: 50 },
    metadata: { team: 'search', nested: { a: null } },
  });
  t.equal(fromCreateRequest({ optimizers_config: { max_optimization_threads: 2 } }, 1).optimizer.maxOptimizationThreads, 2);
});

t.test('updates patch the configuration and leave the original alone', async (t) => {
  const original = fromCreateRequest(
    {
      vectors: { size: 4, distance: 'Dot', quantization_config: { scalar: { type: 'int8' } } },
      quantization_config: { scalar: { type: 'int8', quantile: 0.9 } },
      metadata: { keep: 1, drop: 2 },
    },
    1,
  );
  const before = structuredClone(original);
  const updated = applyUpdate(original, {
    vectors: { '': { hnsw_config: { m: 4 }, quantization_config: 'Disabled', on_disk: true } },
    optimizers_config: { indexing_threshold: 0, deleted_threshold: null },
    params: { replication_factor: 3, read_fan_out_factor: 1, on_disk_payload: false },
    hnsw_config: { ef_construct: 64 },
    quantization_config: 'Disabled',
    strict_mode_config: { enabled: true, max_timeout: 10 },
    metadata: { drop: null, added: true },
  });
  t.same(original, before);
  const rendered = renderConfig(updated);
  t.same(rendered.params, {
    vectors: { size: 4, distance: 'Dot', hnsw_config: { m: 4 }, on_disk: true },
    shard_number: 1,
    replication_factor: 3,
    write_consistency_factor: 1,
    read_fan_out_factor: 1,
    on_disk_payload: false,
  });
  t.same(rendered.hnsw_config, { m: 16, ef_construct: 64, full_scan_threshold: 10000, max_indexing_threads: 0, on_disk: false });
  t.equal((rendered.optimizer_config as Record<string, unknown>).indexing_threshold, 0);
  t.equal((rendered.optimizer_config as Record<string, unknown>).deleted_threshold, 0.2, 'a null in a diff changes nothing');
  t.equal(rendered.quantization_config, null);
  t.same(rendered.strict_mode_config, { enabled: true, max_timeout: 10 });
  t.same(rendered.metadata, { keep: 1, added: true });
  t.same(applyUpdate(updated, { quantization_config: { scalar: { type: 'int8', quantile: 0.95 } } }).quantization, {
    scalar: { type: 'int8', quantile: 0.95 },
  });
  t.same(applyUpdate(updated, {}), updated, 'an empty update changes nothing');
});

t.test('updates of vectors the collection does not have are refused as Qdrant words it', async (t) => {
  const unnamed = fromCreateRequest({ vectors: { size: 4, distance: 'Dot' } }, 1);
  t.throws(() => applyUpdate(unnamed, { vectors: { image: { on_disk: true } } }), new BadInput('Vector params for image are not specified in config'));
  const named = fromCreateRequest({ vectors: { image: { size: 4, distance: 'Dot' } } }, 1);
  t.throws(() => applyUpdate(named, { vectors: { '': { on_disk: true } } }), new BadInput('Default vector params are not specified in config'));
  t.throws(() => applyUpdate(named, { sparse_vectors: { words: { modifier: 'idf' } } }), new BadInput('Vector params for words are not specified in config'));
});

t.test('vector and metadata names such as __proto__ and toString are plain names', async (t) => {
  // Parsed, as bodies are: an object literal would not hold "__proto__" as a field.
  const named = fromCreateRequest(JSON.parse('{"vectors":{"__proto__":{"size":2,"distance":"Dot"}},"metadata":{"a":1}}'), 1);
  t.same(Object.keys(named.params.vectors.byName), ['__proto__'], 'a vector named __proto__ is created');
  t.throws(() => applyUpdate(named, { vectors: { toString: { on_disk: true } } }), new BadInput('Vector params for toString are not specified in config'));
  t.throws(() => applyUpdate(named, { sparse_vectors: { constructor: { modifier: 'idf' as const } } }), new BadInput('Vector params for constructor are not specified in config'));
  t.equal(applyUpdate(named, JSON.parse('{"vectors":{"__proto__":{"on_disk":true}}}')).params.vectors.byName.__proto__.onDisk, true, 'the vector named __proto__ is updated');
  const patched = applyUpdate(named, JSON.parse('{"metadata":{"__proto__":{"b":2}}}'));
  t.equal(JSON.stringify(patched.metadata), '{"a":1,"__proto__":{"b":2}}', 'metadata key __proto__ is a key');
});

t.test('sparse vector params are patched field by field', async (t) => {
  const config = fromCreateRequest({ sparse_vectors: { words: { index: { on_disk: true, full_scan_threshold: 100 } } } }, 1);
  const updated = applyUpdate(config, { sparse_vectors: { words: { modifier: 'idf', index: { on_disk: false, datatype: null } } } });
  t.same(updated.params.sparseVectors, { words: { modifier: 'idf', index: { on_disk: false, full_scan_threshold: 100 } } });
});

t.test('payload indexes are listed with their type, parameters and point counts', async (t) => {
  const info = renderCollectionInfo(fromCreateRequest({}, 1), {
    ...EMPTY_STATS,
    status: 'yellow',
    updateQueueLength: 2,
    payloadIndexes: {
      city: { schema: 'keyword', points: 10 },
      tenant: { schema: { type: 'keyword', is_tenant: true, on_disk: null }, points: 7 },
      body: { schema: { type: 'text', lowercase: true }, points: 3 },
    },
  });
  t.equal(info.status, 'yellow');
  t.same(info.update_queue, { length: 2 });
  t.same(info.payload_schema, {
    city: { data_type: 'keyword', points: 10 },
    tenant: { data_type: 'keyword', params: { type: 'keyword', is_tenant: true }, points: 7 },
    body: { data_type: 'text', params: { type: 'text', lowercase: true, tokenizer: 'word' }, points: 3 },
  });
});
