// Points as Qdrant answers them: records (retrieve, scroll), scored points (every search form),
// update results, counts and facet hits.

import { bool, jsonObject, seq, str, uint, unitEnum } from '../builders.js';
import { anyOf, closed, COUNT, F32, nullable, UUID } from './shape.js';

/** ExtendedPointId: an unsigned integer (printed exactly up to 2^64-1) or a UUID. */
export const POINT_ID = anyOf(uint('u64'), UUID);

export const SHARD_KEY = anyOf(str(), uint('u64'));

const PAYLOAD = jsonObject();

const DENSE = seq(F32);
const MULTI_DENSE = seq(DENSE);
const SPARSE = closed({ indices: seq(uint('u32')), values: seq(F32) }, ['indices', 'values']);

/** VectorStructOutput: the unnamed vector (dense or multi), or vectors by name. */
const VECTOR_STRUCT = anyOf(DENSE, MULTI_DENSE, { type: 'object', additionalProperties: anyOf(DENSE, SPARSE, MULTI_DENSE) });

/** OrderValue: the value an order_by scroll or query sorted by. */
const ORDER_VALUE = anyOf({ type: 'integer' }, { type: 'number' });

// Qdrant's OpenAPI marks these Option fields nullable, but since 1.10 it skips them when unset
// (qdrant#4394): a part not asked for is absent, never null.
const POINT_FIELDS = {
  id: POINT_ID,
  payload: PAYLOAD,
  vector: VECTOR_STRUCT,
  shard_key: SHARD_KEY,
  order_value: ORDER_VALUE,
};

export const RECORD = closed(POINT_FIELDS, ['id']);

export const SCORED_POINT = closed({ ...POINT_FIELDS, version: uint('u64'), score: F32 }, ['id', 'version', 'score']);

export const UPDATE_RESULT = closed({
  operation_id: nullable(uint('u64')),
  status: unitEnum(['acknowledged', 'completed', 'wait_timeout']),
}, ['status']);

/** next_page_offset is always there: null on the last page (Qdrant does not skip it). */
export const SCROLL_RESULT = closed({ points: seq(RECORD), next_page_offset: nullable(POINT_ID) }, ['points', 'next_page_offset']);

export const COUNT_RESULT = closed({ count: COUNT }, ['count']);

export const FACET_RESPONSE = closed({
  hits: seq(closed({ value: anyOf(str(), { type: 'integer' }, bool()), count: COUNT }, ['value', 'count'])),
}, ['hits']);
