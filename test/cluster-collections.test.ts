// Collections and points across three CLI-started peers: a collection created through one peer
// is served by every peer, its shards replicated on distinct peers; points written through any
// peer (wait=true) are read back identically through every peer with each consistency, and
// searches answer as an exact reference does; a delete is gone everywhere.

import t from 'tap';
import { call } from './helpers/api-http.js';
import { startCluster, until, type ClusterPeer } from './helpers/cluster.js';

type Envelope<T> = { result: T; status: unknown };

async function result<T>(peer: ClusterPeer, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await call(peer.url, method, path, body);
  if (answer.status !== 200) throw new Error(`${method} ${path} through ${peer.url}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return (answer.body as Envelope<T>).result;
}

const DIM = 4;
function vectorOf(i: number): number[] {
  return Array.from({ length: DIM }, (_, d) => Math.sin(i * 1.7 + d * 0.9));
}

t.test('a collection and its points across three peers', async (t) => {
  const peers = await startCluster(t, 3);
  await until('three peers', async () => (await Promise.all(peers.map((p) => result<{ peers: object }>(p, 'GET', '/cluster')))).every((b) => Object.keys(b.peers).length === 3), 60_000);

  t.equal(await result(peers[0], 'PUT', '/collections/docs?timeout=60', { vectors: { size: DIM, distance: 'Euclid' }, replication_factor: 2 }), true);
  for (const peer of peers) {
    const info = await until('the collection on every peer', async () => (await call(peer.url, 'GET', '/collections/docs')).status === 200 && result<{ config: { params: { shard_number: number; replication_factor: number } } }>(peer, 'GET', '/collections/docs'));
    t.same([info.config.params.shard_number, info.config.params.replication_factor], [3, 2], 'one shard per peer by default, two replicas each');
  }
  const layout = await Promise.all(peers.map((p) => result<{ peer_id: number; local_shards: { shard_id: number; state: string }[]; remote_shards: { shard_id: number; peer_id: number; state: string }[] }>(p, 'GET', '/collections/docs/cluster')));
  for (const shard of [0, 1, 2]) {
    const holders = layout.filter((l) => l.local_shards.some((s) => s.shard_id === shard && s.state === 'Active')).map((l) => l.peer_id);
    t.equal(new Set(holders).size, 2, `shard ${shard}: two Active replicas on distinct peers`);
  }

  const points = Array.from({ length: 60 }, (_, i) => ({ id: i + 1, vector: vectorOf(i), payload: { n: i } }));
  for (const [i, peer] of peers.entries()) {
    const part = points.filter((p) => p.id % 3 === i);
    const answer = await result<{ status: string }>(peer, 'PUT', '/collections/docs/points?wait=true', { points: part });
    t.equal(answer.status, 'completed', `points written through peer ${i + 1}`);
  }
  const expected = points.map((p) => p.id).sort((a, b) => a - b);
  for (const peer of peers) {
    for (const consistency of ['1', '2', 'majority', 'quorum', 'all']) {
      const scroll = await result<{ points: { id: number; payload: { n: number } }[] }>(peer, 'POST', `/collections/docs/points/scroll?consistency=${consistency}`, { limit: 100, with_payload: true });
      t.same(scroll.points.map((p) => p.id), expected, `scroll through ${peer.url}, consistency ${consistency}`);
      const count = await result<{ count: number }>(peer, 'POST', `/collections/docs/points/count?consistency=${consistency}`, { exact: true });
      t.equal(count.count, 60);
    }
    const query = vectorOf(7.5);
    const reference = points.map((p) => ({ id: p.id, d: p.vector.reduce((s, x, d) => s + (x - query[d]) ** 2, 0) })).sort((a, b) => a.d - b.d).slice(0, 5).map((p) => p.id);
    const hits = await result<{ points: { id: number }[] }>(peer, 'POST', '/collections/docs/points/query', { query, limit: 5, params: { exact: true } });
    t.same(hits.points.map((h) => h.id), reference, 'an exact search answers as the reference');
    const record = await result<{ id: number; payload: { n: number } }>(peer, 'GET', '/collections/docs/points/42?consistency=all');
    t.same(record.payload, { n: 41 });
  }

  t.equal(await result(peers[2], 'DELETE', '/collections/docs?timeout=60'), true);
  for (const peer of peers) {
    await until('the collection gone on every peer', async () => (await call(peer.url, 'GET', '/collections/docs')).status === 404);
  }
  t.pass('deleted everywhere');
});
