// Strict mode through the real server: every limit of Qdrant 1.19's strict_mode_config refuses
// what it should with Qdrant's status and exact message (from Qdrant's source and its own
// strict-mode tests), the allowed case still answers as an exact reference computed here says,
// a refused write changes nothing, and PATCH turns limits on, off and changes them at once.

import t, { type Test } from 'tap';
import { startServer } from './helpers/server.js';
import { assertError, call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { shardOf } from '../src/shard/routing.js';
import { availableMemoryBytes, residentMemoryPercent } from '../src/quota/meter.js';
import { StrictMode } from '../src/collection/strict-mode.js';
import { TokenBucket } from '../src/collection/token-bucket.js';
import { InsufficientStorage } from '../src/errors.js';
import type { WriteOp } from '../src/shard/write-ops.js';

const CITIES = ['Berlin', 'London', 'Paris'];

interface Doc {
  id: number;
  vector: number[];
  payload: { city: string; price: number; docId: number };
}

const DOCS: Doc[] = Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  vector: [Math.sin(i + 1), Math.cos(i + 1), ((i * 7) % 5) / 5, ((i * 3) % 7) / 7].map(Math.fround),
  payload: { city: CITIES[i % 3], price: i * 1.5, docId: i % 4 },
}));

const QUERY = [0.2, 0.1, 0.9, 0.7];

/** Exact Dot-product top `limit` of `docs` (ties by id), as ids. */
function topIds(docs: Doc[], limit: number): number[] {
  const score = (d: Doc) => d.vector.reduce((s, x, k) => s + Math.fround(x) * Math.fround(QUERY[k]), 0);
  return [...docs].sort((a, b) => score(b) - score(a) || a.id - b.id).slice(0, limit).map((d) => d.id);
}

/** Qdrant's strict mode refusal: 400, "Bad request: <error>. Help: <solution>". */
function refusal(error: string, solution: string): string {
  return `Bad request: ${error}. Help: ${solution}`;
}

function limitExceeded(value: string | number, limit: string | number, name: string): string {
  return refusal(`Limit exceeded ${value} > ${limit} for "${name}"`, `Reduce the "${name}" parameter to or below ${limit}.`);
}

const UNINDEXED_HELP = 'Create an index for this key or use a different filter.';

