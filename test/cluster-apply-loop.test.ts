// The apply loop against real one-member etcds: changes reach onApply one revision at a time, in
// order, none skipped, a transaction's keys together; waitApplied answers after the apply and
// times out when bounded; a watch that cannot resume (history compacted, member restarted) is
// recovered by reading everything again and handing over what changed.

import { Etcd3 } from 'etcd3';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { fromCreateRequest } from '../src/api/collection-config.js';
import { ApplyLoop } from '../src/cluster/apply-loop.js';
import type { ClusterChanges, ClusterView } from '../src/cluster/cluster-view.js';
import { ControlPlane } from '../src/cluster/control-plane.js';
import { EtcdMember, type EtcdMemberOptions } from '../src/cluster/etcd-process.js';
import { clusterNamespace } from '../src/cluster/keys.js';
import { registerPeer } from '../src/cluster/peer-registry.js';
import { ServiceError } from '../src/errors.js';
import { startTestEtcd } from './helpers/etcd-member.js';
import { freePort } from './helpers/server.js';

const WAIT_MS = 10_000;

function client(t: Test, url: string): Etcd3 {
  const c = new Etcd3({ hosts: url });
  t.teardown(() => c.close());
  return c;
}

const peer = { uri: 'http://127.0.0.1:6335/', etcd_member_id: '1', etcd_peer_url: 'http://127.0.0.1:6334', version: '0.1.0' };
const config = (shards: number) => fromCreateRequest({ vectors: { size: 4, distance: 'Dot' }, shard_number: shards }, 1);

interface Applied {
  view: ClusterView;
  changes: ClusterChanges;
  revision: number;
}

