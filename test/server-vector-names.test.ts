// Creating and deleting named vectors (PUT/DELETE /collections/{name}/vectors/{vector}) through
// the real server and Qdrant's JS client: a new dense or sparse vector starts empty on every
// point, takes upserts and answers searches equal to references computed here (a uint8 sparse
// vector by Qdrant's per-list quantization formula, per shard); a deleted one is gone from the
// configuration, the points and searches, and a vector created again under its name starts
// empty; all of it survives a restart and a snapshot round trip; Qdrant's errors; a collection
// JWT with write access may do it, a read-only one may not.

import t, { type Test } from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { SignJWT } from 'jose';
import { startServer, type RunningServer } from './helpers/server.js';
import { assertError, call, resultOf } from './helpers/api-http.js';
import { brief, sameHits, type Hit } from './helpers/hits.js';
import { rng } from './helpers/data.js';
import { shardOf } from '../src/shard/routing.js';

const API_KEY = 'vector-names-key';
const NAME = 'nv';
const SHARDS = 2;
const next = rng(13);

interface Sparse {
  indices: number[];
  values: number[];
}

const IDS = Array.from({ length: 60 }, (_, i) => i + 1);
const A = new Map(IDS.map((id) => [id, Array.from({ length: 4 }, () => Math.fround(next() * 2 - 1))]));
// Points with the new vectors (some points never get them).
const B = new Map(IDS.filter((id) => id % 4 !== 0).map((id) => [id, Array.from({ length: 3 }, () => Math.fround(next() * 4 - 2))]));
function randomSparse(): Sparse {
  const indices = [...new Set(Array.from({ length: 1 + Math.floor(next() * 6) }, () => Math.floor(next() * 12)))].sort((a, b) => a - b);
  return { indices, values: indices.map(() => Math.fround((next() < 0.2 ? -1 : 1) * (0.1 + next() * 3))) };
}
const S = new Map(IDS.filter((id) => id % 5 !== 0).map((id) => [id, randomSparse()]));
const SPARSE_QUERIES: Sparse[] = Array.from({ length: 6 }, randomSparse);
const DENSE_QUERIES = Array.from({ length: 4 }, () => Array.from({ length: 3 }, () => Math.fround(next() * 4 - 2)));

function euclid(a: number[], b: number[]): number {
  return Math.fround(Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0)));
}

function denseReference(query: number[], limit: number): Hit[] {
  return [...B].map(([id, v]) => ({ id, score: euclid(query, v) })).sort((x, y) => x.score - y.score || x.id - y.id).slice(0, limit);
}

/**
 * uint8 sparse scores: per shard and index, min and diff256 = (max - min) / 255 over the values
 * there (f32); a value scores as min + round((v - min) / diff256) * diff256; products summed in
 * index order, rounded to f32; only points sharing an index.
 */
function sparseReference(query: Sparse, limit: number, points = S): Hit[] {
  const stored = new Map<number, Map<number, number>>();
  for (let shard = 0; shard < SHARDS; shard++) {
    const own = [...points].filter(([id]) => shardOf(id, SHARDS) === shard);
    const range = new Map<number, [number, number]>();
    for (const [, v] of own) v.indices.forEach((x, i) => {
      const [lo, hi] = range.get(x) ?? [Infinity, -Infinity];
      range.set(x, [Math.min(lo, v.values[i]), Math.max(hi, v.values[i])]);
    });
    for (const [id, v] of own) {
      stored.set(id, new Map(v.indices.map((x, i) => {
        const [min, max] = range.get(x)!;
        const diff256 = Math.fround(Math.fround(max - min) / 255);
        const r = Math.fround(Math.fround(v.values[i] - min) / diff256);
        const q = Number.isNaN(r) ? 0 : Math.min(255, Math.max(0, Math.round(r)));
        return [x, Math.fround(min + Math.fround(q * diff256))];
      })));
    }
  }
  const hits: Hit[] = [];
  for (const [id, values] of stored) {
    let sum = 0;
    let shared = false;
    query.indices.forEach((x, i) => {
      const v = values.get(x);
      if (v === undefined) return;
      shared = true;
      sum += query.values[i] * v;
    });
    if (shared) hits.push({ id, score: Math.fround(sum) });
  }
  return hits.sort((x, y) => y.score - x.score || x.id - y.id).slice(0, limit);
}

async function checkSearches(t: Test, client: QdrantClient, what: string): Promise<void> {
  for (const [i, query] of DENSE_QUERIES.entries()) {
    const { points } = await client.query(NAME, { query, using: 'b', limit: 10 });
    sameHits(t, brief(points), denseReference(query, 10), `${what}: dense query ${i} on the created vector`);
  }
  for (const [i, query] of SPARSE_QUERIES.entries()) {
    const { points } = await client.query(NAME, { query, using: 's', limit: 10 });
    sameHits(t, brief(points), sparseReference(query, 10), `${what}: uint8 sparse query ${i} on the created vector`, 0);
  }
}

