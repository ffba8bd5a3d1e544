// Fine points of Qdrant 1.19's behaviour through the real server, each against Qdrant's answer
// as its source and documentation give it: set/delete_payload by key paths into arrays, payload
// selectors with `[]` paths, serde aliases (with_vectors, top, vectors), conditional updates
// (update_filter on upserts and update_vectors, update_mode), values_count of a missing key,
// the datetime forms Qdrant parses, order_by listing a point once per value, grouped queries
// over order_by, sample and prefetches, the distance matrix's id order, and the refusal of a
// `pinned` placement Qdrant cannot serve.

import t, { type Test } from 'tap';
import { startServer } from './helpers/server.js';
import { assertError, call, formatErrorMessage, resultOf, stopAtEnd } from './helpers/api-http.js';

const server = await startServer();
stopAtEnd(t, server);

type Payload = Record<string, unknown>;
interface Hit { id: number; score: number; payload?: Payload | null; vector?: unknown; order_value?: number }
interface Group { id: string | number; hits: Hit[]; lookup?: { id: number; payload?: unknown; vector?: unknown } }

let collections = 0;

/** A fresh collection of 2-d Dot vectors over `shards` shards, with `points` upserted. */
async function collection(points: { id: number; vector: number[]; payload?: Payload }[], shards = 2): Promise<string> {
  const name = `fid${++collections}`;
  await call(server.url, 'PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Dot' }, shard_number: shards });
  if (points.length) await call(server.url, 'PUT', `/collections/${name}/points?wait=true`, { points });
  return name;
}

async function payloadOf(t: Test, name: string, id: number): Promise<Payload | null | undefined> {
  const [record] = resultOf<{ payload: Payload | null }[]>(t, await call(server.url, 'POST', `/collections/${name}/points`, { ids: [id], with_payload: true }));
  return record?.payload;
}

async function write(t: Test, name: string, method: string, path: string, body: unknown): Promise<void> {
  resultOf(t, await call(server.url, method, `/collections/${name}/points${path}?wait=true`, body));
}

t.test('set_payload with a key path changes exactly the element it names (Qdrant\'s JsonPath value_set)', async (t) => {
  const start = { a: { b: [{ c: 1, d: 1 }, { c: 2 }] }, tags: ['x', 'y'], n: 5 };
  const name = await collection([{ id: 1, vector: [1, 0], payload: start }]);
  const set = (payload: Payload, key: string) => write(t, name, 'POST', '/payload', { points: [1], payload, key });
  await set({ c: 9 }, 'a.b[0]');
  t.same(await payloadOf(t, name, 1), { a: { b: [{ c: 9, d: 1 }, { c: 2 }] }, tags: ['x', 'y'], n: 5 }, 'a.b[0]: merged into the first element, the array kept');
  await set({ z: 1 }, 'a.b[1].e');
  t.same((await payloadOf(t, name, 1))!.a, { b: [{ c: 9, d: 1 }, { c: 2, e: { z: 1 } }] }, 'a.b[1].e: an object made inside the second element');
  await set({ q: 1 }, 'a.b[5]');
  t.same((await payloadOf(t, name, 1))!.a, { b: [{ c: 9, d: 1 }, { c: 2, e: { z: 1 } }] }, 'an index past the end changes nothing');
  await set({ w: 0 }, 'a.b[]');
  t.same((await payloadOf(t, name, 1))!.a, { b: [{ c: 9, d: 1, w: 0 }, { c: 2, e: { z: 1 }, w: 0 }] }, 'a.b[]: merged into every element');
  await set({ k: 1 }, 'tags[0]');
  t.same((await payloadOf(t, name, 1))!.tags, [{ k: 1 }, 'y'], 'a non-object element becomes the merged object');
  await set({ m: 1 }, 'n.p');
  t.same((await payloadOf(t, name, 1))!.n, { p: { m: 1 } }, 'a scalar on the way becomes an object');

  await write(t, name, 'POST', '/payload/delete', { points: [1], keys: ['a.b[].w', 'a.b[1].e', 'tags[0]'] });
  t.same(await payloadOf(t, name, 1), { a: { b: [{ c: 9, d: 1 }, { c: 2 }] }, tags: [{ k: 1 }, 'y'], n: { p: { m: 1 } } },
    'delete: a.b[].w from every element, a.b[1].e from one; tags[0] removes nothing (Qdrant does not delete by index)');
  await write(t, name, 'POST', '/payload/delete', { points: [1], keys: ['tags[]', 'n'] });
  t.same(await payloadOf(t, name, 1), { a: { b: [{ c: 9, d: 1 }, { c: 2 }] }, tags: [] }, 'a final [] empties the array; a key goes');

  const bad = await call(server.url, 'POST', `/collections/${name}/points/payload?wait=true`, { points: [1], payload: { x: 1 }, key: 'a..b' });
  assertError(t, bad, 400, formatErrorMessage("Invalid json path: 'a..b'"), 'an unparsable key');
  const badDelete = await call(server.url, 'POST', `/collections/${name}/points/payload/delete?wait=true`, { points: [1], keys: ['a[x]'] });
  assertError(t, badDelete, 400, formatErrorMessage("Invalid json path: 'a[x]'"), 'an unparsable key to delete');
  t.same(await payloadOf(t, name, 1), { a: { b: [{ c: 9, d: 1 }, { c: 2 }] }, tags: [] }, 'refused writes changed nothing');
});

