// The data path across peers, in one process: one etcd, three peers (each its own storage folder,
// one shard worker, a p2p server with its PeerHost, a p2p client, an apply loop over the shared
// etcd and a ClusterPlacement). Collections are created through the control plane; each peer
// opens its own replicas and marks them Active, as the reconcile does in production. Then,
// through the peers' replica sets and collections: writes reach every replica; each read
// consistency resolves as Qdrant's rules say over replicas made to differ; medium and strong
// ordering forward to the leader; a peer restarted with a new incarnation writes tags no replica
// holds yet; a failed replica becomes Dead before the write's answer (wcf=1), or the write fails
// with the replica's error (wcf=2); a set follows a later view's membership.

import { Etcd3 } from 'etcd3';
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromCreateRequest } from '../src/api/collection-config.js';
import { ApplyLoop } from '../src/cluster/apply-loop.js';
import { ClusterPlacement } from '../src/cluster/cluster-placement.js';
import { ControlPlane } from '../src/cluster/control-plane.js';
import type { EtcdMember } from '../src/cluster/etcd-process.js';
import { clusterNamespace } from '../src/cluster/keys.js';
import { openNodeIdentity } from '../src/cluster/node-identity.js';
import { PeerHost, revisionWait } from '../src/cluster/p2p-host.js';
import { registerPeer } from '../src/cluster/peer-registry.js';
import { Collection } from '../src/collection/collection.js';
import { optimizerSpecOf, sparseSpecsOf, vectorSpecsOf, walSpecOf, type CollectionConfig } from '../src/collection/config-model.js';
import type { CollectionRecord } from '../src/collection/manager.js';
import { P2pClient, PeerUnreachable } from '../src/peer/p2p-client.js';
import { P2pServer } from '../src/peer/p2p-server.js';
import { OperationClock } from '../src/replica/operation-clock.js';
import type { ReplicaSet } from '../src/replica/replica-set.js';
import type { ReplicaTask, ShardContent, WriteOrdering } from '../src/replica/replica.js';
import { withReadScope, withWriteScope, type ReadConsistency } from '../src/replica/request-scope.js';
import { applyAcross } from '../src/replica/shard-writes.js';
import { shardOf } from '../src/shard/routing.js';
import type { PointView } from '../src/shard/selectors.js';
import type { PointRecord, WriteOp } from '../src/shard/write-ops.js';
import { MetaStore } from '../src/storage/meta-store.js';
import { ShardWorkers } from '../src/worker/pool.js';
import { until } from './helpers/cluster.js';
import { startTestEtcd } from './helpers/etcd-member.js';
import { quiverFailure } from './helpers/quiver-failure.js';

const WAIT_MS = 15_000;
const ALL = { withPayload: { all: true }, withVector: true } as const;

