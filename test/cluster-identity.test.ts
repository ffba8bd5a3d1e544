// A cluster peer's identity and the decisions taken from it, without etcd: what node metadata
// keeps across starts (peer id, incarnation, token, joined, applied revision), which start a
// peer makes from its flags and stored state (Qdrant's rules), the join handshake's version and
// address rules, and the `/cluster` body built from etcd's status.

import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MetaStore } from '../src/storage/meta-store.js';
import {
  forgetMembership, openNodeIdentity, recordAppliedRevision, recordClusterMember, recordJoined,
} from '../src/cluster/node-identity.js';
import { listenPeerUrl, MembershipError, planStart } from '../src/cluster/membership.js';
import { etcdPeerUrl, joinerUri, joinMismatch, versionMismatch, type JoinRequest } from '../src/cluster/join-protocol.js';
import { clusterStatus } from '../src/cluster/raft-info.js';
import type { EtcdStatus } from '../src/cluster/etcd-gateway.js';
import { loadPeerId } from '../src/storage/peer-id.js';

async function storageDir(t: Test): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'quiver-identity-'));
  t.teardown(() => rm(path, { recursive: true, force: true }));
  return path;
}

/** Opens the node metadata at `path` for one "start", closing it at the end of `run`. */
async function withMeta<T>(path: string, run: (meta: MetaStore<unknown>) => Promise<T>): Promise<T> {
  const meta = await MetaStore.open(path);
  try {
    return await run(meta);
  } finally {
    await meta.close();
  }
}

t.test('the identity survives restarts and the incarnation grows at each start', async (t) => {
  const path = await storageDir(t);
  const first = await withMeta(path, (meta) => openNodeIdentity(meta));
  t.same({ ...first, peerId: 0 }, { peerId: 0, clusterToken: null, peerUrl: null, joined: false, incarnation: 1, appliedRevision: 0 });
  t.ok(Number.isSafeInteger(first.peerId) && first.peerId > 0, 'a random peer id below 2^53');
  t.equal(await withMeta(path, (meta) => loadPeerId(meta, null)), first.peerId, 'telemetry reports the same peer id');

  await withMeta(path, async (meta) => {
    await recordClusterMember(meta, 'uuid-1', 'http://10.0.0.1:6334');
    await recordJoined(meta);
    await recordAppliedRevision(meta, 42);
  });
  const second = await withMeta(path, (meta) => openNodeIdentity(meta, 7));
  t.same(second, { peerId: first.peerId, clusterToken: 'uuid-1', peerUrl: 'http://10.0.0.1:6334', joined: true, incarnation: 2, appliedRevision: 42 },
    'a joined peer keeps its id whatever cluster.peer_id says');
  const third = await withMeta(path, (meta) => openNodeIdentity(meta));
  t.equal(third.incarnation, 3);

  await withMeta(path, (meta) => forgetMembership(meta));
  const fourth = await withMeta(path, (meta) => openNodeIdentity(meta));
  t.same({ joined: fourth.joined, appliedRevision: fourth.appliedRevision, peerId: fourth.peerId, incarnation: fourth.incarnation },
    { joined: false, appliedRevision: 0, peerId: first.peerId, incarnation: 4 }, 'forgetting the membership keeps the id and the incarnation');
});

t.test('cluster.peer_id names a peer at its first start; a stored id wins after', async (t) => {
  const path = await storageDir(t);
  const configured = await withMeta(path, (meta) => openNodeIdentity(meta, 12345));
  t.equal(configured.peerId, 12345);
  t.equal((await withMeta(path, (meta) => openNodeIdentity(meta, 777))).peerId, 12345, 'a later cluster.peer_id does not rename the peer');
  t.equal(await withMeta(path, (meta) => loadPeerId(meta, null)), 12345, 'stored for telemetry too');
});