t.test('payload selectors walk `[]` paths as Qdrant\'s value_filter does', async (t) => {
  const payload = { a: { b: [{ c: 1, d: 1 }, { c: 2 }, { d: { e: 3 } }] }, f: 3, g: ['g0', 'g1'] };
  const name = await collection([{ id: 1, vector: [1, 0], payload }]);
  const read = async (with_payload: unknown) => {
    const [record] = resultOf<{ payload: Payload }[]>(t, await call(server.url, 'POST', `/collections/${name}/points`, { ids: [1], with_payload }));
    return record.payload;
  };
  t.same(await read({ include: ['a.b[].c'] }), { a: { b: [{ c: 1 }, { c: 2 }, {}] } }, 'include a.b[].c (Qdrant\'s own test case)');
  t.same(await read(['a.b[].c', 'f']), { a: { b: [{ c: 1 }, { c: 2 }, {}] }, f: 3 }, 'a list of paths is an include');
  t.same(await read({ include: ['g[]'] }), { g: ['g0', 'g1'] }, 'g[] keeps the elements');
  t.same(await read({ exclude: ['a.b[].d'] }), { a: { b: [{ c: 1 }, { c: 2 }, {}] }, f: 3, g: ['g0', 'g1'] }, 'exclude a.b[].d from every element');
  t.same(await read({ exclude: ['a.b', 'g'] }), { a: {}, f: 3 }, 'exclude whole subtrees');
  const bad = await call(server.url, 'POST', `/collections/${name}/points`, { ids: [1], with_payload: { include: ['a..b'] } });
  assertError(t, bad, 400, formatErrorMessage('data did not match any variant of untagged enum WithPayloadInterface'), 'an unparsable path');
});

