// Cluster membership with real etcd members on loopback: the gateway's membership calls and
// their typed errors, a first peer's bootstrap, joins as learners promoted to voters (one
// learner at a time, the next told to retry), a restart from the data folder with bogus flags,
// `--reinit --bootstrap`, version refusals, liveness by lease, and `/cluster` from every peer.
// The join's transport is a direct call of the asked peer's handler (the p2p route's job).

import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Ajv } from 'ajv';
import { Etcd3 } from 'etcd3';
import { CLUSTER_STATUS } from '../src/api/schemas/responses/cluster.js';
import { SHARED_RESPONSE_SCHEMAS } from '../src/api/schemas/responses/optimizations.js';
import {
  EtcdError, EtcdGateway, EtcdUnreachable, isAlreadyVoter, isLearnerNotReady, isMemberExists, isMemberNotFound, isTooManyLearners,
} from '../src/cluster/etcd-gateway.js';
import { JoinHandler } from '../src/cluster/join-handler.js';
import { localPeerVersion, type JoinAnswer, type JoinBody } from '../src/cluster/join-protocol.js';
import { livePeers, Liveness } from '../src/cluster/liveness.js';
import { JoinRefused, planStart, startMembership, type LocalMembership, type StartFlags } from '../src/cluster/membership.js';
import { openNodeIdentity, type NodeIdentity } from '../src/cluster/node-identity.js';
import { listPeers } from '../src/cluster/peer-registry.js';
import { CLUSTER_KEY, clusterNamespace } from '../src/cluster/keys.js';
import { clusterStatus } from '../src/cluster/raft-info.js';
import { MetaStore } from '../src/storage/meta-store.js';
import { startTestEtcd } from './helpers/etcd-member.js';
import { freePort } from './helpers/server.js';

