// Quiver's response schemas (src/api/schemas/responses) against the real server: every route of
// the REST API is driven with realistic requests (dense, sparse, multivector and named vectors,
// payload indexes of every type, aliases, custom shard keys, snapshots of all three kinds, every
// search form, batch and group, every update kind) and each answer is validated with Ajv against
// its route's schema (the envelope and its result; text and files by content type), as are
// error bodies and the 202 of a `wait=false` snapshot job. The table must name exactly the routes
// the Fastify app registers (enumerated from an app built in-process), so a new endpoint without a
// response schema fails here, and every route must have been driven.
// A few altered answers show that the schemas catch a shape regression.

import t, { type Test } from 'tap';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { ACCEPTED_BODY, envelope, ERROR_BODY } from '../src/api/schemas/responses/shape.js';
import { SHARED_RESPONSE_SCHEMAS } from '../src/api/schemas/responses/optimizations.js';
import type { RouteResponse } from '../src/api/schemas/responses/route-response.js';
import { routeCatalogue } from '../src/server/route-catalogue.js';
import type { Schema } from '../src/api/schemas/builders.js';
import { registeredRoutes } from './helpers/registered-routes.js';
import { ONE_PEER_CLUSTER, startServer } from './helpers/server.js';
import { stopAtEnd } from './helpers/api-http.js';
import { vectorOf } from './helpers/api-data.js';

// `serde` annotates the request builders' scalars, which response schemas reuse.
const ajv = new Ajv({ allErrors: true, keywords: ['serde'] });
for (const [id, schema] of Object.entries(SHARED_RESPONSE_SCHEMAS)) ajv.addSchema(schema, id);

const compiled = new Map<Schema, ValidateFunction>();
function validatorOf(schema: Schema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}
const envelopes = new Map<string, Schema>();
function envelopeOf(route: string, result: Schema): Schema {
  if (!envelopes.has(route)) envelopes.set(route, envelope(result));
  return envelopes.get(route)!;
}

function errorsOf(validate: ValidateFunction): string {
  return ajv.errorsText(validate.errors, { separator: '; ' });
}

function conforms(t: Test, schema: Schema, body: unknown, what: string): void {
  const validate = validatorOf(schema);
  const ok = validate(body);
  t.ok(ok, ok ? what : `${what}: ${errorsOf(validate)} in ${JSON.stringify(body).slice(0, 600)}`);
}

const RESPONSE_SCHEMAS = new Map(routeCatalogue().map(({ method, url, response }) => [`${method} ${url}`, response]));

function specOf(route: string): RouteResponse {
  const spec = RESPONSE_SCHEMAS.get(route);
  if (!spec) throw new Error(`no response schema for ${route}`);
  return spec;
}

const C = '/collections/:name';
const SHARD = `${C}/shards/:shard`;
const DIM = 4;

interface Answer {
  status: number;
  /** The envelope's result, the bare JSON body, or the bytes of a text or file. */
  result: unknown;
}