t.test('serde aliases: with_vectors, top, vectors, and with_vector in with_lookup', async (t) => {
  const points = [1, 2, 3, 4].map((id) => ({ id, vector: [id, 1], payload: { g: id % 2 } }));
  const name = await collection(points);
  const base = `/collections/${name}/points`;
  const scrolled = resultOf<{ points: Hit[] }>(t, await call(server.url, 'POST', `${base}/scroll`, { limit: 1, with_vectors: true }));
  t.same(scrolled.points[0].vector, [1, 1], 'scroll: with_vectors');
  const retrieved = resultOf<Hit[]>(t, await call(server.url, 'POST', base, { ids: [2], with_vectors: true }));
  t.same(retrieved[0].vector, [2, 1], 'retrieve: with_vectors');
  const searched = resultOf<Hit[]>(t, await call(server.url, 'POST', `${base}/search`, { vector: [1, 0], top: 2, with_vectors: true }));
  t.same(searched.map((h) => [h.id, h.vector]), [[4, [4, 1]], [3, [3, 1]]], 'search: top is limit, with_vectors');
  const queried = resultOf<{ points: Hit[] }>(t, await call(server.url, 'POST', `${base}/query`, { query: [1, 0], limit: 1, with_vectors: true }));
  t.same(queried.points[0].vector, [4, 1], 'query: with_vectors');
  const recommended = resultOf<Hit[]>(t, await call(server.url, 'POST', `${base}/recommend`, { positive: [4], top: 1, with_vectors: true }));
  t.same(recommended.map((h) => [h.id, h.vector]), [[3, [3, 1]]], 'recommend: top, with_vectors');
  await call(server.url, 'PUT', `${base}?wait=true`, { points: [{ id: 5, vectors: [5, 1] }] });
  t.same(resultOf<Hit[]>(t, await call(server.url, 'POST', base, { ids: [5], with_vector: true }))[0].vector, [5, 1], 'upsert: vectors for vector');

  const owners = await collection([{ id: 0, vector: [0, 1], payload: { name: 'even' } }, { id: 1, vector: [1, 1], payload: { name: 'odd' } }], 1);
  const grouped = resultOf<{ groups: Group[] }>(t, await call(server.url, 'POST', `${base}/query/groups`, {
    query: [1, 0], group_by: 'g', group_size: 1, with_lookup: { collection: owners, with_vector: true, with_payload: false },
  }));
  t.same(grouped.groups.map((g) => [g.id, g.lookup?.vector, g.lookup?.payload]), [[0, [0, 1], null], [1, [1, 1], null]], 'with_lookup: with_vector for with_vectors');

  const both = await call(server.url, 'POST', `${base}/scroll`, { with_vector: true, with_vectors: true });
  assertError(t, both, 400, formatErrorMessage('duplicate field `with_vector`'), 'a field under both names');
  const topAndLimit = await call(server.url, 'POST', `${base}/search`, { vector: [1, 0], top: 1, limit: 1 });
  assertError(t, topAndLimit, 400, formatErrorMessage('duplicate field `limit`'), 'top and limit together');
});

