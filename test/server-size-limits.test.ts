// Sizes and numbers at the edge of their types, through the real server over raw HTTP: counts
// as large as u64 allows (limits, offsets, beams, oversampling, group sizes, matrix samples) are
// served as Qdrant serves them, with every match, never reaching the engine unbounded; numbers
// beyond their type get serde_json's 400; shard counts past Quiver's bound and vector components
// beyond the f32 range are refused with a 422 that changes nothing; a `timeout` longer than a
// timer can wait is no limit rather than an immediate one.

import t, { type Test } from 'tap';
import { startServer } from './helpers/server.js';
import { assertError, call, formatErrorMessage, resultOf, stopAtEnd, type RawResponse } from './helpers/api-http.js';
import { uniqueName } from './helpers/api-data.js';

const server = await startServer({ workers: 2 });
stopAtEnd(t, server);

const send = (method: string, path: string, body?: unknown): Promise<RawResponse> => call(server.url, method, path, body);
const ok = async <T = unknown>(t: Test, method: string, path: string, body?: unknown): Promise<T> => resultOf<T>(t, await send(method, path, body));

/** u64::MAX as JSON text (JavaScript cannot write it: it has no such number). */
const U64_MAX = '18446744073709551615';
const U32_MAX = 4294967295;
/** An integer Qdrant parses as usize and serves, far past any collection's size. */
const HUGE = 1_000_000_000_000;

const N = 6;

interface Hit {
  id: number;
  score: number;
  version?: number;
}

/**
 * Points 1..N over 2 shards, Dot, vector [1, id/10], payload {g: id % 2} with an integer index on
 * g: the query [0, 1] scores each point f32(id / 10), so every point ranks by id, largest first.
 */
async function smallCollection(t: Test): Promise<string> {
  const name = uniqueName('sizes');
  await ok(t, 'PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Dot' }, shard_number: 2 });
  await ok(t, 'PUT', `/collections/${name}/index?wait=true`, { field_name: 'g', field_schema: 'integer' });
  const points = Array.from({ length: N }, (_, i) => ({ id: i + 1, vector: [1, (i + 1) / 10], payload: { g: (i + 1) % 2 } }));
  await ok(t, 'PUT', `/collections/${name}/points?wait=true`, { points });
  return name;
}

const DESCENDING = Array.from({ length: N }, (_, i) => N - i);
const ids = (hits: { id: number }[]): number[] => hits.map((h) => h.id);

t.test('limits and offsets up to u64::MAX are served with every match (they were 500 or empty)', async (t) => {
  const name = await smallCollection(t);
  const path = `/collections/${name}`;
  const expectedScores = DESCENDING.map((id) => Math.fround(id / 10));

  for (const limit of [String(HUGE), U64_MAX]) {
    const hits = await ok<Hit[]>(t, 'POST', `${path}/points/search`, (`{"vector":[0,1],"limit":${limit}}`));
    t.same(ids(hits), DESCENDING, `search, limit ${limit}: every point`);
    t.same(hits.map((h) => Math.fround(h.score)), expectedScores, `search, limit ${limit}: exact scores`);
    const batch = await ok<Hit[][]>(t, 'POST', `${path}/points/search/batch`, (`{"searches":[{"vector":[0,1],"limit":${limit}},{"vector":[0,1],"limit":2}]}`));
    t.same(batch.map(ids), [DESCENDING, DESCENDING.slice(0, 2)], `search batch, limit ${limit}`);
    const query = await ok<{ points: Hit[] }>(t, 'POST', `${path}/points/query`, (`{"query":[0,1],"limit":${limit}}`));
    t.same(ids(query.points), DESCENDING, `query, limit ${limit}`);
    const fused = await ok<{ points: Hit[] }>(t, 'POST', `${path}/points/query`, (`{"prefetch":[{"query":[0,1],"limit":${limit}},{"query":[0,1],"limit":${limit}}],"query":{"fusion":"rrf"},"limit":${limit}}`));
    t.same(ids(fused.points), DESCENDING, `prefetches and fusion, limit ${limit}`);
    // Recommend leaves out its examples; [1, 0.1] ranks the rest by id too.
    const recommended = await ok<Hit[]>(t, 'POST', `${path}/points/recommend`, (`{"positive":[1],"limit":${limit}}`));
    t.same(ids(recommended), DESCENDING.slice(0, -1), `recommend, limit ${limit}`);
    const best = await ok<{ points: Hit[] }>(t, 'POST', `${path}/points/query`, (`{"query":{"recommend":{"positive":[1],"strategy":"best_score"}},"limit":${limit}}`));
    t.same(ids(best.points), DESCENDING.slice(0, -1), `best_score recommend, limit ${limit}`);
    const scrolled = await ok<{ points: Hit[]; next_page_offset: unknown }>(t, 'POST', `${path}/points/scroll`, (`{"limit":${limit}}`));
    t.same({ ids: ids(scrolled.points), next: scrolled.next_page_offset }, { ids: [...DESCENDING].reverse(), next: null }, `scroll, limit ${limit}`);
    const sampled = await ok<{ points: Hit[] }>(t, 'POST', `${path}/points/query`, (`{"query":{"sample":"random"},"limit":${limit}}`));
    t.same(ids(sampled.points).sort((a, b) => a - b), [...DESCENDING].reverse(), `random sample, limit ${limit}`);
    const facet = await ok<{ hits: unknown[] }>(t, 'POST', `${path}/facet`, (`{"key":"g","limit":${limit}}`));
    t.same(facet.hits, [{ value: 0, count: 3 }, { value: 1, count: 3 }], `facet, limit ${limit}`);
  }

  for (const offset of [String(HUGE), U64_MAX]) {
    t.same(await ok(t, 'POST', `${path}/points/search`, (`{"vector":[0,1],"limit":2,"offset":${offset}}`)), [], `search, offset ${offset}: past the end`);
    t.same(await ok(t, 'POST', `${path}/points/query`, (`{"query":[0,1],"limit":2,"offset":${offset}}`)), { points: [] }, `query, offset ${offset}`);
  }
  const both = await ok<Hit[]>(t, 'POST', `${path}/points/search`, (`{"vector":[0,1],"limit":${U64_MAX},"offset":2}`));
  t.same(ids(both), DESCENDING.slice(2), 'u64::MAX limit after an offset');
});