t.test('the start plan follows the stored state first, then the flags', async (t) => {
  const fresh = { joined: false };
  const joined = { joined: true };
  const B = 'http://10.0.0.1:6335';
  t.same(planStart({ uri: 'http://10.0.0.2:6335', reinit: false }, fresh, false), { kind: 'first-peer' });
  t.same(planStart({ bootstrap: B, reinit: false }, fresh, false), { kind: 'join', bootstrap: B, wipe: false });
  t.same(planStart({ bootstrap: B, reinit: false }, joined, true), { kind: 'restart' }, 'a restart ignores --bootstrap');
  t.same(planStart({ reinit: false }, joined, true), { kind: 'restart' });
  t.same(planStart({ reinit: false }, fresh, true), { kind: 'restart' }, 'a first peer that stopped before it was registered restarts');
  t.same(planStart({ bootstrap: B, reinit: false }, fresh, true), { kind: 'join', bootstrap: B, wipe: true }, 'an unfinished join starts over');
  t.same(planStart({ bootstrap: B, reinit: true }, joined, true), { kind: 'join', bootstrap: B, wipe: true });
  t.same(planStart({ reinit: true }, joined, true), { kind: 'reinit-alone' });
  t.same(planStart({ bootstrap: B, reinit: false }, joined, false), { kind: 'join', bootstrap: B, wipe: false }, 'a peer that lost its etcd data joins again');
  const refusal = (() => {
    try {
      planStart({ uri: 'http://10.0.0.2:6335', reinit: false }, joined, false);
    } catch (err) {
      return err;
    }
  })();
  t.ok(refusal instanceof MembershipError, 'never a second cluster from a member that lost its data');
  t.match((refusal as Error).message, /its etcd data is gone; start it with --bootstrap/);
  t.throws(() => planStart({ reinit: false }, fresh, false), /needs its own address: start it with --uri/);
});

