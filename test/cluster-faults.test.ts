// The failure cases of a replicated collection across three CLI-started peers, as Qdrant answers
// them (docs/research/cluster-plan.md 1.5, 1.6): a stopped replica is marked Dead by the update
// that failed on it and the update stands when `write_consistency_factor` is met, otherwise the
// first failure answers; reads that need every replica fail while one is Dead; strong ordering
// fails while its leader is down and medium goes on; a whole-cluster restart keeps every
// acknowledged point. The p2p timeouts are short so a stopped peer fails a request quickly.

import t, { type Test } from 'tap';
import { call } from './helpers/api-http.js';
import { startCluster, startPeer, until, type ClusterPeer } from './helpers/cluster.js';
import { formed, result } from './helpers/cluster-api.js';

type Envelope<T> = { result: T; status: unknown };

interface ShardLayout {
  peer_id: number;
  local_shards: { shard_id: number; state: string }[];
  remote_shards: { shard_id: number; peer_id: number; state: string }[];
}

const ENV = { QDRANT__CLUSTER__GRPC_TIMEOUT_MS: '2000', QDRANT__CLUSTER__CONNECTION_TIMEOUT_MS: '1000' };
const DIM = 4;


function pointsFrom(first: number, count: number): { id: number; vector: number[]; payload: { n: number } }[] {
  return Array.from({ length: count }, (_, i) => ({ id: first + i, vector: Array.from({ length: DIM }, (_, d) => Math.sin((first + i) * 1.7 + d * 0.9)), payload: { n: first + i } }));
}

function errorOf(answer: { body: unknown }): string {
  return (answer.body as { status: { error: string } }).status.error;
}

/** Creates a one-shard collection with two replicas, waits until every peer serves it, and answers the ids of the two peers holding it. */
async function createPair(t: Test, peers: ClusterPeer[], name: string, config: Record<string, unknown>): Promise<number[]> {
  t.equal(await result(peers[0], 'PUT', `/collections/${name}?timeout=60`, { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 1, replication_factor: 2, ...config }), true, `${name} created`);
  for (const peer of peers) await until(`${name} on every peer`, async () => (await call(peer.url, 'GET', `/collections/${name}`)).status === 200);
  const layout = await result<ShardLayout>(peers[0], 'GET', `/collections/${name}/cluster`);
  const holders = [...layout.local_shards.map(() => layout.peer_id), ...layout.remote_shards.map((s) => s.peer_id)];
  t.equal(new Set(holders).size, 2, `${name}: two replicas on distinct peers`);
  return holders;
}

async function scrollIds(peer: ClusterPeer, name: string, consistency: string): Promise<number[]> {
  const scroll = await result<{ points: { id: number }[] }>(peer, 'POST', `/collections/${name}/points/scroll?consistency=${consistency}`, { limit: 1000 });
  return scroll.points.map((p) => p.id);
}

function stateOf(layout: ShardLayout, peer: number): string | undefined {
  return layout.peer_id === peer ? layout.local_shards[0]?.state : layout.remote_shards.find((s) => s.peer_id === peer)?.state;
}

t.test('a stopped replica: Dead with write_consistency_factor 1, the first failure with 2', async (t) => {
  const peers = await startCluster(t, 3, { env: ENV });
  const { ids } = await formed(peers);
  const weak = await createPair(t, peers, 'weak', { write_consistency_factor: 1 });
  const strict = await createPair(t, peers, 'strict', { write_consistency_factor: 2 });
  // Two pairs out of three peers share one: it is stopped, and the writer is a peer still running.
  const stoppedId = weak.find((id) => strict.includes(id))!;
  const stopped = peers[ids.indexOf(stoppedId)];
  const writer = peers[ids.indexOf(weak.find((id) => id !== stoppedId)!)];
  const writerId = ids[peers.indexOf(writer)];
  for (const name of ['weak', 'strict']) {
    t.equal((await result<{ status: string }>(writer, 'PUT', `/collections/${name}/points?wait=true`, { points: pointsFrom(1, 20) })).status, 'completed');
  }

  stopped.server.process.kill('SIGSTOP');
  // Continued, then killed: a stopped process is never left behind, whichever teardown runs first.
  t.teardown(async () => {
    stopped.server.process.kill('SIGCONT');
    await stopped.server.stop('SIGKILL');
  });

  // 1. One replica suffices: the update stands, and the failed replica is Dead once it answers.
  const upsert = await call(writer.url, 'PUT', '/collections/weak/points?wait=true', { points: pointsFrom(21, 5) });
  t.equal(upsert.status, 200, JSON.stringify(upsert.body));
  t.equal((upsert.body as Envelope<{ status: string }>).result.status, 'completed');
  t.equal(stateOf(await result<ShardLayout>(writer, 'GET', '/collections/weak/cluster'), stoppedId), 'Dead', 'the stopped peer\'s replica is Dead on the writing peer');
  const all = await call(writer.url, 'POST', '/collections/weak/points/scroll?consistency=all', { limit: 1000 });
  t.same([all.status, errorOf(all)], [500, `Service internal error: The replica set for shard 0 on peer ${writerId} does not have enough active replicas`], 'consistency=all needs every replica');
  t.same(await scrollIds(writer, 'weak', '1'), pointsFrom(1, 25).map((p) => p.id), 'consistency=1 serves every point');

  // 2. Both replicas needed: the stopped peer's failure is the answer, and nothing is marked Dead
  // (Qdrant marks failed replicas only once the update stands).
  const failed = await call(writer.url, 'PUT', '/collections/strict/points?wait=true', { points: pointsFrom(21, 5) });
  t.equal(failed.status, 500, JSON.stringify(failed.body));
  t.equal(errorOf(failed), `Service internal error: failed to reach peer ${stopped.uri}: Headers Timeout Error`, 'the unreachable replica\'s own error');
  t.equal(stateOf(await result<ShardLayout>(writer, 'GET', '/collections/strict/cluster'), stoppedId), 'Active', 'the failed replica stays Active');
});

