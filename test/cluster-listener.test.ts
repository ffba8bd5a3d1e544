// A peer started with `storage.node_type: Listener` (Qdrant's listener node): its replicas turn
// Listener once another replica of their shard is Active, take every update and serve no reads;
// a shard whose only replica is on the Listener peer keeps it Active. Two CLI-started peers.

import t from 'tap';
import { call } from './helpers/api-http.js';
import { startPeer, until, type ClusterPeer } from './helpers/cluster.js';
import { formed, replicaStates, result, type CollectionClusterInfo } from './helpers/cluster-api.js';

const DIM = 4;

/** Replica states of every shard as `peer` sees them: `${shard}@${peer}` -> state, in key order. */
async function states(peer: ClusterPeer, collection: string): Promise<Record<string, string>> {
  return Object.fromEntries((await replicaStates(peer, collection)).states);
}

t.test('a Listener peer\'s replicas take updates and serve no reads; a shard keeps one Active replica', async (t) => {
  const normal = await startPeer();
  t.teardown(() => normal.server.stop('SIGKILL'));
  const listener = await startPeer({ bootstrap: normal.uri, env: { QDRANT__STORAGE__NODE_TYPE: 'Listener' } });
  t.teardown(() => listener.server.stop('SIGKILL'));
  const [normalId, listenerId] = (await formed([normal, listener])).ids;

  t.equal(await result(normal, 'PUT', '/collections/both?timeout=30', { vectors: { size: DIM, distance: 'Dot' }, shard_number: 2, replication_factor: 2 }), true);
  const expected = { [`0@${normalId}`]: 'Active', [`0@${listenerId}`]: 'Listener', [`1@${normalId}`]: 'Active', [`1@${listenerId}`]: 'Listener' };
  const sorted = Object.fromEntries(Object.entries(expected).sort(([a], [b]) => (a < b ? -1 : 1)));
  for (const peer of [normal, listener]) await until(`the Listener peer's replicas Listener, as ${peer.url} sees them`, async () => JSON.stringify(await states(peer, 'both')) === JSON.stringify(sorted));

  const points = Array.from({ length: 200 }, (_, i) => ({ id: i + 1, vector: [i % 3, 1, (i % 7) / 7, 0.5], payload: { n: i + 1 } }));
  t.equal((await call(listener.url, 'PUT', '/collections/both/points?wait=true', { points })).status, 200, 'a write through the Listener peer is acknowledged');
  const own = await result<CollectionClusterInfo>(listener, 'GET', '/collections/both/cluster');
  t.equal(own.local_shards.reduce((sum, s) => sum + s.points_count, 0), 200, 'the Listener replicas took every update');
  for (let i = 0; i < 5; i++) {
    const counted = await result<{ count: number }>(listener, 'POST', '/collections/both/points/count', { exact: true });
    t.equal(counted.count, 200, 'a read through the Listener peer is served by the Active replicas');
  }

  // One replica per shard: the shard placed on the Listener peer has no other Active replica.
  t.equal(await result(normal, 'PUT', '/collections/single?timeout=30', { vectors: { size: DIM, distance: 'Dot' }, shard_number: 2, replication_factor: 1 }), true);
  const single = await until('every replica of the one-replica collection Active', async () => {
    const seen = await states(listener, 'single');
    return Object.values(seen).length === 2 && Object.values(seen).every((s) => s === 'Active') && seen;
  });
  t.ok(Object.keys(single).some((k) => k.endsWith(`@${listenerId}`)), 'a shard on the Listener peer stays Active: it is its only replica');
});