t.test('conditional updates: update_filter and update_mode on upserts, update_filter on update_vectors', async (t) => {
  const name = await collection([
    { id: 1, vector: [1, 0], payload: { v: 1 } },
    { id: 2, vector: [2, 0], payload: { v: 2 } },
  ]);
  const onlyV1 = { must: [{ key: 'v', match: { value: 1 } }] };
  await write(t, name, 'PUT', '', { points: [{ id: 1, vector: [1, 1], payload: { v: 1, new: true } }, { id: 2, vector: [2, 2], payload: { v: 2, new: true } }, { id: 3, vector: [3, 3], payload: { v: 3 } }], update_filter: onlyV1 });
  const records = async () => resultOf<{ id: number; payload: Payload; vector: number[] }[]>(t, await call(server.url, 'POST', `/collections/${name}/points`, { ids: [1, 2, 3, 4], with_vector: true }));
  t.same((await records()).map((r) => [r.id, r.vector, r.payload]), [
    [1, [1, 1], { v: 1, new: true }],
    [2, [2, 0], { v: 2 }],
    [3, [3, 3], { v: 3 }],
  ], 'points list: the matching point replaced, the other kept, the new one inserted');
  await write(t, name, 'PUT', '', { batch: { ids: [2, 4], vectors: [[9, 9], [4, 4]], payloads: [{ v: 2, b: 1 }, { v: 4 }] }, update_filter: { must: [{ key: 'v', match: { value: 7 } }] } });
  t.same((await records()).filter((r) => r.id === 2 || r.id === 4).map((r) => [r.id, r.vector]), [[2, [2, 0]], [4, [4, 4]]], 'batch: no existing point matches, so only the new one is written');

  await write(t, name, 'PUT', '', { points: [{ id: 1, vector: [7, 7] }, { id: 5, vector: [5, 5] }], update_mode: 'insert_only' });
  await write(t, name, 'PUT', '', { points: [{ id: 2, vector: [8, 8] }, { id: 6, vector: [6, 6] }], update_mode: 'update_only' });
  const after = resultOf<{ id: number; vector: number[] }[]>(t, await call(server.url, 'POST', `/collections/${name}/points`, { ids: [1, 2, 5, 6], with_vector: true }));
  t.same(after.map((r) => [r.id, r.vector]), [[1, [1, 1]], [2, [8, 8]], [5, [5, 5]]], 'insert_only adds only new ids, update_only changes only existing ones');

  await write(t, name, 'PUT', '/vectors', { points: [{ id: 1, vector: [0, 1] }, { id: 3, vector: [0, 3] }], update_filter: { must: [{ key: 'v', match: { value: 3 } }] } });
  const vectors = resultOf<{ id: number; vector: number[] }[]>(t, await call(server.url, 'POST', `/collections/${name}/points`, { ids: [1, 3], with_vector: true }));
  t.same(vectors.map((r) => [r.id, r.vector]), [[1, [1, 1]], [3, [0, 3]]], 'update_vectors: only the matching point changes');
  const missing = await call(server.url, 'PUT', `/collections/${name}/points/vectors?wait=true`, { points: [{ id: 99, vector: [1, 1] }], update_filter: onlyV1 });
  assertError(t, missing, 404, 'Not found: No point with id 99 found', 'a point that does not exist is still an error, filter or not');
});

t.test('values_count counts a missing key as 0 values', async (t) => {
  const name = await collection([
    { id: 1, vector: [1, 0], payload: { tags: ['a', 'b', 'c'] } },
    { id: 2, vector: [1, 0], payload: { tags: ['x'] } },
    { id: 3, vector: [1, 0], payload: { title: 'no tags field' } },
    { id: 4, vector: [1, 0], payload: { tags: [] } },
  ]);
  const ids = async (values_count: unknown) => resultOf<{ points: Hit[] }>(t, await call(server.url, 'POST', `/collections/${name}/points/scroll`, { filter: { must: [{ key: 'tags', values_count }] } })).points.map((p) => p.id);
  // Qdrant's answers in qdrant#9586 (fixed by #9607): the missing key is a count of 0.
  t.same(await ids({ lt: 1 }), [3, 4], 'lt 1');
  t.same(await ids({ gte: 0 }), [1, 2, 3, 4], 'gte 0');
  t.same(await ids({ gte: 1 }), [1, 2], 'gte 1');
  await call(server.url, 'PUT', `/collections/${name}/index?wait=true`, { field_name: 'tags', field_schema: 'keyword' });
  t.same(await ids({ lte: 0 }), [3, 4], 'lte 0 with a keyword index on the key');
});