t.test('joins need the same Quiver version, Node major and place of the control plane', async (t) => {
  const local = { quiver: '1.19.0', node: '20.11.1' };
  t.equal(versionMismatch(local, { quiver: '1.19.0', node: '20.3.0' }), null);
  t.match(versionMismatch(local, { quiver: '1.18.0', node: '20.11.1' }), /^Quiver version 1\.18\.0 cannot join a cluster running Quiver 1\.19\.0/);
  t.match(versionMismatch(local, { quiver: '1.19.0', node: '22.1.0' }), /^Node\.js 22\.1\.0 cannot join a cluster running Node\.js 20\.11\.1: .* same Node\.js major version \(20\)/);
  // Peers running their own members and peers on an external etcd never join each other.
  const joiner = { peer_id: 2, p2p_port: 6335, grpc_port: 6334, version: local };
  t.equal(joinMismatch(local, false, joiner), null);
  t.equal(joinMismatch(local, true, { ...joiner, external_etcd: { cluster: 'c' } }), null);
  t.match(joinMismatch(local, false, { ...joiner, external_etcd: { cluster: null } }), /^this cluster's peers run their own etcd members: start the joining peer without cluster\.etcd\.endpoints$/);
  t.match(joinMismatch(local, true, joiner), /^this cluster keeps its control plane in an external etcd: start the joining peer with the same cluster\.etcd\.endpoints$/);
  t.match(joinMismatch(local, true, { ...joiner, version: { quiver: '1.18.0', node: '20.11.1' } }), /^Quiver version 1\.18\.0/, 'the version first');
});

t.test('the joiner\'s addresses', async (t) => {
  const request: JoinRequest = { peer_id: 5, p2p_port: 7000, grpc_port: 7001, source_ip: '::ffff:10.1.2.3', version: { quiver: '1', node: '20' } };
  t.equal(joinerUri(request), 'http://10.1.2.3:7000', 'derived from the source address and the p2p port');
  t.equal(joinerUri({ ...request, source_ip: 'fe80::1' }), 'http://[fe80::1]:7000');
  t.equal(joinerUri({ ...request, uri: 'http://peer-5.example:6335/' }), 'http://peer-5.example:6335', 'its own URI wins');
  t.equal(etcdPeerUrl('http://peer-5.example:6335', 6334), 'http://peer-5.example:6334');
  t.equal(etcdPeerUrl('http://[fe80::1]:7000', 7001), 'http://[fe80::1]:7001');
  t.equal(listenPeerUrl('http://localhost:6334'), 'http://127.0.0.1:6334', 'etcd binds IPs only');
  t.equal(listenPeerUrl('http://127.0.0.5:6334'), 'http://127.0.0.5:6334');
  t.equal(listenPeerUrl('http://peer-5.example:6334'), 'http://0.0.0.0:6334');
  t.equal(listenPeerUrl('http://127.0.0.1:7444', 6334), 'http://127.0.0.1:6334', 'advertised on another port than it listens on (a proxy in between)');
});

t.test('/cluster from the member status', async (t) => {
  const status: EtcdStatus = { memberId: '111', leader: '222', raftTerm: 4, raftIndex: 90, raftAppliedIndex: 90, revision: 30, isLearner: false, version: '3.4.23' };
  const peers = new Map([[1, { uri: 'http://10.0.0.1:6335', etcd_member_id: '111' }], [2, { uri: 'http://10.0.0.2:6335', etcd_member_id: '222' }]]);
  const at = new Date('2026-01-02T03:04:05.678Z');
  const body = clusterStatus({
    peerId: 1, status, peers, votes: true, pendingOperations: 3, consensus: { state: 'working', lastUpdate: at },
    sendFailures: { 'http://10.0.0.2:6335/': { count: 2, latest_error: 'refused', latest_error_timestamp: at.toISOString() } },
  });
  t.same(body, {
    status: 'enabled',
    peer_id: 1,
    peers: { 1: { uri: 'http://10.0.0.1:6335/' }, 2: { uri: 'http://10.0.0.2:6335/' } },
    raft_info: { term: 4, commit: 90, pending_operations: 3, leader: 2, role: 'Follower', is_voter: true },
    consensus_thread_status: { consensus_thread_status: 'working', last_update: '2026-01-02T03:04:05.678Z' },
    message_send_failures: { 'http://10.0.0.2:6335/': { count: 2, latest_error: 'refused', latest_error_timestamp: '2026-01-02T03:04:05.678Z' } },
  });
  const leading = clusterStatus({ peerId: 1, status: { ...status, leader: '111' }, peers, votes: true, pendingOperations: 0, consensus: { state: 'stopped' }, sendFailures: {} });
  t.same([leading.raft_info.leader, leading.raft_info.role, leading.consensus_thread_status], [1, 'Leader', { consensus_thread_status: 'stopped' }]);
  const electing = clusterStatus({ peerId: 1, status: { ...status, leader: '0', isLearner: true }, peers, votes: true, pendingOperations: 0, consensus: { state: 'stopped_with_err', error: 'etcd exited' }, sendFailures: {} });
  t.same([electing.raft_info.leader, electing.raft_info.role, electing.raft_info.is_voter, electing.consensus_thread_status],
    [null, 'Candidate', false, { consensus_thread_status: 'stopped_with_err', err: 'etcd exited' }]);
  const unknownLeader = clusterStatus({ peerId: 1, status: { ...status, leader: '999' }, peers, votes: true, pendingOperations: 0, consensus: { state: 'stopped' }, sendFailures: {} });
  t.equal(unknownLeader.raft_info.leader, null, 'a leader not registered as a peer yet is unknown');
  // An external etcd: peers registered without members; whichever etcd member leads, no peer does.
  const registered = new Map([[1, { uri: 'http://10.0.0.1:6335', etcd_member_id: '' }], [2, { uri: 'http://10.0.0.2:6335', etcd_member_id: '' }]]);
  const external = clusterStatus({ peerId: 1, status: { ...status, leader: '111' }, peers: registered, votes: false, pendingOperations: 0, consensus: { state: 'stopped' }, sendFailures: {} });
  t.same([external.raft_info.term, external.raft_info.commit, external.raft_info.leader, external.raft_info.role, external.raft_info.is_voter], [4, 90, null, 'Follower', false], 'an external etcd: no peer leads or votes');
  const externalElecting = clusterStatus({ peerId: 1, status: { ...status, leader: '0' }, peers: registered, votes: false, pendingOperations: 0, consensus: { state: 'stopped' }, sendFailures: {} });
  t.equal(externalElecting.raft_info.role, null, 'no role while the external etcd elects a leader');
});
