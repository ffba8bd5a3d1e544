// Request validation against Qdrant 1.19: the bodies the official client sends are accepted,
// and bad ones are refused with Qdrant's status code and wording.

import t from 'tap';
import {
  COMMIT_PARAMS,
  POINT_READ_PARAMS,
  READ_PARAMS,
  validateBody,
  validateQuery,
  WRITE_PARAMS,
  type BodyName,
} from '../src/api/validator.js';

const UUID = '550e8400-e29b-41d4-a716-446655440000';
const FILTER = { must: [{ key: 'city', match: { value: 'London' } }] };

interface Refusal {
  kind: string;
  statusCode: number;
  message: string;
}

function refusal(run: () => unknown): Refusal | null {
  try {
    run();
    return null;
  } catch (err) {
    const { kind, statusCode, message } = err as Refusal;
    return { kind, statusCode, message };
  }
}

function format(message: string): Refusal {
  return { kind: 'FormatError', statusCode: 400, message: `Format error in JSON body: ${message}` };
}

function invalid(...breaches: string[]): Refusal {
  return { kind: 'ValidationError', statusCode: 422, message: `Validation error in JSON body: [${breaches.join('; ')}]` };
}

const ACCEPTED: Array<[BodyName, unknown]> = [
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' } }],
  ['CreateCollection', { vectors: { image: { size: 4, distance: 'Cosine' }, text: { size: 8, distance: 'Euclid', on_disk: true } } }],
  ['CreateCollection', {}],
  ['CreateCollection', { vectors: {}, sparse_vectors: { text: { modifier: 'idf', index: { on_disk: false } } } }],
  [
    'CreateCollection',
    {
      vectors: {
        size: 768,
        distance: 'Manhattan',
        hnsw_config: { m: 32, payload_m: 0, on_disk: false },
        quantization_config: { scalar: { type: 'int8', quantile: 0.99, always_ram: true } },
        datatype: 'float16',
        multivector_config: { comparator: 'max_sim' },
        memory: 'cached',
      },
      shard_number: 3,
      sharding_method: 'auto',
      replication_factor: 2,
      write_consistency_factor: 1,
      on_disk_payload: false,
      payload: { memory: 'cold' },
      hnsw_config: { m: 0, ef_construct: 4, full_scan_threshold: 10, max_indexing_threads: 2, inline_storage: true },
      wal_config: { wal_capacity_mb: 1, wal_segments_ahead: 0, wal_retain_closed: 2 },
      optimizers_config: {
        deleted_threshold: 0,
        vacuum_min_vector_number: 100,
        default_segment_number: 2,
        max_segment_size: 1,
        memmap_threshold: 0,
        indexing_threshold: 0,
        flush_interval_sec: 1,
        max_optimization_threads: 'auto',
        prevent_unoptimized: true,
      },
      quantization_config: { product: { compression: 'x16' } },
      strict_mode_config: { enabled: true, max_query_limit: 100, multivector_config: { v: { max_vectors: 4 } }, max_resident_memory_percent: 90 },
      metadata: { owner: 'me', created: 1 },
      // Unknown fields are ignored: CreateCollection has no serde(deny_unknown_fields).
      init_from: { collection: 'other' },
    },
  ],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, quantization_config: { binary: { always_ram: true, encoding: 'two_bits' } } }],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, quantization: { turbo: { bits: 'bits4' } }, optimizer_config: { indexing_threshold_kb: 5 } }],
  ['UpdateCollection', { optimizers_config: { indexing_threshold: 0 } }],
  [
    'UpdateCollection',
    {
      vectors: { '': { hnsw_config: { m: 8 }, quantization_config: 'Disabled', on_disk: true } },
      params: { replication_factor: 2, read_fan_out_factor: 0, on_disk_payload: true },
      hnsw_config: { ef_construct: 200 },
      quantization_config: { scalar: { type: 'int8' } },
      strict_mode_config: { enabled: false },
      metadata: { owner: null },
    },
  ],
  ['PointInsertOperations', { points: [{ id: 1, vector: [0.1, 0.2], payload: { city: 'Berlin' } }, { id: UUID, vector: [1, 2], payload: null }] }],
  ['PointInsertOperations', { points: [{ id: '5C56C793691F4B3AB0A6A1B7E5A2E0C1', vector: { image: [1, 2], text: [3] } }], shard_key: 'eu', update_mode: 'insert_only' }],
  ['PointInsertOperations', { points: [{ id: 1, vector: [1] }], update_filter: FILTER }],
  ['PointInsertOperations', { batch: { ids: [1, 2], vectors: [[1, 2], [3, 4]], payloads: [{ a: 1 }, null] } }],
  ['PointInsertOperations', { batch: { ids: [1, UUID], vectors: { image: [[1], [2]] } }, shard_key: ['a', 2] }],
  ['PointRequest', { ids: [1, UUID], with_payload: true, with_vector: false }],
  ['PointRequest', { ids: [1], with_payload: ['a', 'b.c'], with_vector: ['image'], shard_key: { target: 'a', fallback: 'b' } }],
  ['PointRequest', { ids: [], with_payload: { exclude: ['a'] } }],
  ['PointsSelector', { points: [1, 2, UUID] }],
  ['PointsSelector', { filter: FILTER, shard_key: 1 }],
  ['UpdateVectors', { points: [{ id: 1, vector: { image: [1, 2] } }, { id: 2, vector: [1, 2] }] }],
  ['DeleteVectors', { points: [1], vector: ['image'] }],
  ['DeleteVectors', { filter: FILTER, vector: ['image', 'text'] }],
  ['SetPayload', { payload: { a: 1 }, points: [1], key: 'nested.path' }],
  ['SetPayload', { payload: {}, filter: FILTER }],
  ['DeletePayload', { keys: ['a', 'b.c'], points: [1] }],
  [
    'UpdateOperations',
    {
      operations: [
        { upsert: { points: [{ id: 1, vector: [1, 2] }] } },
        { upsert: { batch: { ids: [2], vectors: [[1, 2]] } } },
        { delete: { points: [3] } },
        { delete: { filter: FILTER } },
        { set_payload: { payload: { a: 1 }, points: [1] } },
        { overwrite_payload: { payload: { a: 1 }, filter: FILTER } },
        { delete_payload: { keys: ['a'], points: [1] } },
        { clear_payload: { points: [1] } },
        { update_vectors: { points: [{ id: 1, vector: [1, 2] }] } },
        { delete_vectors: { points: [1], vector: [''] } },
      ],
    },
  ],
  // What the client sends for scroll() with its defaults.
  ['ScrollRequest', { limit: 10, with_payload: true, with_vector: false }],
  ['ScrollRequest', { offset: UUID, limit: 1, filter: FILTER, order_by: 'price' }],
  ['ScrollRequest', { order_by: { key: 'price', direction: 'desc', start_from: 1.5 } }],
  ['ScrollRequest', { order_by: { key: 'at', start_from: '2024-01-01T00:00:00Z' }, offset: null }],
  ['CountRequest', { exact: true }],
  ['CountRequest', { filter: FILTER, exact: false }],
  ['CreateFieldIndex', { field_name: 'city', field_schema: 'keyword' }],
  ['CreateFieldIndex', { field_name: 'city' }],
  ['CreateFieldIndex', { field_name: 'tenant', field_schema: { type: 'keyword', is_tenant: true, on_disk: true } }],
  ['CreateFieldIndex', { field_name: 'n', field_schema: { type: 'integer', lookup: false, range: true, is_principal: true } }],
  ['CreateFieldIndex', { field_name: 'f', field_schema: { type: 'float' } }],
  ['CreateFieldIndex', { field_name: 'g', field_schema: { type: 'geo' } }],
  ['CreateFieldIndex', { field_name: 'b', field_schema: { type: 'bool' } }],
  ['CreateFieldIndex', { field_name: 'd', field_schema: { type: 'datetime', is_principal: true } }],
  ['CreateFieldIndex', { field_name: 'u', field_schema: { type: 'uuid', is_tenant: true } }],
  [
    'CreateFieldIndex',
    {
      field_name: 'text',
      field_schema: {
        type: 'text',
        tokenizer: 'multilingual',
        min_token_len: 2,
        lowercase: true,
        stopwords: { languages: ['english'], custom: ['foo'] },
        stemmer: { type: 'snowball', language: 'english' },
      },
    },
  ],
  [
    'ChangeAliasesOperation',
    {
      actions: [
        { create_alias: { collection_name: 'c', alias_name: 'a' } },
        { rename_alias: { old_alias_name: 'a', new_alias_name: 'b' } },
        { delete_alias: { alias_name: 'b' } },
      ],
    },
  ],
  // An inference object with a null field: the rule on vectors to update looks into it too (found by the fuzz test).
  ['UpdateVectors', { points: [{ id: 1, vector: { object: null, model: 'm' } }] }],
];