/** A loop whose onApply records each call and, while `hold` is set, waits for it first. */
function recordingLoop(t: Test, url: string) {
  const applied: Applied[] = [];
  const errors: Error[] = [];
  let running = 0;
  let overlapped = false;
  const state: { hold: Promise<void> | null } = { hold: null };
  const loop = new ApplyLoop({
    namespace: clusterNamespace(client(t, url)),
    retryInitialMs: 20,
    retryMaxMs: 200,
    onError: (err) => errors.push(err),
    onApply: async (view, changes, revision) => {
      running++;
      if (running > 1) overlapped = true;
      try {
        if (state.hold) await state.hold;
        applied.push({ view, changes, revision });
      } finally {
        running--;
      }
    },
  });
  t.teardown(() => loop.stop());
  return { loop, applied, errors, state, overlapped: () => overlapped };
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function until(what: string, check: () => boolean, ms = WAIT_MS): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

t.test('the first view, then each revision in order, none skipped, never two at once', async (t) => {
  const member = await startTestEtcd(t);
  const registrar = client(t, member.clientUrl);
  const plane = new ControlPlane(clusterNamespace(registrar));
  await registerPeer(registrar, 1, peer);
  const registered = await plane.read();
  const { loop, applied, overlapped } = recordingLoop(t, member.clientUrl);
  await loop.start();
  t.equal(applied.length, 1, 'the first view is applied at start');
  t.equal(applied[0]!.revision, registered.revision);
  t.same(applied[0]!.changes.peersChanged, true, 'counted from an empty view');
  t.ok(loop.lastUpdate instanceof Date);

  // A burst from two proposers at once: metadata puts and collection creates interleaved.
  const other = new ControlPlane(clusterNamespace(client(t, member.clientUrl)));
  const commits = await Promise.all(Array.from({ length: 24 }, (_, i) =>
    i % 3 === 0 ? other.createCollection(`c${i}`, config(2)) : (i % 2 ? plane : other).putMetadata(`k${i}`, i)));
  const last = Math.max(...commits.map((c) => c.revision));
  await loop.waitApplied(last, WAIT_MS);
  const revisions = applied.map((a) => a.revision);
  t.same(revisions.slice(1), [...commits.map((c) => c.revision)].sort((a, b) => a - b), 'every committed revision, in order');
  t.notOk(overlapped(), 'onApply never ran twice at once');
  t.equal(loop.appliedRevision, last);
  t.equal(loop.pendingOperations, 0);

  // One transaction (a record and its two shards) is one apply, with all its keys.
  const createdAt = commits.findIndex((c) => 'record' in c);
  const creation = applied.find((a) => a.revision === commits[createdAt]!.revision)!;
  t.same(creation.changes.collectionsAdded, ['c0']);
  t.same(creation.changes.shardsAdded, [{ collection: 'c0', shard: 0 }, { collection: 'c0', shard: 1 }]);
  t.equal(creation.view.shards.get('c0')?.size, 2, 'the record and its shards arrive together');

  // A delete: the record, its shards and nothing else, in one apply.
  const deleted = await plane.deleteCollection('c0');
  await loop.waitApplied(deleted.revision, WAIT_MS);
  const deletion = applied.at(-1)!;
  t.equal(deletion.revision, deleted.revision);
  t.same(deletion.changes.collectionsRemoved, ['c0']);
  t.same(deletion.changes.shardsRemoved, [{ collection: 'c0', shard: 0 }, { collection: 'c0', shard: 1 }]);
  t.same(deletion.changes.metadataChanged, []);
});

t.test('waitApplied: after the apply, bounded by its timeout and by stop', async (t) => {
  const member = await startTestEtcd(t);
  const plane = new ControlPlane(clusterNamespace(client(t, member.clientUrl)));
  const { loop, applied, state } = recordingLoop(t, member.clientUrl);
  await loop.start();

  const held = gate();
  state.hold = held.promise;
  const put = await plane.putMetadata('x', 1);
  let resolved = false;
  const waiting = loop.waitApplied(put.revision, WAIT_MS).then(() => (resolved = true));
  // More changes while onApply is held: counted as pending, not applied.
  await plane.putMetadata('y', 2);
  await plane.putMetadata('z', 3);
  await until('three pending events', () => loop.pendingOperations === 3);
  t.equal(resolved, false, 'not answered before onApply finished');
  state.hold = null;
  held.open();
  await waiting;
  const x = applied.find((a) => a.revision === put.revision);
  t.ok(x, 'answered once its revision was applied');
  t.same(x?.view.metadata.get('x'), 1);
  await until('nothing pending', () => loop.pendingOperations === 0);

  const err = await loop.waitApplied(loop.appliedRevision + 1000, 150).then(() => null, (e: unknown) => e);
  t.type(err, ServiceError);
  t.equal((err as Error).message, 'Service internal error: Waiting for consensus operation commit failed. Timeout set at: 0.15 seconds');

  const pending = loop.waitApplied(loop.appliedRevision + 1000, WAIT_MS).then(() => null, (e: unknown) => e);
  await loop.stop();
  t.match(((await pending) as Error).message, /apply loop stopped/, 'stop rejects what waits');
  await t.rejects(loop.waitApplied(loop.appliedRevision + 1, WAIT_MS), /apply loop stopped/);
  await t.rejects(loop.start(), /apply loop stopped/, 'a stopped loop does not start again');
});

t.test('a failed onApply is retried by reading everything again, with what changed since the last view applied', async (t) => {
  const member = await startTestEtcd(t);
  const registrar = client(t, member.clientUrl);
  const plane = new ControlPlane(clusterNamespace(registrar));
  await registerPeer(registrar, 1, peer);
  let failures = 1;
  const applied: Applied[] = [];
  const errors: Error[] = [];
  const loop = new ApplyLoop({
    namespace: clusterNamespace(client(t, member.clientUrl)),
    retryInitialMs: 20,
    onError: (err) => errors.push(err),
    onApply: async (view, changes, revision) => {
      if (view.collections.has('c') && failures-- > 0) throw new Error('disk full');
      applied.push({ view, changes, revision });
    },
  });
  t.teardown(() => loop.stop());
  await loop.start();
  const created = await plane.createCollection('c', config(1));
  const later = await plane.putMetadata('after', true);
  await loop.waitApplied(later.revision, WAIT_MS);
  t.same(errors.map((e) => e.message), ['disk full']);
  const recovered = applied.find((a) => a.view.collections.has('c'))!;
  t.ok(recovered.revision >= created.revision);
  t.same(recovered.changes.collectionsAdded, ['c'], 'the retried change is handed over again');
  t.equal(loop.lastError, null, 'recovered');
});

t.test('history compacted past the next revision: the loop reads everything again', async (t) => {
  const member = await startTestEtcd(t);
  const admin = client(t, member.clientUrl);
  const plane = new ControlPlane(clusterNamespace(admin));
  await registerPeer(admin, 1, peer);
  await plane.createCollection('kept', config(1));
  await plane.createCollection('gone', config(1));
  const { loop, applied, errors, state } = recordingLoop(t, member.clientUrl);
  // The first view's apply is held: the loop's watch (from the next revision) opens only after it.
  const held = gate();
  state.hold = held.promise;
  const started = loop.start();
  await until('the first apply to begin', () => loop.lastUpdate !== null);
  const deleted = await plane.deleteCollection('gone');
  await plane.putMetadata('m', 'v');
  const last = await plane.createCollection('new', config(2));
  await admin.kv.compact({ revision: String(last.revision), physical: true });
  state.hold = null;
  held.open();
  await started;
  await loop.waitApplied(last.revision, WAIT_MS);
  t.ok(deleted.revision > applied[0]!.revision, 'the first view predates the changes');
  const recovered = applied[1]!;
  t.equal(applied.length, 2, 'one more apply: the re-read, not the compacted events');
  t.equal(recovered.revision, last.revision);
  t.same(recovered.changes.collectionsRemoved, ['gone']);
  t.same(recovered.changes.collectionsAdded, ['new']);
  t.same(recovered.changes.metadataChanged, ['m']);
  t.same([...recovered.view.collections.keys()], ['kept', 'new']);
  t.equal(errors.length, 1, 'one recovery');
  t.match(errors[0]?.message, /Watcher canceled/, 'etcd cancelled the watch of a compacted revision');

  // And it watches again from there.
  const after = await plane.putMetadata('m', 'w');
  await loop.waitApplied(after.revision, WAIT_MS);
  t.same(applied.at(-1)!.changes.metadataChanged, ['m']);
});

t.test('a member restarted under the loop: the loop reconnects and reads everything again', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-etcd-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const options: EtcdMemberOptions = {
    name: '1', dataDir: join(dir, 'etcd'), advertisePeerUrl: peerUrl, listenPeerUrl: peerUrl, clientPort,
    initialCluster: `1=${peerUrl}`, initialClusterState: 'new', clusterToken: `quiver-test-${clientPort}`, tickMs: 100,
  };
  let member = await EtcdMember.start(options);
  t.teardown(() => member.stop());
  const { loop, applied, errors } = recordingLoop(t, member.clientUrl);
  await loop.start();
  const registrar = client(t, member.clientUrl);
  const first = new ControlPlane(clusterNamespace(registrar));
  await registerPeer(registrar, 1, peer);
  const before = await first.putMetadata('a', 1);
  await loop.waitApplied(before.revision, WAIT_MS);

  await member.stop();
  await until('the loop to notice', () => loop.lastError !== null);
  t.ok(errors.length > 0, 'the broken watch was reported');
  member = await EtcdMember.start(options);
  // A fresh client (the old ones may still back off); the loop's own client reconnects by itself.
  const plane = new ControlPlane(clusterNamespace(client(t, member.clientUrl)));
  const created = await plane.createCollection('c', config(1));
  const after = await plane.putMetadata('b', 2);
  await loop.waitApplied(after.revision, 30_000);
  t.ok(applied.at(-1)!.view.collections.has('c'));
  t.same([...applied.at(-1)!.view.metadata.keys()], ['a', 'b']);
  t.ok(applied.some((a) => a.changes.collectionsAdded.includes('c') && a.revision >= created.revision), 'the change made while reconnecting is handed over');
  t.equal(loop.lastError, null);
});