t.test('datetime forms Qdrant parses, in range filters and datetime indexes alike', async (t) => {
  const at = ['2015-03-01 12:30', '2015-03-01', '2015-03-01T12:00:00', '2015-03-01T13:00:00+01:00', '2015-03-01t12:45:00z', '2015-03-01 12:15:00.5+0000'];
  const name = await collection(at.map((v, i) => ({ id: i + 1, vector: [1, 0], payload: { at: v } })));
  const ids = async (range: unknown) => {
    const r = await call(server.url, 'POST', `/collections/${name}/points/scroll`, { filter: { must: [{ key: 'at', range }] } });
    return resultOf<{ points: Hit[] }>(t, r).points.map((p) => p.id);
  };
  // Instants (UTC): 12:30, 00:00, 12:00, 12:00, 12:45, 12:15:00.5.
  const cases: [unknown, number[]][] = [
    [{ gte: '2015-03-01 12:00', lte: '2015-03-01 12:30' }, [1, 3, 4, 6]],
    [{ lt: '2015-03-01' }, []],
    [{ lte: '2015-03-01' }, [2]],
    [{ gt: '2015-03-01T12:15:00Z', lt: '2015-03-01T13:00:00+0100' }, []],
    [{ gt: '2015-03-01T12:15:00Z' }, [1, 5, 6]],
  ];
  for (const [range, expected] of cases) t.same(await ids(range), expected, `no index: ${JSON.stringify(range)}`);
  await call(server.url, 'PUT', `/collections/${name}/index?wait=true`, { field_name: 'at', field_schema: 'datetime' });
  for (const [range, expected] of cases) t.same(await ids(range), expected, `datetime index: ${JSON.stringify(range)}`);
  const refused = await call(server.url, 'POST', `/collections/${name}/points/scroll`, { filter: { must: [{ key: 'at', range: { gte: '2015-03-01T12:30' } }] } });
  t.equal(refused.status, 400, 'YYYY-MM-DDTHH:MM is not among Qdrant\'s forms (only with a space)');
});

t.test('order_by lists a point once per distinct value, in scroll and in the query API', async (t) => {
  const name = await collection([
    { id: 1, vector: [1, 0], payload: { n: [1, 5] } },
    { id: 2, vector: [1, 0], payload: { n: [2, 2] } },
    { id: 3, vector: [1, 0], payload: { n: 3 } },
    { id: 4, vector: [1, 0], payload: { m: 0 } },
  ]);
  await call(server.url, 'PUT', `/collections/${name}/index?wait=true`, { field_name: 'n', field_schema: 'integer' });
  const pairs = (hits: Hit[]) => hits.map((h) => [h.id, h.order_value]);
  const scrolled = resultOf<{ points: Hit[] }>(t, await call(server.url, 'POST', `/collections/${name}/points/scroll`, { order_by: 'n', with_payload: false }));
  t.same(pairs(scrolled.points), [[1, 1], [2, 2], [3, 3], [1, 5]], 'scroll asc: point 1 at 1 and at 5, point 2 once at 2');
  const desc = resultOf<{ points: Hit[] }>(t, await call(server.url, 'POST', `/collections/${name}/points/scroll`, { order_by: { key: 'n', direction: 'desc' }, limit: 3 }));
  t.same(pairs(desc.points), [[1, 5], [3, 3], [2, 2]], 'scroll desc, limited');
  const queried = resultOf<{ points: Hit[] }>(t, await call(server.url, 'POST', `/collections/${name}/points/query`, { query: { order_by: 'n' } }));
  t.same(pairs(queried.points), [[1, 1], [2, 2], [3, 3], [1, 5]], 'query order_by');
  t.ok(queried.points.every((h) => h.score === 1), 'query order_by hits score 1');
});

/** Dot products of 2-d vectors. */
const dot = (a: number[], b: number[]) => a[0] * b[0] + a[1] * b[1];