t.test('accepts the bodies Qdrant accepts and returns them as they are', async (t) => {
  for (const [name, body] of ACCEPTED) {
    t.equal(refusal(() => validateBody(name, body)), null, `${name} ${JSON.stringify(body).slice(0, 120)}`);
    t.equal(validateBody(name, body), body);
  }
});

const REFUSED: Array<[BodyName, unknown, Refusal]> = [
  // serde's messages: missing and mistyped fields, bad enum variants, out-of-range integers.
  ['PointRequest', { with_payload: true }, format('missing field `ids`')],
  ['PointInsertOperations', { points: [{ id: 1 }] }, format('missing field `vector`')],
  ['CreateFieldIndex', { field_schema: 'keyword' }, format('missing field `field_name`')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, shard_number: 'x' }, format('invalid type: string "x", expected u32')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, on_disk_payload: 'yes' }, format('invalid type: string "yes", expected a boolean')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, hnsw_config: 5 }, format('invalid type: integer `5`, expected struct HnswConfigDiff')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, wal_config: { wal_capacity_mb: 1.5 } }, format('invalid type: floating point `1.5`, expected usize')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, metadata: [] }, format('invalid type: sequence, expected a map')],
  ['CountRequest', { exact: null }, format('invalid type: null, expected a boolean')],
  ['PointInsertOperations', { points: 'x' }, format('invalid type: string "x", expected a sequence')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, sharding_method: 'foo' }, format('unknown variant `foo`, expected one of `auto`, `custom`')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, sharding_method: 1 }, format('expected value')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, shard_number: -1 }, format('invalid value: integer `-1`, expected u32')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, shard_number: 2 ** 32 }, format('invalid value: integer `4294967296`, expected u32')],
  ['ScrollRequest', { limit: -1 }, format('invalid value: integer `-1`, expected usize')],
  // NonZero fields are serde types: zero fails parsing, not validation.
  ['UpdateCollection', { params: { replication_factor: 0 } }, format('invalid value: integer `0`, expected a nonzero u32')],
  // An error inside an untagged enum is reported as the enum not matching.
  ['CreateCollection', { vectors: { size: 0, distance: 'Dot' } }, format('data did not match any variant of untagged enum VectorsConfig')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Foo' } }, format('data did not match any variant of untagged enum VectorsConfig')],
  ['CreateCollection', { vectors: null }, format('data did not match any variant of untagged enum VectorsConfig')],
  ['CreateCollection', { vectors: { size: 4, distance: 'Dot' }, quantization_config: { scalar: { type: 'int4' } } }, format('data did not match any variant of untagged enum QuantizationConfig')],
  ['PointInsertOperations', { points: [{ id: 1, vector: [null, 2] }] }, format('data did not match any variant of untagged enum VectorStruct')],
  ['PointInsertOperations', {}, format('data did not match any variant of untagged enum PointInsertOperations')],
  ['PointRequest', { ids: [1], with_payload: { include: ['a'], extra: 1 } }, format('data did not match any variant of untagged enum WithPayloadInterface')],
  ['PointRequest', { ids: [1], with_vector: null }, format('data did not match any variant of untagged enum WithVector')],
  ['PointsSelector', {}, format('data did not match any variant of untagged enum PointsSelector')],
  ['PointsSelector', { points: [1, 'abc'] }, format('data did not match any variant of untagged enum PointsSelector')],
  ['UpdateOperations', { operations: [{ upsert_points: {} }] }, format('data did not match any variant of untagged enum UpdateOperation')],
  ['CreateFieldIndex', { field_name: 'a', field_schema: 'string' }, format('data did not match any variant of untagged enum PayloadFieldSchema')],
  ['ChangeAliasesOperation', { actions: [{ create_alias: { collection_name: 'a' } }] }, format('data did not match any variant of untagged enum AliasOperations')],
  // Qdrant's own wording for ids and for payload selectors without points or filter.
  ['PointInsertOperations', { points: [{ id: '123', vector: [1, 2] }] }, format('value 123 is not a valid point ID, valid values are either an unsigned integer or a UUID')],
  ['PointRequest', { ids: [-1] }, format('value -1 is not a valid point ID, valid values are either an unsigned integer or a UUID')],
  // A body built in code means its doubles' own values: 2^64 is one past u64::MAX (bodies parsed from text are judged by their digits, test/api-point-ids.test.ts).
  ['PointRequest', { ids: [2 ** 64] }, format('value 18446744073709552000 is not a valid point ID, valid values are either an unsigned integer or a UUID')],
  ['PointRequest', { ids: [1.5] }, format('value 1.5 is not a valid point ID, valid values are either an unsigned integer or a UUID')],
  ['SetPayload', { payload: { a: 1 } }, format('Either list of point ids or filter must be provided')],
  ['DeletePayload', { keys: ['a'], points: null, filter: null }, format('Either list of point ids or filter must be provided')],
  // Payload keys are JsonPaths: one that does not parse fails its deserializer, or the untagged enum around it.
  ['CreateFieldIndex', { field_name: 'a..b', field_schema: 'keyword' }, format("Invalid json path: 'a..b'")],
  ['FacetRequest', { key: 'a[x]' }, format("Invalid json path: 'a[x]'")],
  ['QueryGroupsRequest', { query: [1, 2], group_by: 'a..b' }, format("Invalid json path: 'a..b'")],
  ['ScrollRequest', { order_by: 'a..b' }, format('data did not match any variant of untagged enum OrderByInterface')],
  ['ScrollRequest', { order_by: { key: 'a..b' } }, format('data did not match any variant of untagged enum OrderByInterface')],
  // start_from is an untagged enum of an integer, a float or a datetime; a string that is no datetime fits none.
  ['ScrollRequest', { order_by: { key: 'a', start_from: 'yesterday' } }, format('data did not match any variant of untagged enum OrderByInterface')],
  // Validator-crate rules: 422, every broken rule listed with its path.
  ['ScrollRequest', { limit: 0 }, invalid('limit: value 0 invalid, must be 1 or larger')],
  ['CreateCollection', { vectors: { size: 65537, distance: 'Dot' } }, invalid('vectors.size: value 65537 invalid, must be from 1 to 65536')],
  [
    'CreateCollection',
    { vectors: { size: 4, distance: 'Dot' }, shard_number: 0, hnsw_config: { ef_construct: 2, full_scan_threshold: 5 }, optimizers_config: { deleted_threshold: 2 } },
    invalid(
      'shard_number: value 0 invalid, must be 1 or larger',
      'hnsw_config.ef_construct: value 2 invalid, must be 4 or larger',
      'hnsw_config.full_scan_threshold: value 5 invalid, must be 10 or larger',
      'optimizers_config.deleted_threshold: value 2.0 invalid, must be from 0.0 to 1.0',
    ),
  ],
  ['CreateCollection', { vectors: { a: { size: 4, distance: 'Dot', hnsw_config: { ef_construct: 1 } } } }, invalid('vectors.?.hnsw_config.ef_construct: value 1 invalid, must be 4 or larger')],
  ['CreateCollection', { quantization_config: { scalar: { type: 'int8', quantile: 0.2 } } }, invalid('quantization_config.scalar.quantile: value 0.20000000298023224 invalid, must be from 0.5 to 1.0')],
  ['CreateCollection', { quantization_config: { scalar: { type: 'int8', quantile: 2 } } }, invalid('quantization_config.scalar.quantile: value 2.0 invalid, must be from 0.5 to 1.0')],
  ['CreateCollection', { strict_mode_config: { enabled: true, max_query_limit: 0 } }, invalid('strict_mode_config.max_query_limit: value 0 invalid, must be 1 or larger')],
  ['CreateCollection', { wal_config: { wal_capacity_mb: 0 }, optimizers_config: { vacuum_min_vector_number: 10 } }, invalid('wal_config.wal_capacity_mb: value 0 invalid, must be 1 or larger', 'optimizers_config.vacuum_min_vector_number: value 10 invalid, must be 100 or larger')],
  ['PointInsertOperations', { batch: { ids: [1, 2], vectors: [[1, 2]] } }, invalid('batch.batch: number of ids and vectors must be equal (2 != 1)')],
  ['PointInsertOperations', { batch: { ids: [1], vectors: { a: [[1]], b: [] } } }, invalid('batch.batch: number of ids and vectors must be equal (1 != 0)')],
  ['PointInsertOperations', { batch: { ids: [1], vectors: [[1, 2]], payloads: [{}, {}] } }, invalid('batch.batch: number of ids and payloads must be equal (1 != 2)')],
  ['UpdateVectors', { points: [] }, invalid('points: value [] invalid, must be at least 1 characters')],
  ['UpdateVectors', { points: [{ id: 1, vector: [1] }, { id: 2, vector: {} }] }, invalid('points[1].vector: must specify vectors to update for point')],
  ['DeleteVectors', { points: [1], vector: [] }, invalid('vector: value [] invalid, must be at least 1 characters')],
  [
    'UpdateOperations',
    { operations: [{ delete: { points: [1] } }, { upsert: { batch: { ids: [1, 2], vectors: [[1]] } } }, { update_vectors: { points: [] } }] },
    invalid('operations[1].upsert.batch.batch: number of ids and vectors must be equal (2 != 1)', 'operations[2].update_vectors.points: value [] invalid, must be at least 1 characters'),
  ],
  // serde reads the whole body before any rule is checked.
  ['CreateCollection', { shard_number: 0, on_disk_payload: 1 }, format('invalid type: integer `1`, expected a boolean')],
];

