// Custom sharding through the real server and the official client: shard keys are created,
// listed and dropped; writes go to the keys they name (and only there), reads reach the keys
// they select (all without a selector), with fallback keys; every answer is checked against the
// points written under each key, searches against an exact scan. Keys and their points survive
// a restart and a collection snapshot; automatic collections refuse keys as Qdrant does.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { assertError, call, resultOf } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { ONE_PEER_CLUSTER, startServer, tempStorage, type RunningServer } from './helpers/server.js';

type Key = string | number;
interface Stored { id: number; vector: number[]; payload: { key: string; n: number } }
interface PointRecord { id: number | string; shard_key?: Key; payload?: Stored['payload'] }
interface Scored extends PointRecord { score: number }

const DIM = 4;
const random = rng(11);
const vector = () => Array.from({ length: DIM }, () => random() * 2 - 1);
const points = (ids: number[], key: Key): Stored[] => ids.map((id) => ({ id, vector: vector(), payload: { key: String(key), n: id } }));
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

function l2(a: number[], b: number[]): number {
  return Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0));
}

/** Exact top-k over what each selected key holds; an id under two keys counts once (its best score). */
function exactTop(held: Map<Key, Stored[]>, keys: Key[], query: number[], k: number): { id: number; key: Key }[] {
  const best = new Map<number, { id: number; key: Key; d: number }>();
  for (const key of keys) {
    for (const p of held.get(key)!) {
      const d = l2(p.vector, query);
      const seen = best.get(p.id);
      if (!seen || d < seen.d) best.set(p.id, { id: p.id, key, d });
    }
  }
  return [...best.values()].sort((a, b) => a.d - b.d || a.id - b.id).slice(0, k).map(({ id, key }) => ({ id, key }));
}

async function search(server: RunningServer, body: object): Promise<{ id: number; key: Key }[]> {
  const hits = resultOf<Scored[]>(t, await call(server.url, 'POST', '/collections/c/points/search', { limit: 10, with_payload: true, ...body }));
  return hits.map((h) => ({ id: h.id as number, key: h.shard_key! }));
}

async function count(server: RunningServer, shardKey?: unknown): Promise<number> {
  return resultOf<{ count: number }>(t, await call(server.url, 'POST', '/collections/c/points/count', shardKey === undefined ? {} : { shard_key: shardKey })).count;
}

