// Collections across peers, in one process: three peers share one etcd, each with its own storage,
// apply loop, reconcile and cluster catalogue, reached through the REST app (inject). A change
// made on one peer is applied on every peer; shards open exactly where the control plane's view
// places them, and their replicas become Active; a restarted peer converges on the view.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import t, { type Test } from 'tap';
import { COLLECTION_CLUSTER_INFO } from '../src/api/schemas/responses/cluster.js';
import { SHARED_RESPONSE_SCHEMAS } from '../src/api/schemas/responses/optimizations.js';
import type { ClusterView } from '../src/cluster/cluster-view.js';
import { startTestEtcd } from './helpers/etcd-member.js';
import { peerStorage, startInProcessPeer, type InProcessPeer } from './helpers/in-process-peer.js';

/** Bound of every wait here: generous, as the tests share a loaded machine (each wait ends on its condition). */
const WAIT_MS = 60_000;

// The response schema the route catalogue gives GET /collections/{name}/cluster.
const ajv = new Ajv({ allErrors: true, keywords: ['serde'] });
for (const [id, schema] of Object.entries(SHARED_RESPONSE_SCHEMAS)) ajv.addSchema(schema, id);
const clusterInfoValid = ajv.compile(COLLECTION_CLUSTER_INFO);

interface Answer {
  status: number;
  body: { result?: unknown; status: unknown; time: number };
}