interface Peer {
  id: number;
  storage: string;
  incarnation: number;
  control: ControlPlane;
  placement: ClusterPlacement;
  loop: ApplyLoop;
  collections: Map<string, Collection>;
  uri: string;
  port: number;
  /** Updates this peer applied as the leader for another peer. */
  forwarded: number;
  server: P2pServer;
  /** Starts the p2p server again on the same port (after `server.stop()`). */
  restartServer(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts peer `id` on `storage` (its identity's incarnation counts up at each start). */
async function startPeer(t: Test, member: EtcdMember, id: number, storage: string): Promise<Peer> {
  const meta = await MetaStore.open(storage);
  const { incarnation } = await openNodeIdentity(meta, id);
  await meta.close();
  const workers = new ShardWorkers(1);
  const etcd = new Etcd3({ hosts: member.clientUrl });
  const namespace = clusterNamespace(etcd);
  const control = new ControlPlane(namespace);
  const collections = new Map<string, Collection>();
  let loop: ApplyLoop | null = null;
  const client = new P2pClient({ connectionTimeoutMs: 2000, requestTimeoutMs: 10_000, apiKey: null, appliedRevision: () => loop?.appliedRevision ?? 0 });
  const waitApplied = (revision: number, ms: number) => loop!.waitApplied(revision, ms);
  const placement = new ClusterPlacement({ storagePath: storage, workers, peer: id, incarnation, proposer: control, waitApplied, client, deactivationTimeoutMs: 10_000 });
  loop = new ApplyLoop({ namespace, onApply: async (view) => placement.applyView(view) });
  const host = new PeerHost({ placement, collection: (name) => collections.get(name), awaitRevision: revisionWait(waitApplied) });
  const serve = () => {
    const server = new P2pServer({ host, apiKey: null, revisionWaitMs: 5000 });
    server.app.addHook('onResponse', async (request) => {
      if (request.url.endsWith('/forward')) peer.forwarded++;
    });
    return server;
  };
  const server = serve();
  const uri = await server.start('127.0.0.1', 0);
  const port = Number(new URL(uri).port);
  await registerPeer(etcd, id, { uri, etcd_member_id: String(id), etcd_peer_url: `http://127.0.0.1:${port + 1}`, version: 'test' });
  await loop.start();
  let stopped = false;
  const peer: Peer = {
    id, storage, incarnation, control, placement, loop, collections, uri, port, forwarded: 0, server,
    async restartServer() {
      peer.server = serve();
      await peer.server.start('127.0.0.1', port);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await peer.server.stop();
      await loop!.stop();
      await client.close();
      await workers.close();
      etcd.close();
    },
  };
  t.teardown(() => peer.stop());
  return peer;
}

function config(body: Record<string, unknown>): CollectionConfig {
  return fromCreateRequest({ vectors: { size: 4, distance: 'Euclid' }, ...body } as Parameters<typeof fromCreateRequest>[0], 3);
}

function contentOf(config: CollectionConfig): ShardContent {
  return { vectors: vectorSpecsOf(config), sparseVectors: sparseSpecsOf(config), indexes: [], optimizer: optimizerSpecOf(config), wal: walSpecOf(config) };
}

/** Waits until every peer applied `revision`. */
async function appliedEverywhere(peers: readonly Peer[], revision: number): Promise<void> {
  await Promise.all(peers.map((p) => p.loop.waitApplied(revision, WAIT_MS)));
}

/** `peer`'s collection as the manager would instantiate it from `record`: its sets from the peer's placement, its clock the peer's. */
function instantiate(peer: Peer, record: CollectionRecord): Collection {
  const shards = Array.from({ length: record.config.params.shardNumber }, (_, i) => peer.placement.replicaSet({ collection: record.name, shard: i }, record.storageId, () => record.config.params));
  const { config: c } = record;
  const collection = new Collection(record.name, { keys: null, shards }, vectorSpecsOf(c), sparseSpecsOf(c), [], optimizerSpecOf(c), walSpecOf(c), c.strictMode, peer.placement.newClock());
  peer.collections.set(record.name, collection);
  return collection;
}

/**
 * Creates a collection through the control plane, then on every peer what the reconcile does:
 * the collection instantiated, its own replicas opened, then marked Active. Answers the record
 * and where each shard's replicas are.
 */
async function createCollection(peers: readonly Peer[], name: string, body: Record<string, unknown>): Promise<{ record: CollectionRecord; placed: Map<number, number[]> }> {
  const { revision, record, placement: placed } = await peers[0].control.createCollection(name, config(body));
  await appliedEverywhere(peers, revision);
  let last = revision;
  for (const peer of peers) {
    instantiate(peer, record);
    for (const [shard, holders] of placed) {
      if (!holders.includes(peer.id)) continue;
      const local = peer.placement.localShard(name, shard);
      await local!.replica.run({ type: 'open', spec: contentOf(record.config) }, null);
      const change = await peer.control.setReplicaState(name, shard, peer.id, 'Active', ['Initializing']);
      last = Math.max(last, change.revision);
    }
  }
  await appliedEverywhere(peers, last);
  return { record, placed };
}

function vectorOf(i: number): Float32Array {
  return new Float32Array([Math.sin(i), Math.cos(i), (i % 5) / 5, i / 50]);
}

function upsert(points: PointRecord[]): WriteOp {
  return { kind: 'upsert', points, mode: 'upsert', updateFilter: null };
}

function point(id: number, v: number): PointRecord {
  return { id, vectors: { '': vectorOf(v) }, payload: { v } };
}

function write(peer: Peer, name: string, ops: WriteOp[], ordering: WriteOrdering = 'weak', wait = true) {
  return withWriteScope(ordering, () => peer.collections.get(name)!.write(ops.map((op) => ({ op })), wait));
}

/** A point as the tests compare it: id, vector, payload. */
function plain(p: PointView): [unknown, number[], unknown] {
  return [p.id, Array.from(p.vectors![''] as Float32Array | number[]), p.payload];
}

const SCROLL_ALL: ReplicaTask = { type: 'scroll', filter: null, from: null, limit: 1000, shape: ALL, orderBy: null };

/** What `peer`'s own replica of a shard holds. */
async function localPoints(peer: Peer, name: string, shard: number): Promise<[unknown, number[], unknown][]> {
  const points = (await peer.placement.localShard(name, shard)!.replica.run(SCROLL_ALL, null)) as PointView[];
  return points.map(plain);
}

/** The reference: the points written last per id, those of `shard` of `count`, in id order. */
function expectedPoints(reference: Map<number, number>, shard: number, count: number): [unknown, number[], unknown][] {
  return [...reference].filter(([id]) => shardOf(id, count) === shard).sort(([a], [b]) => a - b).map(([id, v]) => [id, Array.from(vectorOf(v)), { v }]);
}

function setOf(peer: Peer, name: string, shard: number): ReplicaSet {
  return peer.collections.get(name)!.shards.find((s) => s.id === shard)!;
}


/** The whole file's test: a peer started in a subtest lives on after it. */
const root = t;
const member = await startTestEtcd(t);
const storages = await Promise.all([1, 2, 3].map(() => mkdtemp(join(tmpdir(), 'quiver-data-path-'))));
t.teardown(() => Promise.all(storages.map((s) => rm(s, { recursive: true, force: true }))));
const peers = await Promise.all([1, 2, 3].map((id, i) => startPeer(t, member, id, storages[i])));
const [p1, p2, p3] = peers;

t.test('writes through any peer reach every replica, identical on each', async (t) => {
  const { placed } = await createCollection(peers, 'rep', { shard_number: 2, replication_factor: 3 });
  t.strictSame([...placed.values()].map((ps) => [...ps].sort()), [[1, 2, 3], [1, 2, 3]], 'every shard on every peer');
  const reference = new Map<number, number>();
  for (const [i, peer] of peers.entries()) {
    const points = Array.from({ length: 20 }, (_, k) => point(k * 3 + i, k * 3 + i));
    const answers = await write(peer, 'rep', [upsert(points)]);
    t.equal(answers[0].status, 'completed');
    for (const p of points) reference.set(Number(p.id), Number((p.payload as { v: number }).v));
  }
  // Overwrites through another peer than the first write's.
  await write(p3, 'rep', [upsert([point(0, 100), point(1, 101)])]);
  reference.set(0, 100).set(1, 101);
  for (const shard of [0, 1]) {
    const expected = expectedPoints(reference, shard, 2);
    t.ok(expected.length > 0, `shard ${shard} holds points`);
    for (const peer of peers) t.strictSame(await localPoints(peer, 'rep', shard), expected, `shard ${shard} on peer ${peer.id} as written`);
  }
});

t.test('each read consistency resolves the replicas\' answers as Qdrant does', async (t) => {
  // Peer 3's replica of shard 0 gets a point no other replica has (a replica behind the others
  // looks the same from a reader's side): reads needing more than one answer leave it out.
  const extra = Array.from({ length: 100 }, (_, i) => 1000 + i).find((id) => shardOf(id, 2) === 0)!;
  const tag = { peer: 99, clockId: 0, tick: 1 };
  await p3.placement.localShard('rep', 0)!.replica.run({ type: 'apply', ops: [upsert([point(extra, 7)])], opId: 9999, clock: tag, wait: true, dryRun: false }, null);
  const common = await localPoints(p1, 'rep', 0);
  const withExtra = await localPoints(p3, 'rep', 0);
  t.equal(withExtra.length, common.length + 1, 'peer 3 holds one point more');
  const retrieve: ReplicaTask = { type: 'retrieve', ids: [0, 3, extra], shape: ALL };
  const retrieved = (rows: [unknown, number[], unknown][]) => rows.filter(([id]) => id === 0 || id === 3 || id === extra);
  const consistencies: ReadConsistency[] = [1, 2, 3, 'majority', 'quorum', 'all'];
  for (const peer of peers) {
    for (const consistency of consistencies) {
      const read = <T extends ReplicaTask>(task: T) => withReadScope({ consistency }, 'Retrieve', () => setOf(peer, 'rep', 0).read(task, null));
      // One answer is the local replica's (asked first); more resolve to what enough of them hold.
      const one = consistency === 1;
      const expected = one ? (peer === p3 ? withExtra : common) : common;
      const scrolled = ((await read(SCROLL_ALL)) as PointView[]).map(plain);
      t.strictSame(scrolled, expected, `scroll through peer ${peer.id}, consistency ${consistency}`);
      t.strictSame(((await read(retrieve)) as PointView[]).map(plain), retrieved(expected), `retrieve through peer ${peer.id}, consistency ${consistency}`);
      // Counts: All -> the least answer, Majority -> the median of the answers.
      const count = await read({ type: 'count', filter: null });
      t.equal(count, expected.length, `count through peer ${peer.id}, consistency ${consistency}`);
    }
  }
  // The replica catches up (the same point through the set): every consistency agrees again.
  await write(p1, 'rep', [upsert([point(extra, 7)])]);
  for (const consistency of consistencies) {
    const scrolled = await withReadScope({ consistency }, 'Scroll', () => setOf(p2, 'rep', 0).read(SCROLL_ALL, null));
    t.strictSame((scrolled as PointView[]).map(plain), withExtra, `consistency ${consistency} after the catch-up`);
  }
});

t.test('medium and strong ordering forward the update to the leader, whose answer comes back', async (t) => {
  await createCollection(peers, 'ord', { shard_number: 1, replication_factor: 3 });
  const clocksOf = async (peer: Peer) => (await peer.placement.localShard('ord', 0)!.replica.run({ type: 'recovery_point' }, null)).clocks;
  const before = p3.forwarded;
  for (const [i, ordering] of (['medium', 'strong'] as const).entries()) {
    const answers = await write(p1, 'ord', [upsert([point(i, 10 + i)])], ordering);
    t.equal(answers[0].status, 'completed', `${ordering}: completed`);
    t.equal(p3.forwarded, before + i + 1, `${ordering}: forwarded to peer 3, the highest peer id`);
  }
  for (const peer of peers) {
    t.strictSame(await localPoints(peer, 'ord', 0), [[0, Array.from(vectorOf(10)), { v: 10 }], [1, Array.from(vectorOf(11)), { v: 11 }]], `both points on peer ${peer.id}`);
    const clocks = await clocksOf(peer);
    t.strictSame(clocks.map((c) => [c.peer, c.clockId]), [[3, p3.incarnation]], `peer ${peer.id}: tagged by the leader's clock only`);
  }
  // The leader's refusal is the answer, as the leader gave it.
  const missing: WriteOp = { kind: 'update_vectors', points: [{ id: 424242, vectors: { '': vectorOf(1) } }] };
  const direct = await quiverFailure(write(p3, 'ord', [missing]));
  const forwarded = await quiverFailure(write(p1, 'ord', [missing], 'medium'));
  t.strictSame([forwarded.statusCode, forwarded.message], [direct.statusCode, direct.message], `the leader's own error: ${direct.message}`);
  t.equal(direct.statusCode, 404);
  // Weak ordering applies on the writing peer, under its own clock.
  await write(p2, 'ord', [upsert([point(2, 12)])]);
  t.strictSame((await clocksOf(p1)).map((c) => [c.peer, c.clockId]), [[2, p2.incarnation], [3, p3.incarnation]], 'weak: the writer\'s clock');
});

t.test('a restarted peer writes under a new incarnation: no write after the restart is skipped', async (t) => {
  const { record, placed } = await createCollection(peers, 'restart', { shard_number: 1, replication_factor: 2 });
  // The writer holds no replica: after a restart its counter starts over (nothing local to resume from).
  const holders = placed.get(0)!;
  const writerIndex = peers.findIndex((p) => !holders.includes(p.id));
  const writer = peers[writerIndex];
  const holderPeers = peers.filter((p) => holders.includes(p.id));
  await write(writer, 'restart', [upsert([point(1, 1)])]);
  await write(writer, 'restart', [upsert([point(1, 2)])]);
  const oldIncarnation = writer.incarnation;
  await writer.stop();
  const restarted = await startPeer(root, member, writer.id, writer.storage);
  peers[writerIndex] = restarted;
  t.equal(restarted.incarnation, oldIncarnation + 1, 'the incarnation counted up');
  instantiate(restarted, record);
  // Without the new incarnation the first write after the restart would carry a tag the replicas hold.
  const sets = new Map([[setOf(restarted, 'restart', 0), [upsert([point(1, 3)])]]]);
  await applyAcross(sets, new OperationClock(writer.id, oldIncarnation), 1, { checkFirst: false, wait: true });
  for (const holder of holderPeers) t.strictSame(await localPoints(holder, 'restart', 0), [[1, Array.from(vectorOf(2)), { v: 2 }]], `peer ${holder.id}: a reused tag is skipped (what the incarnation prevents)`);
  const answers = await write(restarted, 'restart', [upsert([point(1, 4)])]);
  t.equal(answers[0].operation_id, 1, 'the restarted peer numbers from the start again');
  for (const holder of holderPeers) {
    t.strictSame(await localPoints(holder, 'restart', 0), [[1, Array.from(vectorOf(4)), { v: 4 }]], `peer ${holder.id}: the write after the restart is applied`);
    const clocks = (await holder.placement.localShard('restart', 0)!.replica.run({ type: 'recovery_point' }, null)).clocks;
    t.strictSame(clocks.filter((c) => c.peer === writer.id).map((c) => [c.clockId, c.tick]), [[oldIncarnation, 2], [oldIncarnation + 1, 1]], `peer ${holder.id}: one clock per incarnation`);
  }
});

t.test('a set follows the membership of later views', async (t) => {
  const { record } = await createCollection(peers, 'moves', { shard_number: 1, replication_factor: 3 });
  const set = setOf(peers[0], 'moves', 0);
  t.strictSame(set.replicas.map((r) => r.peer), [1, 2, 3]);
  const remote = set.replicas[1];
  // A view where peer 2 no longer holds the shard (issue 18's moves), then one where it does again.
  const view = peers[0].placement.view();
  const entryKey = [...view.entries.keys()].find((k) => k.startsWith('shards/') && k.includes('moves'))!;
  const stored = view.entries.get(entryKey)!;
  const without = JSON.stringify({ replicas: { 1: 'Active', 3: 'Active' } });
  peers[0].placement.applyView(view.withEvents(view.revision, [{ type: 'put', key: entryKey, value: { ...stored, text: without } }]));
  t.strictSame(set.replicas.map((r) => r.peer), [1, 3], 'peer 2 left the set');
  peers[0].placement.applyView(view);
  t.strictSame(set.replicas.map((r) => r.peer), [1, 2, 3], 'peer 2 back');
  t.equal(set.replicas[1], remote, 'the same remote replica (one per peer and shard)');
  t.equal(peers[0].placement.replicaSet({ collection: 'moves', shard: 0 }, record.storageId, () => record.config.params).replicas[1], remote, 'a second set of the shard shares it');
});

t.test('a failed replica: Dead before the answer with wcf=1; the replica\'s error with wcf=2', async (t) => {
  const [a, b, c] = [peers[0], peers[1], peers[2]];
  await createCollection(peers, 'wcf1', { shard_number: 1, replication_factor: 3, write_consistency_factor: 1 });
  await createCollection(peers, 'wcf2', { shard_number: 1, replication_factor: 3, write_consistency_factor: 2 });
  await c.server.stop();
  const answers = await write(a, 'wcf1', [upsert([point(5, 5)])]);
  t.equal(answers[0].status, 'completed', 'wcf=1: acknowledged');
  t.equal(a.placement.view().shards.get('wcf1')!.get(0)!.replicas['3'], 'Dead', 'peer 3 is Dead in the writer\'s view when the answer returns');
  t.strictSame(await localPoints(b, 'wcf1', 0), [[5, Array.from(vectorOf(5)), { v: 5 }]], 'the other replica has the point');
  const notEnough = await quiverFailure(withReadScope({ consistency: 'all' }, 'Scroll', () => setOf(a, 'wcf1', 0).read(SCROLL_ALL, null)));
  t.equal(notEnough.message, 'Service internal error: The replica set for shard 0 on peer 1 does not have enough active replicas', 'consistency=all with a Dead replica');

  await b.server.stop();
  const err = await quiverFailure(write(a, 'wcf2', [upsert([point(6, 6)])]));
  t.ok(err instanceof PeerUnreachable, 'wcf=2 with one success: the first failure\'s own error');
  t.match(err.message, new RegExp(`^Service internal error: failed to reach peer ${b.uri.replace(/[/.]/g, '\\$&')}: `));
  t.strictSame(Object.values(a.placement.view().shards.get('wcf2')!.get(0)!.replicas), ['Active', 'Active', 'Active'], 'no replica marked Dead when the write fails');
  await b.restartServer();

  // Strong ordering leads from peer 3 whatever its state: down, the write fails with Qdrant's text and peer 3 is proposed Dead.
  const strong = await quiverFailure(write(a, 'wcf2', [upsert([point(7, 7)])], 'strong'));
  t.match(strong.message, /^Service internal error: Failed to apply update with Strong ordering via leader peer 3: Service internal error: failed to reach peer /);
  await until('peer 3 Dead in wcf2', async () => a.placement.view().shards.get('wcf2')!.get(0)!.replicas['3'] === 'Dead', WAIT_MS);
  // Medium then leads from the highest Active replica, peer 2.
  const before = b.forwarded;
  await write(a, 'wcf2', [upsert([point(8, 8)])], 'medium');
  t.equal(b.forwarded, before + 1, 'medium: forwarded to peer 2');
  await c.restartServer();
  t.strictSame((await localPoints(a, 'wcf2', 0)).map(([id]) => id), [6, 8], 'peer 1: the point of the failed wcf=2 write (no rollback) and the medium one');
  t.strictSame((await localPoints(b, 'wcf2', 0)).map(([id]) => id), [8], 'peer 2: the medium one only (it was down for the other)');
});