t.test('strong ordering fails while its leader is down; medium goes on', async (t) => {
  const peers = await startCluster(t, 3, { env: ENV });
  const { ids } = await formed(peers);
  const holders = await createPair(t, peers, 'ordered', {});
  const leaderId = Math.max(...holders);
  const writer = peers[ids.indexOf(Math.min(...holders))];
  t.equal((await result<{ status: string }>(writer, 'PUT', '/collections/ordered/points?wait=true&ordering=strong', { points: pointsFrom(1, 10) })).status, 'completed', 'strong ordering through the leader while it is up');
  const leader = peers[ids.indexOf(leaderId)];
  await leader.server.stop('SIGKILL');

  const strong = await call(writer.url, 'PUT', '/collections/ordered/points?wait=true&ordering=strong', { points: pointsFrom(11, 5) });
  t.equal(strong.status, 500, JSON.stringify(strong.body));
  const prefix = `Service internal error: Failed to apply update with Strong ordering via leader peer ${leaderId}: Service internal error: failed to reach peer ${leader.uri}: `;
  t.equal(errorOf(strong).slice(0, prefix.length), prefix, 'the leader\'s failure, as Qdrant wraps it (the reason is the socket\'s)');
  const medium = await call(writer.url, 'PUT', '/collections/ordered/points?wait=true&ordering=medium', { points: pointsFrom(11, 5) });
  t.equal(medium.status, 200, JSON.stringify(medium.body));
  t.same(await scrollIds(writer, 'ordered', '1'), pointsFrom(1, 15).map((p) => p.id), 'the medium update applied');
  // The failed forward disabled the leader at once (medium skipped it) and proposed it Dead.
  t.ok(await until('the leader\'s replica Dead on the writing peer', async () => stateOf(await result<ShardLayout>(writer, 'GET', '/collections/ordered/cluster'), leaderId) === 'Dead'), 'the leader\'s replica is Dead on the writing peer');
});

t.test('a whole-cluster restart keeps every acknowledged point', async (t) => {
  const peers = await startCluster(t, 3, { env: ENV });
  await formed(peers);
  t.equal(await result(peers[0], 'PUT', '/collections/kept?timeout=60', { vectors: { size: DIM, distance: 'Euclid' }, replication_factor: 2 }), true);
  for (const peer of peers) await until('kept on every peer', async () => (await call(peer.url, 'GET', '/collections/kept')).status === 200);
  for (const [i, peer] of peers.entries()) {
    t.equal((await result<{ status: string }>(peer, 'PUT', '/collections/kept/points?wait=true', { points: pointsFrom(1 + i * 20, 20) })).status, 'completed');
  }
  for (const peer of peers) t.equal(await peer.server.stop('SIGTERM'), 0, 'stopped cleanly');

  const again = await Promise.all(peers.map((p, i) => startPeer({ storage: p.storage, ports: p.ports, bootstrap: i === 0 ? undefined : peers[0].uri, env: ENV })));
  for (const peer of again) t.teardown(() => peer.server.stop('SIGKILL'));
  await formed(again);
  const expected = pointsFrom(1, 60).map((p) => p.id);
  for (const peer of again) {
    const ids = await until('every replica readable again', async () => (await call(peer.url, 'POST', '/collections/kept/points/scroll?consistency=all', { limit: 1000 })).status === 200 && scrollIds(peer, 'kept', 'all'));
    t.same(ids, expected, `every acknowledged point through ${peer.url}, consistency all`);
  }
});
