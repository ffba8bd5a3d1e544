// `GET /cluster/telemetry` and the replica gauges of `/metrics` through three CLI-started peers:
// every peer lists the three peers as responsive with their consensus details, and every replica
// of a replicated collection with its state (as `/collections/{c}/cluster` places it) and the
// figures its holder reports (the replicas of a shard agree on its points; one per shard adds up
// to the collection). A stopped peer is listed unresponsive, its details null and its replicas
// without figures, within the request's timeout; it answers again once resumed.

import t, { type Test } from 'tap';
import { Ajv } from 'ajv';
import { SHARED_RESPONSE_SCHEMAS } from '../src/api/schemas/responses/optimizations.js';
import { envelope } from '../src/api/schemas/responses/shape.js';
import { DISTRIBUTED_TELEMETRY_DATA } from '../src/api/schemas/responses/telemetry.js';
import { call } from './helpers/api-http.js';
import { startCluster, until, type ClusterPeer } from './helpers/cluster.js';

type Envelope<T> = { result: T; status: unknown };

interface Replica {
  peer_id: number;
  state: string;
  num_points?: number;
  status?: string;
}

interface Telemetry {
  collections: Record<string, { id: string; shards: { id: number; replicas: Replica[] }[] }>;
  cluster: {
    enabled: boolean;
    number_of_peers: number;
    peers: Record<string, { uri: string; responsive: boolean; details: { version: string; role: string | null; is_voter: boolean; term: number; commit: number } | null }>;
  };
}

const ajv = new Ajv({ allErrors: true, keywords: ['serde'] });
for (const [id, schema] of Object.entries(SHARED_RESPONSE_SCHEMAS)) ajv.addSchema(schema, id);
const validate = ajv.compile(envelope(DISTRIBUTED_TELEMETRY_DATA));

async function result<T>(peer: ClusterPeer, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await call(peer.url, method, path, body);
  if (answer.status !== 200) throw new Error(`${method} ${path} through ${peer.url}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return (answer.body as Envelope<T>).result;
}

/** `/cluster/telemetry` through `peer`, checked against Qdrant's DistributedTelemetryData schema. */
async function telemetry(t: Test, peer: ClusterPeer, query = ''): Promise<Telemetry> {
  const answer = await call(peer.url, 'GET', `/cluster/telemetry${query}`);
  t.equal(answer.status, 200);
  t.ok(validate(answer.body), `the answer of ${peer.url} conforms: ${ajv.errorsText(validate.errors)}`);
  return (answer.body as Envelope<Telemetry>).result;
}

function gauge(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in /metrics`);
  return Number(line.split(' ')[1]);
}

t.test('cluster telemetry lists every peer and replica, and a stopped peer as unresponsive', async (t) => {
  const peers = await startCluster(t, 3);
  const ids = await until('three peers', async () => {
    const bodies = await Promise.all(peers.map((p) => result<{ peer_id: number; peers: object }>(p, 'GET', '/cluster')));
    return bodies.every((b) => Object.keys(b.peers).length === 3) && bodies.map((b) => b.peer_id);
  }, 60_000);
  const uris = Object.fromEntries(ids.map((id, i) => [String(id), `${peers[i].uri}/`]));

  t.equal(await result(peers[0], 'PUT', '/collections/docs?timeout=60', { vectors: { size: 4, distance: 'Dot' }, replication_factor: 2 }), true);
  for (const peer of peers) await until('the collection on every peer', async () => (await call(peer.url, 'GET', '/collections/docs')).status === 200);
  const points = Array.from({ length: 45 }, (_, i) => ({ id: i + 1, vector: [i, 1, 0, 1] }));
  t.equal((await result<{ status: string }>(peers[1], 'PUT', '/collections/docs/points?wait=true', { points })).status, 'completed');

  // Where the replicas are and their states, as `/collections/{c}/cluster` tells it.
  const layout = await Promise.all(peers.map((p) => result<{ peer_id: number; local_shards: { shard_id: number; state: string; points_count: number }[] }>(p, 'GET', '/collections/docs/cluster')));
  const expected = [0, 1, 2].map((shard) => ({
    id: shard,
    replicas: layout.flatMap((l) => l.local_shards.filter((s) => s.shard_id === shard).map((s) => ({ peer_id: l.peer_id, state: s.state, num_points: s.points_count })))
      .sort((a, b) => a.peer_id - b.peer_id),
  }));
  t.ok(expected.every((s) => s.replicas.length === 2), 'two replicas per shard');

  for (const peer of peers) {
    const body = await telemetry(t, peer, '?details_level=3');
    t.same(Object.keys(body.collections), ['docs']);
    const shards = body.collections.docs.shards;
    t.same(shards.map((s) => ({ id: s.id, replicas: s.replicas.map((r) => ({ peer_id: r.peer_id, state: r.state, num_points: r.num_points })) })), expected,
      `${peer.url}: every replica on its peer, with its state and its holder's point count`);
    t.ok(shards.every((s) => s.replicas.every((r) => r.status === 'green')), 'each replica reports its status');
    t.equal(shards.reduce((n, s) => n + s.replicas[0].num_points!, 0), points.length, 'one replica per shard adds up to the collection');
    t.equal(body.cluster.enabled, true);
    t.equal(body.cluster.number_of_peers, 3);
    t.same(Object.fromEntries(Object.entries(body.cluster.peers).map(([id, p]) => [id, p.uri])), uris, 'every peer with its p2p URI');
    for (const [id, info] of Object.entries(body.cluster.peers)) {
      t.equal(info.responsive, true, `peer ${id} responsive`);
      t.ok(info.details && info.details.is_voter && info.details.term > 0 && info.details.commit > 0 && typeof info.details.version === 'string', `peer ${id} reports its consensus details`);
    }
    t.equal(Object.values(body.cluster.peers).filter((p) => p.details?.role === 'Leader').length, 1, 'one leader among the peers');

    const metrics = (await call(peer.url, 'GET', '/metrics')).body as string;
    t.same([gauge(metrics, 'collection_active_replicas_min'), gauge(metrics, 'collection_active_replicas_max'), gauge(metrics, 'collection_dead_replicas'), gauge(metrics, 'cluster_enabled')], [2, 2, 0, 1],
      'replica gauges from the cluster placement');
  }

  const stopped = peers[2];
  const stoppedId = String(ids[2]);
  stopped.server.process.kill('SIGSTOP');
  try {
    const body = await until('the stopped peer listed unresponsive', async () => {
      const answer = await telemetry(t, peers[0], '?timeout=2');
      return answer.cluster.peers[stoppedId].responsive === false && answer;
    }, 20_000);
    t.same(body.cluster.peers[stoppedId], { uri: uris[stoppedId], responsive: false, details: null }, 'no details for a peer that did not answer');
    t.equal(Object.values(body.cluster.peers).filter((p) => p.responsive).length, 2, 'the other two answer');
    const ofStopped = body.collections.docs.shards.flatMap((s) => s.replicas).filter((r) => r.peer_id === ids[2]);
    t.ok(ofStopped.length > 0 && ofStopped.every((r) => Object.keys(r).sort().join() === 'peer_id,state'), 'its replicas listed with their state only');
  } finally {
    stopped.server.process.kill('SIGCONT');
  }
  await until('the resumed peer answering again', async () => (await telemetry(t, peers[1], '?timeout=5')).cluster.peers[stoppedId].responsive, 20_000);
  t.pass('the resumed peer is responsive again');
});