t.test('refuses bad bodies with Qdrant status and message', async (t) => {
  for (const [name, body, expected] of REFUSED) {
    t.same(refusal(() => validateBody(name, body)), expected, `${name} ${JSON.stringify(body).slice(0, 120)}`);
  }
});

t.test('an empty body is the end of input for serde_json', async (t) => {
  t.same(refusal(() => validateBody('CountRequest', undefined)), format('EOF while parsing a value at line 1 column 0'));
});

t.test('the filter is checked by its own schema, which denies unknown fields', async (t) => {
  t.same(refusal(() => validateBody('ScrollRequest', { filter: { where: 1 } })), format('unknown field `where`, expected one of `should`, `min_should`, `must`, `must_not`'));
  // Inside an untagged enum the filter's own message gives way to the enum's.
  t.same(refusal(() => validateBody('PointsSelector', { filter: { where: 1 } })), format('data did not match any variant of untagged enum PointsSelector'));
});

function queryRefusal(message: string): Refusal {
  return { kind: 'FormatError', statusCode: 400, message: `Deserialize error in query parameters: ${message}` };
}

t.test('write query parameters', async (t) => {
  t.same(validateQuery(WRITE_PARAMS, { wait: 'true', ordering: 'strong', timeout: '5', other: 'x' }), { wait: true, ordering: 'strong', timeout: 5 });
  t.same(validateQuery(WRITE_PARAMS, {}), {});
  t.same(validateQuery(WRITE_PARAMS, { timeout: '+7' }), { timeout: 7 });
  const cases: Array<[Record<string, string | string[]>, string]> = [
    [{ wait: 'yes' }, 'provided string was not `true` or `false`'],
    [{ wait: '' }, 'provided string was not `true` or `false`'],
    [{ ordering: 'fast' }, 'unknown variant `fast`, expected one of `weak`, `medium`, `strong`'],
    [{ timeout: '0' }, 'invalid value: integer `0`, expected a nonzero u64'],
    [{ timeout: '-1' }, 'invalid digit found in string'],
    [{ timeout: '' }, 'cannot parse integer from empty string'],
    [{ timeout: '18446744073709551616' }, 'number too large to fit in target type'],
    [{ wait: ['true', 'false'] }, 'duplicate field `wait`'],
  ];
  for (const [query, message] of cases) t.same(refusal(() => validateQuery(WRITE_PARAMS, query)), queryRefusal(message), JSON.stringify(query));
});

