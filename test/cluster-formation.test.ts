// A cluster formed as Qdrant users form one: three peers started with the CLI (the first with
// --uri, the others with --bootstrap to it), each with its own storage and ports. Every peer
// lists the three peers with one leader, as a voter; metadata keys go through consensus; a
// restarted peer keeps its identity whatever --bootstrap says.

import t from 'tap';
import { startCluster, startPeer, until, type ClusterPeer } from './helpers/cluster.js';
import { call } from './helpers/api-http.js';

interface ClusterBody {
  status: string;
  peer_id: number;
  peers: Record<string, { uri: string }>;
  raft_info: { term: number; commit: number; pending_operations: number; leader: number | null; role: string | null; is_voter: boolean };
  consensus_thread_status: { consensus_thread_status: string };
  message_send_failures: Record<string, unknown>;
}

async function clusterOf(peer: ClusterPeer): Promise<ClusterBody> {
  const answer = await call(peer.url, 'GET', '/cluster');
  if (answer.status !== 200) throw new Error(`GET /cluster answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return (answer.body as { result: ClusterBody }).result;
}

/** Waits until every peer lists `count` peers and agrees on one leader; answers the bodies. */
function formed(peers: ClusterPeer[], count: number): Promise<ClusterBody[]> {
  return until(`${count} peers with one leader`, async () => {
    const bodies = await Promise.all(peers.map(clusterOf));
    const leaders = new Set(bodies.map((b) => b.raft_info.leader));
    const ok = bodies.every((b) => Object.keys(b.peers).length === count && b.raft_info.is_voter && b.raft_info.leader !== null) && leaders.size === 1;
    return ok && bodies;
  }, 60_000);
}

t.test('three peers form a cluster, agree on a leader, and share metadata keys', async (t) => {
  const peers = await startCluster(t, 3);
  const bodies = await formed(peers, 3);
  const ids = bodies.map((b) => b.peer_id);
  t.equal(new Set(ids).size, 3, 'three distinct peer ids');
  for (const body of bodies) {
    t.equal(body.status, 'enabled');
    t.same(Object.keys(body.peers).map(Number).sort(), [...ids].sort(), 'every peer lists the same peers');
    t.same(Object.values(body.peers).map((p) => p.uri).sort(), peers.map((p) => `${p.uri}/`).sort(), 'URIs as given, printed with a trailing slash');
    t.equal(body.consensus_thread_status.consensus_thread_status, 'working');
    t.ok(ids.includes(body.raft_info.leader!), 'the leader is one of the peers');
  }
  t.equal(bodies.filter((b) => b.raft_info.role === 'Leader').length, 1, 'exactly one peer leads');
  for (const peer of peers) {
    const ready = await fetch(`${peer.url}/readyz`);
    t.same([ready.status, await ready.text()], [200, 'all shards are ready'], 'ready once it follows the control plane');
  }

  const put = await call(peers[0].url, 'PUT', '/cluster/metadata/keys/team?wait=true', { owner: 'search', shards: [1, 2] });
  t.equal(put.status, 200, JSON.stringify(put.body));
  const keys = await call(peers[0].url, 'GET', '/cluster/metadata/keys');
  t.same((keys.body as { result: string[] }).result, ['team'], 'the writing peer has applied it (wait=true)');
  for (const peer of peers.slice(1)) {
    const value = await until('the key on every peer', async () => {
      const answer = await call(peer.url, 'GET', '/cluster/metadata/keys/team');
      const result = (answer.body as { result: unknown }).result;
      return result !== null && result;
    });
    t.same(value, { owner: 'search', shards: [1, 2] }, 'read through another peer');
  }
  const telemetry = ((await call(peers[0].url, 'GET', '/telemetry?details_level=2')).body as { result: { cluster: { enabled: boolean; status: { number_of_peers: number; peer_id: number; is_voter: boolean }; peers: Record<string, unknown>; metadata: Record<string, unknown> } } }).result.cluster;
  t.equal(telemetry.enabled, true, 'telemetry: cluster enabled');
  t.same([telemetry.status.number_of_peers, telemetry.status.peer_id, telemetry.status.is_voter], [3, ids[0], true], 'telemetry: the peer\'s consensus status');
  t.same(Object.keys(telemetry.peers).sort(), Object.keys(bodies[0].peers).sort(), 'telemetry: the peers (details level 2)');
  t.same(telemetry.metadata, { team: { owner: 'search', shards: [1, 2] } }, 'telemetry: the metadata keys');
  t.equal((await call(peers[2].url, 'DELETE', '/cluster/metadata/keys/team?wait=true')).status, 200);
  t.equal((await call(peers[2].url, 'GET', '/cluster/metadata/keys/team')).body && ((await call(peers[2].url, 'GET', '/cluster/metadata/keys/team')).body as { result: unknown }).result, null, 'deleted: null');
  t.same(((await call(peers[2].url, 'GET', '/cluster/metadata/keys')).body as { result: string[] }).result, [], 'and no longer listed');

  // Quotas: one configuration through consensus, enforced and reported by each peer.
  const quota = { enabled: true, max_disk_usage_percent: 1, release_margin_percent: 0 };
  t.equal((await call(peers[1].url, 'PUT', '/quotas?wait=true', quota)).status, 200);
  // Every peer applied it first: a peer's usage is judged by the configuration it applied.
  for (const peer of peers) {
    await until('the quota applied on every peer', async () => ((await call(peer.url, 'GET', '/quotas')).body as { result: { config: typeof quota } }).result.config.max_disk_usage_percent === 1);
  }
  for (const peer of peers) {
    const status = await until('the quota on every peer, each peer answering', async () => {
      const body = (await call(peer.url, 'GET', '/quotas')).body as { result: { config: typeof quota; peers?: Record<string, { exceeded: boolean }> } };
      const { config, peers: usage } = body.result;
      return config.enabled && config.max_disk_usage_percent === 1 && Object.keys(usage ?? {}).length === 3 && body.result;
    });
    t.same(Object.keys(status.peers!).map(Number).sort(), [...ids].sort(), 'peers: every answering peer, itself included');
    t.ok(Object.values(status.peers!).every((u) => u.exceeded), 'a disk cap of 1% is reached on every peer');
  }
});

t.test('a restarted peer rejoins with its identity, whatever --bootstrap says', async (t) => {
  const peers = await startCluster(t, 3);
  const before = await formed(peers, 3);
  const restarted = peers[2];
  t.equal(await restarted.server.stop('SIGTERM'), 0, 'stopped cleanly');
  const again = await startPeer({ storage: restarted.storage, ports: restarted.ports, bootstrap: 'http://127.0.0.1:9/' });
  t.teardown(() => again.server.stop('SIGKILL'));
  const after = await formed([peers[0], peers[1], again], 3);
  t.equal(after[2].peer_id, before[2].peer_id, 'the same peer id');
  t.same(Object.keys(after[0].peers).sort(), Object.keys(before[0].peers).sort(), 'no new peer');
});