async function vectorNames(client: QdrantClient): Promise<{ dense: string[]; sparse: string[] }> {
  const info = await client.getCollection(NAME);
  return { dense: Object.keys(info.config.params.vectors as object).sort(), sparse: Object.keys(info.config.params.sparse_vectors ?? {}).sort() };
}

async function countWith(client: QdrantClient, vector: string): Promise<number> {
  return (await client.count(NAME, { filter: { must: [{ has_vector: vector }] }, exact: true })).count;
}

function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ exp: Math.floor(Date.now() / 1000) + 600, ...claims }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(API_KEY));
}

const ENV = { QDRANT__SERVICE__API_KEY: API_KEY, QDRANT__SERVICE__JWT_RBAC: 'true' };

t.test('create, fill, search, delete, re-create, restart, snapshot, errors, access', async (t) => {
  let server: RunningServer = await startServer({ env: ENV });
  t.teardown(async () => server.stop());
  const connect = () => new QdrantClient({ url: server.url, apiKey: API_KEY, checkCompatibility: false });
  let client = connect();
  const headers = { 'api-key': API_KEY };
  await client.createCollection(NAME, { vectors: { a: { size: 4, distance: 'Dot' } }, shard_number: SHARDS });
  await client.upsert(NAME, { wait: true, points: IDS.map((id) => ({ id, vector: { a: A.get(id)! }, payload: { id } })) });

  const created = await client.createVectorName(NAME, 'b', { dense: { size: 3, distance: 'Euclid' } });
  t.match(created, { status: 'completed', operation_id: Number }, 'an UpdateResult, completed');
  resultOf(t, await call(server.url, 'PUT', `/collections/${NAME}/vectors/s?wait=true`, { sparse: { datatype: 'uint8' } }, headers));
  t.same(await vectorNames(client), { dense: ['a', 'b'], sparse: ['s'] }, 'the collection info lists both');
  const info = await client.getCollection(NAME);
  t.same(info.config.params.vectors, {
    a: { size: 4, distance: 'Dot' }, b: { size: 3, distance: 'Euclid' },
  }, 'the dense vector with its immutable parts only');
  t.same(info.config.params.sparse_vectors, { s: { index: { datatype: 'uint8' } } }, 'the sparse one with its datatype');
  t.equal(await countWith(client, 'b'), 0, 'no point has the new dense vector');
  t.equal(await countWith(client, 's'), 0, 'nor the new sparse vector');
  const [first] = await client.retrieve(NAME, { ids: [1], with_vector: true });
  t.same(Object.keys(first.vector as object), ['a'], 'a point shows only its old vector');

  await client.updateVectors(NAME, { wait: true, points: [...B].map(([id, v]) => ({ id, vector: { b: v } })) });
  await client.updateVectors(NAME, { wait: true, points: [...S].map(([id, v]) => ({ id, vector: { s: v } })) });
  t.equal(await countWith(client, 'b'), B.size, 'the points given the new dense vector have it');
  const [second] = await client.retrieve(NAME, { ids: [2], with_vector: true });
  t.same((second.vector as Record<string, unknown>).s, S.get(2), 'retrieve gives the sparse values as given (uint8 is the index form only)');
  await checkSearches(t, client, 'after filling');

  // Qdrant's answers to conflicting or broken requests; none changes anything.
  t.match(await client.createVectorName(NAME, 'b', { dense: { size: 3, distance: 'Euclid' } }), { status: 'completed' }, 'creating the same vector again is a no-op');
  const put = (vector: string, body: unknown) => call(server.url, 'PUT', `/collections/${NAME}/vectors/${vector}`, body, headers);
  assertError(t, await put('b', { dense: { size: 5, distance: 'Euclid' } }), 400, 'Wrong input: Vector `b` already exists with a different configuration', 'other size');
  assertError(t, await put('s', { sparse: { modifier: 'idf' } }), 400, 'Wrong input: Sparse vector `s` already exists with a different configuration', 'other modifier');
  assertError(t, await put('s', { dense: { size: 3, distance: 'Dot' } }), 400, 'Wrong input: Vector `s` already exists as a sparse vector', 'dense over sparse');
  assertError(t, await put('a', { sparse: {} }), 400, 'Wrong input: Vector `a` already exists as a dense vector', 'sparse over dense');
  t.equal((await put('c', {})).status, 400, 'neither dense nor sparse: a body format error');
  assertError(t, await put('c', { sparse: { datatype: 'turbo4' } }), 400, 'Wrong input: sparse vector index datatype turbo4 is not supported; use float32, float16 or uint8', 'turbo4 sparse index (a dense storage format)');
  t.equal((await put('c', { dense: { size: 0, distance: 'Dot' } })).status, 422, 'size 0: a validation error');
  assertError(t, await call(server.url, 'PUT', '/collections/nope/vectors/c', { sparse: {} }, headers), 404, "Not found: Collection `nope` doesn't exist!", 'missing collection');
  assertError(t, await put('x'.repeat(201), { sparse: {} }), 422, `Validation error in path parameters: [vector_name: vector name must be at most 200 bytes long]`, 'a name over 200 bytes');
  assertError(t, await put('a%3Ab', { sparse: {} }), 422, 'Validation error in path parameters: [vector_name: vector name cannot contain ":" char]', 'a forbidden character');
  t.same(await vectorNames(client), { dense: ['a', 'b'], sparse: ['s'] }, 'refused requests changed nothing');

  // Delete: gone from the configuration, the points and searches.
  const deleted = await client.deleteVectorName(NAME, 'b');
  t.match(deleted, { status: 'completed', operation_id: Number }, 'delete answers an UpdateResult');
  t.same(await vectorNames(client), { dense: ['a'], sparse: ['s'] }, 'the collection info no longer lists it');
  const [after] = await client.retrieve(NAME, { ids: [1], with_vector: true });
  t.same(Object.keys(after.vector as object).sort(), ['a', 's'], 'points no longer show it');
  assertError(t, await call(server.url, 'POST', `/collections/${NAME}/points/query`, { query: DENSE_QUERIES[0], using: 'b' }, headers), 400, 'Wrong input: Not existing vector name error: b', 'searching it');
  assertError(t, await call(server.url, 'PUT', `/collections/${NAME}/points/vectors?wait=true`, { points: [{ id: 1, vector: { b: [1, 2, 3] } }] }, headers), 400, 'Wrong input: Not existing vector name error: b', 'writing it');
  // Created again with another size: it starts empty (nothing of the old one comes back).
  await client.createVectorName(NAME, 'b', { dense: { size: 2, distance: 'Dot' } });
  t.equal(await countWith(client, 'b'), 0, 'a vector created again under a deleted name starts empty');
  await client.deleteVectorName(NAME, 'b');
  await client.createVectorName(NAME, 'b', { dense: { size: 3, distance: 'Euclid' } });
  await client.updateVectors(NAME, { wait: true, points: [...B].map(([id, v]) => ({ id, vector: { b: v } })) });

  // Restart: the configuration and the vectors stay.
  await server.stop();
  server = await startServer({ env: ENV, storage: server.storage });
  client = connect();
  t.same(await vectorNames(client), { dense: ['a', 'b'], sparse: ['s'] }, 'after a restart the configuration is the same');
  await checkSearches(t, client, 'after a restart');

  // Snapshot of the collection, recovered into another one: the same points and searches.
  await client.deleteVectorName(NAME, 'a');
  const snapshot = await client.createSnapshot(NAME, { wait: true });
  const archive = new Uint8Array(await (await fetch(`${server.url}/collections/${NAME}/snapshots/${snapshot!.name}`, { headers })).arrayBuffer());
  const form = new FormData();
  form.append('snapshot', new Blob([Buffer.from(archive)]), 'snapshot.tar');
  const uploaded = await fetch(`${server.url}/collections/copy/snapshots/upload?wait=true`, { method: 'POST', body: form, headers });
  t.equal(uploaded.status, 200, `the snapshot taken after deleting a vector recovers (${await uploaded.clone().text()})`);
  const scroll = async (name: string) => (await client.scroll(name, { limit: 100, with_vector: true, with_payload: true })).points;
  t.same(await scroll('copy'), await scroll(NAME), 'the recovered collection has the same points, without the deleted vector');
  for (const query of SPARSE_QUERIES) t.same((await client.query('copy', { query, using: 's', limit: 10 })).points, (await client.query(NAME, { query, using: 's', limit: 10 })).points, 'and answers the same sparse searches');

  // Access: a collection JWT with write access may change vector names; a read-only one may not.
  const as = async (claims: Record<string, unknown>, method: string, vector: string) =>
    call(server.url, method, `/collections/${NAME}/vectors/${vector}`, method === 'PUT' ? { sparse: {} } : undefined, { authorization: `Bearer ${await token(claims)}` });
  t.equal((await as({ access: [{ collection: NAME, access: 'rw' }] }, 'PUT', 'jwt')).status, 200, 'a collection rw JWT creates');
  t.equal((await as({ access: [{ collection: NAME, access: 'rw' }] }, 'DELETE', 'jwt')).status, 200, 'and deletes');
  t.equal((await as({ access: [{ collection: NAME, access: 'r' }] }, 'PUT', 'jwt')).status, 403, 'a collection read-only JWT may not create');
  t.equal((await as({ access: 'r' }, 'DELETE', 's')).status, 403, 'a global read-only JWT may not delete');
  t.equal((await as({ access: [{ collection: 'copy', access: 'rw' }] }, 'PUT', 'jwt')).status, 403, 'a JWT for another collection may not');
  t.same(await vectorNames(client), { dense: ['b'], sparse: ['s'] }, 'refused ones changed nothing');
});