function client(base: string) {
  const driven = new Set<string>();

  /**
   * Sends a request to the route `pattern` (at the concrete `path`) and validates the answer
   * against the route's response schema: 200 (or 202 for an accepted job) with the envelope, a
   * bare JSON body, text or a file, as the table says.
   */
  async function send(t: Test, method: string, pattern: string, path: string, body?: unknown): Promise<Answer> {
    const route = `${method} ${pattern}`;
    const spec = specOf(route);
    driven.add(route);
    const init: RequestInit = { method };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) Object.assign(init, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const response = await fetch(base + path, init);
    const what = `${route} (${path})`;
    if (spec.kind === 'text' || spec.kind === 'file') {
      const expected = spec.kind === 'text' ? spec.contentType : 'application/octet-stream';
      t.equal(response.status, 200, `${what}: HTTP 200`);
      t.ok(response.headers.get('content-type')?.startsWith(expected), `${what}: content type ${expected} (${response.headers.get('content-type')})`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      t.ok(bytes.length > 0, `${what}: a body`);
      return { status: response.status, result: bytes };
    }
    const parsed: unknown = await response.json();
    if (spec.kind === 'json') {
      t.equal(response.status, 200, `${what}: HTTP 200`);
      conforms(t, spec.body, parsed, what);
      return { status: response.status, result: parsed };
    }
    if (response.status === 202 && spec.accepted) {
      conforms(t, ACCEPTED_BODY, parsed, `${what}: accepted`);
      return { status: 202, result: null };
    }
    t.equal(response.status, 200, `${what}: HTTP 200 (${JSON.stringify(parsed).slice(0, 300)})`);
    conforms(t, envelopeOf(route, spec.result), parsed, what);
    return { status: response.status, result: (parsed as { result?: unknown }).result };
  }

  /** A request that must fail: the error body, whatever the route. */
  async function fail(t: Test, method: string, path: string, status: number, body?: unknown): Promise<void> {
    const response = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    t.equal(response.status, status, `${method} ${path}: HTTP ${status}`);
    const parsed: unknown = await response.json();
    conforms(t, ERROR_BODY, parsed, `${method} ${path}: error body`);
  }

  /**
   * A route a single node can only refuse (the cluster metadata keys: Qdrant answers 500 outside
   * distributed mode; the collection cluster operations 400), driven with its refusal; its
   * success shape is driven in cluster mode.
   */
  async function standaloneOnlyRefuses(t: Test, method: string, pattern: string, path: string, body?: unknown, status = 500): Promise<void> {
    if (ONE_PEER_CLUSTER) {
      await send(t, method, pattern, path, body);
      return;
    }
    driven.add(`${method} ${pattern}`);
    await fail(t, method, path, status, body);
  }

  return { send, fail, standaloneOnlyRefuses, driven };
}

t.test('the table has a response for exactly the server\'s routes', async (t) => {
  const routes = (await registeredRoutes()).map(({ method, url }) => `${method} ${url}`).sort();
  t.same([...RESPONSE_SCHEMAS.keys()].sort(), routes, 'one catalogue entry per registered route, none for a route that does not exist');
  for (const route of routes) {
    const spec = specOf(route);
    if (spec.kind === 'envelope') t.ok(validatorOf(envelopeOf(route, spec.result)), `${route}: the schema compiles`);
    if (spec.kind === 'json') t.ok(validatorOf(spec.body), `${route}: the schema compiles`);
  }
});

t.test('every route answers in its schema', async (t) => {
  // With hardware reporting, so that the answers about points carry Qdrant's `usage` too.
  const server = await startServer({ env: { QDRANT__SERVICE__HARDWARE_REPORTING: 'true' } });
  stopAtEnd(t, server);
  const { send, fail, standaloneOnlyRefuses, driven } = client(server.url);
  const snapshotsDir = join(server.storage, 'snapshots');
  const path = (name: string, rest = '') => `/collections/${name}${rest}`;

  // Service, probes, cluster and quotas.
  await send(t, 'GET', '/', '/');
  for (const probe of ['/healthz', '/livez', '/readyz']) await send(t, 'GET', probe, probe);
  await send(t, 'GET', '/cluster', '/cluster');
  await standaloneOnlyRefuses(t, 'GET', '/cluster/metadata/keys', '/cluster/metadata/keys');
  await standaloneOnlyRefuses(t, 'GET', '/cluster/metadata/keys/:key', '/cluster/metadata/keys/k');
  await standaloneOnlyRefuses(t, 'PUT', '/cluster/metadata/keys/:key', '/cluster/metadata/keys/k?wait=true', { any: 'json' });
  await standaloneOnlyRefuses(t, 'DELETE', '/cluster/metadata/keys/:key', '/cluster/metadata/keys/k?wait=true');
  await standaloneOnlyRefuses(t, 'POST', '/cluster/recover', '/cluster/recover');
  // Removing the one peer there is would end the run: its success is test/cluster-operator-actions.test.ts's.
  driven.add('DELETE /cluster/peer/:peer_id');
  await fail(t, 'DELETE', '/cluster/peer/12345', 400);
  await send(t, 'GET', '/quotas', '/quotas');
  await send(t, 'PUT', '/quotas', '/quotas', { enabled: true, max_disk_usage_percent: 100, max_resident_memory_percent: 100, release_margin_percent: 0 });
  await send(t, 'GET', '/quotas', '/quotas');
  await send(t, 'PUT', '/quotas', '/quotas', { enabled: false });
  await send(t, 'GET', '/telemetry', '/telemetry');

  // A dense collection with int8 quantization, two shards and a payload index of every type.
  await send(t, 'PUT', C, path('dense'), {
    vectors: { size: DIM, distance: 'Cosine', on_disk: false },
    shard_number: 2,
    quantization_config: { scalar: { type: 'int8', quantile: 0.99, always_ram: true } },
    hnsw_config: { m: 8, ef_construct: 64 },
    metadata: { owner: 'tests' },
  });
  const indexes: Array<[string, unknown]> = [
    ['tag', { type: 'keyword', is_tenant: false }],
    ['n', { type: 'integer', lookup: true, range: true }],
    ['score', 'float'],
    ['place', 'geo'],
    ['flag', 'bool'],
    ['at', 'datetime'],
    ['ref', 'uuid'],
    ['text', { type: 'text', tokenizer: 'word', lowercase: true, stopwords: 'english', stemmer: { type: 'snowball', language: 'english' } }],
  ];
  for (const [field_name, field_schema] of indexes) await send(t, 'PUT', `${C}/index`, path('dense', '/index?wait=true'), { field_name, field_schema });
  const points = Array.from({ length: 40 }, (_, i) => ({
    id: i + 1,
    vector: vectorOf(i + 1, DIM),
    payload: {
      tag: ['red', 'green', 'blue'][i % 3],
      n: i,
      score: i / 4,
      place: { lon: i / 10, lat: i / 20 },
      flag: i % 2 === 0,
      at: `2026-01-${String((i % 28) + 1).padStart(2, '0')}T00:00:00Z`,
      ref: '550e8400-e29b-41d4-a716-446655440000',
      text: `point number ${i} runs`,
    },
  }));
  await send(t, 'PUT', `${C}/points`, path('dense', '/points?wait=true'), { points: points.slice(0, 30) });
  await send(t, 'PUT', `${C}/points`, path('dense', '/points?wait=true'), {
    batch: { ids: points.slice(30).map((p) => p.id), vectors: points.slice(30).map((p) => p.vector), payloads: points.slice(30).map((p) => p.payload) },
  });
  await send(t, 'PUT', `${C}/points`, path('dense', '/points'), { points: [{ id: '550e8400-e29b-41d4-a716-446655440000', vector: vectorOf(99, DIM), payload: { tag: 'red', n: 99 } }] });

  // Named vectors: a dense one, a multivector and a sparse one with IDF.
  await send(t, 'PUT', C, path('mixed'), {
    vectors: {
      image: { size: DIM, distance: 'Dot', hnsw_config: { m: 4 } },
      colbert: { size: 3, distance: 'Cosine', multivector_config: { comparator: 'max_sim' } },
    },
    sparse_vectors: { words: { modifier: 'idf', index: { full_scan_threshold: 100 } } },
  });
  const mixed = Array.from({ length: 12 }, (_, i) => ({
    id: i + 1,
    vector: {
      image: vectorOf(i + 100, DIM),
      colbert: [vectorOf(i + 200, 3), vectorOf(i + 300, 3)],
      words: { indices: [i % 5, (i % 7) + 5, 20], values: [1, 0.5, 0.25] },
    },
    payload: { group: i % 3 },
  }));
  await send(t, 'PUT', `${C}/points`, path('mixed', '/points?wait=true'), { points: mixed });

  // Custom sharding with a string and an integer shard key.
  await send(t, 'PUT', C, path('keyed'), { vectors: { size: DIM, distance: 'Euclid' }, sharding_method: 'custom' });
  await send(t, 'PUT', `${C}/shards`, path('keyed', '/shards'), { shard_key: 'eu' });
  await send(t, 'PUT', `${C}/shards`, path('keyed', '/shards'), { shard_key: 7, shards_number: 2 });
  await send(t, 'PUT', `${C}/points`, path('keyed', '/points?wait=true'), { points: [1, 2, 3].map((id) => ({ id, vector: vectorOf(id, DIM) })), shard_key: 'eu' });
  await send(t, 'PUT', `${C}/points`, path('keyed', '/points?wait=true'), { points: [4, 5].map((id) => ({ id, vector: vectorOf(id, DIM) })), shard_key: 7 });

  await t.test('collections, aliases, shards and cluster info', async (t) => {
    await send(t, 'GET', '/collections', '/collections');
    await send(t, 'POST', '/collections/aliases', '/collections/aliases', { actions: [{ create_alias: { collection_name: 'dense', alias_name: 'dense-alias' } }, { create_alias: { collection_name: 'mixed', alias_name: 'tmp' } }] });
    await send(t, 'POST', '/collections/aliases', '/collections/aliases', { actions: [{ rename_alias: { old_alias_name: 'tmp', new_alias_name: 'mixed-alias' } }] });
    await send(t, 'GET', '/aliases', '/aliases');
    await send(t, 'GET', `${C}/aliases`, path('dense', '/aliases'));
    for (const name of ['dense', 'mixed', 'keyed', 'dense-alias']) {
      const info = await send(t, 'GET', C, path(name));
      if (name === 'dense') t.same(Object.keys((info.result as { payload_schema: object }).payload_schema).sort(), indexes.map(([field]) => field).sort(), 'every index in the payload schema');
      await send(t, 'GET', `${C}/cluster`, path(name, '/cluster'));
      await send(t, 'GET', `${C}/shards`, path(name, '/shards'));
      await send(t, 'GET', `${C}/optimizations`, path(name, '/optimizations?with=queued,completed,idle_segments'));
      await send(t, 'GET', `${C}/optimizations`, path(name, '/optimizations'));
    }
    await send(t, 'GET', `${C}/exists`, path('dense', '/exists'));
    await send(t, 'GET', `${C}/exists`, path('nope', '/exists'));
    await send(t, 'PATCH', C, path('dense'), { optimizers_config: { indexing_threshold: 20000 }, params: { replication_factor: 1 }, strict_mode_config: { enabled: true, max_query_limit: 1000 } });
    await send(t, 'GET', C, path('dense'));
    await send(t, 'PUT', C, path('doomed'), { vectors: { size: 2, distance: 'Dot' } });
    await send(t, 'DELETE', C, path('doomed'));
    await send(t, 'DELETE', `${C}/index/:field`, path('dense', '/index/flag?wait=true'));
    await send(t, 'PUT', `${C}/vectors/:vector`, path('mixed', '/vectors/extra?wait=true'), { dense: { size: 2, distance: 'Dot' } });
    await send(t, 'DELETE', `${C}/vectors/:vector`, path('mixed', '/vectors/extra?wait=true'));
    await send(t, 'PUT', `${C}/shards`, path('keyed', '/shards'), { shard_key: 'gone' });
    await send(t, 'POST', `${C}/shards/delete`, path('keyed', '/shards/delete'), { shard_key: 'gone' });
    await standaloneOnlyRefuses(t, 'POST', `${C}/cluster`, path('keyed', '/cluster'), { create_sharding_key: { shard_key: 'op' } }, 400);
    await standaloneOnlyRefuses(t, 'POST', `${C}/cluster`, path('keyed', '/cluster'), { drop_sharding_key: { shard_key: 'op' } }, 400);
  });

  await t.test('retrieve, scroll, count and facet', async (t) => {
    await send(t, 'GET', `${C}/points/:id`, path('dense', '/points/3'));
    await send(t, 'GET', `${C}/points/:id`, path('dense', '/points/550e8400-e29b-41d4-a716-446655440000'));
    await send(t, 'GET', `${C}/points/:id`, path('mixed', '/points/2'));
    await send(t, 'POST', `${C}/points`, path('dense', '/points'), { ids: [1, 2, 500], with_payload: true, with_vector: true });
    await send(t, 'POST', `${C}/points`, path('mixed', '/points'), { ids: [1, 2], with_payload: ['group'], with_vector: ['colbert', 'words'] });
    await send(t, 'POST', `${C}/points`, path('keyed', '/points'), { ids: [1, 4], shard_key: ['eu', 7] });
    const page = await send(t, 'POST', `${C}/points/scroll`, path('dense', '/points/scroll'), { limit: 5, with_payload: { include: ['tag'] }, filter: { must: [{ key: 'tag', match: { value: 'red' } }] } });
    t.not((page.result as { next_page_offset?: unknown }).next_page_offset, null, 'a next page offset');
    await send(t, 'POST', `${C}/points/scroll`, path('dense', '/points/scroll'), { limit: 5, order_by: { key: 'n', direction: 'desc' } });
    await send(t, 'POST', `${C}/points/scroll`, path('mixed', '/points/scroll'), { limit: 100, with_vector: true });
    await send(t, 'POST', `${C}/points/scroll`, path('keyed', '/points/scroll'), {});
    await send(t, 'POST', `${C}/points/count`, path('dense', '/points/count'), { filter: { must: [{ key: 'n', range: { gte: 10 } }] }, exact: true });
    // The text index stems in the shard workers: "running" and every point's "runs" are one stem.
    const stemmed = await send(t, 'POST', `${C}/points/count`, path('dense', '/points/count'), { filter: { must: [{ key: 'text', match: { text: 'running' } }] } });
    t.same(stemmed.result, { count: points.length }, 'every point with a text matches its stem');
    await send(t, 'POST', `${C}/facet`, path('dense', '/facet'), { key: 'tag', limit: 10 });
    await send(t, 'POST', `${C}/facet`, path('dense', '/facet'), { key: 'n', limit: 3, exact: true });
  });

  await t.test('every search form, batch and group', async (t) => {
    const q = vectorOf(7, DIM);
    const hits = await send(t, 'POST', `${C}/points/search`, path('dense', '/points/search'), { vector: q, limit: 5, with_payload: true, with_vector: true, filter: { must: [{ key: 'flag', match: { value: true } }] } });
    t.equal((hits.result as unknown[]).length, 5, 'five hits');
    await send(t, 'POST', `${C}/points/search`, path('mixed', '/points/search'), { vector: { name: 'words', vector: { indices: [1, 20], values: [1, 1] } }, limit: 3 });
    await send(t, 'POST', `${C}/points/search/batch`, path('dense', '/points/search/batch'), { searches: [{ vector: q, limit: 2 }, { vector: q, limit: 2, offset: 2, score_threshold: 0 }] });
    await send(t, 'POST', `${C}/points/search/groups`, path('dense', '/points/search/groups'), { vector: q, group_by: 'tag', limit: 3, group_size: 2, with_lookup: { collection: 'mixed', with_payload: true } });
    await send(t, 'POST', `${C}/points/search/groups`, path('dense', '/points/search/groups'), { vector: q, group_by: 'n', limit: 2, group_size: 1 });
    await send(t, 'POST', `${C}/points/search/matrix/pairs`, path('dense', '/points/search/matrix/pairs'), { sample: 10, limit: 2 });
    await send(t, 'POST', `${C}/points/search/matrix/offsets`, path('mixed', '/points/search/matrix/offsets'), { sample: 6, limit: 2, using: 'image' });
    await send(t, 'POST', `${C}/points/recommend`, path('dense', '/points/recommend'), { positive: [1, 2], negative: [3], limit: 3, strategy: 'best_score', with_payload: true });
    await send(t, 'POST', `${C}/points/recommend/batch`, path('mixed', '/points/recommend/batch'), { searches: [{ positive: [1], using: 'image', limit: 2 }, { positive: [2], negative: [3], using: 'colbert', limit: 2 }] });
    await send(t, 'POST', `${C}/points/recommend/groups`, path('dense', '/points/recommend/groups'), { positive: [1], group_by: 'tag', limit: 2, group_size: 2 });
    await send(t, 'POST', `${C}/points/discover`, path('dense', '/points/discover'), { target: 4, context: [{ positive: 1, negative: 2 }], limit: 3 });
    await send(t, 'POST', `${C}/points/discover/batch`, path('dense', '/points/discover/batch'), { searches: [{ target: q, context: [{ positive: 1, negative: 2 }], limit: 2 }, { context: [{ positive: 3, negative: 4 }], limit: 2 }] });
    const queries: unknown[] = [
      { query: q, limit: 3, with_payload: true },
      { query: 5, limit: 3, with_vector: true },
      { query: { recommend: { positive: [1], negative: [2] } }, limit: 3 },
      { query: { discover: { target: 3, context: [{ positive: 1, negative: 2 }] } }, limit: 3 },
      { query: { context: [{ positive: 1, negative: 2 }] }, limit: 3 },
      { query: { order_by: { key: 'n', direction: 'asc' } }, limit: 3 },
      { query: { sample: 'random' }, limit: 3 },
      { prefetch: [{ query: q, limit: 10 }, { query: vectorOf(8, DIM), limit: 10 }], query: { fusion: 'rrf' }, limit: 4 },
    ];
    for (const body of queries) await send(t, 'POST', `${C}/points/query`, path('dense', '/points/query'), body);
    const mixedQueries: unknown[] = [
      { query: { indices: [1, 20], values: [1, 0.5] }, using: 'words', limit: 3 },
      { query: [vectorOf(5, 3), vectorOf(6, 3)], using: 'colbert', limit: 3, with_vector: ['colbert'] },
      { prefetch: [{ query: { indices: [20], values: [1] }, using: 'words', limit: 5 }, { query: vectorOf(1, DIM), using: 'image', limit: 5 }], query: { fusion: 'dbsf' }, limit: 3 },
      { prefetch: { query: vectorOf(1, DIM), using: 'image', limit: 8 }, query: [vectorOf(5, 3)], using: 'colbert', limit: 3 },
      { query: { text: 'words that matter', model: 'qdrant/bm25' }, using: 'words', limit: 3 },
    ];
    for (const body of mixedQueries) await send(t, 'POST', `${C}/points/query`, path('mixed', '/points/query'), body);
    await send(t, 'POST', `${C}/points/query`, path('keyed', '/points/query'), { query: vectorOf(1, DIM), limit: 3, shard_key: 'eu', with_payload: true });
    await send(t, 'POST', `${C}/points/query/batch`, path('dense', '/points/query/batch'), { searches: [{ query: q, limit: 2 }, { query: { order_by: 'n' }, limit: 2 }] });
    await send(t, 'POST', `${C}/points/query/groups`, path('dense', '/points/query/groups'), { query: q, group_by: 'tag', limit: 3, group_size: 2, with_lookup: 'mixed' });
  });

  await t.test('every update kind', async (t) => {
    const write = (pattern: string, method: string, rest: string, body: unknown) => send(t, method, `${C}${pattern}`, path('dense', rest), body);
    await write('/points/payload', 'POST', '/points/payload?wait=true', { payload: { extra: 1 }, points: [1, 2] });
    await write('/points/payload', 'PUT', '/points/payload?wait=true', { payload: { tag: 'red', n: 1 }, filter: { must: [{ has_id: [3] }] } });
    await write('/points/payload/delete', 'POST', '/points/payload/delete?wait=true', { keys: ['extra'], points: [1] });
    await write('/points/payload/clear', 'POST', '/points/payload/clear?wait=true', { points: [2] });
    await write('/points/vectors', 'PUT', '/points/vectors?wait=true', { points: [{ id: 4, vector: vectorOf(44, DIM) }] });
    await send(t, 'PUT', `${C}/points/vectors`, path('mixed', '/points/vectors?wait=true'), { points: [{ id: 1, vector: { words: { indices: [3], values: [2] } } }] });
    await send(t, 'POST', `${C}/points/vectors/delete`, path('mixed', '/points/vectors/delete?wait=true'), { points: [1], vector: ['words'] });
    await write('/points/delete', 'POST', '/points/delete?wait=true', { points: [40] });
    await write('/points/delete', 'POST', '/points/delete', { filter: { must: [{ key: 'n', match: { value: 39 } }] } });
    const batch = await write('/points/batch', 'POST', '/points/batch?wait=true', {
      operations: [
        { upsert: { points: [{ id: 100, vector: vectorOf(100, DIM), payload: { tag: 'new' } }] } },
        { upsert: { batch: { ids: [101], vectors: [vectorOf(101, DIM)] } } },
        { update_vectors: { points: [{ id: 100, vector: vectorOf(102, DIM) }] } },
        { set_payload: { payload: { x: 1 }, points: [100] } },
        { overwrite_payload: { payload: { y: 2 }, points: [101] } },
        { delete_payload: { keys: ['y'], points: [101] } },
        { clear_payload: { points: [100] } },
        { delete: { points: [101] } },
      ],
    });
    t.equal((batch.result as unknown[]).length, 8, 'a result per operation');
    await write('/points/batch', 'POST', '/points/batch', { operations: [] });
    await send(t, 'POST', `${C}/points/vectors/delete`, path('dense', '/points/vectors/delete?wait=true'), { points: [5], vector: [''] });
  });

  await t.test('snapshots of storage, collections and shards', async (t) => {
    const full = (await send(t, 'POST', '/snapshots', '/snapshots?wait=true')).result as { name: string };
    await send(t, 'GET', '/snapshots', '/snapshots');
    await send(t, 'GET', '/snapshots/:snapshot', `/snapshots/${full.name}`);
    const accepted = await send(t, 'DELETE', '/snapshots/:snapshot', `/snapshots/${full.name}?wait=false`);
    t.equal(accepted.status, 202, 'wait=false deletion is accepted');

    const created = (await send(t, 'POST', `${C}/snapshots`, path('dense', '/snapshots?wait=true'))).result as { name: string };
    await send(t, 'GET', `${C}/snapshots`, path('dense', '/snapshots'));
    const archive = (await send(t, 'GET', `${C}/snapshots/:snapshot`, path('dense', `/snapshots/${created.name}`))).result as Uint8Array;
    await send(t, 'PUT', `${C}/snapshots/recover`, path('copy', '/snapshots/recover'), { location: `file://${join(snapshotsDir, 'dense', created.name)}` });
    const form = new FormData();
    form.append('snapshot', new Blob([Buffer.from(archive)]), 'snapshot.tar');
    await send(t, 'POST', `${C}/snapshots/upload`, path('uploaded', '/snapshots/upload?priority=snapshot'), form);
    await send(t, 'DELETE', `${C}/snapshots/:snapshot`, path('dense', `/snapshots/${created.name}`));

    await send(t, 'GET', `${SHARD}/snapshot`, path('dense', '/shards/0/snapshot'));
    const shard = (await send(t, 'POST', `${SHARD}/snapshots`, path('dense', '/shards/1/snapshots?wait=true'))).result as { name: string };
    await send(t, 'GET', `${SHARD}/snapshots`, path('dense', '/shards/1/snapshots'));
    const shardArchive = (await send(t, 'GET', `${SHARD}/snapshots/:snapshot`, path('dense', `/shards/1/snapshots/${shard.name}`))).result as Uint8Array;
    await send(t, 'PUT', `${SHARD}/snapshots/recover`, path('dense', '/shards/1/snapshots/recover'), { location: shard.name });
    const shardForm = new FormData();
    shardForm.append('snapshot', new Blob([Buffer.from(shardArchive)]), 'shard.tar');
    await send(t, 'POST', `${SHARD}/snapshots/upload`, path('dense', '/shards/1/snapshots/upload'), shardForm);
    await send(t, 'DELETE', `${SHARD}/snapshots/:snapshot`, path('dense', `/shards/1/snapshots/${shard.name}`));
  });

  await t.test('telemetry, metrics and issues with collections', async (t) => {
    for (const level of [0, 1, 2, 3]) await send(t, 'GET', '/telemetry', `/telemetry?details_level=${level}`);
    await send(t, 'GET', '/telemetry', '/telemetry?details_level=3&anonymize=true');
    await send(t, 'GET', '/cluster/telemetry', '/cluster/telemetry');
    await send(t, 'GET', '/cluster/telemetry', '/cluster/telemetry?details_level=3');
    await send(t, 'GET', '/metrics', '/metrics');
    await send(t, 'GET', '/issues', '/issues');
    await send(t, 'DELETE', '/issues', '/issues');
  });

  await t.test('errors in Qdrant\'s error body', async (t) => {
    await fail(t, 'GET', '/collections/nope', 404);
    await fail(t, 'POST', '/collections/dense/points/search', 400, { vector: 'not a vector' });
    await fail(t, 'POST', '/collections/dense/points/search', 400, '{"vector": [1, 2');
    await fail(t, 'POST', '/collections/dense/points/search', 422, { vector: vectorOf(1, DIM), limit: 0 });
    await fail(t, 'PUT', '/collections/dense/points?wait=true', 400, { points: [{ id: 1, vector: [1, 2] }] });
    await fail(t, 'GET', '/collections/dense/points/12345', 404);
    await fail(t, 'GET', '/no/such/route', 404);
    await fail(t, 'PUT', '/collections/dense', 409, { vectors: { size: DIM, distance: 'Dot' } });
  });

  t.same([...RESPONSE_SCHEMAS.keys()].filter((route) => !driven.has(route)), [], 'every route was driven');
});

t.test('the schemas catch shape regressions', async (t) => {
  const info = {
    status: 'green', optimizer_status: 'ok', indexed_vectors_count: 0, points_count: 1, segments_count: 1,
    config: {
      params: { vectors: { size: 4, distance: 'Cosine' }, shard_number: 1, replication_factor: 1, write_consistency_factor: 1, on_disk_payload: true },
      hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000, max_indexing_threads: 0 },
      optimizer_config: { deleted_threshold: 0.2, vacuum_min_vector_number: 1000, default_segment_number: 0, max_segment_size: null, memmap_threshold: null, indexing_threshold: 10000, flush_interval_sec: 5, max_optimization_threads: null },
      wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0, wal_retain_closed: 1 },
      quantization_config: null,
      strict_mode_config: { enabled: false },
    },
    payload_schema: { tag: { data_type: 'keyword', points: 1 } },
    update_queue: { length: 0 },
  };
  const schema = envelopeOf(`GET ${C}`, (specOf(`GET ${C}`) as { result: Schema }).result);
  const validate = validatorOf(schema);
  const wrap = (result: unknown) => ({ result, status: 'ok', time: 0.001 });
  t.ok(validate(wrap(info)), `a well-formed CollectionInfo passes ${errorsOf(validate)}`);
  const broken: Array<[string, unknown]> = [
    ['an unknown field', { ...info, vectors_count: 1 }],
    ['a missing required field', { ...info, segments_count: undefined }],
    ['a wrong status', { ...info, status: 'blue' }],
    ['a string count', { ...info, points_count: '1' }],
    ['an unknown vector param', { ...info, config: { ...info.config, params: { ...info.config.params, vectors: { size: 4, distance: 'Cosine', norm: true } } } }],
    ['an unknown payload type', { ...info, payload_schema: { tag: { data_type: 'string', points: 1 } } }],
  ];
  for (const [what, result] of broken) t.notOk(validate(JSON.parse(JSON.stringify(wrap(result)))), `${what} fails`);
  t.notOk(validate({ ...wrap(info), extra: 1 }), 'an unknown envelope field fails');
  t.notOk(validate({ result: info, status: 'error', time: 0 }), 'a wrong envelope status fails');
  t.notOk(validate({ ...wrap(info), usage: null }), 'a null usage fails (Qdrant leaves it out)');
  t.notOk(validate({ ...wrap(info), usage: {} }), 'an empty usage fails (Qdrant leaves it out)');
  const hardware = { cpu: 1, payload_io_read: 2, payload_io_write: 0, payload_index_io_read: 0, payload_index_io_write: 0, vector_io_read: 64, vector_io_write: 0 };
  t.ok(validate({ ...wrap(info), usage: { hardware } }), `usage with hardware counters passes ${errorsOf(validate)}`);

  const scored = validatorOf(envelopeOf(`POST ${C}/points/search`, (specOf(`POST ${C}/points/search`) as { result: Schema }).result));
  t.ok(scored(wrap([{ id: 1, version: 0, score: 0.5, payload: { a: 1 } }])), 'a scored point passes');
  t.notOk(scored(wrap([{ id: 1, score: 0.5 }])), 'a scored point without version fails');
  t.notOk(scored(wrap([{ id: 1, version: 0, score: 0.5, payload: null, vector: null }])), 'null for parts not asked for fails (Qdrant leaves them out)');
  t.notOk(scored(wrap([{ id: -1, version: 0, score: 0.5 }])), 'a negative id fails');
  t.notOk(scored(wrap([{ id: 'not-a-uuid', version: 0, score: 0.5 }])), 'an id that is no UUID fails');

  const error = validatorOf(ERROR_BODY);
  t.ok(error({ status: { error: 'Not found' }, time: 0 }), 'an error body passes');
  t.notOk(error({ status: 'error', time: 0 }), 'an error without its message object fails');
  t.notOk(error({ status: { error: 'x' }, time: 0, result: null }), 'an error body with more fields fails');
});