t.test('read and commit query parameters', async (t) => {
  t.same(validateQuery(READ_PARAMS, { consistency: 'majority', timeout: '3' }), { consistency: 'majority', timeout: 3 });
  t.same(validateQuery(READ_PARAMS, { consistency: '2' }), { consistency: 2 });
  t.same(validateQuery(READ_PARAMS, { consistency: '' }), {}, 'an empty consistency is no consistency');
  t.same(validateQuery(POINT_READ_PARAMS, { consistency: 'all', timeout: 'ignored' }), { consistency: 'all' });
  t.same(validateQuery(COMMIT_PARAMS, { timeout: '10' }), { timeout: 10 });
  for (const consistency of ['0', 'some', '-1']) {
    t.same(
      refusal(() => validateQuery(READ_PARAMS, { consistency })),
      queryRefusal('failed to deserialize read consistency query parameter value'),
      consistency,
    );
  }
  t.same(refusal(() => validateQuery(COMMIT_PARAMS, { timeout: 'soon' })), queryRefusal('invalid digit found in string'));
});

t.test('an untagged enum with an `expecting` text is reported with that text', async (t) => {
  const expecting = 'Expected some form of condition';
  const filterSchema = {
    $id: 'Filter',
    type: 'object',
    properties: { must: { type: 'array', items: { anyOf: [{ type: 'object', required: ['key'], properties: { key: { type: 'string' } } }], expecting } } },
    // Formula conditions refer to the filter's Condition.
    definitions: { Condition: { type: 'object' } },
  };
  const mocked = await t.mockImport<typeof import('../src/api/validator.js')>('../src/api/validator.js', {
    '../src/api/filter.js': { filterSchema },
  });
  t.same(refusal(() => mocked.validateBody('CountRequest', { filter: { must: [{ kee: 'a' }] } })), format(expecting));
  t.same(
    refusal(() => mocked.validateBody('PointsSelector', { filter: { must: [{ kee: 'a' }] } })),
    format('data did not match any variant of untagged enum PointsSelector'),
    'an enclosing untagged enum still has the last word',
  );
});

