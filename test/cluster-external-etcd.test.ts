// A cluster whose control plane is in an external etcd (`cluster.etcd.endpoints`): three
// CLI-started peers (the first with --uri, the others with --bootstrap) run no etcd member of
// their own and agree through the one the test runs. They form (no peer leads or votes), serve a
// replicated collection written through one peer and read through each with `consistency: all`,
// a peer killed and restarted keeps every acknowledged point, a peer removed with
// DELETE /cluster/peer refuses its old storage; starts that would split the control plane are
// refused with the reason: another cluster in the etcd, peers given different etcds, a joiner
// running its own member, `--reinit` alone.

import t from 'tap';
import { call } from './helpers/api-http.js';
import { etcdMemberPid, startCluster, startPeer, until, type ClusterPeer } from './helpers/cluster.js';
import { result, untilAllActive } from './helpers/cluster-api.js';
import { etcdClient, startTestEtcd } from './helpers/etcd-member.js';
import { ExternalJoinHandler } from '../src/cluster/external-join-handler.js';
import { localPeerVersion, type JoinRequest } from '../src/cluster/join-protocol.js';
import { listPeers, registerCluster, registerPeer } from '../src/cluster/peer-registry.js';

interface ClusterBody {
  peer_id: number;
  peers: Record<string, { uri: string }>;
  raft_info: { term: number; commit: number; leader: number | null; role: string | null; is_voter: boolean };
  consensus_thread_status: { consensus_thread_status: string };
}

const DIM = 4;
const POINTS = 300;

function vector(id: number): number[] {
  return Array.from({ length: DIM }, (_, d) => Math.sin(id * 0.37 + d));
}

async function pointsOf(peer: ClusterPeer, consistency: string): Promise<Map<number, unknown>> {
  const page = await result<{ points: { id: number; payload: { v: unknown } }[] }>(peer, 'POST', `/collections/ext/points/scroll?consistency=${consistency}`, { limit: POINTS + 10, with_payload: true });
  return new Map(page.points.map((p) => [p.id, p.payload.v]));
}

