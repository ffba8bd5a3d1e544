// Compiled serialisers (Fastify's, fast-json-stringify) for the answers of the hot search routes:
// single and batch queries and searches. Each writes the same text printJson (JSON.stringify)
// writes for the same answer, so these schemas list every member in the order the answer objects
// are built (ok() in reply.ts; renderScored in src/api/search-convert.ts, after renderRecord in
// src/api/point-convert.ts): JSON.stringify prints members in that order, a compiled serialiser in
// its schema's. Values of open shape (ids, payloads, vectors, shard keys, order values, usage) are
// printed by JSON.stringify inside it. When a compiled serialiser refuses a value (a bigint id or
// payload integer past 2^53, a NaN score), the whole answer is printed by printJson instead
// (reply.ts), so the text never depends on which printer ran. Qdrant's answer schemas themselves
// are in src/api/schemas/responses; these only fix the printing order.

import type { SchemaObject } from 'ajv';

const ANY = {};

/** Qdrant's ScoredPoint, members in renderScored's order. */
const SCORED_POINT: SchemaObject = {
  type: 'object',
  properties: {
    id: ANY,
    version: { type: 'number' },
    score: { type: 'number' },
    payload: ANY,
    vector: ANY,
    shard_key: ANY,
    order_value: ANY,
  },
};

const SCORED_POINTS = { type: 'array', items: SCORED_POINT };
const QUERY_RESPONSE = { type: 'object', properties: { points: SCORED_POINTS } };

/** Qdrant's answer envelope around `result`, members in ok()'s order. */
function answer(result: SchemaObject): SchemaObject {
  return { type: 'object', properties: { result, status: { type: 'string' }, time: { type: 'number' }, usage: ANY } };
}

/** POST /points/query. */
export const QUERY_ANSWER = answer(QUERY_RESPONSE);
/** POST /points/query/batch. */
export const QUERY_BATCH_ANSWER = answer({ type: 'array', items: QUERY_RESPONSE });
/** POST /points/search. */
export const SEARCH_ANSWER = answer(SCORED_POINTS);
/** POST /points/search/batch. */
export const SEARCH_BATCH_ANSWER = answer({ type: 'array', items: SCORED_POINTS });