t.test('group sizes and matrix samples at the top of their types are served', async (t) => {
  const name = await smallCollection(t);
  const path = `/collections/${name}`;
  const groups = [{ id: 0, hits: [6, 4, 2] }, { id: 1, hits: [5, 3, 1] }];
  const grouped = (result: { groups: { id: number; hits: Hit[] }[] }) => result.groups.map((g) => ({ id: g.id, hits: ids(g.hits) }));

  const searchGroups = await ok<{ groups: { id: number; hits: Hit[] }[] }>(t, 'POST', `${path}/points/search/groups`, { vector: [0, 1], group_by: 'g', limit: U32_MAX, group_size: U32_MAX });
  t.same(grouped(searchGroups), groups, 'search groups, u32::MAX groups of u32::MAX');
  // The query API's sizes are usize (v1.18's are u32).
  const queryGroups = await ok<{ groups: { id: number; hits: Hit[] }[] }>(t, 'POST', `${path}/points/query/groups`, (`{"query":[0,1],"group_by":"g","limit":${U64_MAX},"group_size":${U64_MAX}}`));
  t.same(grouped(queryGroups), groups, 'query groups, u64::MAX groups of u64::MAX');
  assertError(t, await send('POST', `${path}/points/search/groups`, { vector: [0, 1], group_by: 'g', limit: U32_MAX + 1, group_size: 1 }), 400,
    formatErrorMessage(`invalid value: integer \`${U32_MAX + 1}\`, expected u32`), 'search groups past u32');

  for (const size of [String(HUGE), U64_MAX]) {
    const matrix = await ok<{ pairs: { a: number; b: number; score: number }[] }>(t, 'POST', `${path}/points/search/matrix/pairs`, (`{"sample":${size},"limit":${size}}`));
    const pairs = matrix.pairs.map((p) => `${p.a}-${p.b}`).sort();
    const every = DESCENDING.flatMap((a) => DESCENDING.filter((b) => b !== a).map((b) => `${a}-${b}`)).sort();
    t.same(pairs, every, `matrix, sample and limit ${size}: every ordered pair`);
    // [1, a/10] · [1, b/10] in f32 steps.
    const dot = (a: number, b: number) => Math.fround(1 + Math.fround(Math.fround(a / 10) * Math.fround(b / 10)));
    t.same(matrix.pairs.map((p) => Math.fround(p.score)), matrix.pairs.map((p) => dot(p.a, p.b)), 'with exact Dot scores');
  }
});

const GRAPH_POINTS = new Map(Array.from({ length: 100 }, (_, i) => [i + 1, [Math.cos(i + 1), Math.sin(i + 1), (i + 1) / 100, 1]]));
/** The query [1, 0, 0, 0] scores each point its f32 first component. */
const GRAPH_REFERENCE = [...GRAPH_POINTS].map(([id, v]) => ({ id, score: Math.fround(v[0]) })).sort((a, b) => b.score - a.score || a.id - b.id);