async function until<T>(what: string, check: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

function caught(run: () => Promise<unknown>): Promise<unknown> {
  return run().then(() => null, (err: unknown) => err);
}

t.test('the gateway: learners, promotion, removal and their errors', async (t) => {
  const member = await startTestEtcd(t);
  const gateway = new EtcdGateway(member.clientUrl);
  const status = await until('a leader', async () => {
    const s = await gateway.status();
    return s.leader !== '0' && s;
  });
  t.equal(status.leader, status.memberId, 'a one-member cluster leads itself');
  t.equal(status.isLearner, false);
  t.ok(status.raftTerm >= 1 && status.raftIndex >= 1 && status.raftAppliedIndex !== null && status.revision >= 1, 'counts read as numbers');

  const [self] = await gateway.memberList();
  t.same(self, { id: status.memberId, name: '1', peerURLs: self.peerURLs, clientURLs: [member.clientUrl], isLearner: false });

  const peerUrl = `http://127.0.0.1:${await freePort()}`;
  const added = await gateway.memberAdd([peerUrl], { isLearner: true });
  t.same(added.member, { id: added.member.id, name: '', peerURLs: [peerUrl], clientURLs: [], isLearner: true }, 'an unstarted learner has no name');
  t.equal(added.members.length, 2);

  const otherUrl = `http://127.0.0.1:${await freePort()}`;
  const second = await caught(() => gateway.memberAdd([otherUrl], { isLearner: true }));
  t.ok(isTooManyLearners(second), 'etcd 3.4 holds one learner at a time');
  t.ok(second instanceof EtcdError && second.code === 9);
  t.ok(isMemberExists(await caught(() => gateway.memberAdd([peerUrl], { isLearner: true }))), 'the same peer URL twice');
  t.ok(isLearnerNotReady(await caught(() => gateway.memberPromote(added.member.id))), 'a learner that never ran cannot be promoted');
  t.ok(isAlreadyVoter(await caught(() => gateway.memberPromote(status.memberId))));
  const missing = await caught(() => gateway.memberRemove('12345'));
  t.ok(isMemberNotFound(missing) && (missing as EtcdError).code === 5);
  t.same((await gateway.memberRemove(added.member.id)).map((m) => m.id), [status.memberId]);

  const closedPort = await freePort();
  t.ok(await caught(() => new EtcdGateway(`http://127.0.0.1:${closedPort}`).status()) instanceof EtcdUnreachable, 'nothing listening');
  const silent = createServer(() => undefined).listen(0, '127.0.0.1');
  t.teardown(() => silent.close());
  await new Promise((resolve) => silent.once('listening', resolve));
  const hung = await caught(() => new EtcdGateway(`http://127.0.0.1:${(silent.address() as { port: number }).port}`, 300).memberList());
  t.ok(hung instanceof EtcdUnreachable && /within 300 ms/.test((hung as Error).message), 'every call is bounded');
});

// --- peers as a Quiver process would run them, without HTTP ---

interface Slot {
  dir: string;
  p2pPort: number;
  grpcPort: number;
  /** The URI a bootstrap peer derives for it (and a first peer's --uri). */
  uri: string;
}

interface RunningPeer {
  slot: Slot;
  identity: NodeIdentity;
  etcd: Etcd3;
  membership: LocalMembership;
  stop(): Promise<void>;
}

const handlers = new Map<string, JoinHandler>();
const running = new Set<RunningPeer>();
const slots: Slot[] = [];

async function sendJoin(bootstrap: string, body: JoinBody): Promise<JoinAnswer> {
  const handler = handlers.get(bootstrap);
  if (!handler) throw new Error(`connect ECONNREFUSED ${bootstrap}`);
  return handler.handle({ ...body, source_ip: '127.0.0.1' });
}

async function newSlot(): Promise<Slot> {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-peer-'));
  const p2pPort = await freePort();
  const slot = { dir, p2pPort, grpcPort: await freePort(), uri: `http://127.0.0.1:${p2pPort}` };
  slots.push(slot);
  return slot;
}

async function startPeer(slot: Slot, flags: StartFlags, configuredPeerId?: number): Promise<RunningPeer> {
  const meta = await MetaStore.open(slot.dir);
  const etcdDir = join(slot.dir, 'cluster', 'etcd');
  const clientPort = await freePort();
  const etcd = new Etcd3({ hosts: `http://127.0.0.1:${clientPort}`, dialTimeout: 2_000 });
  try {
    const identity = await openNodeIdentity(meta, configuredPeerId);
    const plan = planStart(flags, identity, existsSync(etcdDir));
    const membership = await startMembership({
      plan, identity, meta, uri: flags.uri, p2pPort: slot.p2pPort, grpcPort: slot.grpcPort,
      member: { dataDir: etcdDir, clientPort, tickMs: 100 }, etcd, sendJoin,
    });
    const handler = new JoinHandler({ gateway: membership.gateway, etcd, clusterToken: membership.clusterToken, version: localPeerVersion() });
    handlers.set(slot.uri, handler);
    const peer: RunningPeer = {
      slot, identity, etcd, membership,
      async stop() {
        running.delete(peer);
        handlers.delete(slot.uri);
        await handler.stop();
        etcd.close();
        await membership.member.stop();
        await meta.close();
      },
    };
    running.add(peer);
    return peer;
  } catch (err) {
    etcd.close();
    await meta.close();
    throw err;
  }
}

t.teardown(async () => {
  for (const peer of [...running]) await peer.stop();
  for (const slot of slots) await rm(slot.dir, { recursive: true, force: true });
});

const peers: RunningPeer[] = [];

t.test('a first peer bootstraps a cluster and registers itself', async (t) => {
  const slot = await newSlot();
  const a = await startPeer(slot, { uri: slot.uri, reinit: false });
  peers.push(a);
  t.equal(a.identity.incarnation, 1);
  const cluster = JSON.parse((await clusterNamespace(a.etcd).get(CLUSTER_KEY).string())!) as { uuid: string; created_at: string };
  t.equal(cluster.uuid, a.membership.clusterToken, 'the cluster record carries the token');
  const status = await a.membership.gateway.status();
  t.same(Object.fromEntries(await listPeers(a.etcd)), {
    [a.identity.peerId]: { uri: slot.uri, etcd_member_id: status.memberId, etcd_peer_url: `http://127.0.0.1:${slot.grpcPort}`, version: localPeerVersion().quiver },
  });
});

t.test('joiners enter as learners, one at a time, and become voters', async (t) => {
  const [a] = peers;
  const handler = handlers.get(a.slot.uri)!;
  const [slotB, slotC] = [await newSlot(), await newSlot()];
  const body = (slot: Slot, peerId: number): JoinBody => ({ peer_id: peerId, p2p_port: slot.p2pPort, grpc_port: slot.grpcPort, version: localPeerVersion() });
  // Peer ids are known in advance: cluster.peer_id names a peer that has not joined.
  const [idB, idC] = [1002, 1003];

  // B's first ask (as if its answer had been lost): B is a learner that does not run yet.
  const first = await handler.handle({ ...body(slotB, idB), source_ip: '127.0.0.1' });
  t.equal(first.status, 'accepted');
  if (first.status !== 'accepted') return;
  t.equal(first.cluster_token, a.membership.clusterToken);
  t.equal(first.uri, slotB.uri, 'the URI derived from the source address and the p2p port');
  t.same(first.members.map((m) => m.name).sort(), [String(a.identity.peerId), String(idB)].sort());
  const meanwhile = await handler.handle({ ...body(slotC, idC), source_ip: '127.0.0.1' });
  t.same(meanwhile, { status: 'retry', reason: 'another peer is joining the cluster', retry_after_ms: 250 }, 'a second learner waits');

  // Both start together: B is answered again, C retries until B is a voter.
  const joinA = { bootstrap: a.slot.uri, reinit: false };
  const [b, c] = await Promise.all([startPeer(slotB, joinA, idB), startPeer(slotC, joinA, idC)]);
  peers.push(b, c);
  for (const peer of [b, c]) {
    const status = await peer.membership.gateway.status();
    t.equal(status.isLearner, false, `peer ${peer.identity.peerId} is a voter`);
  }
  const members = await a.membership.gateway.memberList();
  t.same(members.map((m) => [m.name, m.isLearner]).sort(), [[String(a.identity.peerId), false], [String(idB), false], [String(idC), false]].sort());
  const registered = await until('three registered peers', async () => {
    const listed = await listPeers(a.etcd);
    return listed.size === 3 && listed;
  });
  t.same([...registered.keys()].sort(), [a.identity.peerId, idB, idC].sort());
  for (const peer of [b, c]) {
    t.same(registered.get(peer.identity.peerId), {
      uri: peer.slot.uri, etcd_member_id: (await peer.membership.gateway.status()).memberId, etcd_peer_url: `http://127.0.0.1:${peer.slot.grpcPort}`, version: localPeerVersion().quiver,
    });
  }
});

t.test('/cluster on every peer fits Qdrant\'s schema and names one leader', async (t) => {
  const ajv = new Ajv({ allErrors: true, keywords: ['serde'] });
  for (const [id, schema] of Object.entries(SHARED_RESPONSE_SCHEMAS)) ajv.addSchema(schema, id);
  const validate = ajv.compile(CLUSTER_STATUS);
  const bodies = await until('every peer to know the leader', async () => {
    const built = await Promise.all(peers.map(async (peer) => clusterStatus({
      peerId: peer.identity.peerId,
      status: await peer.membership.gateway.status(),
      peers: await listPeers(peer.etcd),
      votes: true,
      pendingOperations: 0,
      consensus: { state: 'working', lastUpdate: new Date() },
      sendFailures: {},
    })));
    return built.every((body) => body.raft_info.leader !== null) && built;
  });
  for (const body of bodies) t.ok(validate(body), `peer ${body.peer_id}: ${ajv.errorsText(validate.errors)}`);
  t.equal(new Set(bodies.map((body) => body.raft_info.leader)).size, 1, 'one leader agreed by all');
  t.same(bodies.map((body) => body.raft_info.role).filter((role) => role === 'Leader').length, 1);
  t.same(bodies[0].peers[String(peers[1].identity.peerId)], { uri: `${peers[1].slot.uri}/` }, 'URIs printed with their trailing slash');
  t.ok(bodies.every((body) => body.raft_info.is_voter && body.raft_info.commit > 0 && body.raft_info.term > 0));
});

t.test('a restart keeps the identity whatever the flags say', async (t) => {
  const b = peers[1];
  const before = { peerId: b.identity.peerId, memberId: (await b.membership.gateway.status()).memberId, incarnation: b.identity.incarnation };
  await b.stop();
  const again = await startPeer(b.slot, { bootstrap: 'http://127.0.0.1:1', uri: 'http://192.0.2.1:9', reinit: false }, 4242);
  peers[1] = again;
  t.equal(again.identity.peerId, before.peerId, 'cluster.peer_id does not rename a member');
  t.equal(again.identity.incarnation, before.incarnation + 1, 'one more incarnation');
  const status = await until('the member back as a voter', async () => {
    const s = await again.membership.gateway.status();
    return !s.isLearner && s.leader !== '0' && s;
  });
  t.equal(status.memberId, before.memberId, 'the same etcd member');
  t.equal((await again.membership.gateway.memberList()).length, 3);
  await again.etcd.put('quiver/test/after-restart').value('1');
  t.equal(await peers[0].etcd.get('quiver/test/after-restart').string(), '1', 'it commits with the others');
});

t.test('--reinit --bootstrap joins again as a new member with the same peer id', async (t) => {
  const c = peers[2];
  const before = { peerId: c.identity.peerId, memberId: (await c.membership.gateway.status()).memberId };
  await c.stop();
  const again = await startPeer(c.slot, { bootstrap: peers[0].slot.uri, reinit: true });
  peers[2] = again;
  t.equal(again.identity.peerId, before.peerId);
  const status = await again.membership.gateway.status();
  t.not(status.memberId, before.memberId, 'a new etcd member');
  const members = await peers[0].membership.gateway.memberList();
  t.same(members.map((m) => m.name).sort(), peers.map((p) => String(p.identity.peerId)).sort(), 'the old member was removed');
  const record = await until('the record to name the new member', async () => {
    const listed = (await listPeers(peers[0].etcd)).get(before.peerId);
    return listed?.etcd_member_id === status.memberId && listed;
  });
  t.equal(record.uri, again.slot.uri);
});

t.test('a peer of another Node major or Quiver version is refused', async (t) => {
  const handler = handlers.get(peers[0].slot.uri)!;
  const slot = await newSlot();
  const body = { peer_id: 1009, p2p_port: slot.p2pPort, grpc_port: slot.grpcPort, source_ip: '127.0.0.1' };
  const local = localPeerVersion();
  const otherNode = await handler.handle({ ...body, version: { ...local, node: `${Number(local.node.split('.')[0]) + 1}.0.0` } });
  t.equal(otherNode.status, 'refused');
  t.match(otherNode.status === 'refused' && otherNode.reason, /needs the same Node\.js major version/);
  const otherQuiver = await handler.handle({ ...body, version: { ...local, quiver: '0.0.1' } });
  t.match(otherQuiver.status === 'refused' && otherQuiver.reason, /^Quiver version 0\.0\.1 cannot join a cluster running Quiver/);
  t.equal((await peers[0].membership.gateway.memberList()).length, 3, 'no member added');

  const meta = await MetaStore.open(slot.dir);
  t.teardown(() => meta.close());
  const identity = await openNodeIdentity(meta);
  const refused = await caught(() => startMembership({
    plan: { kind: 'join', bootstrap: peers[0].slot.uri, wipe: false }, identity, meta, p2pPort: slot.p2pPort, grpcPort: slot.grpcPort,
    member: { dataDir: join(slot.dir, 'cluster', 'etcd'), clientPort: 1, tickMs: 100 }, etcd: peers[0].etcd, sendJoin,
    version: { ...local, quiver: '0.0.1' },
  }));
  t.ok(refused instanceof JoinRefused, 'the joiner stops at once');
  t.match((refused as Error).message, /cannot join the cluster: Quiver version 0\.0\.1/);
  t.notOk(existsSync(join(slot.dir, 'cluster', 'etcd')), 'no member was started');
});

t.test('liveness: the live key lasts while kept alive, comes back when its lease is lost, goes at stop', async (t) => {
  const a = peers[0];
  const record = { process_id: 'p-1', started_at: new Date().toISOString() };
  const losses: string[] = [];
  const liveness = await Liveness.start(a.etcd, a.identity.peerId, record, { ttlSec: 2, onLost: (reason) => losses.push(reason) });
  t.teardown(() => liveness.stop());
  t.same((await livePeers(peers[1].etcd)).get(a.identity.peerId), record, 'seen from another peer');
  // Kept alive: present through twice the TTL.
  const keptUntil = Date.now() + 4_000;
  let present = true;
  while (Date.now() < keptUntil && present) {
    present = (await livePeers(a.etcd)).has(a.identity.peerId);
    await sleep(200);
  }
  t.ok(present, 'kept past its TTL');

  const lost = (await liveness.leaseId())!;
  await a.etcd.leaseClient.leaseRevoke({ ID: lost });
  const renewed = await until('a new lease', async () => {
    const id = await liveness.leaseId();
    return id !== null && id !== lost && (await livePeers(a.etcd)).has(a.identity.peerId) && id;
  });
  t.not(renewed, lost);
  t.match(losses[0], /^the liveness lease was lost/);

  await liveness.stop();
  t.notOk((await livePeers(a.etcd)).has(a.identity.peerId), 'revoked at stop');
});

t.test('liveness: the live key of a killed process expires with its lease', async (t) => {
  const a = peers[0];
  const script = `
    const { Etcd3 } = await import('etcd3');
    const { Liveness } = await import(${JSON.stringify(new URL('../src/cluster/liveness.ts', import.meta.url).href)});
    const etcd = new Etcd3({ hosts: ${JSON.stringify(a.membership.member.clientUrl)} });
    await Liveness.start(etcd, 777, { process_id: 'child', started_at: new Date().toISOString() }, { ttlSec: 2 });
    process.stdout.write('live\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => child.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('live\n')) resolve();
    });
    child.once('exit', () => reject(new Error(`the child exited before its key was live: ${out}`)));
  });
  t.ok((await livePeers(a.etcd)).has(777), 'live while the process runs');
  child.kill('SIGKILL');
  const killedAt = Date.now();
  await until('the key to expire', async () => !(await livePeers(a.etcd)).has(777));
  t.ok(Date.now() - killedAt < 10_000, 'gone within a few TTLs');
});

t.test('a learner that never catches up is removed, so later joins are not blocked', async (t) => {
  const a = peers[0];
  const failures: string[] = [];
  const handler = new JoinHandler({
    gateway: a.membership.gateway, etcd: a.etcd, clusterToken: a.membership.clusterToken, version: localPeerVersion(), promoteTimeoutMs: 500,
    onPromoteFailure: (peerId, reason) => failures.push(`${peerId}: ${reason}`),
  });
  t.teardown(() => handler.stop());
  const ghost = { peer_id: 1010, p2p_port: await freePort(), grpc_port: await freePort(), source_ip: '127.0.0.1', version: localPeerVersion() };
  // Run last, when etcd's 5 s wait after the last join is over; waiting for it stays bounded.
  const answer = await until('the ghost to be added', async () => {
    const answered = await handler.handle(ghost);
    return answered.status === 'accepted' && answered;
  });
  t.equal(answer.members.length, 4);
  await until('the ghost learner to be removed', async () => (await a.membership.gateway.memberList()).length === 3);
  t.match(failures, [/^1010: peer 1010 did not catch up with the cluster within the promotion bound .*; its learner member was removed$/]);
  t.notOk((await listPeers(a.etcd)).has(1010), 'never registered');
});