t.test('query groups over order_by, sample and prefetches', async (t) => {
  const points = Array.from({ length: 24 }, (_, i) => ({ id: i + 1, vector: [Math.fround(Math.cos(i)), Math.fround(Math.sin(i))], payload: { g: i % 4, n: (i * 7) % 24 } }));
  const name = await collection(points, 3);
  await call(server.url, 'PUT', `/collections/${name}/index?wait=true`, { field_name: 'n', field_schema: 'integer' });
  const groups = async (body: unknown) => resultOf<{ groups: Group[] }>(t, await call(server.url, 'POST', `/collections/${name}/points/query/groups`, body)).groups;
  const shape = (gs: Group[]) => gs.map((g) => [g.id, g.hits.map((h) => h.id)]);

  /** Groups in order of their first hit, each holding its first `size` hits, `limit` groups. */
  const reference = (ranked: number[], size: number, limit: number) => {
    const out = new Map<number, number[]>();
    for (const id of ranked) {
      const g = points[id - 1].payload.g;
      const members = out.get(g) ?? (out.size < limit ? [] : undefined);
      if (!members) continue;
      if (members.length < size) members.push(id);
      out.set(g, members);
    }
    return [...out];
  };

  const byN = [...points].sort((a, b) => a.payload.n - b.payload.n).map((p) => p.id);
  const ordered = await groups({ query: { order_by: 'n' }, group_by: 'g', group_size: 2, limit: 3 });
  t.same(shape(ordered), reference(byN, 2, 3), 'order_by: groups filled in order of n');
  t.ok(ordered.every((g) => g.hits.every((h) => h.order_value === points[h.id - 1].payload.n)), 'order_by hits carry their order_value');

  const sampled = await groups({ query: { sample: 'random' }, group_by: 'g', group_size: 3, limit: 4, with_payload: true });
  t.equal(sampled.length, 4, 'sample: every group found');
  t.ok(sampled.every((g) => g.hits.length === 3 && g.hits.every((h) => h.payload?.g === g.id)), 'sample: three points of its own group in each');
  t.equal(new Set(sampled.flatMap((g) => g.hits.map((h) => h.id))).size, 12, 'sample: distinct points');

  const q = [1, 0.3];
  const rescored = await groups({ prefetch: { query: [0, 1], limit: 5 }, query: q, group_by: 'g', group_size: 2, limit: 4 });
  // Qdrant widens each prefetch by the number of groups asked: 5 x 4 = 20 candidates.
  const candidates = [...points].sort((a, b) => dot(b.vector, [0, 1]) - dot(a.vector, [0, 1]) || a.id - b.id).slice(0, 20).map((p) => p.id);
  const ranked = [...candidates].sort((a, b) => dot(points[b - 1].vector, q) - dot(points[a - 1].vector, q) || a - b);
  t.same(shape(rescored), reference(ranked, 2, 4), 'prefetch: the query ranks the widened prefetch\'s candidates');
  const fused = await groups({ prefetch: [{ query: [0, 1], limit: 1 }, { query: [1, 0], limit: 1 }], query: { fusion: 'rrf' }, group_by: 'g', group_size: 3, limit: 4 });
  t.equal(fused.flatMap((g) => g.hits).length, 8, 'fusion: the widened prefetches bring 4 candidates each');
});

t.test('distance matrix: the sample listed by id; no matrix under two points', async (t) => {
  const name = await collection(Array.from({ length: 30 }, (_, i) => ({ id: 100 - i, vector: [Math.cos(i), Math.sin(i)], payload: { k: i % 2 } })), 3);
  const offsets = resultOf<{ ids: number[]; offsets_row: number[] }>(t, await call(server.url, 'POST', `/collections/${name}/points/search/matrix/offsets`, { sample: 8, limit: 2 }));
  t.equal(offsets.ids.length, 8, 'eight sampled');
  t.same(offsets.ids, [...offsets.ids].sort((a, b) => a - b), 'ids ascending, as Qdrant sorts the sample');
  const pairs = resultOf<{ pairs: { a: number }[] }>(t, await call(server.url, 'POST', `/collections/${name}/points/search/matrix/pairs`, { sample: 8, limit: 2 }));
  const rows = pairs.pairs.map((p) => p.a);
  t.same(rows, [...rows].sort((a, b) => a - b), 'pairs come by sampled id');
  const one = { filter: { must: [{ has_id: [100] }] }, sample: 5, limit: 2 };
  t.same(resultOf(t, await call(server.url, 'POST', `/collections/${name}/points/search/matrix/pairs`, one)), { pairs: [] }, 'one point: no pairs');
  t.same(resultOf(t, await call(server.url, 'POST', `/collections/${name}/points/search/matrix/offsets`, one)), { offsets_row: [], offsets_col: [], scores: [], ids: [] }, 'one point: empty offsets');
});