/**
 * One shard of 100 4-d Dot vectors (1600 bytes) over an indexing threshold of 1 KiB, so the
 * optimizer links them into a graph; resolves once it has (deadline 60 s).
 */
async function graphCollection(t: Test, config: Record<string, unknown>): Promise<string> {
  const path = `/collections/${uniqueName('graph')}`;
  await ok(t, 'PUT', path, { vectors: { size: 4, distance: 'Dot' }, shard_number: 1, optimizers_config: { indexing_threshold: 1 }, ...config });
  await ok(t, 'PUT', `${path}/points?wait=true`, { points: [...GRAPH_POINTS].map(([id, vector]) => ({ id, vector })) });
  const deadline = Date.now() + 60_000;
  let indexed = 0;
  while (indexed < GRAPH_POINTS.size && Date.now() < deadline) {
    const info = (await send('GET', path)).body as { result?: { indexed_vectors_count?: number } };
    indexed = info.result?.indexed_vectors_count ?? 0;
  }
  t.equal(indexed, GRAPH_POINTS.size, 'every vector is in the graph');
  return path;
}

t.test('beams, oversampling and limits past the graph size search an HNSW graph in full', async (t) => {
  const path = await graphCollection(t, { quantization_config: { scalar: { type: 'int8' } } });
  const reference = GRAPH_REFERENCE;

  const params = [
    `{"hnsw_ef":${U64_MAX},"quantization":{"rescore":true}}`,
    `{"hnsw_ef":${HUGE},"quantization":{"oversampling":1e300,"rescore":true}}`,
    `{"quantization":{"oversampling":1e300,"rescore":true}}`,
  ];
  for (const p of params) {
    const hits = await ok<Hit[]>(t, 'POST', `${path}/points/search`, (`{"vector":[1,0,0,0],"limit":${U64_MAX},"params":${p}}`));
    t.same(hits.map((h) => ({ id: h.id, score: Math.fround(h.score) })), reference, `params ${p}: every point, exactly ranked`);
    const top = await ok<Hit[]>(t, 'POST', `${path}/points/search`, (`{"vector":[1,0,0,0],"limit":3,"params":${p}}`));
    t.same(ids(top), ids(reference.slice(0, 3)), `params ${p}, limit 3`);
  }
});

t.test('m and ef_construct as large as usize allows build a graph (m = i32::MAX aborted the engine)', async (t) => {
  const hnsw = { m: 2 ** 31 - 1, ef_construct: HUGE };
  const path = await graphCollection(t, { hnsw_config: hnsw });
  const info = await ok<{ config: { hnsw_config: Record<string, unknown> } }>(t, 'GET', path);
  t.match(info.config.hnsw_config, hnsw, 'the configuration reads back as given');
  const hits = await ok<Hit[]>(t, 'POST', `${path}/points/search`, { vector: [1, 0, 0, 0], limit: 100 });
  t.same(hits.map((h) => ({ id: h.id, score: Math.fround(h.score) })), GRAPH_REFERENCE, 'every point, exactly ranked');
});

t.test('numbers beyond their integer type get serde_json\'s 400', async (t) => {
  const name = await smallCollection(t);
  const search = `/collections/${name}/points/search`;
  const cases: [body: string, message: string][] = [
    // Beyond 64 bits serde_json reads a float, printed with every digit.
    ['{"vector":[0,1],"limit":1e20}', 'invalid type: floating point `100000000000000000000.0`, expected usize'],
    ['{"vector":[0,1],"limit":1e300}', `invalid type: floating point \`1${'0'.repeat(300)}.0\`, expected usize`],
    ['{"vector":[0,1],"limit":-10000000000000000000}', 'invalid type: floating point `-10000000000000000000.0`, expected usize'],
    ['{"vector":[0,1],"limit":-1}', 'invalid value: integer `-1`, expected usize'],
    ['{"vector":[0,1],"limit":1.5}', 'invalid type: floating point `1.5`, expected usize'],
    ['{"vector":[0,1],"limit":2,"offset":1e25}', 'invalid type: floating point `10000000000000000000000000.0`, expected usize'],
    ['{"vector":[0,1],"limit":2,"params":{"hnsw_ef":1e20}}', 'invalid type: floating point `100000000000000000000.0`, expected usize'],
  ];
  for (const [body, message] of cases) assertError(t, await send('POST', search, body), 400, formatErrorMessage(message), body);
  assertError(t, await send('POST', search, { vector: [0, 1], limit: 0 }), 422, 'Validation error in JSON body: [limit: value 0 invalid, must be 1 or larger]', 'limit 0');
});