t.test('rules inside nested prefetches are checked, with Qdrant paths through fields and list items', async (t) => {
  t.same(
    refusal(() => validateBody('QueryRequest', { prefetch: { limit: 0, query: [1] }, query: { fusion: 'rrf' } })),
    invalid('prefetch.limit: value 0 invalid, must be 1 or larger'),
  );
  t.same(
    refusal(() => validateBody('QueryRequest', { prefetch: [{ limit: 3, query: { rrf: { k: 0 } } }] })),
    invalid('prefetch[0].query.rrf.k: value 0 invalid, must be 1 or larger'),
    'a rule of the query inside a listed prefetch',
  );
  const nested = refusal(() => validateBody('QueryRequest', { prefetch: [{ limit: 1, query: [1] }, { query: [1], prefetch: { limit: 0, params: { hnsw_ef: 0 } } }], limit: 0 }));
  t.equal(nested?.statusCode, 422);
  for (const breach of ['limit: value 0', 'prefetch[1].prefetch.limit: value 0', 'prefetch[1].prefetch.params.hnsw_ef: value 0']) {
    t.match(nested?.message, breach, `reports ${breach}`);
  }
  t.equal(refusal(() => validateBody('QueryRequest', { prefetch: [{ limit: 2, prefetch: { limit: 5, query: [1] }, query: [1] }], query: { order_by: 'x' } })), null, 'valid nesting passes');
});