async function call(peer: InProcessPeer, method: 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<Answer> {
  const response = await peer.app.inject({ method, url, payload: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: response.statusCode, body: response.json() };
}

/** The result of a call that must succeed. */
async function ok(t: Test, peer: InProcessPeer, method: 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<unknown> {
  const answer = await call(peer, method, url, body);
  t.equal(answer.status, 200, `peer ${peer.id}: ${method} ${url}: ${JSON.stringify(answer.body)}`);
  return answer.body.result;
}

/** Waits (bounded) until `peer` applied everything committed so far. */
async function caughtUp(peer: InProcessPeer): Promise<void> {
  const { revision } = await peer.controlPlane.read();
  await peer.loop.waitApplied(revision, WAIT_MS);
}

/** Shard ids the view places on `peer`. */
function placedOn(view: ClusterView, name: string, peer: number): number[] {
  return [...(view.shards.get(name) ?? [])].filter(([, e]) => e.replicas[String(peer)] !== undefined).map(([id]) => id);
}

/** Shard ids `peer` holds open (a local replica in the set). */
function openOn(peer: InProcessPeer, name: string): number[] {
  return peer.collections.get(name).shards.filter((s) => s.localReplica).map((s) => s.id);
}

function shardFolder(peer: InProcessPeer, storageId: string, shard?: number): string {
  return join(peer.storage, 'collections', storageId, ...(shard === undefined ? [] : [String(shard)]));
}

async function threePeers(t: Test): Promise<InProcessPeer[]> {
  const etcd = await startTestEtcd(t);
  const peers: InProcessPeer[] = [];
  for (const id of [1, 2, 3]) peers.push(await startInProcessPeer(t, etcd.clientUrl, id, await peerStorage(t)));
  // Every peer sees the three registrations (the default shard_number counts them).
  await Promise.all(peers.map(caughtUp));
  return peers;
}

t.test('a collection created on one peer is served by every peer, its shards open where the view places them', async (t) => {
  const [a, b, c] = await threePeers(t);
  t.equal(await ok(t, a, 'PUT', '/collections/docs?timeout=60', { vectors: { size: 4, distance: 'Dot' }, replication_factor: 2 }), true);
  // The create waited until this peer applied it and every replica was Active.
  const view = a.reconciler.view;
  t.same([...view.shards.get('docs')!.keys()], [0, 1, 2], 'one shard per peer by default');
  for (const entry of view.shards.get('docs')!.values()) {
    t.equal(Object.keys(entry.replicas).length, 2, 'replication_factor 2');
    t.same(Object.values(entry.replicas), ['Active', 'Active']);
  }
  const record = a.collections.record('docs');
  t.equal(record.config.params.shardNumber, 3);
  t.same(record, view.collections.get('docs'), 'the record as the control plane holds it');
  const storageId = record.storageId;
  for (const peer of [b, c]) await caughtUp(peer);
  for (const peer of [a, b, c]) {
    t.same(await ok(t, peer, 'GET', '/collections'), { collections: [{ name: 'docs' }] }, `listed on peer ${peer.id}`);
    t.same(await ok(t, peer, 'GET', '/collections/docs/exists'), { exists: true });
    // (GET /collections/docs counts points over every shard: the replicas on other peers answer
    // through the cluster placement, which these peers, holding local replicas only, lack.)
    t.same(peer.collections.record('docs'), record, `same record on peer ${peer.id}`);
    const placed = placedOn(view, 'docs', peer.id);
    t.same(openOn(peer, 'docs'), placed, `peer ${peer.id} opened its shards only`);
    for (const shard of [0, 1, 2]) t.equal(existsSync(shardFolder(peer, storageId, shard)), placed.includes(shard), `peer ${peer.id} shard ${shard} folder`);
    t.same(peer.errors, [], 'the reconcile reported no failure');
  }
  t.equal([a, b, c].reduce((n, p) => n + placedOn(view, 'docs', p.id).length, 0), 6, 'six replicas over three peers');

  t.test('GET /collections/{name}/cluster shows this peer\'s replicas as local and the others as remote', async (t) => {
    const cluster = await ok(t, b, 'GET', '/collections/docs/cluster') as Record<string, unknown>;
    const local = placedOn(view, 'docs', 2).map((shard_id) => ({ shard_id, points_count: 0, state: 'Active' }));
    const remote = [...view.shards.get('docs')!].flatMap(([shard_id, e]) => Object.keys(e.replicas).filter((p) => p !== '2').map((p) => ({ shard_id, peer_id: Number(p), state: 'Active' })));
    t.same(cluster, { peer_id: 2, shard_count: 3, local_shards: local, remote_shards: remote, shard_transfers: [] });
    t.ok(clusterInfoValid(cluster), ajv.errorsText(clusterInfoValid.errors));
  });

  t.test('changes made on one peer are applied on the others', async (t) => {
    t.equal(await ok(t, b, 'PATCH', '/collections/docs?timeout=60', { optimizers_config: { indexing_threshold: 1234 } }), true);
    t.same(await ok(t, b, 'PUT', '/collections/docs/index?timeout=60', { field_name: 'city', field_schema: 'keyword' }), { operation_id: b.loop.appliedRevision, status: 'completed' });
    await ok(t, c, 'PUT', '/collections/docs/vectors/image?timeout=60', { dense: { size: 2, distance: 'Cosine' } });
    await ok(t, c, 'POST', '/collections/aliases?timeout=60', { actions: [{ create_alias: { alias_name: 'papers', collection_name: 'docs' } }] });
    await caughtUp(a);
    const { config, indexes } = a.collections.record('docs');
    t.equal(config.optimizer.indexingThreshold, 1234);
    t.same(Object.keys(config.params.vectors.byName).sort(), ['', 'image'], 'the new vector name');
    t.same(indexes, [{ key: 'city', schema: 'keyword' }]);
    t.same(a.collections.get('docs').indexes.map((i) => i.key), ['city'], 'the index is built on the peer\'s shards');
    t.same(a.collections.get('docs').vectors.map((v) => v.name).sort(), ['', 'image']);
    t.same(await ok(t, a, 'GET', '/aliases'), { aliases: [{ alias_name: 'papers', collection_name: 'docs' }] });
    t.same(await ok(t, a, 'GET', '/collections/papers/exists'), { exists: true });

    const points = [1, 2, 3, 4, 5, 6].map((id) => ({ id, vector: { '': [1, id, 0, 0], image: [id, 1] } }));
    await ok(t, c, 'PUT', '/collections/docs/points?wait=true', { points });
    const [stored] = await ok(t, a, 'POST', '/collections/docs/points?consistency=all', { ids: [1], with_vector: true }) as { vector: Record<string, number[]> }[];
    t.same(Object.keys(stored.vector).sort(), ['', 'image'], 'stored under both names');
    await ok(t, a, 'DELETE', '/collections/docs/index/city?timeout=60');
    await ok(t, a, 'DELETE', '/collections/docs/vectors/image?timeout=60');
    await caughtUp(b);
    t.same(b.collections.get('docs').indexes, []);
    t.same(b.collections.get('docs').vectors.map((v) => v.name), ['']);
    // Every replica lost the deleted vector's data: created again, it starts empty on every point.
    await ok(t, b, 'PUT', '/collections/docs/vectors/image?timeout=60', { dense: { size: 2, distance: 'Cosine' } });
    for (const peer of [a, b, c]) {
      await caughtUp(peer);
      const read = await ok(t, peer, 'POST', '/collections/docs/points?consistency=all', { ids: points.map((p) => p.id), with_vector: true });
      // Only the unnamed vector left: Qdrant prints it alone as the bare list.
      t.same(read, points.map((p) => ({ id: p.id, payload: {}, vector: p.vector[''] })), `peer ${peer.id}: no point has the re-created vector`);
    }
    t.same(b.errors, []);
  });

  t.test('custom shard keys are placed as asked and opened where placed', async (t) => {
    await ok(t, a, 'PUT', '/collections/keyed?timeout=60', { vectors: { size: 2, distance: 'Dot' }, sharding_method: 'custom' });
    // Answered once peer 1 applied it; peer 2 may apply it a moment later.
    await caughtUp(b);
    t.same(a.reconciler.view.shards.get('keyed') ?? new Map(), new Map(), 'custom sharding creates no shard');
    await ok(t, b, 'PUT', '/collections/keyed/shards?timeout=60', { shard_key: 'eu', shards_number: 2, placement: [3], replication_factor: 1 });
    const answer = await call(b, 'PUT', '/collections/keyed/shards?timeout=60', { shard_key: 'us', placement: [9] });
    t.equal(answer.status, 400);
    t.same(answer.body.status, { error: 'Bad request: Peer 9 does not exist' });
    await caughtUp(c);
    await caughtUp(a);
    t.same(placedOn(c.reconciler.view, 'keyed', 3), [1, 2]);
    t.same(openOn(c, 'keyed'), [1, 2], 'peer 3 holds the key\'s shards');
    t.same(openOn(a, 'keyed'), [], 'peer 1 holds none');
    t.same(await ok(t, a, 'GET', '/collections/keyed/shards'), { shard_keys: [{ key: 'eu' }] });
    const cluster = await ok(t, c, 'GET', '/collections/keyed/cluster') as { local_shards: unknown[] };
    t.same(cluster.local_shards, [{ shard_id: 1, shard_key: 'eu', points_count: 0, state: 'Active' }, { shard_id: 2, shard_key: 'eu', points_count: 0, state: 'Active' }]);
    await ok(t, a, 'POST', '/collections/keyed/shards/delete?timeout=60', { shard_key: 'eu' });
    await caughtUp(c);
    t.same(openOn(c, 'keyed'), []);
    const storageId = c.collections.record('keyed').storageId;
    t.notOk(existsSync(shardFolder(c, storageId, 1)), 'the dropped key\'s shard data is gone');
  });

  t.test('a delete removes the collection, its aliases and its local data everywhere', async (t) => {
    const storageId = a.collections.record('docs').storageId;
    t.equal(await ok(t, c, 'DELETE', '/collections/docs?timeout=60'), true);
    t.equal(await ok(t, c, 'DELETE', '/collections/docs?timeout=60'), false, 'a second delete finds none');
    for (const peer of [a, b, c]) {
      await caughtUp(peer);
      t.notOk(peer.collections.exists('docs'), `gone on peer ${peer.id}`);
      t.same(peer.collections.aliasList(), []);
      t.notOk(existsSync(shardFolder(peer, storageId)), `folder removed on peer ${peer.id}`);
      const answer = await call(peer, 'GET', '/collections/docs');
      t.equal(answer.status, 404);
    }
  });
});

t.test('the same name created on two peers at once: one wins, the other gets Qdrant\'s 409', async (t) => {
  const [a, b] = await threePeers(t);
  const body = { vectors: { size: 2, distance: 'Dot' } };
  const answers = await Promise.all([call(a, 'PUT', '/collections/race?timeout=60', body), call(b, 'PUT', '/collections/race?timeout=60', body)]);
  t.same(answers.map((x) => x.status).sort(), [200, 409], JSON.stringify(answers.map((x) => x.body)));
  const lost = answers.find((x) => x.status === 409)!;
  t.same(lost.body.status, { error: 'Wrong input: Collection `race` already exists!' });
  for (const peer of [a, b]) {
    await caughtUp(peer);
    t.same(peer.collections.names(), ['race']);
  }
  t.equal(a.collections.record('race').storageId, b.collections.record('race').storageId, 'the same collection on both');
});

t.test('wait semantics: the answer comes once this peer applied the change; a replica that never activates times the create out', async (t) => {
  const etcd = await startTestEtcd(t);
  const a = await startInProcessPeer(t, etcd.clientUrl, 1, await peerStorage(t));
  // Applied at once by the peer that made it: no wait in the test.
  await ok(t, a, 'PUT', '/collections/first?timeout=60', { vectors: { size: 2, distance: 'Dot' } });
  t.ok(a.collections.exists('first'));
  await ok(t, a, 'POST', '/collections/aliases?timeout=60', { actions: [{ create_alias: { alias_name: 'one', collection_name: 'first' } }] });
  t.same(a.collections.aliasList(), [{ alias_name: 'one', collection_name: 'first' }]);
  // Peer 2 is registered but never runs: its replicas stay Initializing.
  const b = await startInProcessPeer(t, etcd.clientUrl, 2, await peerStorage(t));
  await b.stop();
  await caughtUp(a);
  const answer = await call(a, 'PUT', '/collections/second?timeout=1', { vectors: { size: 2, distance: 'Dot' }, shard_number: 2 });
  t.equal(answer.status, 500);
  t.same(answer.body.status, { error: 'Service internal error: Waiting for consensus operation commit failed. Timeout set at: 1 seconds' });
  // The collection exists (as in Qdrant, a timed-out operation may still complete); this peer's replica is Active.
  const states = [...a.reconciler.view.shards.get('second')!.values()].flatMap((e) => Object.entries(e.replicas));
  t.same(states.sort(), [['1', 'Active'], ['2', 'Initializing']]);
});

t.test('a restarted peer opens what the view says and drops what was deleted meanwhile', async (t) => {
  const etcd = await startTestEtcd(t);
  const storageA = await peerStorage(t);
  let a = await startInProcessPeer(t, etcd.clientUrl, 1, storageA);
  const b = await startInProcessPeer(t, etcd.clientUrl, 2, await peerStorage(t));
  await caughtUp(a);
  await ok(t, a, 'PUT', '/collections/old?timeout=60', { vectors: { size: 2, distance: 'Dot' }, replication_factor: 2 });
  await ok(t, a, 'PUT', '/collections/kept?timeout=60', { vectors: { size: 2, distance: 'Dot' }, replication_factor: 2 });
  const oldId = a.collections.record('old').storageId;
  t.ok(existsSync(shardFolder(a, oldId)));
  await a.stop();
  await ok(t, b, 'DELETE', '/collections/old?timeout=60');
  await ok(t, b, 'PUT', '/collections/kept/index?timeout=60', { field_name: 'n', field_schema: 'integer' });
  // Peer 1 is down: its replicas of a new collection are created Initializing, and the create waits.
  const created = call(b, 'PUT', '/collections/new?timeout=60', { vectors: { size: 2, distance: 'Dot' }, replication_factor: 2 });
  a = await startInProcessPeer(t, etcd.clientUrl, 1, storageA);
  t.equal((await created).status, 200, 'the create completes once the restarted peer activated its replicas');
  await caughtUp(a);
  t.same(a.collections.names().sort(), ['kept', 'new']);
  t.notOk(existsSync(shardFolder(a, oldId)), 'the deleted collection\'s data is gone');
  for (const name of ['kept', 'new']) t.same(openOn(a, name), placedOn(a.reconciler.view, name, 1), `${name}: shards opened as placed`);
  t.same(a.collections.get('kept').indexes.map((i) => i.key), ['n'], 'the index created meanwhile');
  t.same(a.errors, []);
});
