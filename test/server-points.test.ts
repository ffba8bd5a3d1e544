// Points through the real server, as a user of @qdrant/js-client-rest sees them (raw HTTP where
// the client hides something): both upsert forms, id forms, named and unnamed vectors, reads
// with every selector, every update kind alone and in a batch, scroll paging and ordering,
// count, write acknowledgements, and payload indexes (schema report, same results as a scan).

import t, { type Test } from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { startServer } from './helpers/server.js';
import { assertError, call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { close, compareIds, normalised, uniqueName, uuidOf, vectorOf, type Id } from './helpers/api-data.js';
import { rng } from './helpers/data.js';

const server = await startServer({ workers: 2 });
stopAtEnd(t, server);
const client = new QdrantClient({ url: server.url, checkCompatibility: false });

type Payload = Record<string, unknown>;
type Point = { id: Id; payload?: Payload | null; vector?: unknown };

function sortedIds(points: { id: Id }[]): Id[] {
  return points.map((p) => p.id).sort(compareIds);
}

function byId<T extends { id: Id }>(points: T[]): Map<Id, T> {
  return new Map(points.map((p) => [p.id, p]));
}

/** A collection with named vectors: `a` (Cosine, 3-d) and `b` (Euclid, 2-d). */
async function namedCollection(shards = 2): Promise<string> {
  const name = uniqueName('named');
  await client.createCollection(name, { vectors: { a: { size: 3, distance: 'Cosine' }, b: { size: 2, distance: 'Euclid' } }, shard_number: shards });
  return name;
}

t.test('upsert as a list and as columns, numeric and UUID ids, Cosine normalised', async (t) => {
  const name = await namedCollection();
  const uuid = uuidOf(1);
  const hex = uuid.replaceAll('-', '');
  // Textual forms of a UUID Qdrant accepts; each names the canonical (lowercase, hyphenated) id.
  const forms = [uuid.toUpperCase(), hex, `{${uuidOf(2)}}`, `urn:uuid:${uuidOf(3)}`];
  const canonical = [uuid, uuid, uuidOf(2), uuidOf(3)];
  const listed = [1, 2, forms[1], forms[2], forms[3]];
  await client.upsert(name, {
    wait: true,
    points: listed.map((id, i) => ({ id, vector: { a: vectorOf(i + 1, 3), b: vectorOf(i + 1, 2) }, payload: { i } })),
  });
  const columnIds = [10, 11, forms[0]];
  await client.upsert(name, {
    wait: true,
    batch: {
      ids: columnIds,
      vectors: { a: columnIds.map((_, j) => vectorOf(20 + j, 3)), b: columnIds.map((_, j) => vectorOf(20 + j, 2)) },
      payloads: columnIds.map((_, j) => ({ j })),
    },
  });

  // The first UUID was written twice (bare hex, then uppercase): the batch upsert replaced it.
  const expected = new Map<Id, { a: number[]; b: number[]; payload: Payload }>([
    [1, { a: vectorOf(1, 3), b: vectorOf(1, 2), payload: { i: 0 } }],
    [2, { a: vectorOf(2, 3), b: vectorOf(2, 2), payload: { i: 1 } }],
    [canonical[2], { a: vectorOf(4, 3), b: vectorOf(4, 2), payload: { i: 3 } }],
    [canonical[3], { a: vectorOf(5, 3), b: vectorOf(5, 2), payload: { i: 4 } }],
    [10, { a: vectorOf(20, 3), b: vectorOf(20, 2), payload: { j: 0 } }],
    [11, { a: vectorOf(21, 3), b: vectorOf(21, 2), payload: { j: 1 } }],
    [uuid, { a: vectorOf(22, 3), b: vectorOf(22, 2), payload: { j: 2 } }],
  ]);
  const all = (await client.scroll(name, { limit: 100, with_payload: true, with_vector: true })).points;
  t.same(all.map((p) => p.id), [...expected.keys()].sort(compareIds), 'ids are canonical, each once, in Qdrant order');
  for (const point of all) {
    const want = expected.get(point.id)!;
    const vector = point.vector as Record<string, number[]>;
    t.ok(close(vector.a, normalised(want.a)), `${point.id}: Cosine vector a is stored normalised`);
    t.ok(close(vector.b, want.b), `${point.id}: Euclid vector b is stored as given`);
    t.same(point.payload, want.payload, `${point.id}: payload`);
  }
  t.equal((await client.count(name)).count, expected.size);

  // Any textual form of a UUID finds the point.
  const found = await client.retrieve(name, { ids: [hex.toUpperCase(), `urn:uuid:${uuid}`], with_payload: false });
  t.same(found.map((p) => p.id), [uuid], 'two forms of one id give one point');
});

t.test('an unnamed vector is written and read as a plain array', async (t) => {
  const name = uniqueName('plain');
  await client.createCollection(name, { vectors: { size: 4, distance: 'Cosine' } });
  await client.upsert(name, { wait: true, points: [{ id: 1, vector: vectorOf(1, 4), payload: { x: 1 } }] });
  await client.upsert(name, { wait: true, batch: { ids: [2, 3], vectors: [vectorOf(2, 4), vectorOf(3, 4)] } });
  const one = resultOf<Point>(t, await call(server.url, 'GET', `/collections/${name}/points/1`));
  t.same(one.payload, { x: 1 }, 'GET returns the payload');
  t.ok(close(one.vector as number[], normalised(vectorOf(1, 4))), 'GET returns the vector, normalised');
  const points = await client.retrieve(name, { ids: [2, 3], with_vector: true });
  t.same(sortedIds(points), [2, 3]);
  for (const p of points) {
    t.ok(Array.isArray(p.vector), `${p.id}: unnamed vector is an array`);
    t.ok(close(p.vector as number[], normalised(vectorOf(p.id as number, 4))), `${p.id}: normalised`);
    t.same(p.payload, {}, `${p.id}: a point written without payload has an empty one`);
  }
  const uuid = uuidOf(9);
  await client.upsert(name, { wait: true, points: [{ id: uuid, vector: vectorOf(9, 4) }] });
  const byUpper = resultOf<Point>(t, await call(server.url, 'GET', `/collections/${name}/points/${uuid.toUpperCase()}`));
  t.equal(byUpper.id, uuid, 'GET by an uppercase UUID returns the canonical id');
});

t.test('vector components and scores come back in the short form of their f32, as Qdrant prints them', async (t) => {
  const name = uniqueName('f32');
  await client.createCollection(name, { vectors: { size: 3, distance: 'Dot' }, sparse_vectors: { s: {} } });
  await client.upsert(name, { wait: true, points: [{ id: 1, vector: { '': [0.15, 0.1, -0.7], s: { indices: [4], values: [0.3] } } }] });
  const [point] = await client.retrieve(name, { ids: [1], with_vector: true });
  t.same(point.vector, { '': [0.15, 0.1, -0.7], s: { indices: [4], values: [0.3] } }, '0.15, not 0.15000000596046448');
  const { points } = await client.query(name, { query: [1, 0, 0], limit: 1 });
  t.equal(points[0].score, 0.15, 'the score too');
  const sparse = await client.query(name, { query: { indices: [4], values: [0.1] }, using: 's', limit: 1 });
  t.equal(sparse.points[0].score, 0.030000001, 'the f32 product of 0.3 and 0.1 is 0.030000001 (Qdrant prints the same)');
});

t.test('retrieve with every payload and vector selector', async (t) => {
  const name = await namedCollection();
  const payload = { city: 'Oslo', meta: { a: 1, b: 2 }, tags: ['x', 'y'] };
  await client.upsert(name, { wait: true, points: [{ id: 7, vector: { a: [1, 2, 2], b: [3, 4] }, payload }, { id: 8, vector: { a: [0, 0, 1] }, payload: { city: 'Rome' } }] });
  const get = async (body: object): Promise<Point[]> => resultOf<Point[]>(t, await call(server.url, 'POST', `/collections/${name}/points`, { ids: [7], ...body }));

  const [defaults] = await get({});
  t.strictSame(defaults, { id: 7, payload }, 'default: whole payload, no vector (left out, as Qdrant does)');
  t.notOk('payload' in (await get({ with_payload: false }))[0], 'with_payload false: no payload field');
  t.same((await get({ with_payload: true }))[0].payload, payload, 'with_payload true');
  t.same((await get({ with_payload: ['city', 'meta.a'] }))[0].payload, { city: 'Oslo', meta: { a: 1 } }, 'with_payload as a list of keys');
  t.same((await get({ with_payload: { include: ['tags'] } }))[0].payload, { tags: ['x', 'y'] }, 'include');
  t.same((await get({ with_payload: { exclude: ['meta.b', 'tags'] } }))[0].payload, { city: 'Oslo', meta: { a: 1 } }, 'exclude');

  const a = normalised([1, 2, 2]);
  const all = (await get({ with_vector: true }))[0].vector as Record<string, number[]>;
  t.same(Object.keys(all).sort(), ['a', 'b'], 'with_vector true: every vector');
  t.ok(close(all.a, a) && close(all.b, [3, 4]), 'values');
  t.notOk('vector' in (await get({ with_vector: false }))[0], 'with_vector false: no vector field');
  const vectorB = (await get({ with_vector: ['b'] }))[0].vector as Record<string, number[]>;
  t.same(Object.keys(vectorB), ['b'], 'with_vector by name');
  t.ok(close(vectorB.b, [3, 4]));

  // Point 8 has no vector b: it is absent, not null.
  const eight = await client.retrieve(name, { ids: [8, 999], with_vector: true });
  t.same(eight.map((p) => p.id), [8], 'a missing id is left out');
  t.same(Object.keys(eight[0].vector as object), ['a']);
});

t.test('delete by ids and by filter', async (t) => {
  const name = await namedCollection(3);
  const ids = Array.from({ length: 40 }, (_, i) => i + 1);
  await client.upsert(name, { wait: true, points: ids.map((id) => ({ id, vector: { a: vectorOf(id, 3) }, payload: { parity: id % 2 === 0 ? 'even' : 'odd', id } })) });
  const r = await client.delete(name, { wait: true, points: [1, 2, 3, 1000] });
  t.equal(r.status, 'completed', 'deleting also a missing id succeeds');
  await client.delete(name, { wait: true, filter: { must: [{ key: 'parity', match: { value: 'even' } }] } });
  const left = (await client.scroll(name, { limit: 100, with_payload: false })).points.map((p) => p.id);
  t.same(left, ids.filter((id) => id > 3 && id % 2 === 1), 'odd ids above 3 are left');
  t.equal((await client.count(name)).count, left.length);
});

t.test('update and delete named vectors, others intact', async (t) => {
  const name = await namedCollection();
  await client.upsert(name, { wait: true, points: [{ id: 1, vector: { a: [1, 0, 0], b: [1, 1] }, payload: { p: 1 } }, { id: 2, vector: { a: [0, 1, 0], b: [2, 2] } }] });
  await client.updateVectors(name, { wait: true, points: [{ id: 1, vector: { b: [5, 6] } }, { id: 2, vector: { a: [0, 0, 3] } }] });
  let [one, two] = await client.retrieve(name, { ids: [1, 2], with_vector: true, with_payload: true }).then((ps) => ps.sort((x, y) => compareIds(x.id, y.id)));
  t.same(one.vector, { a: [1, 0, 0], b: [5, 6] }, 'b replaced, a intact');
  t.same(one.payload, { p: 1 }, 'payload intact');
  t.same(two.vector, { a: [0, 0, 1], b: [2, 2] }, 'a replaced (normalised), b intact');

  await client.deleteVectors(name, { wait: true, points: [1], vector: ['a'] });
  await client.deleteVectors(name, { wait: true, filter: { must: [{ has_id: [2] }] }, vector: ['b'] });
  [one, two] = await client.retrieve(name, { ids: [1, 2], with_vector: true }).then((ps) => ps.sort((x, y) => compareIds(x.id, y.id)));
  t.same(one.vector, { b: [5, 6] }, 'point 1 keeps b');
  t.same(two.vector, { a: [0, 0, 1] }, 'point 2 keeps a');
  t.equal((await client.count(name)).count, 2, 'points without some vectors still exist');
  t.equal((await client.getCollection(name)).indexed_vectors_count, 0, 'below indexing_threshold no vector is indexed');
});

t.test('set, overwrite, delete and clear payload', async (t) => {
  const name = await namedCollection();
  const base = { a: 1, nested: { x: 1, deep: { y: 2, z: 3 } }, list: [1, 2] };
  await client.upsert(name, { wait: true, points: [1, 2, 3].map((id) => ({ id, vector: { b: [id, id] }, payload: structuredClone(base) })) });
  const payloadOf = async (id: number) => (await client.retrieve(name, { ids: [id] }))[0].payload;

  await client.setPayload(name, { wait: true, points: [1], payload: { a: 10, b: 'new' } });
  t.same(await payloadOf(1), { ...base, a: 10, b: 'new' }, 'set merges top-level keys');
  await client.setPayload(name, { wait: true, points: [2], payload: { w: 4 }, key: 'nested.deep' });
  t.same(await payloadOf(2), { ...base, nested: { x: 1, deep: { y: 2, z: 3, w: 4 } } }, 'set with key merges at the nested path');
  await client.setPayload(name, { wait: true, filter: { must: [{ key: 'a', match: { value: 1 } }] }, payload: { by_filter: true } });
  t.same(await payloadOf(3), { ...base, by_filter: true }, 'set by filter');
  t.equal((await payloadOf(2))!.by_filter, true, 'point 2 matched the filter too');
  t.notOk((await payloadOf(1))!.by_filter, 'point 1 did not match the filter');

  await client.overwritePayload(name, { wait: true, points: [1], payload: { only: true } });
  t.same(await payloadOf(1), { only: true }, 'overwrite replaces the whole payload');

  await client.deletePayload(name, { wait: true, points: [2], keys: ['a', 'nested.deep.y'] });
  t.same(await payloadOf(2), { nested: { x: 1, deep: { z: 3, w: 4 } }, list: [1, 2], by_filter: true }, 'delete top-level and nested keys');

  await client.clearPayload(name, { wait: true, points: [3] });
  t.same(await payloadOf(3), {}, 'clear');
  t.same(await payloadOf(1), { only: true }, 'other points untouched');
});

t.test('payload keys and vector names such as __proto__ and toString are plain names (found by the fuzz test)', async (t) => {
  const name = await namedCollection();
  const path = `/collections/${name}/points`;
  // Sent as text: an object literal would not hold "__proto__" as a field.
  resultOf(t, await call(server.url, 'PUT', `${path}?wait=true`, '{"points":[{"id":1,"vector":{"b":[1,1]},"payload":{"__proto__":{"x":1},"toString":5,"a":1}}]}'));
  // The answers are compared as text for the same reason.
  const payloadText = async (selector: unknown) => {
    const [record] = resultOf<{ payload: unknown }[]>(t, await call(server.url, 'POST', path, { ids: [1], with_payload: selector }));
    return JSON.stringify(record.payload);
  };
  t.equal(await payloadText({ include: ['toString', '__proto__.x', 'hasOwnProperty', 'constructor.name'] }), '{"__proto__":{"x":1},"toString":5}', 'include reads own fields only (in the payload\'s order: Qdrant filters the payload)');
  t.equal(await payloadText({ exclude: ['__proto__', 'valueOf'] }), '{"toString":5,"a":1}', 'exclude');
  const [vectors] = resultOf<{ vector: unknown }[]>(t, await call(server.url, 'POST', path, { ids: [1], with_vector: ['toString', 'b'] }));
  t.same(vectors.vector, { b: [1, 1] }, 'with_vector names no vector of Object\'s');

  resultOf(t, await call(server.url, 'POST', `${path}/payload?wait=true`, '{"points":[1],"key":"__proto__","payload":{"y":2,"__proto__":{"z":3}}}'));
  t.equal(await payloadText(true), '{"__proto__":{"x":1,"y":2,"__proto__":{"z":3}},"toString":5,"a":1}', 'set_payload with key __proto__ writes into that field');
  resultOf(t, await call(server.url, 'POST', `${path}/payload?wait=true`, { points: [1], key: 'constructor', payload: { c: 1 } }));
  resultOf(t, await call(server.url, 'POST', `${path}/payload/delete?wait=true`, { points: [1], keys: ['__proto__.x', 'toString', 'hasOwnProperty'] }));
  t.equal(await payloadText(true), '{"__proto__":{"y":2,"__proto__":{"z":3}},"a":1,"constructor":{"c":1}}', 'delete_payload and a set under "constructor"');

  assertError(t, await call(server.url, 'PUT', path, '{"points":[{"id":2,"vector":{"__proto__":[1,1]}}]}'), 400, 'Wrong input: Not existing vector name error: __proto__', 'a vector named __proto__ is a name');
  assertError(t, await call(server.url, 'PUT', path, '{"batch":{"ids":[2],"vectors":{"__proto__":[[1,1]]}}}'), 400, 'Wrong input: Not existing vector name error: __proto__', 'in a batch too');
  const odd = uniqueName('odd_names');
  resultOf(t, await call(server.url, 'PUT', `/collections/${odd}`, { vectors: { toString: { size: 2, distance: 'Dot' }, b: { size: 2, distance: 'Dot' } } }));
  resultOf(t, await call(server.url, 'PUT', `/collections/${odd}/points?wait=true`, { points: [{ id: 1, vector: { b: [1, 0] } }, { id: 2, vector: { toString: [0, 1], b: [0, 1] } }] }));
  const [first] = resultOf<{ vector: unknown }[]>(t, await call(server.url, 'POST', `/collections/${odd}/points`, { ids: [1], with_vector: true }));
  t.same(first.vector, { b: [1, 0] }, 'a point without the vector named toString has none');
  const hits = resultOf<{ id: number }[]>(t, await call(server.url, 'POST', `/collections/${odd}/points/search`, { vector: { name: 'toString', vector: [0, 1] }, limit: 5 }));
  t.same(hits.map((h) => h.id), [2], 'a search of that vector finds only the point that has it');
});

t.test('a batch applies every kind of operation in order', async (t) => {
  const name = await namedCollection(2);
  const results = await client.batchUpdate(name, {
    wait: true,
    operations: [
      { upsert: { points: [100, 101, 102].map((id) => ({ id, vector: { a: vectorOf(id, 3), b: [1, 1] }, payload: { stage: 1, keep: true } })) } },
      { set_payload: { points: [100], payload: { stage: 2 } } },
      { update_vectors: { points: [{ id: 100, vector: { b: [9, 9] } }] } },
      { delete_vectors: { points: [101], vector: ['b'] } },
      { overwrite_payload: { points: [101], payload: { fresh: 1 } } },
      { delete_payload: { points: [100], keys: ['keep'] } },
      // These two select by a payload an earlier operation of this batch wrote.
      { set_payload: { filter: { must: [{ key: 'stage', match: { value: 2 } }] }, payload: { seen: true } } },
      { delete: { filter: { must: [{ key: 'fresh', match: { value: 1 } }] } } },
      { clear_payload: { points: [102] } },
    ],
  });
  t.equal(results.length, 9, 'one result per operation');
  t.ok(results.every((r) => r.status === 'completed'), 'all completed');
  const opIds = results.map((r) => r.operation_id!);
  t.same(opIds, opIds.map((_, i) => opIds[0] + i), 'sequential operation ids');

  const points = byId(await client.retrieve(name, { ids: [100, 101, 102], with_vector: true, with_payload: true }));
  t.notOk(points.has(101), '101 deleted by a filter on the payload overwritten earlier in the batch');
  t.same(points.get(100)?.payload, { stage: 2, seen: true });
  const v100 = points.get(100)?.vector as Record<string, number[]>;
  t.ok(close(v100.a, normalised(vectorOf(100, 3))) && close(v100.b, [9, 9]), 'vectors of 100');
  t.same(points.get(102)?.payload, {}, 'payload of 102 cleared');
});

t.test('scroll: id order, paging, limit, filter, order_by', async (t) => {
  const name = uniqueName('scroll');
  await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' }, shard_number: 3 });
  const next = rng(5);
  const numeric = Array.from({ length: 45 }, (_, i) => i * 37 + Math.floor(next() * 30));
  const uuids = Array.from({ length: 12 }, (_, i) => uuidOf(100 + i));
  const ids: Id[] = [...numeric, ...uuids];
  // rank: a permutation, so order_by has no ties; group: for filters.
  const ranks = ids.map((_, i) => (i * 17) % ids.length);
  await client.upsert(name, { wait: true, points: ids.map((id, i) => ({ id, vector: [1, i], payload: { rank: ranks[i], group: i % 4 } })) });
  const expectedOrder = [...ids].sort(compareIds);
  t.ok(typeof expectedOrder[numeric.length - 1] === 'number' && typeof expectedOrder[numeric.length] === 'string', 'numbers sort before UUIDs');

  const first = resultOf<{ points: Point[]; next_page_offset: Id | null }>(t, await call(server.url, 'POST', `/collections/${name}/points/scroll`, {}));
  t.same(first.points.map((p) => p.id), expectedOrder.slice(0, 10), 'default: first 10 by id');
  t.equal(first.next_page_offset, expectedOrder[10]);
  t.same(first.points[0].payload, { rank: ranks[ids.indexOf(expectedOrder[0])], group: ids.indexOf(expectedOrder[0]) % 4 }, 'payload by default');
  t.notOk('vector' in first.points[0], 'no vector by default');

  const paged: Id[] = [];
  let offset: Id | null | undefined;
  let pages = 0;
  do {
    const page = await client.scroll(name, { limit: 7, offset: offset ?? undefined, with_payload: false });
    t.ok(page.points.length <= 7, 'page within limit');
    paged.push(...page.points.map((p) => p.id));
    offset = page.next_page_offset as Id | null;
    pages++;
  } while (offset !== null && offset !== undefined && pages < 20);
  t.same(paged, expectedOrder, 'pages of 7 cover every point once, in order, then next_page_offset is null');
  const gap = numeric.find((id) => !ids.includes(id + 1))! + 1;
  const fromGap = await client.scroll(name, { offset: gap, limit: 1, with_payload: false });
  t.same(fromGap.points.map((p) => p.id), [expectedOrder.find((id) => compareIds(id, gap) > 0)], 'an offset that is not an id starts at the next id');
  t.equal(pages, Math.ceil(ids.length / 7));

  const group2 = ids.filter((_, i) => i % 4 === 2).sort(compareIds);
  const filtered = await client.scroll(name, { filter: { must: [{ key: 'group', match: { value: 2 } }] }, limit: 5, with_payload: false });
  t.same(filtered.points.map((p) => p.id), group2.slice(0, 5), 'filter and limit');
  t.equal(filtered.next_page_offset, group2[5]);
  const rest = await client.scroll(name, { filter: { must: [{ key: 'group', match: { value: 2 } }] }, limit: 100, offset: group2[5], with_payload: false });
  t.same(rest.points.map((p) => p.id), group2.slice(5), 'offset continues the filtered scroll');
  t.equal(rest.next_page_offset, null);

  await client.createPayloadIndex(name, { field_name: 'rank', field_schema: 'integer', wait: true });
  const byRank = ids.map((id, i) => ({ id, rank: ranks[i] })).sort((x, y) => x.rank - y.rank);
  const asc = await client.scroll(name, { order_by: { key: 'rank' }, limit: 15, with_payload: false });
  t.same(asc.points.map((p) => [p.id, p.order_value]), byRank.slice(0, 15).map((p) => [p.id, p.rank]), 'order_by asc with order_value');
  t.equal(asc.next_page_offset, null, 'no next_page_offset with order_by');
  const desc = await client.scroll(name, { order_by: { key: 'rank', direction: 'desc', start_from: 30 }, limit: 10, with_payload: false });
  const wantDesc = byRank.filter((p) => p.rank <= 30).reverse().slice(0, 10);
  t.same(desc.points.map((p) => [p.id, p.order_value]), wantDesc.map((p) => [p.id, p.rank]), 'desc from 30');
  const from = await client.scroll(name, { order_by: { key: 'rank', start_from: 50 }, limit: 100, with_payload: false });
  t.same(from.points.map((p) => p.order_value), byRank.filter((p) => p.rank >= 50).map((p) => p.rank), 'asc from 50');
  const keyOnly = resultOf<{ points: Point[] }>(t, await call(server.url, 'POST', `/collections/${name}/points/scroll`, { order_by: 'rank', limit: 3, filter: { must: [{ key: 'group', match: { value: 1 } }] } }));
  t.same(keyOnly.points.map((p) => p.id), byRank.filter((p) => ids.indexOf(p.id) % 4 === 1).slice(0, 3).map((p) => p.id), 'order_by as a bare key, with a filter');
});

t.test('count: exact and approximate, with filters', async (t) => {
  const name = uniqueName('count');
  await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' }, shard_number: 2 });
  const n = 57;
  await client.upsert(name, { wait: true, points: Array.from({ length: n }, (_, i) => ({ id: i, vector: [i, 1], payload: { color: ['red', 'green', 'blue'][i % 3], size: i } })) });
  t.equal((await client.count(name)).count, n, 'exact by default');
  t.equal((await client.count(name, { exact: false })).count, n, 'approximate count of the whole collection is the point count');
  const red = { must: [{ key: 'color', match: { value: 'red' } }] };
  t.equal((await client.count(name, { filter: red, exact: true })).count, Math.ceil(n / 3));
  const range = { must: [{ key: 'size', range: { gte: 10, lt: 20 } }], must_not: [{ key: 'color', match: { value: 'blue' } }] };
  const expected = Array.from({ length: n }, (_, i) => i).filter((i) => i >= 10 && i < 20 && i % 3 !== 2).length;
  t.equal((await client.count(name, { filter: range })).count, expected, 'range and must_not');
  await client.createPayloadIndex(name, { field_name: 'color', field_schema: 'keyword', wait: true });
  // One indexed match condition: Qdrant's estimate comes from the index and is exact.
  t.equal((await client.count(name, { filter: red, exact: false })).count, Math.ceil(n / 3), 'approximate count on one indexed match');
  const raw = resultOf<{ count: number }>(t, await call(server.url, 'POST', `/collections/${name}/points/count`, {}));
  t.same(raw, { count: n }, 'an empty body counts everything');
});

t.test('write acknowledgements: completed with sequential ids, or acknowledged', async (t) => {
  const name = uniqueName('acks');
  await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' }, shard_number: 1 });
  const results = [];
  results.push(await client.upsert(name, { wait: true, points: [{ id: 1, vector: [1, 2] }] }));
  results.push(await client.setPayload(name, { wait: true, points: [1], payload: { a: 1 } }));
  results.push(await client.delete(name, { wait: true, points: [1] }));
  t.same(results.map((r) => r.status), ['completed', 'completed', 'completed']);
  const first = results[0].operation_id!;
  t.type(first, 'number');
  t.same(results.map((r) => r.operation_id), [first, first + 1, first + 2], 'each write takes the next operation id');

  const acked = resultOf<{ status: string; operation_id: number }>(t, await call(server.url, 'PUT', `/collections/${name}/points?wait=false`, { points: [{ id: 2, vector: [3, 4], payload: { late: true } }] }));
  t.equal(acked.status, 'acknowledged', 'wait=false answers acknowledged');
  t.equal(acked.operation_id, first + 3);
  t.ok(await eventually(async () => (await client.retrieve(name, { ids: [2] })).length === 1), 'the acknowledged write becomes visible');
  t.same((await client.retrieve(name, { ids: [2] }))[0].payload, { late: true });
});

t.test('concurrent writes are all applied, each with its own operation id', async (t) => {
  const name = uniqueName('concurrent');
  await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' }, shard_number: 3 });
  const writers = 16;
  const results = await Promise.all(
    Array.from({ length: writers }, (_, w) =>
      client.upsert(name, { wait: true, points: Array.from({ length: 10 }, (_, i) => ({ id: w * 10 + i, vector: [w, i], payload: { w } })) }),
    ),
  );
  const opIds = results.map((r) => r.operation_id!).sort((a, b) => a - b);
  t.same(opIds, opIds.map((_, i) => opIds[0] + i), 'distinct and consecutive');
  t.equal((await client.count(name)).count, writers * 10, 'every point written');
  const w7 = await client.count(name, { filter: { must: [{ key: 'w', match: { value: 7 } }] } });
  t.equal(w7.count, 10);
});

/** Polls `check` for up to 5 s: an acknowledged write is applied asynchronously. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20)); // poll interval, not a race fix
  }
  return false;
}

// Payload indexes: every type, in both schema forms, reported with point counts, and filters
// that select the same points with and without them.

const CITIES = ['oslo', 'rome', 'lima', 'kyiv', 'pune'];
const WORDS = ['red fox', 'lazy dog', 'quick brown fox', 'sleepy cat', 'brown bear'];

function indexedPayload(i: number): Payload {
  const p: Payload = {};
  // Each field is missing on a different fifth of the points, so index point counts differ.
  if (i % 5 !== 0) p.city = CITIES[i % CITIES.length];
  if (i % 5 !== 1) p.num = (i * 7) % 50;
  if (i % 5 !== 2) p.price = Math.round(((i * 13) % 100) * 1.25 * 100) / 100;
  if (i % 5 !== 3) p.flag = i % 3 === 0;
  if (i % 5 !== 4) p.loc = { lon: 10 + (i % 10), lat: 50 + Math.floor(i / 10) % 10 };
  if (i % 7 !== 0) p.desc = WORDS[i % WORDS.length];
  if (i % 6 !== 0) p.ts = `2024-01-${String(1 + (i % 28)).padStart(2, '0')}T12:00:00Z`;
  if (i % 4 !== 0) p.ref = uuidOf(i % 6);
  return p;
}

const INDEX_FILTERS: [string, object, (p: Payload) => boolean][] = [
  ['keyword match', { must: [{ key: 'city', match: { value: 'rome' } }] }, (p) => p.city === 'rome'],
  ['keyword any', { must: [{ key: 'city', match: { any: ['oslo', 'lima'] } }] }, (p) => p.city === 'oslo' || p.city === 'lima'],
  ['integer range', { must: [{ key: 'num', range: { gte: 10, lt: 30 } }] }, (p) => typeof p.num === 'number' && p.num >= 10 && p.num < 30],
  ['integer match', { must: [{ key: 'num', match: { value: 14 } }] }, (p) => p.num === 14],
  ['float range', { must: [{ key: 'price', range: { gt: 40.5, lte: 90 } }] }, (p) => typeof p.price === 'number' && p.price > 40.5 && p.price <= 90],
  ['bool', { must: [{ key: 'flag', match: { value: true } }] }, (p) => p.flag === true],
  ['geo box', { must: [{ key: 'loc', geo_bounding_box: { top_left: { lon: 11.5, lat: 56.5 }, bottom_right: { lon: 15.5, lat: 51.5 } } }] },
    (p) => { const l = p.loc as { lon: number; lat: number } | undefined; return !!l && l.lon >= 11.5 && l.lon <= 15.5 && l.lat >= 51.5 && l.lat <= 56.5; }],
  ['text', { must: [{ key: 'desc', match: { text: 'fox' } }] }, (p) => typeof p.desc === 'string' && p.desc.split(' ').includes('fox')],
  ['datetime range', { must: [{ key: 'ts', range: { gte: '2024-01-10T00:00:00Z', lt: '2024-01-20T00:00:00Z' } }] },
    (p) => typeof p.ts === 'string' && p.ts >= '2024-01-10' && p.ts < '2024-01-20'],
  ['uuid match', { must: [{ key: 'ref', match: { value: uuidOf(2) } }] }, (p) => p.ref === uuidOf(2)],
  ['combined', { must: [{ key: 'flag', match: { value: false } }], should: [{ key: 'city', match: { value: 'kyiv' } }, { key: 'num', range: { lt: 5 } }], must_not: [{ key: 'desc', match: { text: 'dog' } }] },
    (p) => p.flag === false && (p.city === 'kyiv' || (typeof p.num === 'number' && p.num < 5)) && !(typeof p.desc === 'string' && p.desc.includes('dog'))],
];

async function selected(t: Test, name: string, filter: object): Promise<{ ids: Id[]; count: number }> {
  const page = await client.scroll(name, { filter, limit: 1000, with_payload: false });
  t.equal(page.next_page_offset, null, 'one page holds every match');
  return { ids: page.points.map((p) => p.id), count: (await client.count(name, { filter, exact: true })).count };
}

t.test('payload indexes of every type: schema, point counts, same results as without', async (t) => {
  const name = uniqueName('indexed');
  await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' }, shard_number: 2 });
  const n = 300;
  const payloads = Array.from({ length: n }, (_, i) => indexedPayload(i));
  await client.upsert(name, { wait: true, points: payloads.map((payload, i) => ({ id: i, vector: [1, i], payload })) });

  const before = new Map<string, { ids: Id[]; count: number }>();
  for (const [what, filter, matches] of INDEX_FILTERS) {
    const got = await selected(t, name, filter);
    const expected = payloads.flatMap((p, i) => (matches(p) ? [i] : []));
    t.same(got.ids, expected, `${what}: a scan selects the expected points`);
    t.equal(got.count, expected.length, `${what}: count`);
    before.set(what, got);
  }

  const schemas: [string, string | Record<string, unknown>][] = [
    ['city', { type: 'keyword', is_tenant: true }],
    ['num', { type: 'integer', lookup: true, range: true }],
    ['price', 'float'],
    ['flag', 'bool'],
    ['loc', 'geo'],
    ['desc', { type: 'text', tokenizer: 'word', lowercase: true }],
    ['ts', 'datetime'],
    ['ref', 'uuid'],
  ];
  for (const [field, schema] of schemas) {
    const r = await client.createPayloadIndex(name, { field_name: field, field_schema: schema as 'keyword', wait: true });
    t.equal(r.status, 'completed', `index on ${field}`);
  }
  const has = (field: string) => payloads.filter((p) => p[field] !== undefined).length;
  const info = await client.getCollection(name);
  t.strictSame(info.payload_schema, {
    city: { data_type: 'keyword', params: { type: 'keyword', is_tenant: true }, points: has('city') },
    num: { data_type: 'integer', params: { type: 'integer', lookup: true, range: true }, points: has('num') },
    price: { data_type: 'float', points: has('price') },
    flag: { data_type: 'bool', points: has('flag') },
    loc: { data_type: 'geo', points: has('loc') },
    desc: { data_type: 'text', params: { type: 'text', tokenizer: 'word', lowercase: true }, points: has('desc') },
    ts: { data_type: 'datetime', points: has('ts') },
    ref: { data_type: 'uuid', points: has('ref') },
  }, 'payload_schema: data_type, params when given, points holding the field');

  for (const [what, filter] of INDEX_FILTERS) t.same(await selected(t, name, filter), before.get(what), `${what}: same result with the index`);

  // Writes after indexing keep the index in step.
  await client.setPayload(name, { wait: true, points: [0, 5], payload: { city: 'rome' } });
  await client.delete(name, { wait: true, points: [1] });
  const rome = payloads.flatMap((p, i) => (i !== 1 && (p.city === 'rome' || i === 0 || i === 5) ? [i] : []));
  t.same((await selected(t, name, INDEX_FILTERS[0][1])).ids, rome, 'keyword index follows set_payload and delete');
  t.equal((await client.getCollection(name)).payload_schema.city?.points, has('city') + 2 - (payloads[1].city ? 1 : 0), 'city points after adding two and deleting one');

  t.equal((await client.deletePayloadIndex(name, 'num', { wait: true })).status, 'completed');
  const after = (await client.getCollection(name)).payload_schema;
  t.notOk('num' in after, 'dropped index no longer reported');
  t.ok('city' in after, 'other indexes stay');
  const noIndex = await call(server.url, 'DELETE', `/collections/${name}/index/never_indexed?wait=true`);
  t.equal(resultOf<{ status: string }>(t, noIndex).status, 'completed', 'dropping an index that does not exist is a no-op, not an error');
  t.same(Object.keys((await client.getCollection(name)).payload_schema).sort(), Object.keys(after).sort(), 'indexes unchanged');
  const numFilter = INDEX_FILTERS[2];
  const stillSame = await selected(t, name, numFilter[1]);
  t.same(stillSame.ids, (before.get(numFilter[0])!.ids).filter((id) => id !== 1), 'integer filter still works without its index');
});

t.test('every index type in its bare and its params form', async (t) => {
  const name = uniqueName('forms');
  await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' }, shard_number: 2 });
  const values: Record<string, (i: number) => unknown> = {
    keyword: (i) => `k${i % 3}`,
    integer: (i) => i,
    float: (i) => i / 4,
    bool: (i) => i % 2 === 0,
    geo: (i) => ({ lon: i, lat: -i }),
    text: (i) => `word${i} common`,
    datetime: (i) => `2023-06-${String(10 + i).padStart(2, '0')}T00:00:00Z`,
    uuid: (i) => uuidOf(i),
  };
  const types = Object.keys(values);
  // Point i holds every field except the i-th type's, so each index counts n - 1 points.
  const n = types.length;
  await client.upsert(name, {
    wait: true,
    points: Array.from({ length: n }, (_, i) => ({
      id: i,
      vector: [1, i],
      payload: Object.fromEntries(types.filter((_, k) => k !== i).flatMap((type) => [[`${type}_bare`, values[type](i)], [`${type}_params`, values[type](i)]])),
    })),
  });
  for (const type of types) {
    await client.createPayloadIndex(name, { field_name: `${type}_bare`, field_schema: type as 'keyword', wait: true });
    await client.createPayloadIndex(name, { field_name: `${type}_params`, field_schema: { type } as { type: 'keyword' }, wait: true });
  }
  const expected: Record<string, unknown> = {};
  for (const type of types) {
    expected[`${type}_bare`] = { data_type: type, points: n - 1 };
    // A text index reports the tokenizer it uses, `word` unless told.
    expected[`${type}_params`] = { data_type: type, params: type === 'text' ? { type, tokenizer: 'word' } : { type }, points: n - 1 };
  }
  t.strictSame((await client.getCollection(name)).payload_schema, expected);
});