t.test('strict mode', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const api = (method: string, path: string, body?: unknown) => call(server.url, method, path, body);

  /** Fetch with the response headers (Retry-After). */
  async function withHeaders(method: string, path: string, body: unknown): Promise<{ status: number; body: { status?: { error?: string } }; retryAfter: string | null }> {
    const response = await fetch(server.url + path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: await response.json() as { status?: { error?: string } }, retryAfter: response.headers.get('retry-after') };
  }

  async function fresh(t: Test, name: string, extra: Record<string, unknown> = {}, docs: Doc[] = DOCS): Promise<void> {
    await api('DELETE', `/collections/${name}`);
    // One shard unless told: rate limits are per shard, as Qdrant's are per replica.
    resultOf(t, await api('PUT', `/collections/${name}`, { vectors: { size: 4, distance: 'Dot' }, shard_number: 1, ...extra }));
    if (docs.length) resultOf(t, await api('PUT', `/collections/${name}/points?wait=true`, { points: docs }));
  }

  async function strict(t: Test, name: string, config: Record<string, unknown>): Promise<void> {
    resultOf(t, await api('PATCH', `/collections/${name}`, { strict_mode_config: config }));
  }

  async function count(t: Test, name: string, filter?: unknown): Promise<number> {
    return resultOf<{ count: number }>(t, await api('POST', `/collections/${name}/points/count`, { exact: false, ...(filter ? { filter } : {}) })).count;
  }

  const search = (name: string, body: Record<string, unknown> = {}, query = '') =>
    api('POST', `/collections/${name}/points/search${query}`, { vector: QUERY, limit: 4, ...body });

  const searchIds = (t: Test, response: Awaited<ReturnType<typeof search>>) => resultOf<{ id: number }[]>(t, response).map((h) => h.id);

  t.test('max_query_limit bounds every limit, groups and matrix as products; PATCH changes it at once', async (t) => {
    await fresh(t, 'limits');
    t.same(searchIds(t, await search('limits')), topIds(DOCS, 4), 'no strict mode: exact top 4');
    await strict(t, 'limits', { enabled: true, max_query_limit: 4 });
    t.same(searchIds(t, await search('limits')), topIds(DOCS, 4), 'limit 4 within max 4: exact top 4');
    await strict(t, 'limits', { max_query_limit: 3 });
    assertError(t, await search('limits'), 400, limitExceeded(4, 3, 'limit'), 'search');
    assertError(t, await api('POST', '/collections/limits/points/query', { query: QUERY }), 400, limitExceeded(10, 3, 'limit'), 'query without limit: its default 10');
    assertError(t, await api('POST', '/collections/limits/points/query', { prefetch: { query: QUERY, limit: 5 }, query: QUERY, limit: 2 }), 400, limitExceeded(5, 3, 'limit'), 'a prefetch limit');
    assertError(t, await api('POST', '/collections/limits/points/recommend', { positive: [1], limit: 5 }), 400, limitExceeded(5, 3, 'limit'), 'recommend');
    assertError(t, await api('POST', '/collections/limits/points/discover', { target: 1, context: [{ positive: 2, negative: 3 }], limit: 4 }), 400, limitExceeded(4, 3, 'limit'), 'discover');
    assertError(t, await api('POST', '/collections/limits/points/query/batch', { searches: [{ query: QUERY, limit: 2 }, { query: QUERY, limit: 9 }] }), 400, limitExceeded(9, 3, 'limit'), 'second request of a batch');
    assertError(t, await api('POST', '/collections/limits/points/scroll', { limit: 4 }), 400, limitExceeded(4, 3, 'limit'), 'scroll');
    t.equal(resultOf<{ points: unknown[] }>(t, await api('POST', '/collections/limits/points/scroll', {})).points.length, 10, 'scroll without a limit is not bounded (Qdrant checks only a given limit)');
    assertError(t, await api('POST', '/collections/limits/facet', { key: 'city', limit: 4 }), 400, limitExceeded(4, 3, 'limit'), 'facet');

    await strict(t, 'limits', { max_query_limit: 15 });
    assertError(t, await api('POST', '/collections/limits/points/search/groups', { vector: QUERY, limit: 10, group_by: 'docId', group_size: 3 }), 400, limitExceeded(30, 15, 'limit'), 'groups: limit x group_size');
    assertError(t, await api('POST', '/collections/limits/points/query/groups', { query: QUERY, limit: 10, group_by: 'docId', group_size: 3 }), 400, limitExceeded(30, 15, 'limit'), 'query groups');
    assertError(t, await api('POST', '/collections/limits/points/search/matrix/pairs', { sample: 10, limit: 2 }), 400, limitExceeded(20, 15, 'limit'), 'matrix: sample x limit');
    const groups = resultOf<{ groups: { id: number; hits: { id: number }[] }[] }>(t, await api('POST', '/collections/limits/points/search/groups', { vector: QUERY, limit: 5, group_by: 'docId', group_size: 3 })).groups;
    t.equal(groups.length, 4, '5 x 3 within 15: every docId forms a group');
    for (const g of groups) t.same(g.hits.map((h) => h.id), topIds(DOCS.filter((d) => d.payload.docId === g.id), 3), `group ${g.id}: its exact top 3`);

    await strict(t, 'limits', { enabled: false });
    t.same(searchIds(t, await search('limits', { limit: 8 })), topIds(DOCS, 8), 'disabled: the limits stay stored but nothing is enforced');
    const config = resultOf<{ config: { strict_mode_config: Record<string, unknown> } }>(t, await api('GET', '/collections/limits')).config.strict_mode_config;
    t.same(config, { enabled: false, max_query_limit: 15 }, 'PATCHes merged into the reported configuration');
  });

  t.test('max_timeout', async (t) => {
    await fresh(t, 'timeouts');
    await strict(t, 'timeouts', { enabled: true, max_timeout: 2 });
    t.same(searchIds(t, await search('timeouts', {}, '?timeout=2')), topIds(DOCS, 4), 'timeout 2 allowed');
    assertError(t, await search('timeouts', {}, '?timeout=3'), 400, limitExceeded(3, 2, 'timeout'), 'search');
    assertError(t, await api('POST', '/collections/timeouts/points/scroll?timeout=3', {}), 400, limitExceeded(3, 2, 'timeout'), 'scroll');
    assertError(t, await api('POST', '/collections/timeouts/points/count?timeout=5', {}), 400, limitExceeded(5, 2, 'timeout'), 'count');
  });

  t.test('unindexed_filtering_retrieve: reads need an index serving each condition', async (t) => {
    await fresh(t, 'retrieve');
    const berlin = { must: [{ key: 'city', match: { value: 'Berlin' } }] };
    const berlinDocs = DOCS.filter((d) => d.payload.city === 'Berlin');
    await strict(t, 'retrieve', { enabled: true, unindexed_filtering_retrieve: true });
    t.same(searchIds(t, await search('retrieve', { filter: berlin })), topIds(berlinDocs, 4), 'allowed: exact filtered top 4');
    await strict(t, 'retrieve', { unindexed_filtering_retrieve: false });
    const noCity = refusal('Index required but not found for "city" of one of the following types: [keyword]', UNINDEXED_HELP);
    assertError(t, await search('retrieve', { filter: berlin }), 400, noCity, 'search');
    assertError(t, await api('POST', '/collections/retrieve/points/scroll', { filter: berlin }), 400, noCity, 'scroll');
    assertError(t, await api('POST', '/collections/retrieve/points/count', { filter: berlin, exact: false }), 400, noCity, 'count');
    assertError(t, await api('POST', '/collections/retrieve/points/query', { prefetch: { query: QUERY, filter: berlin }, query: QUERY }), 400, noCity, 'a prefetch filter');
    assertError(t, await search('retrieve', { filter: { must: [{ key: 'price', range: { gte: 3 } }] } }), 400, refusal('Index required but not found for "price" of one of the following types: [float, integer]', UNINDEXED_HELP), 'range');
    assertError(t, await search('retrieve', { filter: { must: [{ is_empty: { key: 'price' } }] } }), 400, refusal('Index required but not found for "price" of one of the following types: [bool, datetime, float, geo, integer, keyword, text, uuid]', UNINDEXED_HELP), 'is_empty: any index');
    assertError(t, await search('retrieve', { filter: { must: [{ nested: { key: 'rooms', filter: { must: [{ key: 'beds', match: { value: 2 } }] } } }] } }), 400, refusal('Index required but not found for "rooms[].beds" of one of the following types: [integer]', UNINDEXED_HELP), 'nested key');
    t.same(searchIds(t, await search('retrieve', { filter: { must: [{ has_id: [1, 2, 3, 4, 5] }] } })), topIds(DOCS.filter((d) => d.id <= 5), 4), 'has_id needs no index');
    assertError(t, await api('POST', '/collections/retrieve/points/search/groups', { vector: QUERY, limit: 2, group_by: 'docId', group_size: 2 }), 400, refusal('Index required but not found for "docId"', 'Create an index supporting `match` for this key.'), 'group_by without index');

    resultOf(t, await api('PUT', '/collections/retrieve/index?wait=true', { field_name: 'city', field_schema: 'keyword' }));
    resultOf(t, await api('PUT', '/collections/retrieve/index?wait=true', { field_name: 'price', field_schema: 'float' }));
    t.same(searchIds(t, await search('retrieve', { filter: berlin })), topIds(berlinDocs, 4), 'with a keyword index: exact filtered top 4');
    t.equal(resultOf<{ count: number }>(t, await api('POST', '/collections/retrieve/points/count', { filter: { must: [{ key: 'price', range: { gte: 3 } }] }, exact: false })).count, DOCS.filter((d) => d.payload.price >= 3).length, 'a float index serves the range');
    assertError(t, await search('retrieve', { filter: { must: [{ key: 'city', match: { text: 'Ber' } }] } }), 400, refusal('Index required but not found for "city" of one of the following types: [text]', UNINDEXED_HELP), 'a keyword index does not serve full-text match');
    assertError(t, await api('POST', '/collections/retrieve/points/search/groups', { vector: QUERY, limit: 2, group_by: 'price', group_size: 2 }), 400, refusal('Index of type "Float" found for "price"', 'Create an index supporting `match` for this key.'), 'group_by on an index without match');
  });

  t.test('unindexed_filtering_update: filtered writes are refused and change nothing', async (t) => {
    await fresh(t, 'update');
    await strict(t, 'update', { enabled: true, unindexed_filtering_update: false });
    const berlin = { must: [{ key: 'city', match: { value: 'Berlin' } }] };
    const noCity = refusal('Index required but not found for "city" of one of the following types: [keyword]', UNINDEXED_HELP);
    assertError(t, await api('POST', '/collections/update/points/delete?wait=true', { filter: berlin }), 400, noCity, 'delete by filter');
    assertError(t, await api('POST', '/collections/update/points/payload?wait=true', { payload: { x: 1 }, filter: berlin }), 400, noCity, 'set payload by filter');
    assertError(t, await api('POST', '/collections/update/points/batch?wait=true', { operations: [{ delete: { points: [1] } }, { clear_payload: { filter: berlin } }] }), 400, noCity, 'batch: second operation');
    t.equal(await count(t, 'update'), DOCS.length, 'nothing deleted, not even the batch\'s first operation');
    t.equal(await count(t, 'update', { must: [{ key: 'x', match: { value: 1 } }] }), 0, 'no payload set');
    t.same(searchIds(t, await search('update', { filter: berlin })), topIds(DOCS.filter((d) => d.payload.city === 'Berlin'), 4), 'reads are not bound by unindexed_filtering_update');
    resultOf(t, await api('PUT', '/collections/update/index?wait=true', { field_name: 'city', field_schema: 'keyword' }));
    resultOf(t, await api('POST', '/collections/update/points/delete?wait=true', { filter: berlin }));
    t.equal(await count(t, 'update'), DOCS.filter((d) => d.payload.city !== 'Berlin').length, 'with an index: exactly the Berlin points deleted');
  });

  t.test('search parameters: hnsw_ef, exact, oversampling; count is exact unless told', async (t) => {
    await fresh(t, 'params');
    await strict(t, 'params', { enabled: true, search_max_hnsw_ef: 5, search_allow_exact: false, search_max_oversampling: 1.9 });
    t.same(searchIds(t, await search('params', { params: { hnsw_ef: 5, exact: false, quantization: { oversampling: 1.5 } } })), topIds(DOCS, 4), 'within every limit: exact top 4');
    assertError(t, await search('params', { params: { hnsw_ef: 6 } }), 400, limitExceeded(6, 5, 'hnsw_ef'), 'hnsw_ef');
    assertError(t, await search('params', { params: { exact: true } }), 400, refusal('Exact search disabled!', 'Set exact=false.'), 'exact');
    assertError(t, await search('params', { params: { quantization: { oversampling: 2 } } }), 400, limitExceeded(2, 1.9, 'oversampling'), 'oversampling');
    assertError(t, await api('POST', '/collections/params/points/query', { prefetch: { query: QUERY, params: { hnsw_ef: 64 } }, query: QUERY }), 400, limitExceeded(64, 5, 'hnsw_ef'), 'prefetch params');
    assertError(t, await api('POST', '/collections/params/points/count', {}), 400, refusal('Exact search disabled!', 'Set exact=false.'), 'count defaults to exact');
    t.equal(await count(t, 'params'), DOCS.length, 'count with exact=false');
    assertError(t, await api('POST', '/collections/params/facet', { key: 'city', exact: true }), 400, refusal('Exact search disabled!', 'Set exact=false.'), 'facet exact');
  });

  t.test('filter_max_conditions and condition_max_size, nested filters counted through', async (t) => {
    await fresh(t, 'conditions');
    const conditions = (n: number) => ({ must: Array.from({ length: n }, (_, i) => ({ key: 'price', match: { value: i } })) });
    const anyOf = (n: number) => ({ must: [{ key: 'docId', match: { any: Array.from({ length: n }, (_, i) => i) } }] });
    await strict(t, 'conditions', { enabled: true, filter_max_conditions: 5, condition_max_size: 5 });
    t.same(searchIds(t, await search('conditions', { filter: anyOf(2) })), topIds(DOCS.filter((d) => d.payload.docId < 2), 4), 'allowed any of 2: exact filtered top 4');
    t.same(resultOf(t, await search('conditions', { filter: conditions(5) })), [], '5 conditions allowed (no point has every price)');
    assertError(t, await search('conditions', { filter: conditions(6) }), 400, refusal('Filter condition limit reached (6 > 5)', 'Reduce the amount of conditions of your filter.'), '6 conditions');
    assertError(t, await search('conditions', { filter: anyOf(6) }), 400, refusal('Condition size limit reached (6 > 5)', 'Reduce the size of your condition.'), 'any of 6');
    assertError(t, await search('conditions', { filter: { must: [{ has_id: [1, 2, 3, 4, 5, 6] }] } }), 400, refusal('Condition size limit reached (6 > 5)', 'Reduce the size of your condition.'), 'has_id of 6');
    const nested = (size: number) => ({ must: [{ nested: { key: 'city', filter: { must: [{ key: 'a', match: { any: Array.from({ length: size }, (_, i) => i) } }, { key: 'b', match: { any: Array.from({ length: size }, (_, i) => i) } }] } } }] });
    await strict(t, 'conditions', { condition_max_size: 2, filter_max_conditions: 3 });
    t.equal(resultOf<unknown[]>(t, await search('conditions', { filter: nested(2) })).length, 0, 'nested: 2 conditions of size 2 allowed');
    assertError(t, await search('conditions', { filter: nested(3) }), 400, refusal('Condition size limit reached (3 > 2)', 'Reduce the size of your condition.'), 'nested condition size');
    await strict(t, 'conditions', { condition_max_size: 1000000, filter_max_conditions: 1 });
    assertError(t, await search('conditions', { filter: nested(2) }), 400, refusal('Filter condition limit reached (2 > 1)', 'Reduce the amount of conditions of your filter.'), 'nested conditions count');
    assertError(t, await api('POST', '/collections/conditions/points/delete?wait=true', { filter: conditions(2) }), 400, refusal('Filter condition limit reached (2 > 1)', 'Reduce the amount of conditions of your filter.'), 'filtered writes too');
    t.equal(await count(t, 'conditions'), DOCS.length, 'nothing deleted');
  });

  t.test('upsert_max_batchsize: upsert, vector updates and batches, all or nothing', async (t) => {
    await fresh(t, 'batches', {}, []);
    await strict(t, 'batches', { enabled: true, upsert_max_batchsize: 5 });
    assertError(t, await api('PUT', '/collections/batches/points?wait=true', { batch: { ids: [1, 2, 3, 4, 5, 6], vectors: DOCS.slice(0, 6).map((d) => d.vector) } }), 400, limitExceeded(6, 5, 'upsert limit'), 'batch form');
    assertError(t, await api('PUT', '/collections/batches/points?wait=true', { points: DOCS.slice(0, 6) }), 400, limitExceeded(6, 5, 'upsert limit'), 'list form');
    assertError(t, await api('POST', '/collections/batches/points/batch?wait=true', { operations: [{ upsert: { points: DOCS.slice(0, 2) } }, { upsert: { points: DOCS.slice(2, 8) } }] }), 400, limitExceeded(6, 5, 'upsert limit'), '/points/batch');
    t.equal(await count(t, 'batches'), 0, 'no point stored by any refused request');
    resultOf(t, await api('PUT', '/collections/batches/points?wait=true', { points: DOCS.slice(0, 5) }));
    t.same(searchIds(t, await search('batches')), topIds(DOCS.slice(0, 5), 4), '5 points allowed and searchable');
    assertError(t, await api('PUT', '/collections/batches/points/vectors?wait=true', { points: DOCS.slice(0, 6).map((d) => ({ id: d.id, vector: [1, 1, 1, 1] })) }), 400, limitExceeded(6, 5, 'update limit'), 'vector updates');
    t.same(searchIds(t, await search('batches')), topIds(DOCS.slice(0, 5), 4), 'no vector changed');
  });

  t.test('collection size limits: vectors, payload, points (checked before the write)', async (t) => {
    // 4-d f32 vectors: 16 bytes a point.
    await fresh(t, 'sizes', {}, DOCS.slice(0, 10));
    await strict(t, 'sizes', { enabled: true, max_collection_vector_size_bytes: 160 });
    assertError(t, await api('PUT', '/collections/sizes/points?wait=true', { points: DOCS.slice(10, 12) }), 400, 'Bad request: Max vector storage size limit of 0.00015258789MB reached!', '160 bytes stored');
    t.equal(await count(t, 'sizes'), 10, 'nothing added');
    resultOf(t, await api('POST', '/collections/sizes/points/payload?wait=true', { payload: { note: 'x' }, points: [1] }));
    await strict(t, 'sizes', { max_collection_vector_size_bytes: 1 << 20, max_points_count: 12 });
    resultOf(t, await api('PUT', '/collections/sizes/points?wait=true', { points: DOCS.slice(10, 15) }));
    t.equal(await count(t, 'sizes'), 15, 'below the point limit before the write: all 5 added (the limit bounds what exists, as in Qdrant)');
    assertError(t, await api('PUT', '/collections/sizes/points?wait=true', { points: DOCS.slice(15, 16) }), 400, 'Bad request: Max points count limit of 12 reached!', 'points');
    const payloadBytes = DOCS.slice(0, 15).reduce((n, d) => n + Buffer.byteLength(JSON.stringify(d.id === 1 ? { ...d.payload, note: 'x' } : d.payload)), 0);
    t.ok(payloadBytes > 512, `the payloads take ${payloadBytes} bytes`);
    await strict(t, 'sizes', { max_points_count: 100, max_collection_payload_size_bytes: payloadBytes + 1 });
    resultOf(t, await api('POST', '/collections/sizes/points/payload?wait=true', { payload: { tag: 1 }, points: [2] }));
    // 512 bytes are 2^-11 MB, which Rust prints as 0.00048828125.
    await strict(t, 'sizes', { max_collection_payload_size_bytes: 512 });
    assertError(t, await api('POST', '/collections/sizes/points/payload?wait=true', { payload: { more: 1 }, points: [3] }), 400, 'Bad request: Max payload storage size limit of 0.00048828125MB reached!', 'payload');
    assertError(t, await api('PUT', '/collections/sizes/points?wait=true', { points: DOCS.slice(15, 16) }), 400, 'Bad request: Max payload storage size limit of 0.00048828125MB reached!', 'upserts are bound by the payload size too');
    t.equal(await count(t, 'sizes', { must: [{ key: 'more', match: { value: 1 } }] }), 0, 'payload not set');
    resultOf(t, await api('POST', '/collections/sizes/points/delete?wait=true', { points: [1, 2, 3] }));
    t.equal(await count(t, 'sizes'), 12, 'deletions are never refused by size limits');
  });

  t.test('multivector max_vectors and sparse max_length, per vector name', async (t) => {
    await api('DELETE', '/collections/multi');
    resultOf(t, await api('PUT', '/collections/multi', { vectors: { colbert: { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' } } }, sparse_vectors: { text: {} } }));
    await strict(t, 'multi', { enabled: true, multivector_config: { colbert: { max_vectors: 3 } }, sparse_config: { text: { max_length: 4 } } });
    const rows = (n: number) => Array.from({ length: n }, (_, i) => [i + 1, 1]);
    const sparse = (n: number) => ({ indices: Array.from({ length: n }, (_, i) => i), values: Array.from({ length: n }, () => 0.5) });
    resultOf(t, await api('PUT', '/collections/multi/points?wait=true', { points: [{ id: 1, vector: { colbert: rows(3), text: sparse(4) } }] }));
    assertError(t, await api('PUT', '/collections/multi/points?wait=true', { points: [{ id: 2, vector: { colbert: rows(4) } }] }), 400, "Bad request: Multivector 'colbert' has a limit of 3 vectors, but 4 were provided!", 'points list');
    assertError(t, await api('PUT', '/collections/multi/points?wait=true', { batch: { ids: [2], vectors: { colbert: [rows(4)] } } }), 400, "Bad request: Multivector 'colbert' has a limit of 3 vectors, but 4 were provided!", 'batch');
    assertError(t, await api('PUT', '/collections/multi/points?wait=true', { points: [{ id: 2, vector: { text: sparse(6) } }] }), 400, "Bad request: Sparse vector 'text' has a limit of 4 indices, but 6 were provided!", 'sparse');
    assertError(t, await api('PUT', '/collections/multi/points/vectors?wait=true', { points: [{ id: 1, vector: { colbert: rows(5) } }] }), 400, "Bad request: Multivector 'colbert' has a limit of 3 vectors, but 5 were provided!", 'vector update');
    const stored = resultOf<{ vector: { colbert: number[][] } }>(t, await api('GET', '/collections/multi/points/1'));
    t.same(stored.vector.colbert, rows(3), 'the stored multivector kept its 3 rows');
    t.equal(await count(t, 'multi'), 1, 'no refused point stored');
    await strict(t, 'multi', { enabled: false });
    resultOf(t, await api('PUT', '/collections/multi/points?wait=true', { points: [{ id: 2, vector: { colbert: rows(4) } }] }));
    t.equal(await count(t, 'multi'), 2, 'disabled: the long multivector is stored');
  });

  t.test('max_payload_index_count', async (t) => {
    await fresh(t, 'indexes');
    await strict(t, 'indexes', { enabled: true, max_payload_index_count: 1 });
    resultOf(t, await api('PUT', '/collections/indexes/index?wait=true', { field_name: 'city', field_schema: 'keyword' }));
    assertError(t, await api('PUT', '/collections/indexes/index?wait=true', { field_name: 'price', field_schema: 'float' }), 400, refusal('Collection already has the maximum number of payload indices (1)', 'Please delete an existing index before creating a new one.'), 'second index');
    const schema = resultOf<{ payload_schema: Record<string, unknown> }>(t, await api('GET', '/collections/indexes')).payload_schema;
    t.same(Object.keys(schema), ['city'], 'only the first index exists');
    resultOf(t, await api('DELETE', '/collections/indexes/index/city?wait=true'));
    resultOf(t, await api('PUT', '/collections/indexes/index?wait=true', { field_name: 'price', field_schema: 'float' }));
    t.same(Object.keys(resultOf<{ payload_schema: Record<string, unknown> }>(t, await api('GET', '/collections/indexes')).payload_schema), ['price'], 'after dropping one, another may be created');
  });

  t.test('read rate limit: per shard token bucket, cost per request, ids, conditions and examples', async (t) => {
    await fresh(t, 'reads');
    await strict(t, 'reads', { enabled: true, read_rate_limit: 1 });
    t.same(searchIds(t, await search('reads')), topIds(DOCS, 4), 'the first search spends the one token');
    const refused = await withHeaders('POST', '/collections/reads/points/search', { vector: QUERY, limit: 4 });
    t.equal(refused.status, 429, '429');
    t.equal(refused.body.status?.error, 'Rate limiting exceeded: Read rate limit exceeded: Operation requires 1 tokens but only 0.0 were available. Retry after 60s', 'message');
    t.ok(Number(refused.retryAfter) > 55 && Number(refused.retryAfter) <= 60, `Retry-After about a minute (${refused.retryAfter})`);
    assertError(t, await api('POST', '/collections/reads/points/scroll', {}), 429, /^Rate limiting exceeded: Read rate limit exceeded: Operation requires 1 tokens but only 0\.0 were available\. Retry after (59|60)s$/, 'scroll shares the bucket');

    await strict(t, 'reads', { read_rate_limit: 4 });
    const tooMany = await withHeaders('POST', '/collections/reads/points', { ids: [1, 2, 3, 4, 5] });
    t.equal(tooMany.status, 429, 'retrieve of 5 ids with 4 a minute: never possible');
    t.equal(tooMany.body.status?.error, 'Rate limiting exceeded: Read rate limit exceeded, request larger than rate limiter capacity, please try to split your request', 'over budget message');
    t.equal(tooMany.retryAfter, null, 'no Retry-After: waiting cannot help');
    t.same(resultOf<{ id: number }[]>(t, await api('POST', '/collections/reads/points', { ids: [1, 2, 3, 4] })).map((p) => p.id), [1, 2, 3, 4], 'PATCH gave a fresh bucket: 4 ids cost its 4 tokens');
    assertError(t, await api('POST', '/collections/reads/points', { ids: [1, 2, 3, 4] }), 429, /^Rate limiting exceeded: Read rate limit exceeded: Operation requires 4 tokens but only 0\.0 were available\. Retry after 60s$/, 'tokens gone');
    await strict(t, 'reads', { read_rate_limit: 4, max_query_limit: 100 });
    assertError(t, await api('POST', '/collections/reads/points/recommend', { positive: [1, 2, 3, 4, 5], strategy: 'best_score', limit: 3 }), 429, 'Rate limiting exceeded: Read rate limit exceeded, request larger than rate limiter capacity, please try to split your request', 'best_score costs one token per example');

    await strict(t, 'reads', { read_rate_limit: 10 });
    const conditions = (n: number) => ({ must: Array.from({ length: n }, (_, i) => ({ key: 'price', match: { value: i } })) });
    assertError(t, await api('POST', '/collections/reads/points/scroll', { filter: conditions(10) }), 429, 'Rate limiting exceeded: Read rate limit exceeded, request larger than rate limiter capacity, please try to split your request', 'scroll: 1 + 10 conditions');
    resultOf(t, await api('POST', '/collections/reads/points/scroll', { filter: conditions(6) }));
    assertError(t, await api('POST', '/collections/reads/points/scroll', { filter: conditions(6) }), 429, /^Rate limiting exceeded: Read rate limit exceeded: Operation requires 7 tokens but only 3\.0 were available\. Retry after 2[45]s$/, 'scroll: 1 + 6 conditions, 3 tokens left');

    await strict(t, 'reads', { enabled: false });
    for (let i = 0; i < 5; i++) t.same(searchIds(t, await search('reads')), topIds(DOCS, 4), `disabled: search ${i + 1} allowed`);
  });

  t.test('write rate limit: cost per point per shard, atomic across shards, PATCH takes effect at once', async (t) => {
    await fresh(t, 'writes', {}, []);
    await strict(t, 'writes', { enabled: true, write_rate_limit: 10 });
    const upsert = (docs: Doc[]) => api('PUT', '/collections/writes/points?wait=true', { points: docs });
    assertError(t, await upsert(DOCS.slice(0, 11)), 429, 'Rate limiting exceeded: Write rate limit exceeded, request larger than rate limiter capacity, please try to split your request', '11 points, 10 a minute');
    resultOf(t, await upsert(DOCS.slice(0, 10)));
    const again = await withHeaders('PUT', '/collections/writes/points?wait=true', { points: DOCS.slice(10, 20) });
    t.equal(again.status, 429, 'the bucket is empty');
    t.equal(again.body.status?.error, 'Rate limiting exceeded: Write rate limit exceeded: Operation requires 10 tokens but only 0.0 were available. Retry after 60s', 'message');
    t.ok(Number(again.retryAfter) > 55 && Number(again.retryAfter) <= 60, `Retry-After (${again.retryAfter})`);
    t.equal(await count(t, 'writes'), 10, 'refused points not stored');

    await strict(t, 'writes', { write_rate_limit: 1000 });
    resultOf(t, await upsert(DOCS.slice(10, 20)));
    t.equal(await count(t, 'writes'), 20, 'a raised limit applies at once');
    await strict(t, 'writes', { enabled: false, write_rate_limit: 1 });
    for (let i = 0; i < 3; i++) resultOf(t, await upsert(DOCS.slice(0, 5)));
    t.pass('disabled: writes are not rate limited');

    // Two shards, a bucket each: a write is admitted on every shard it reaches or on none.
    await fresh(t, 'sharded', { shard_number: 2 }, []);
    const byShard = [0, 1].map((s) => DOCS.filter((d) => shardOf(d.id, 2) === s));
    await strict(t, 'sharded', { enabled: true, write_rate_limit: 3 });
    resultOf(t, await api('PUT', '/collections/sharded/points?wait=true', { points: byShard[0].slice(0, 3) }));
    resultOf(t, await api('PUT', '/collections/sharded/points?wait=true', { points: byShard[1].slice(0, 2) }));
    assertError(t, await api('PUT', '/collections/sharded/points?wait=true', { points: [byShard[1][2], byShard[0][3]] }), 429, /^Rate limiting exceeded: Write rate limit exceeded: Operation requires 1 tokens but only 0\.0 were available\. Retry after (19|20)s$/, 'shard 0 has no token left (3 a minute: one every 20 s)');
    t.equal(await count(t, 'sharded'), 5, 'the point for shard 1 was not stored either');
    resultOf(t, await api('PUT', '/collections/sharded/points?wait=true', { points: [byShard[1][2]] }));
    t.equal(await count(t, 'sharded'), 6, 'shard 1 still had its token');
  });

  t.test('rate costs of query trees, batches of writes and payload index changes', async (t) => {
    await fresh(t, 'costs');
    const oneCondition = { must: [{ key: 'docId', match: { value: 1 } }] };
    const tree = { prefetch: [{ query: QUERY, filter: oneCondition }, { query: QUERY, filter: oneCondition }], query: QUERY, limit: 3 };
    await strict(t, 'costs', { enabled: true, read_rate_limit: 4 });
    assertError(t, await api('POST', '/collections/costs/points/query', tree), 429, 'Rate limiting exceeded: Read rate limit exceeded, request larger than rate limiter capacity, please try to split your request', 'a rescore over two filtered prefetches costs 1 + 2 x (1 + 1) = 5');
    await strict(t, 'costs', { read_rate_limit: 5 });
    const rescored = resultOf<{ points: { id: number }[] }>(t, await api('POST', '/collections/costs/points/query', tree)).points.map((p) => p.id);
    t.same(rescored, topIds(DOCS.filter((d) => d.payload.docId === 1), 3), 'admitted at 5 a minute: the exact rescored top 3');

    await strict(t, 'costs', { read_rate_limit: null, write_rate_limit: 3 });
    assertError(t, await api('POST', '/collections/costs/points/batch?wait=true', { operations: [{ upsert: { points: DOCS.slice(0, 2) } }, { delete: { points: [3, 4] } }] }), 429, 'Rate limiting exceeded: Write rate limit exceeded, request larger than rate limiter capacity, please try to split your request', 'a batch is admitted whole: 2 + 2 points');
    t.equal(await count(t, 'costs'), DOCS.length, 'nothing deleted');
    resultOf(t, await api('PUT', '/collections/costs/index?wait=true', { field_name: 'city', field_schema: 'keyword' }));
    resultOf(t, await api('POST', '/collections/costs/points/delete?wait=true', { points: [3, 4] }));
    assertError(t, await api('DELETE', '/collections/costs/index/city?wait=true'), 429, /^Rate limiting exceeded: Write rate limit exceeded: Operation requires 1 tokens but only 0\.0 were available\. Retry after (19|20)s$/, 'an index change costs one token');
    t.same(Object.keys(resultOf<{ payload_schema: Record<string, unknown> }>(t, await api('GET', '/collections/costs')).payload_schema), ['city'], 'the index stays');
    t.equal(await count(t, 'costs'), DOCS.length - 2, 'the deletion of 2 points went through');
  });

  t.test('a filtered write costs the points its filter selects', async (t) => {
    await fresh(t, 'filtered');
    await strict(t, 'filtered', { enabled: true, write_rate_limit: 8 });
    const berlin = DOCS.filter((d) => d.payload.city === 'Berlin').length;
    resultOf(t, await api('POST', '/collections/filtered/points/payload?wait=true', { payload: { seen: true }, filter: { must: [{ key: 'city', match: { value: 'Berlin' } }] } }));
    assertError(t, await api('POST', '/collections/filtered/points/payload?wait=true', { payload: { seen: true }, filter: { must: [{ key: 'city', match: { value: 'Paris' } }] } }), 429, new RegExp(`^Rate limiting exceeded: Write rate limit exceeded: Operation requires ${DOCS.filter((d) => d.payload.city === 'Paris').length} tokens but only ${8 - berlin}\\.0 were available`), 'Paris points cost more than the tokens left');
    t.equal(await count(t, 'filtered', { must: [{ key: 'seen', match: { value: true } }] }), berlin, 'only the Berlin points were changed');
  });

  t.test('max_resident_memory_percent: a limit above the usage lets writes through', async (t) => {
    await fresh(t, 'memory', {}, DOCS.slice(0, 4));
    await strict(t, 'memory', { enabled: true, max_resident_memory_percent: 100 });
    resultOf(t, await api('PUT', '/collections/memory/points?wait=true', { points: DOCS.slice(4, 6) }));
    t.equal(await count(t, 'memory'), 6, 'stored');
  });

  t.test('search_max_batchsize bounds the searches of a batch request', async (t) => {
    await fresh(t, 'batchsize');
    await strict(t, 'batchsize', { enabled: true, search_max_batchsize: 2 });
    const searches = (n: number) => ({ searches: Array.from({ length: n }, () => ({ vector: QUERY, limit: 2 })) });
    const two = resultOf<{ id: number }[][]>(t, await api('POST', '/collections/batchsize/points/search/batch', searches(2)));
    t.same(two.map((hits) => hits.map((h) => h.id)), [topIds(DOCS, 2), topIds(DOCS, 2)], 'a batch of 2: exact answers');
    assertError(t, await api('POST', '/collections/batchsize/points/search/batch', searches(3)), 400, limitExceeded(3, 2, 'search limit'), 'search batch of 3');
    assertError(t, await api('POST', '/collections/batchsize/points/query/batch', { searches: [{ query: QUERY }, { query: QUERY }, { query: QUERY }] }), 400, limitExceeded(3, 2, 'search limit'), 'query batch of 3');
  });
});

// The server's resident memory is far below 1% of this machine's memory, so the refusal is shown
// on the collection layer's StrictMode in this process, made to hold 1% first (as the quota test does).
t.test('max_resident_memory_percent refuses memory-consuming writes, never deletions', async (t) => {
  const onePercent = Math.ceil(availableMemoryBytes() / 100);
  const ballast = Buffer.alloc(Math.max(0, onePercent - process.memoryUsage.rss()) + 64 * 1024 * 1024).fill(1);
  const used = residentMemoryPercent()!;
  t.ok(used >= 1, `resident memory is ${used}% of ${availableMemoryBytes()} bytes`);
  const mode = new StrictMode({ enabled: true, max_resident_memory_percent: 1 });
  const size = async () => ({ points: 0, vectorBytes: 0, payloadBytes: 0 });
  const upsert: WriteOp = { kind: 'upsert', points: [{ id: 1, vectors: {}, payload: null }], mode: 'upsert', updateFilter: null };
  await t.rejects(mode.checkWrite([upsert], [], size), new InsufficientStorage(`Resident memory usage is at ${used}% of total memory, exceeding the configured limit of 1%. Help: Reduce memory usage (e.g. delete points or drop collections), or raise \`max_resident_memory_percent\` in the collection's strict_mode_config.`), 'upsert refused with 507');
  t.equal(new InsufficientStorage('').statusCode, 507, 'insufficient storage is a 507');
  await t.resolves(mode.checkWrite([{ kind: 'delete', target: { ids: [1] } }], [], size), 'deletion allowed');
  mode.configure({ enabled: false, max_resident_memory_percent: 1 });
  await t.resolves(mode.checkWrite([upsert], [], size), 'disabled: allowed');
  ballast.fill(0);
});

t.test('the token bucket refills at limit/60 tokens a second, up to the limit', async (t) => {
  let now = 0;
  const bucket = new TokenBucket(60, () => now);
  t.equal(bucket.shortage(60), null, 'full when made');
  bucket.take(60);
  t.same(bucket.shortage(1), { kind: 'retry', available: 0, retryAfterSec: 1 }, 'empty: one token a second');
  now += 500;
  t.same(bucket.shortage(2), { kind: 'retry', available: 0.5, retryAfterSec: 1.5 }, 'half a token after 500 ms');
  now += 10 * 60 * 1000;
  t.equal(bucket.shortage(60), null, 'never more than the limit: 60 after ten minutes');
  t.same(bucket.shortage(61), { kind: 'over_budget' }, 'a cost above the limit can never be paid');
  bucket.take(60);
  t.same(bucket.shortage(1), { kind: 'retry', available: 0, retryAfterSec: 1 }, 'the refill was capped, not banked');
});
