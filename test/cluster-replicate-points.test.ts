// `replicate_points` (Qdrant's tenant promotion) on CLI-started peers: a custom-sharded
// collection's points that match a filter copied from one shard key's shard into another key's
// replica while a writer changes them through a fallback selector, the target key Partial until
// the copy ends and Active after; the target then holds exactly the source's matching points as
// the acknowledged writes left them; fallback reads and writes follow the target key once it is
// Active (a Partial target without a fallback key is unavailable, 503). On two peers (the target key placed on the other peer), a copy into a stopped peer is
// shown with its `to_shard_id`, aborted by it (the target Dead), and run again to the end. Each
// refusal answers with Qdrant's status and message.

import t, { type Test } from 'tap';
import { call, type RawResponse } from './helpers/api-http.js';
import { startCluster, until, type ClusterPeer } from './helpers/cluster.js';
import { formed, replicaStates, result } from './helpers/cluster-api.js';

const DIM = 4;
const POINTS = 6000;
const CITIES = ['London', 'Paris'];
const LONDON = { must: [{ key: 'city', match: { value: 'London' } }] };
const FALLBACK = { target: 'tenant', fallback: 'default' };

interface Point {
  id: number;
  payload: { city: string; v: number };
}

function vector(id: number): number[] {
  return Array.from({ length: DIM }, (_, d) => Math.sin(id * 0.37 + d));
}

function point(id: number, v: number): Point & { vector: number[] } {
  return { id, vector: vector(id), payload: { city: CITIES[(id * 7 + v) % 2]!, v } };
}

async function upsert(peer: ClusterPeer, points: Point[], shardKey: unknown): Promise<boolean> {
  const answer = await call(peer.url, 'PUT', '/collections/tiers/points?wait=true', { points, shard_key: shardKey });
  return answer.status === 200;
}

/** [id, payload] of every point a selector reaches, matching `filter`, in id order. */
async function points(peer: ClusterPeer, shardKey: unknown, filter?: unknown): Promise<[number, Point['payload']][]> {
  const page = await result<{ points: Point[] }>(peer, 'POST', '/collections/tiers/points/scroll', { limit: 10 * POINTS, with_payload: true, shard_key: shardKey, ...(filter ? { filter } : {}) });
  return page.points.map((p): [number, Point['payload']] => [p.id, p.payload]);
}

function operate(peer: ClusterPeer, body: unknown): Promise<RawResponse> {
  return call(peer.url, 'POST', '/collections/tiers/cluster?timeout=30', body);
}

function assertError(t: Test, answer: RawResponse, status: number, error: string, what: string): void {
  t.equal(answer.status, status, `${what}: status`);
  t.equal((answer.body as { status?: { error?: string } }).status?.error, error, `${what}: message`);
}

/** Shard ids of the collection's keys, from `GET /collections/{c}/cluster` (every shard key's shards, by key). */
async function shardsByKey(peer: ClusterPeer): Promise<Map<string, number[]>> {
  const info = await result<{ local_shards: { shard_id: number; shard_key?: string }[]; remote_shards: { shard_id: number; shard_key?: string }[] }>(peer, 'GET', '/collections/tiers/cluster');
  const byKey = new Map<string, number[]>();
  for (const s of [...info.local_shards, ...info.remote_shards]) if (s.shard_key !== undefined) byKey.set(s.shard_key, [...new Set([...(byKey.get(s.shard_key) ?? []), s.shard_id])]);
  return byKey;
}

async function createCollection(t: Test, peer: ClusterPeer): Promise<void> {
  t.equal(await result(peer, 'PUT', '/collections/tiers?timeout=30', { vectors: { size: DIM, distance: 'Cosine' }, sharding_method: 'custom', shard_number: 1, replication_factor: 1 }), true);
}