t.test('peers agree through an external etcd', async (t) => {
  const etcd = await startTestEtcd(t);
  const env = { QDRANT__CLUSTER__ETCD__ENDPOINTS: etcd.clientUrl };
  const peers = await startCluster(t, 3, { env });

  const bodies = await until('three peers listed by every peer', async () => {
    const all = await Promise.all(peers.map((p) => result<ClusterBody>(p, 'GET', '/cluster')));
    return all.every((b) => Object.keys(b.peers).length === 3) && all;
  }, 60_000);
  const ids = bodies.map((b) => b.peer_id);
  for (const body of bodies) {
    t.same(Object.keys(body.peers).map(Number).sort(), [...ids].sort(), 'every peer lists the same peers');
    t.same([body.raft_info.leader, body.raft_info.role, body.raft_info.is_voter], [null, 'Follower', false], 'no peer leads or votes: etcd does');
    t.ok(body.raft_info.term > 0 && body.raft_info.commit > 0, 'term and commit from the external etcd');
    t.equal(body.consensus_thread_status.consensus_thread_status, 'working');
  }
  for (const peer of peers) {
    await t.rejects(etcdMemberPid(peer), /no etcd member/, 'the peer runs no etcd member');
    const ready = await fetch(`${peer.url}/readyz`);
    t.equal(ready.status, 200, 'ready once it follows the control plane');
  }

  const created = await call(peers[0].url, 'PUT', '/collections/ext?wait=true', { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 2, replication_factor: 2 });
  t.equal(created.status, 200, JSON.stringify(created.body));
  await untilAllActive(peers, 'ext', 60_000);
  const points = Array.from({ length: POINTS }, (_, id) => ({ id, vector: vector(id), payload: { v: id * 2 } }));
  const written = await call(peers[1].url, 'PUT', '/collections/ext/points?wait=true', { points });
  t.equal(written.status, 200, JSON.stringify(written.body));
  const expected = new Map(points.map((p) => [p.id, p.payload.v]));
  for (const peer of peers) t.same(await pointsOf(peer, 'all'), expected, `every acknowledged point through ${peer.url}, consistency all`);

  // A peer killed and restarted with its storage rejoins as itself (no --bootstrap needed) and serves every point.
  const victim = peers[2];
  await victim.server.stop('SIGKILL');
  const restarted = await startPeer({ storage: victim.storage, ports: victim.ports, env });
  t.teardown(() => restarted.server.stop('SIGKILL'));
  const again = await until('the restarted peer ready', async () => (await call(restarted.url, 'GET', '/readyz')).status === 200 && result<ClusterBody>(restarted, 'GET', '/cluster'), 60_000);
  t.equal(again.peer_id, ids[2], 'the same peer id');
  t.equal(Object.keys(again.peers).length, 3, 'still three peers');
  await untilAllActive([peers[0], peers[1], restarted], 'ext', 60_000);
  t.same(await pointsOf(restarted, 'all'), expected, 'every acknowledged point after the restart');

  // Starts that would split the control plane are refused.
  await t.rejects(startPeer({ env }), /already holds another Quiver cluster/, 'a first peer against an etcd that holds a cluster');
  const other = await startTestEtcd(t, '2');
  await t.rejects(startPeer({ env: { QDRANT__CLUSTER__ETCD__ENDPOINTS: other.clientUrl }, bootstrap: peers[0].uri }), /etcd holds no cluster, this peer's holds cluster .*: give every peer the same cluster\.etcd\.endpoints/, 'a joiner given another etcd');
  await t.rejects(startPeer({ bootstrap: peers[0].uri }), /keeps its control plane in an external etcd/, 'a joiner running its own etcd member');
  await restarted.server.stop('SIGKILL');
  await t.rejects(startPeer({ storage: victim.storage, ports: victim.ports, env, args: ['--reinit'] }), /--reinit without --bootstrap/, '--reinit alone');

  // Removed (the peer is down: force drops its replicas), it refuses to come back with its old storage.
  const removed = await call(peers[0].url, 'DELETE', `/cluster/peer/${ids[2]}?force=true&timeout=30`);
  t.equal(removed.status, 200, JSON.stringify(removed.body));
  for (const peer of peers.slice(0, 2)) {
    const listed = await until('the removed peer gone', async () => {
      const body = await result<ClusterBody>(peer, 'GET', '/cluster');
      return !(String(ids[2]) in body.peers) && body;
    });
    t.same(Object.keys(listed.peers).map(Number).sort(), ids.slice(0, 2).sort(), 'two peers left');
  }
  t.same(await pointsOf(peers[0], 'all'), expected, 'every point still served by the remaining replicas');
  await t.rejects(startPeer({ storage: victim.storage, ports: victim.ports, env }), /was removed from the cluster/, 'the removed peer refuses its old storage');
  const rejoined = await startPeer({ storage: victim.storage, ports: victim.ports, env, bootstrap: peers[0].uri, args: ['--reinit'] });
  t.teardown(() => rejoined.server.stop('SIGKILL'));
  const back = await until('three peers again', async () => {
    const body = await result<ClusterBody>(peers[0], 'GET', '/cluster');
    return Object.keys(body.peers).length === 3 && body;
  }, 60_000);
  t.ok(String(ids[2]) in back.peers, '--reinit --bootstrap joins again under the same peer id');
});

t.test('the asked peer registers a joiner only into its own cluster, at an address of its own', async (t) => {
  const member = await startTestEtcd(t);
  const etcd = etcdClient(t, member.clientUrl);
  await registerCluster(etcd, { uuid: 'c-1', created_at: '2026-11-29T00:00:00Z' });
  await registerPeer(etcd, 1, { uri: 'http://10.0.0.1:6335', etcd_member_id: '', etcd_peer_url: '', version: localPeerVersion().quiver });
  const handler = new ExternalJoinHandler({ etcd, clusterToken: 'c-1', version: localPeerVersion() });
  const request = (extra: Partial<JoinRequest>): JoinRequest => ({
    peer_id: 2, p2p_port: 6335, grpc_port: 6334, version: localPeerVersion(), source_ip: '10.0.0.2', external_etcd: { cluster: 'c-1' }, ...extra,
  });
  const refusal = async (extra: Partial<JoinRequest>) => {
    const answer = await handler.handle(request(extra));
    return answer.status === 'refused' ? answer.reason : `not refused: ${JSON.stringify(answer)}`;
  };
  t.match(await refusal({ external_etcd: undefined }), /^this cluster keeps its control plane in an external etcd/, 'a joiner running its own member');
  t.match(await refusal({ external_etcd: { cluster: 'c-2' } }), /^the joining peer's etcd holds cluster c-2, this peer's holds cluster c-1/, 'a joiner whose etcd holds another cluster');
  t.match(await refusal({ external_etcd: { cluster: null } }), /^the joining peer's etcd holds no cluster/, 'a joiner whose etcd holds none');
  t.match(await refusal({ version: { quiver: '0.0.1', node: process.versions.node } }), /^Quiver version 0\.0\.1 cannot join/, 'another version');
  t.match(await refusal({ source_ip: '10.0.0.1' }), /^URI http:\/\/10\.0\.0\.1:6335 belongs to peer 1/, 'the address of a registered peer');
  t.same((await listPeers(etcd)).size, 1, 'no refused joiner registered');

  t.same(await handler.handle(request({})), { status: 'accepted', members: [], cluster_token: 'c-1', uri: 'http://10.0.0.2:6335', peer_url: '' }, 'the URI derived from the source address');
  t.same(await handler.handle(request({ uri: 'http://peer-2:6335' })), { status: 'accepted', members: [], cluster_token: 'c-1', uri: 'http://peer-2:6335', peer_url: '' }, 'a peer joining again with its own URI');
  t.same((await listPeers(etcd)).get(2), { uri: 'http://peer-2:6335', etcd_member_id: '', etcd_peer_url: '', version: localPeerVersion().quiver }, 'registered without an etcd member, the newer record kept');
});