t.test('a pinned placement Qdrant cannot serve is refused with its validation error', async (t) => {
  const create = (body: unknown) => call(server.url, 'PUT', `/collections/pinned${++collections}`, body);
  assertError(t, await create({ vectors: { size: 2, distance: 'Dot', memory: 'pinned' } }), 422,
    'Validation error in JSON body: [vectors.memory: `pinned` memory placement is not supported for dense vector storage]', 'dense vectors');
  assertError(t, await create({ vectors: { size: 2, distance: 'Dot' }, payload: { memory: 'pinned' } }), 422,
    'Validation error in JSON body: [payload.memory: `pinned` memory placement is not supported for payload storage]', 'payload storage');
  assertError(t, await create({ vectors: { size: 2, distance: 'Dot' }, payload: { memory: 'warm' } }), 400,
    formatErrorMessage('unknown variant `warm`, expected one of `cold`, `cached`, `pinned`'), 'an unknown placement is a format error');
  const hnsw = await create({ vectors: { size: 2, distance: 'Dot', hnsw_config: { memory: 'pinned' }, quantization_config: { scalar: { type: 'int8', memory: 'pinned' } } } });
  t.equal(hnsw.status, 200, 'graphs and quantized vectors may be pinned');
  const name = await collection([]);
  assertError(t, await call(server.url, 'PATCH', `/collections/${name}`, { vectors: { '': { memory: 'pinned' } } }), 422,
    'Validation error in JSON body: [vectors.?.memory: `pinned` memory placement is not supported for dense vector storage]', 'update of a dense vector');
});

t.test('a recommend example whose point lacks the vector is left out; other queries refuse it (Qdrant\'s query API)', async (t) => {
  const name = `fid${++collections}`;
  await call(server.url, 'PUT', `/collections/${name}`, { vectors: { a: { size: 2, distance: 'Dot' }, b: { size: 2, distance: 'Dot' } }, shard_number: 2 });
  const points = [
    { id: 1, vector: { a: [1, 0], b: [0, 1] } },
    { id: 2, vector: { b: [1, 1] } },
    ...[3, 4, 5, 6].map((id) => ({ id, vector: { a: [id / 10, 1 - id / 10] } })),
  ];
  resultOf(t, await call(server.url, 'PUT', `/collections/${name}/points?wait=true`, { points }));
  const query = async (body: unknown): Promise<Hit[]> => resultOf<{ points: Hit[] }>(t, await call(server.url, 'POST', `/collections/${name}/points/query`, body)).points;
  for (const strategy of ['average_vector', 'best_score', 'sum_scores']) {
    const withMissing = await query({ query: { recommend: { positive: [1, 2], negative: [2], strategy } }, using: 'a', limit: 10 });
    const without = await query({ query: { recommend: { positive: [1], strategy } }, using: 'a', limit: 10 });
    t.same(withMissing, without.filter((h) => h.id !== 2), `${strategy}: point 2 (no vector a) counts as no example, and is not a result`);
  }
  const refused = (await call(server.url, 'POST', `/collections/${name}/points/query`, { query: { recommend: { positive: [2] } }, using: 'a' }));
  assertError(t, refused, 400, 'Wrong input: Validation failed: Positive vectors should not be empty with `average` strategy', 'only examples without the vector: no positive left to average');
  for (const body of [{ query: 2, using: 'a' }, { query: { discover: { target: 2, context: [{ positive: 1, negative: 3 }] } }, using: 'a' }, { query: { context: [{ positive: 2, negative: 3 }] }, using: 'a' }]) {
    assertError(t, await call(server.url, 'POST', `/collections/${name}/points/query`, body), 404, 'Not found: Vector with name "a" for point not found', JSON.stringify(body.query));
  }
});