t.test('custom shard keys', async (t) => {
  const storage = await tempStorage();
  let server = await startServer({ storage });
  t.teardown(() => server.stop());
  let client = new QdrantClient({ url: server.url, checkCompatibility: false });

  await client.createCollection('c', { vectors: { size: DIM, distance: 'Euclid' }, sharding_method: 'custom', shard_number: 2 });
  t.same(await client.listShardKeys('c'), { shard_keys: [] }, 'a new custom collection has no keys');
  const info = resultOf<{ config: { params: { sharding_method: string; shard_number: number } } }>(t, await call(server.url, 'GET', '/collections/c'));
  t.equal(info.config.params.sharding_method, 'custom');
  assertError(t, await call(server.url, 'PUT', '/collections/c/points', { points: points([1], 'x') }), 400, 'Wrong input: Shard key not specified', 'upsert without a key');

  t.test('creating keys', async (t) => {
    t.equal(await client.createShardKey('c', { shard_key: 'eu', shards_number: 3 }), true);
    t.equal(await client.createShardKey('c', { shard_key: 7 }), true);
    assertError(t, await call(server.url, 'PUT', '/collections/c/shards', { shard_key: 'eu' }), 400, 'Bad request: Sharding key eu already exists for collection c');
    t.same(await client.listShardKeys('c'), { shard_keys: [{ key: 'eu' }, { key: 7 }] }, 'keys listed in creation order, numbers stay numbers');
    assertError(t, await call(server.url, 'PUT', '/collections/c/shards', {}), 400, /^Format error in JSON body: missing field `shard_key`/);
    assertError(t, await call(server.url, 'PUT', '/collections/c/shards', { shard_key: 'z', shards_number: 0 }), 400, /^Format error in JSON body: invalid value: integer `0`, expected a nonzero u32/);
    assertError(t, await call(server.url, 'PUT', '/collections/c/shards', { shard_key: -1 }), 400, /^Format error in JSON body: data did not match any variant of untagged enum ShardKey/);
    assertError(t, await call(server.url, 'PUT', '/collections/c/shards', { shard_key: 'z', placement: [123456789] }), 400, 'Bad request: Peer 123456789 does not exist');
    assertError(t, await call(server.url, 'PUT', '/collections/c/shards', { shard_key: 'z', placement: [] }), 400,
      'Bad request: Sharding key z placement cannot be empty. If you want to use random placement, do not specify placement');
    assertError(t, await call(server.url, 'PUT', '/collections/c/shards', { shard_key: 'z', initial_state: 'Dead' }), 400,
      'Bad request: Initial state cannot be Dead, only Active or Partial are allowed');
    const partial = await call(server.url, 'PUT', '/collections/c/shards?wait=true', { shard_key: 'z', initial_state: 'Partial' });
    if (ONE_PEER_CLUSTER) {
      // A cluster takes it, as Qdrant does: its replicas wait for a transfer to fill them.
      resultOf(t, partial);
      resultOf(t, await call(server.url, 'POST', '/collections/c/shards/delete?wait=true', { shard_key: 'z' }));
    } else {
      assertError(t, partial, 400, 'Bad request: Sharding key z initial state Partial is not possible on a single node: its shards are Active', 'Partial needs a peer to fill it (Quiver-only refusal)');
    }
    assertError(t, await call(server.url, 'PUT', '/collections/missing/shards', { shard_key: 'z' }), 404, 'Not found: Collection `missing` doesn\'t exist!');
    assertError(t, await call(server.url, 'POST', '/collections/c/shards/delete', { shard_key: 1.5 }), 400, /^Format error in JSON body: data did not match any variant of untagged enum ShardKey/);
    assertError(t, await call(server.url, 'POST', '/collections/c/shards/delete', '{"shard_key":'), 400, /^Format error in JSON body: /, 'a body that does not parse');
    assertError(t, await call(server.url, 'POST', '/collections/c/points/count', { shard_key: { target: 'eu' } }), 400, /^Format error in JSON body: data did not match any variant of untagged enum ShardKeySelector/, 'a fallback selector without its fallback');
    assertError(t, await call(server.url, 'PUT', '/collections/c/shards?timeout=0', { shard_key: 'z' }), 400, 'Deserialize error in query parameters: invalid value: integer `0`, expected a nonzero u64', 'a commit timeout below 1');
    t.same(await client.listShardKeys('c'), { shard_keys: [{ key: 'eu' }, { key: 7 }] }, 'refused creations left nothing behind');
  });

  const held = new Map<Key, Stored[]>([['eu', points(range(0, 300), 'eu')], [7, points(range(250, 450), 7)]]);

  t.test('writes go to the keys they name', async (t) => {
    await client.upsert('c', { wait: true, points: held.get('eu')!, shard_key: 'eu' });
    await client.upsert('c', { wait: true, points: held.get(7)!, shard_key: 7 });
    t.equal(await count(server, 'eu'), 300);
    t.equal(await count(server, 7), 200);
    t.equal(await count(server), 500, 'without a selector every key is counted (ids 250..299 live under both)');
    t.equal(await count(server, ['eu', 7]), 500);
    assertError(t, await call(server.url, 'PUT', '/collections/c/points', { points: points([1], 'x'), shard_key: 'nope' }), 400, 'Wrong input: Shard key nope not found', 'write to an unknown key');
    assertError(t, await call(server.url, 'PUT', '/collections/c/points', { points: points([1], 'x'), shard_key: '7' }), 400, 'Wrong input: Shard key 7 not found', 'the string "7" is not the key 7');
    assertError(t, await call(server.url, 'POST', '/collections/c/points/count', { shard_key: 'nope' }), 400, 'Bad request: Shard key nope not found', 'read from an unknown key');
    const cluster = resultOf<{ shard_count: number; local_shards: { shard_id: number; shard_key: Key; points_count: number; state: string }[] }>(t, await call(server.url, 'GET', '/collections/c/cluster'));
    t.same(cluster.local_shards.map((s) => [s.shard_id, s.shard_key, s.state]), [[1, 'eu', 'Active'], [2, 'eu', 'Active'], [3, 'eu', 'Active'], [4, 7, 'Active'], [5, 7, 'Active']], 'shard ids numbered from 1 as keys are created');
    t.ok(cluster.local_shards.every((s) => s.points_count > 0), 'a key\'s points spread over its shards');
    t.equal(cluster.local_shards.filter((s) => s.shard_key === 'eu').reduce((n, s) => n + s.points_count, 0), 300);
    const telemetry = resultOf<{ collections: { collections: { id: string; shards: { id: number; key?: Key }[] }[] } }>(t, await call(server.url, 'GET', '/telemetry?details_level=3'));
    t.same(telemetry.collections.collections.find((c) => c.id === 'c')!.shards.map((s) => [s.id, s.key]), [[1, 'eu'], [2, 'eu'], [3, 'eu'], [4, 7], [5, 7]], 'telemetry names each shard\'s key');
    const distributed = resultOf<{ collections: Record<string, { shards: { id: number; key?: Key }[] }> }>(t, await call(server.url, 'GET', '/cluster/telemetry'));
    t.same(distributed.collections.c.shards.map((s) => [s.id, s.key]), [[1, 'eu'], [2, 'eu'], [3, 'eu'], [4, 7], [5, 7]], 'so does cluster telemetry');
  });

  t.test('reads reach the selected keys', async (t) => {
    const both = await client.retrieve('c', { ids: [1, 260, 400], shard_key: 'eu', with_payload: true });
    t.same(both.map((r) => [r.id, r.shard_key, (r.payload as Stored['payload']).key]), [[1, 'eu', 'eu'], [260, 'eu', 'eu']], 'retrieve under one key, records carry their key');
    const page = await client.scroll('c', { shard_key: 7, limit: 1000 });
    t.same(page.points.map((p) => p.id), range(250, 450), 'scroll under key 7');
    t.ok(page.points.every((p) => p.shard_key === 7));
    for (let q = 0; q < 20; q++) {
      const query = vector();
      t.same(await search(server, { vector: query, shard_key: 'eu' }), exactTop(held, ['eu'], query, 10), `search under eu ${q}`);
      t.same(await search(server, { vector: query }), exactTop(held, ['eu', 7], query, 10), `search under every key ${q}`);
      t.same(await search(server, { vector: query, shard_key: [7] }), exactTop(held, [7], query, 10), `search under [7] ${q}`);
    }
    const query = vector();
    const viaQuery = await client.query('c', { query, shard_key: 7, limit: 5 });
    t.same(viaQuery.points.map((p) => ({ id: p.id, key: p.shard_key })), exactTop(held, [7], query, 5), 'query API with a key');
  });

  t.test('fallback keys', async (t) => {
    t.equal(await count(server, { target: 'tenant-1', fallback: 'eu' }), 300, 'a missing target reads the fallback');
    t.equal(await count(server, { target: 7, fallback: 'eu' }), 200, 'an existing target is read');
    assertError(t, await call(server.url, 'POST', '/collections/c/points/count', { shard_key: { target: 'a', fallback: 'b' } }), 404, 'Not found: Neither target shard key a nor fallback shard key b exist not found');
    await client.upsert('c', { wait: true, points: points([1000], 'eu'), shard_key: { target: 'tenant-1', fallback: 'eu' } });
    held.get('eu')!.push(...points([1000], 'eu'));
    t.equal(await count(server, 'eu'), 301, 'a write to a missing target lands under the fallback');
  });

  t.test('writes with several keys, by filter, and in batches', async (t) => {
    const shared = points([5000], 'both');
    await client.upsert('c', { wait: true, points: shared, shard_key: ['eu', 7] });
    t.same((await client.retrieve('c', { ids: [5000], shard_key: 7 })).map((r) => r.id), [5000], 'written under 7');
    t.same((await client.retrieve('c', { ids: [5000], shard_key: 'eu' })).map((r) => r.id), [5000], 'and under eu');
    await client.delete('c', { wait: true, filter: { must: [{ key: 'n', range: { gte: 5000 } }] }, shard_key: 7 });
    t.same((await client.retrieve('c', { ids: [5000] })).map((r) => r.shard_key), ['eu'], 'a delete by filter under 7 leaves eu alone');
    await client.delete('c', { wait: true, points: [5000], shard_key: 'eu' });
    await client.batchUpdate('c', {
      wait: true,
      operations: [
        { set_payload: { payload: { tag: 'batched' }, points: [260], shard_key: 7 } },
        { delete: { points: [1000], shard_key: 'eu' } },
      ],
    });
    held.set('eu', held.get('eu')!.filter((p) => p.id !== 1000));
    const [under7] = await client.retrieve('c', { ids: [260], shard_key: 7, with_payload: true });
    const [underEu] = await client.retrieve('c', { ids: [260], shard_key: 'eu', with_payload: true });
    t.equal(under7.payload!.tag, 'batched', 'batch operation applied under its own key');
    t.equal(underEu.payload!.tag, undefined, 'and not under the other key');
    t.equal(await count(server, 'eu'), 300);
  });

  t.test('keys and points survive a restart', async (t) => {
    await server.stop();
    server = await startServer({ storage });
    client = new QdrantClient({ url: server.url, checkCompatibility: false });
    t.same(await client.listShardKeys('c'), { shard_keys: [{ key: 'eu' }, { key: 7 }] });
    t.equal(await count(server, 'eu'), 300);
    t.equal(await count(server, 7), 200);
    const query = vector();
    t.same(await search(server, { vector: query }), exactTop(held, ['eu', 7], query, 10), 'search after restart');
  });

  t.test('a collection snapshot carries the keys', async (t) => {
    const snapshot = await client.createSnapshot('c');
    await client.deleteShardKey('c', { shard_key: 'eu' });
    t.same(await client.listShardKeys('c'), { shard_keys: [{ key: 7 }] }, 'eu dropped');
    t.equal(await count(server), 200, 'with its points');
    assertError(t, await call(server.url, 'POST', '/collections/c/shards/delete', { shard_key: 'eu' }), 400, 'Bad request: Sharding key eu does not exist for collection c');
    const recover = await call(server.url, 'PUT', '/collections/c/snapshots/recover', { location: `${server.url}/collections/c/snapshots/${snapshot!.name}` });
    if (ONE_PEER_CLUSTER) {
      // A cluster peer recovers into the collection the cluster has, whose shard keys must be the
      // snapshot's (Qdrant would create the missing one: a known difference, see the README).
      assertError(t, recover, 400, 'Wrong input: Snapshot is not compatible with existing collection: Collection shard keys: [[7,[4,5]]] Snapshot shard keys: [["eu",[1,2,3]],[7,[4,5]]]');
      return;
    }
    resultOf(t, recover);
    t.same(await client.listShardKeys('c'), { shard_keys: [{ key: 'eu' }, { key: 7 }] }, 'recovered keys');
    t.equal(await count(server, 'eu'), 300);
    t.equal(await count(server, 7), 200);
  });

  t.test('a dropped key\'s shard ids are reused without its points', async (t) => {
    await client.deleteShardKey('c', { shard_key: 7 });
    await client.createShardKey('c', { shard_key: 'new', shards_number: 2 });
    const cluster = resultOf<{ local_shards: { shard_id: number; shard_key: Key; points_count: number }[] }>(t, await call(server.url, 'GET', '/collections/c/cluster'));
    // After the highest id in use: 4 and 5 once `eu` (1-3) is back; on a cluster peer, where `eu`
    // was not recovered, 1 and 2.
    const ids = ONE_PEER_CLUSTER ? [1, 2] : [4, 5];
    t.same(cluster.local_shards.filter((s) => s.shard_key === 'new').map((s) => [s.shard_id, s.points_count]), ids.map((id) => [id, 0]));
    t.equal(await count(server, 'new'), 0);
  });
});