async function collectionNames(t: Test): Promise<string[]> {
  return (await ok<{ collections: { name: string }[] }>(t, 'GET', '/collections')).collections.map((c) => c.name).sort();
}

t.test('shard counts past 1000 are refused at once and create nothing (u32::MAX hung the server)', async (t) => {
  const before = await collectionNames(t);
  const name = uniqueName('shards');
  const started = performance.now();
  for (const shards of [1001, U32_MAX]) {
    assertError(t, await send('PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Dot' }, shard_number: shards }), 422,
      `Validation error in JSON body: [shard_number: value ${shards} invalid, must be 1000 or smaller]`, `shard_number ${shards}`);
  }
  assertError(t, await send('PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Dot' }, shard_number: 0 }), 422,
    'Validation error in JSON body: [shard_number: value 0 invalid, must be 1 or larger]', 'shard_number 0 keeps Qdrant\'s answer');
  t.ok(performance.now() - started < 10_000, 'answered at once');
  t.same(await collectionNames(t), before, 'no collection was created');

  // A custom-sharded collection: a shard key's shards_number has the same bound.
  await ok(t, 'PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Dot' }, sharding_method: 'custom' });
  assertError(t, await send('PUT', `/collections/${name}/shards`, { shard_key: 'k', shards_number: U32_MAX }), 422,
    `Validation error in JSON body: [shards_number: value ${U32_MAX} invalid, must be 1000 or smaller]`, 'shards_number u32::MAX');
  t.same(await ok(t, 'GET', `/collections/${name}/shards`), { shard_keys: [] }, 'no shard key was created');
});

const F32_RANGE = 'must be from -3.4028234663852886e+38 to 3.4028234663852886e+38 (the f32 range)';
const f32Error = (...breaches: [path: string, value: string, index: number][]): string =>
  `Validation error in JSON body: [${breaches.map(([path, value, index]) => `${path}: value ${value} at index ${index} invalid, ${F32_RANGE}`).join('; ')}]`;

