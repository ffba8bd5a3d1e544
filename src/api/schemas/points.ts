// Point bodies: upserts in both forms, retrieval, selectors, vector and payload updates, the
// batch of update operations, scroll and count.

import type { SchemaObject } from 'ajv';
import { MAX_JSON_NESTING } from '../json-syntax.js';
import {
  bool,
  byKey,
  jsonPath,
  FILTER,
  opt,
  seq,
  str,
  struct,
  tagged,
  uint,
  unitEnum,
  untagged,
  withRule,
} from './builders.js';
import {
  BATCH_VECTOR_STRUCT,
  PAYLOAD,
  POINT_ID,
  POINT_IDS,
  SHARD_KEY_SELECTOR,
  VECTOR_STRUCT,
  WITH_PAYLOAD,
  WITH_VECTOR,
} from './common.js';

const SHARD_KEY = opt(SHARD_KEY_SELECTOR);
const UPDATE_MODE = opt(unitEnum(['upsert', 'insert_only', 'update_only']));

/** Qdrant checks the selector after the fields parse, as part of deserializing (HTTP 400). */
function withPointsOrFilter(schema: SchemaObject): SchemaObject {
  return { allOf: [schema, { pointsOrFilter: true }] };
}

const POINT_STRUCT = struct(
  'PointStruct',
  { id: POINT_ID, vector: VECTOR_STRUCT, payload: opt(PAYLOAD) },
  { required: ['id', 'vector'], aliases: { vectors: 'vector' } },
);

const BATCH = withRule(
  struct(
    'Batch',
    { ids: POINT_IDS, vectors: BATCH_VECTOR_STRUCT, payloads: opt(seq(opt(PAYLOAD))) },
    { required: ['ids', 'vectors'] },
  ),
  { batchLengths: true, field: 'batch' },
);

export const POINT_INSERT_OPERATIONS = byKey('PointInsertOperations', [
  [
    'batch',
    struct(
      'PointsBatch',
      { batch: BATCH, shard_key: SHARD_KEY, update_filter: opt(FILTER), update_mode: UPDATE_MODE },
      { required: ['batch'] },
    ),
  ],
  [
    'points',
    struct(
      'PointsList',
      { points: seq(POINT_STRUCT), shard_key: SHARD_KEY, update_filter: opt(FILTER), update_mode: UPDATE_MODE },
      { required: ['points'] },
    ),
  ],
]);

export const POINT_REQUEST = struct(
  'PointRequest',
  { shard_key: SHARD_KEY, ids: POINT_IDS, with_payload: opt(WITH_PAYLOAD), with_vector: WITH_VECTOR },
  { required: ['ids'], aliases: { with_vectors: 'with_vector' } },
);

export const POINTS_SELECTOR = untagged('PointsSelector', [
  struct('PointIdsList', { points: POINT_IDS, shard_key: SHARD_KEY }, { required: ['points'] }),
  struct('FilterSelector', { filter: FILTER, shard_key: SHARD_KEY }, { required: ['filter'] }),
]);

export const UPDATE_VECTORS = struct(
  'UpdateVectors',
  {
    points: withRule(
      seq(
        struct(
          'PointVectors',
          { id: POINT_ID, vector: withRule(VECTOR_STRUCT as SchemaObject, { vectorNotEmpty: true }) },
          { required: ['id', 'vector'], aliases: { vectors: 'vector' } },
        ),
      ),
      { minLength: 1 },
    ),
    shard_key: SHARD_KEY,
    update_filter: opt(FILTER),
  },
  { required: ['points'] },
);

export const DELETE_VECTORS = struct(
  'DeleteVectors',
  {
    points: opt(POINT_IDS),
    filter: opt(FILTER),
    vector: withRule(seq(str()), { minLength: 1 }),
    shard_key: SHARD_KEY,
  },
  { required: ['vector'] },
);

export const SET_PAYLOAD = withPointsOrFilter(
  struct(
    'SetPayload',
    { payload: PAYLOAD, points: opt(POINT_IDS), filter: opt(FILTER), shard_key: SHARD_KEY, key: withRule(opt(str()) as SchemaObject, { maxPathSteps: MAX_JSON_NESTING - 1 }) },
    { required: ['payload'] },
  ),
);

export const DELETE_PAYLOAD = withPointsOrFilter(
  struct(
    'DeletePayload',
    { keys: seq(str()), points: opt(POINT_IDS), filter: opt(FILTER), shard_key: SHARD_KEY },
    { required: ['keys'] },
  ),
);

export const UPDATE_OPERATIONS = struct(
  'UpdateOperations',
  {
    operations: seq(
      untagged('UpdateOperation', [
        tagged('UpsertOperation', 'upsert', POINT_INSERT_OPERATIONS),
        tagged('DeleteOperation', 'delete', POINTS_SELECTOR),
        tagged('SetPayloadOperation', 'set_payload', SET_PAYLOAD),
        tagged('OverwritePayloadOperation', 'overwrite_payload', SET_PAYLOAD),
        tagged('DeletePayloadOperation', 'delete_payload', DELETE_PAYLOAD),
        tagged('ClearPayloadOperation', 'clear_payload', POINTS_SELECTOR),
        tagged('UpdateVectorsOperation', 'update_vectors', UPDATE_VECTORS),
        tagged('DeleteVectorsOperation', 'delete_vectors', DELETE_VECTORS),
      ]),
    ),
  },
  { required: ['operations'] },
);

export const ORDER_BY = untagged('OrderByInterface', [
  jsonPath(),
  struct(
    'OrderBy',
    {
      key: jsonPath(),
      direction: opt(unitEnum(['asc', 'desc'])),
      start_from: opt(untagged('StartFrom', [{ type: 'integer', i64: true }, { type: 'number' }, { type: 'string', datetime: true }])),
    },
    { required: ['key'] },
  ),
]);

export const SCROLL_REQUEST = struct('ScrollRequest', {
  shard_key: SHARD_KEY,
  offset: opt(POINT_ID),
  limit: opt(withRule(uint('usize'), { range: { min: 1 } })),
  filter: opt(FILTER),
  with_payload: opt(WITH_PAYLOAD),
  with_vector: WITH_VECTOR,
  order_by: opt(ORDER_BY),
}, { aliases: { with_vectors: 'with_vector' } });

export const COUNT_REQUEST = struct('CountRequest', { shard_key: SHARD_KEY, filter: opt(FILTER), exact: bool() });