t.test('automatic sharding refuses shard keys', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('a', { vectors: { size: DIM, distance: 'Dot' }, shard_number: 2 });
  await client.upsert('a', { wait: true, points: points([1, 2, 3], 'a') });
  t.same(await client.listShardKeys('a'), { shard_keys: null }, 'no key list without custom sharding');
  assertError(t, await call(server.url, 'PUT', '/collections/a/shards', { shard_key: 'k' }), 400, 'Bad request: Shard Key cannot be created with Auto sharding method');
  assertError(t, await call(server.url, 'POST', '/collections/a/shards/delete', { shard_key: 'k' }), 400, 'Bad request: Shard Key cannot be created with Auto sharding method', 'Qdrant words the refused drop as a refused creation');
  assertError(t, await call(server.url, 'PUT', '/collections/a/points', { points: points([4], 'a'), shard_key: 'k' }), 400, 'Wrong input: Shard key k not found');
  assertError(t, await call(server.url, 'POST', '/collections/a/points/search', { vector: vector(), limit: 3, shard_key: 'k' }), 400, 'Bad request: Shard key k not found');
  const cluster = resultOf<{ shard_count: number; local_shards: { shard_id: number; shard_key?: Key; points_count: number }[] }>(t, await call(server.url, 'GET', '/collections/a/cluster'));
  t.equal(cluster.shard_count, 2);
  t.same(cluster.local_shards.map((s) => [s.shard_id, s.shard_key]), [[0, undefined], [1, undefined]]);
  t.equal(cluster.local_shards.reduce((n, s) => n + s.points_count, 0), 3);
  const records = await client.retrieve('a', { ids: [1, 2, 3] });
  t.ok(records.every((r) => r.shard_key === undefined || r.shard_key === null), 'records carry no shard key');
});