t.test('vector components beyond the f32 range are refused on every input, and nothing changes', async (t) => {
  // A named vector: paths through a vector map show the entry as `?`, as Qdrant prints map values.
  const name = uniqueName('f32');
  const path = `/collections/${name}`;
  await ok(t, 'PUT', path, { vectors: { v: { size: 2, distance: 'Dot' } }, shard_number: 2 });
  await ok(t, 'PUT', `${path}/points?wait=true`, { points: [1, 2, 3].map((id) => ({ id, vector: { v: [1, id / 10] }, payload: { n: id } })) });
  const contents = () => ok(t, 'POST', `${path}/points/scroll`, { limit: 100, with_payload: true, with_vector: true });
  const before = await contents();

  const writes: [method: string, route: string, body: unknown, message: string][] = [
    ['PUT', '/points?wait=true', { points: [{ id: 1, vector: { v: [1, 1e39] } }, { id: 9, vector: { v: [-1e39, 0] } }] },
      f32Error(['points[0].vector.?', '1e+39', 1], ['points[1].vector.?', '-1e+39', 0])],
    ['PUT', '/points?wait=true', { batch: { ids: [1, 9], vectors: { v: [[1, 2], [3.5e38, 0]] } } }, f32Error(['batch.vectors.?[1]', '3.5e+38', 0])],
    // Sparse values share the rule (Quiver stores no sparse vector; the body is judged first).
    ['PUT', '/points?wait=true', { points: [{ id: 9, vector: { s: { indices: [0, 5], values: [0.5, 1e39] } } }] }, f32Error(['points[0].vector.?.values', '1e+39', 1])],
    ['PUT', '/points/vectors?wait=true', { points: [{ id: 2, vector: { v: [0, 1e40] } }] }, f32Error(['points[0].vector.?', '1e+40', 1])],
    // A batch whose second operation is refused applies neither.
    ['POST', '/points/batch?wait=true', { operations: [{ delete: { points: [3] } }, { upsert: { points: [{ id: 3, vector: { v: [1e39, 1] } }] } }] },
      f32Error(['operations[1].upsert.points[0].vector.?', '1e+39', 0])],
  ];
  for (const [method, route, body, message] of writes) assertError(t, await send(method, `${path}${route}`, body), 422, message, `${method} ${route}`);
  t.same(await contents(), before, 'no write was applied');

  const reads: [route: string, body: unknown, message: string][] = [
    ['/points/search', { vector: { name: 'v', vector: [1e39, 0] }, limit: 3 }, f32Error(['vector.vector', '1e+39', 0])],
    ['/points/search/batch', { searches: [{ vector: { name: 'v', vector: [0, 1] }, limit: 1 }, { vector: { name: 'v', vector: [0, -1e39] }, limit: 1 }] }, f32Error(['searches[1].vector.vector', '-1e+39', 1])],
    ['/points/query', { query: [1e39, 0], using: 'v' }, f32Error(['query', '1e+39', 0])],
    ['/points/query', { query: { nearest: [0, 1e39] }, using: 'v' }, f32Error(['query.nearest', '1e+39', 1])],
    ['/points/query', { prefetch: [{ query: [0, 1], using: 'v' }, { query: [1e39, 0], using: 'v' }], query: { fusion: 'rrf' } }, f32Error(['prefetch[1].query', '1e+39', 0])],
    ['/points/query', { query: { recommend: { positive: [1, [1e39, 0]], negative: [[0, -1e39]] } }, using: 'v' },
      f32Error(['query.recommend.positive[1]', '1e+39', 0], ['query.recommend.negative[0]', '-1e+39', 1])],
    ['/points/query', { query: { discover: { target: [1e39, 0], context: [{ positive: 1, negative: [0, 1e39] }] } }, using: 'v' },
      f32Error(['query.discover.target', '1e+39', 0], ['query.discover.context[0].negative', '1e+39', 1])],
    ['/points/query', { query: { context: [{ positive: [1e39, 0], negative: 2 }] }, using: 'v' }, f32Error(['query.context[0].positive', '1e+39', 0])],
    ['/points/recommend', { positive: [[1e39, 0]], limit: 3, using: 'v' }, f32Error(['positive[0]', '1e+39', 0])],
    ['/points/discover', { target: 1, context: [{ positive: [0, 1e39], negative: 2 }], limit: 3, using: 'v' }, f32Error(['context[0].positive', '1e+39', 1])],
    ['/points/query/groups', { query: [1e39, 0], using: 'v', group_by: 'n' }, f32Error(['query', '1e+39', 0])],
    ['/points/search/groups', { vector: { name: 'v', vector: [1e39, 0] }, group_by: 'n', limit: 1, group_size: 1 }, f32Error(['vector.vector', '1e+39', 0])],
  ];
  for (const [route, body, message] of reads) assertError(t, await send('POST', `${path}${route}`, body), 422, message, route);

  // Strings stay a format error, as in Qdrant.
  for (const text of ['"NaN"', '"Infinity"']) {
    assertError(t, await send('PUT', `${path}/points?wait=true`, `{"points":[{"id":1,"vector":{"v":[${text},0]}}]}`), 400,
      formatErrorMessage('data did not match any variant of untagged enum VectorStruct'), `component ${text}`);
  }
  t.same(await contents(), before, 'still nothing changed');

  // Large but finite f32 values are stored and found, up to the value that rounds to f32::MAX.
  const large = [3e38, -3.4028235e38];
  await ok(t, 'PUT', `${path}/points?wait=true`, { points: [{ id: 7, vector: { v: large } }] });
  const [stored] = await ok<{ vector: { v: number[] } }[]>(t, 'POST', `${path}/points`, { ids: [7], with_vector: true });
  t.same(stored.vector.v.map(Math.fround), large.map(Math.fround), 'stored as the nearest f32 values');
  const [hit] = await ok<Hit[]>(t, 'POST', `${path}/points/search`, { vector: { name: 'v', vector: [1, 0] }, limit: 1 });
  t.same({ ...hit, score: Math.fround(hit.score) }, { id: 7, version: hit.version, score: Math.fround(3e38) }, 'and ranked by a finite score');
});

t.test('a timeout longer than a timer can wait is no limit (it timed out at once)', async (t) => {
  const name = await smallCollection(t);
  const hits = await ok<Hit[]>(t, 'POST', `/collections/${name}/points/search?timeout=3000000`, { vector: [0, 1], limit: 2 });
  t.same(ids(hits), DESCENDING.slice(0, 2), 'a search with 3,000,000 s');
  const other = uniqueName('timeout');
  t.equal(await ok(t, 'PUT', `/collections/${other}?timeout=${U64_MAX}`, { vectors: { size: 2, distance: 'Dot' } }), true, 'a collection created with u64::MAX s');
  t.ok((await collectionNames(t)).includes(other), 'and it exists');
  const telemetry = await send('GET', '/telemetry?timeout=3000000');
  t.equal(telemetry.status, 200, 'telemetry with 3,000,000 s');
});