t.test('one peer: the tenant promoted while a writer changes it through the fallback selector', async (t) => {
  const peers = await startCluster(t, 1);
  const [peer] = peers;
  const { ids: [peerId] } = await formed(peers);
  await createCollection(t, peer);
  t.equal(await result(peer, 'PUT', '/collections/tiers/shards?timeout=30', { shard_key: 'default' }), true);
  t.equal(await result(peer, 'PUT', '/collections/tiers/shards?timeout=30', { shard_key: 'tenant', initial_state: 'Partial' }), true, 'the tenant key created Partial');
  t.equal(await result(peer, 'PUT', '/collections/tiers/shards?timeout=30', { shard_key: 'wide', shards_number: 2 }), true);
  const acked = new Map<number, Point['payload']>();
  for (let from = 1; from <= POINTS; from += 1000) {
    const list = Array.from({ length: 1000 }, (_, i) => point(from + i, 0));
    t.ok(await upsert(peer, list, 'default'), `points ${from}-${from + 999} written`);
    list.forEach((p) => acked.set(p.id, p.payload));
  }
  const london = () => [...acked].filter(([, p]) => p.city === 'London').sort((a, b) => a[0] - b[0]);

  // While the tenant key is Partial, the fallback selector reads and writes the default key.
  t.same(await points(peer, FALLBACK, LONDON), london(), 'a fallback read of a Partial target reads the fallback key');
  const unavailable = await call(peer.url, 'POST', '/collections/tiers/points/count', { shard_key: { target: 'tenant', fallback: 'gone' } });
  assertError(t, unavailable, 503, 'Shard temporarily unavailable: Neither target shard key tenant nor fallback shard key gone have active replicas', 'a Partial target without its fallback key');
  assertError(t, await call(peer.url, 'POST', '/collections/tiers/points/count', { shard_key: { target: 'none', fallback: 'gone' } }), 404,
    'Not found: Neither target shard key none nor fallback shard key gone exist not found', 'neither key (Qdrant\'s CollectionError::NotFound adds "not found")');
  t.ok(await upsert(peer, [point(1, 1)], FALLBACK), 'a fallback write of a Partial target');
  acked.set(1, point(1, 1).payload);
  t.same((await points(peer, 'default')).find(([id]) => id === 1)?.[1], point(1, 1).payload, 'went to the fallback key');

  // Refusals, in Qdrant's order of checks.
  assertError(t, await operate(peer, { replicate_points: { from_shard_key: 'nope', to_shard_key: 'tenant' } }), 400, 'Bad request: Shard key nope not found', 'an unknown source key');
  assertError(t, await operate(peer, { replicate_points: { from_shard_key: 'wide', to_shard_key: 'tenant' } }), 400,
    'Bad request: Only replicating from shard keys with exactly one shard is supported. Shard key wide has 2 shards', 'a source key of two shards');
  assertError(t, await operate(peer, { replicate_points: { from_shard_key: 'default', to_shard_key: 'wide' } }), 400,
    'Bad request: Only replicating to shard keys with exactly one replica is supported. Shard key wide has 2 replicas', 'a target key of two replicas');
  assertError(t, await operate(peer, { replicate_points: { from_shard_key: 'default', to_shard_key: 'default' } }), 400,
    'Bad request: Cannot replicate points from shard key default into itself', 'a key into itself (Quiver\'s refusal)');
  assertError(t, await operate(peer, { replicate_points: { from_shard_key: 'default', to_shard_key: 'tenant', filter: { must: [{ key: 'city', match: { nope: 1 } }] } } }), 400,
    'Format error in JSON body: data did not match any variant of untagged enum ClusterOperations', 'a filter that is not one');

  // A writer through the fallback selector all along: it flips points between the cities (in and
  // out of the filter), deletes some and adds new ones. `touched` holds each finished round's ids.
  let stop = false;
  let round = 0;
  const touched: number[][] = [];
  const failures: string[] = [];
  const writer = (async () => {
    while (!stop) {
      round++;
      const changed = [...Array.from({ length: 10 }, (_, i) => point(1 + ((round * 37 + i * 101) % POINTS), round)), point(POINTS + round, round)];
      if (await upsert(peer, changed, FALLBACK)) changed.forEach((p) => acked.set(p.id, p.payload));
      else failures.push(`upsert ${round}`);
      const removed = 1 + ((round * 53) % POINTS);
      const deleted = await call(peer.url, 'POST', '/collections/tiers/points/delete?wait=true', { points: [removed], shard_key: FALLBACK });
      if (deleted.status === 200) acked.delete(removed);
      else failures.push(`delete ${round}`);
      touched.push([...changed.map((p) => p.id), removed]);
    }
  })();
  t.teardown(async () => {
    stop = true;
    await writer;
  });

  // Rounds finished while the copy is seen under way (or before it starts) reached the source
  // before the copy's end, so the copy passed them on; later ones may have gone to the target
  // key alone, once it was Active.
  let certain = touched.length;
  t.equal(await result(peer, 'POST', '/collections/tiers/cluster?timeout=30', { replicate_points: { filter: LONDON, from_shard_key: 'default', to_shard_key: 'tenant' } }), true, 'replicate_points is accepted');
  const [tenantShard] = (await shardsByKey(peer)).get('tenant')!;
  let seenUnderWay: unknown[] = [];
  await until('the copy ended with the tenant key Active', async () => {
    const finished = touched.length;
    const { states, transfers } = await replicaStates(peer, 'tiers');
    if (transfers.length > 0) {
      certain = finished;
      seenUnderWay = transfers;
    }
    return transfers.length === 0 && states.get(`${tenantShard}@${peerId}`) === 'Active';
  }, 60_000);
  const endedAt = round;
  await until('writes after the copy ended', async () => round > endedAt + 3);
  stop = true;
  await writer;
  t.same(failures, [], 'every write during the copy was acknowledged');
  t.comment(`${certain} rounds of writes finished while the copy was seen under way, of ${touched.length}`);
  if (seenUnderWay.length > 0) {
    t.match(seenUnderWay, [{ shard_id: (await shardsByKey(peer)).get('default')![0], to_shard_id: tenantShard, sync: true, method: 'stream_records' }], 'the copy is shown with its to_shard_id');
  }

  // The tenant key holds exactly the London points as the acknowledged writes left them (but
  // those a round after the copy's end may have changed in the target key alone).
  const uncertain = new Set(touched.slice(certain).flat());
  const tenant = await points(peer, 'tenant');
  const expected = [...acked].filter(([id, p]) => p.city === 'London' && !uncertain.has(id)).sort((a, b) => a[0] - b[0]);
  t.ok(expected.length > POINTS / 4, `${expected.length} London points to compare`);
  t.same(tenant.filter(([id]) => !uncertain.has(id)), expected, 'the tenant key holds the London points, as written last, and no other');

  // Once the target key is Active, the fallback selector reads and writes it.
  t.same(await points(peer, FALLBACK), tenant, 'a fallback read of an Active target reads the target key');
  t.ok(await upsert(peer, [point(POINTS * 3, 5)], FALLBACK));
  t.same((await points(peer, 'tenant')).at(-1)?.[0], POINTS * 3, 'a fallback write of an Active target goes to the target key');
  t.notOk((await points(peer, 'default')).some(([id]) => id === POINTS * 3), 'and not to the fallback key');
});

t.test('two peers: a copy into a stopped peer shown with its to_shard_id, aborted (the target Dead), then run again to the end', async (t) => {
  const peers = await startCluster(t, 2, { env: { QDRANT__CLUSTER__GRPC_TIMEOUT_MS: '30000' } });
  const { ids } = await formed(peers);
  const [source, target] = peers;
  await createCollection(t, source);
  t.equal(await result(source, 'PUT', '/collections/tiers/shards?timeout=30', { shard_key: 'default', placement: [ids[0]] }), true);
  t.equal(await result(source, 'PUT', '/collections/tiers/shards?timeout=30', { shard_key: 'tenant', placement: [ids[1]] }), true, 'the tenant key on the other peer, Active');
  const written = Array.from({ length: 800 }, (_, i) => point(i + 1, 0));
  t.ok(await upsert(source, written, 'default'));
  t.ok(await upsert(source, [point(5000, 0)], 'tenant'), 'a point of the tenant key\'s own');
  const keys = await shardsByKey(source);
  const [from, into] = [keys.get('default')![0], keys.get('tenant')![0]];

  target.server.process.kill('SIGSTOP');
  try {
    t.equal(await result(source, 'POST', '/collections/tiers/cluster?timeout=30', { replicate_points: { filter: LONDON, from_shard_key: 'default', to_shard_key: 'tenant' } }), true, 'a copy into a stopped peer starts');
    const under = await until('the copy under way', async () => {
      const seen = await replicaStates(source, 'tiers');
      return seen.transfers.length > 0 && seen;
    });
    t.same(under.transfers.map(({ shard_id, to_shard_id, from, to, sync, method }) => ({ shard_id, to_shard_id, from, to, sync, method })),
      [{ shard_id: from, to_shard_id: into, from: ids[0], to: ids[1], sync: true, method: 'stream_records' }], 'shown as Qdrant shows a transfer into another shard');
    t.equal(under.states.get(`${into}@${ids[1]}`), 'Partial', 'the target Partial');
    assertError(t, await operate(source, { restart_transfer: { shard_id: from, to_shard_id: into, from_peer_id: ids[0], to_peer_id: ids[1], method: 'snapshot' } }), 400,
      'Bad request: Can\'t do shard transfer using method Snapshot in combination with a filter', 'a copy restarted by a snapshot');
    assertError(t, await operate(source, { abort_transfer: { shard_id: from, from_peer_id: ids[0], to_peer_id: ids[1] } }), 404,
      `Not found: Shard transfer ${ids[0]} -> ${ids[1]} for collection tiers:${from} does not exist`, 'an abort without its to_shard_id names another transfer');
    t.equal(await result(source, 'POST', '/collections/tiers/cluster?timeout=30', { abort_transfer: { shard_id: from, to_shard_id: into, from_peer_id: ids[0], to_peer_id: ids[1] } }), true, 'abort_transfer with its to_shard_id');
  } finally {
    target.server.process.kill('SIGCONT');
  }
  await until('the target Dead, no transfer', async () => {
    const seen = await Promise.all(peers.map((p) => replicaStates(p, 'tiers')));
    return seen.every((s) => s.transfers.length === 0 && s.states.get(`${into}@${ids[1]}`) === 'Dead');
  });

  t.equal(await result(target, 'POST', '/collections/tiers/cluster?timeout=30', { replicate_points: { filter: LONDON, from_shard_key: 'default', to_shard_key: 'tenant' } }), true, 'run again, asked through the target\'s peer');
  await until('the target Active on both peers', async () => {
    const seen = await Promise.all(peers.map((p) => replicaStates(p, 'tiers')));
    return seen.every((s) => s.transfers.length === 0 && s.states.get(`${into}@${ids[1]}`) === 'Active');
  }, 60_000);
  const london = written.filter((p) => p.payload.city === 'London').map((p): [number, Point['payload']] => [p.id, p.payload]);
  t.same(await points(source, 'tenant'), [...london, [5000, point(5000, 0).payload]], 'the target key: the London points, and its own');
  t.same(await points(source, 'default', LONDON), london, 'the source key keeps its points');
});
