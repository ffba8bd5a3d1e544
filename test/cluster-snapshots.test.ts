// Snapshot recovery on a peer of a two-peer cluster, each shard replicated on both peers: a
// collection recovered from a snapshot on one peer is created in the cluster (every peer serves
// it) with the snapshot's points, shard keys and shard ids, and each recovery's `priority` decides
// which replicas are marked for resynchronization: `snapshot` the other peer's, `replica` (the
// default) the restored one's, `no_sync` none (both replicas then answer their own data); a shard
// recovery does the same for its one shard.

import t, { type Test } from 'tap';
import { call } from './helpers/api-http.js';
import { startCluster, until, type ClusterPeer } from './helpers/cluster.js';

type Envelope<T> = { result: T; status: unknown };
type Point = { id: number; vector: number[]; payload: { n: number } };
type ShardStates = { peer_id: number; local_shards: { shard_id: number; state: string }[]; remote_shards: { shard_id: number; peer_id: number; state: string }[] };

async function result<T>(peer: ClusterPeer, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await call(peer.url, method, path, body);
  if (answer.status !== 200) throw new Error(`${method} ${path} through ${peer.url}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return (answer.body as Envelope<T>).result;
}

async function upload(peer: ClusterPeer, path: string, bytes: Uint8Array): Promise<unknown> {
  const form = new FormData();
  form.append('snapshot', new Blob([Buffer.from(bytes)]), 'src.snapshot');
  const response = await fetch(peer.url + path, { method: 'POST', body: form });
  const body = await response.json() as Envelope<unknown>;
  if (response.status !== 200) throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body.result;
}

const DIM = 4;
const vectorOf = (i: number): number[] => Array.from({ length: DIM }, (_, d) => Math.round(Math.sin(i * 1.3 + d) * 1000) / 1000);
const pointsOf = (ids: number[]): Point[] => ids.map((id) => ({ id, vector: vectorOf(id), payload: { n: id } }));
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Every point of a collection as read through `peer` (its own replica first, with the default consistency). */
async function pointsThrough(peer: ClusterPeer, name: string): Promise<Point[]> {
  return (await result<{ points: Point[] }>(peer, 'POST', `/collections/${name}/points/scroll`, { limit: 1000, with_payload: true, with_vector: true })).points;
}

/**
 * Whether a replica was marked for resynchronization: Dead, being resynchronized by a recovery
 * transfer, or Active again once it finished (whose data `resynced` then checks).
 */
const markedForResync = (state: string | undefined): boolean => state === 'Dead' || state === 'Partial' || state === 'Recovery' || state === 'Active';

t.test('snapshot recovery on one peer of a replicated two-peer cluster', async (t) => {
  const peers = await startCluster(t, 2);
  const [first, second] = peers;
  await until('two peers', async () => (await Promise.all(peers.map((p) => result<{ peers: object }>(p, 'GET', '/cluster')))).every((b) => Object.keys(b.peers).length === 2), 60_000);
  const firstId = (await result<{ peer_id: number }>(first, 'GET', '/cluster')).peer_id;
  const secondId = (await result<{ peer_id: number }>(second, 'GET', '/cluster')).peer_id;

  t.equal(await result(first, 'PUT', '/collections/src?timeout=60', { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 2, replication_factor: 2 }), true);
  await result(first, 'PUT', '/collections/src/points?wait=true', { points: pointsOf(range(1, 30)) });
  const original = await pointsThrough(first, 'src');
  t.same(original.map((p) => p.id), range(1, 30), 'the source collection holds its points');
  const created = await result<{ name: string }>(first, 'POST', '/collections/src/snapshots?wait=true');
  const archive = new Uint8Array(await (await fetch(`${first.url}/collections/src/snapshots/${created.name}`)).arrayBuffer());

  /**
   * Once the recovery transfers ran, every replica is Active and holds `expected`: `consistency=all`
   * through each peer asks both replicas of every shard and keeps only what both return.
   */
  const resynced = async (t: Test, name: string, expected: Point[]): Promise<void> => {
    await until(`every replica of ${name} Active`, async () => [...(await statesOf(first, name)).values()].every((byPeer) => [...byPeer.values()].every((s) => s === 'Active')), 60_000);
    for (const peer of peers) {
      const read = await result<{ points: Point[] }>(peer, 'POST', `/collections/${name}/points/scroll?consistency=all`, { limit: 1000, with_payload: true, with_vector: true });
      t.same(read.points, expected, `${name}: both replicas hold the recovered points (consistency=all through ${peer.url})`);
    }
  };

  /** The replica states of every shard of `name`, by peer id, as `peer` applied them. */
  const statesOf = async (peer: ClusterPeer, name: string): Promise<Map<number, Map<number, string>>> => {
    const info = await result<ShardStates>(peer, 'GET', `/collections/${name}/cluster`);
    const states = new Map<number, Map<number, string>>();
    const note = (shard: number, holder: number, state: string) => states.set(shard, (states.get(shard) ?? new Map()).set(holder, state));
    for (const s of info.local_shards) note(s.shard_id, info.peer_id, s.state);
    for (const s of info.remote_shards) note(s.shard_id, s.peer_id, s.state);
    return states;
  };

  await t.test('priority snapshot: a new collection is created in the cluster, the other peer\'s replicas are marked Dead', async (t) => {
    t.equal(await upload(first, '/collections/copy/snapshots/upload?priority=snapshot', archive), true);
    for (const peer of peers) {
      const info = await result<{ config: { params: { shard_number: number; replication_factor: number } } }>(peer, 'GET', '/collections/copy');
      t.same([info.config.params.shard_number, info.config.params.replication_factor], [2, 2], `the cluster's collection, as ${peer.url} serves it, has the snapshot's configuration`);
    }
    const states = await statesOf(first, 'copy');
    t.same([...states.keys()].sort(), [0, 1], 'both shards placed');
    for (const [shard, byPeer] of states) {
      t.equal(byPeer.get(firstId), 'Active', `shard ${shard}: the restored replica is Active`);
      t.ok(markedForResync(byPeer.get(secondId)), `shard ${shard}: the other peer's replica (empty when created) is marked Dead: ${byPeer.get(secondId)}`);
    }
    t.same(await pointsThrough(first, 'copy'), original, 'the recovering peer serves the snapshot\'s points');
    t.same(await pointsThrough(second, 'copy'), original, 'the other peer serves them too (read from the Active replica)');
    await resynced(t, 'copy', original);
  });

  await t.test('a custom-sharded collection is created with the snapshot\'s shard keys and their shards', async (t) => {
    t.equal(await result(first, 'PUT', '/collections/keyed?timeout=60', { vectors: { size: DIM, distance: 'Euclid' }, sharding_method: 'custom', replication_factor: 2 }), true);
    await result(first, 'PUT', '/collections/keyed/shards?timeout=60', { shard_key: 'left' });
    await result(first, 'PUT', '/collections/keyed/shards?timeout=60', { shard_key: 7, shards_number: 2 });
    await result(first, 'PUT', '/collections/keyed/points?wait=true', { points: pointsOf(range(1, 10)), shard_key: 'left' });
    await result(first, 'PUT', '/collections/keyed/points?wait=true', { points: pointsOf(range(11, 30)), shard_key: 7 });
    const expected = await pointsThrough(first, 'keyed');
    const snapshot = await result<{ name: string }>(first, 'POST', '/collections/keyed/snapshots?wait=true');
    const bytes = new Uint8Array(await (await fetch(`${first.url}/collections/keyed/snapshots/${snapshot.name}`)).arrayBuffer());
    t.equal(await upload(first, '/collections/keyed-copy/snapshots/upload?priority=snapshot', bytes), true);
    const keysOf = async (peer: ClusterPeer, name: string) => (await result<{ shard_keys: { key: string | number }[] }>(peer, 'GET', `/collections/${name}/shards`)).shard_keys.map((k) => k.key);
    for (const peer of peers) t.same(await keysOf(peer, 'keyed-copy'), await keysOf(first, 'keyed'), `${peer.url} serves the snapshot's shard keys`);
    t.same([...(await statesOf(first, 'keyed-copy')).keys()].sort(), [...(await statesOf(first, 'keyed')).keys()].sort(), 'the shards keep their snapshot ids');
    for (const peer of peers) t.same(await pointsThrough(peer, 'keyed-copy'), expected, `${peer.url} serves the snapshot's points`);
    const left = await result<{ points: Point[] }>(second, 'POST', '/collections/keyed-copy/points/scroll', { limit: 100, shard_key: 'left', with_vector: true, with_payload: true });
    t.same(left.points.map((p) => p.id), range(1, 10), 'each key holds its own points');
  });

  await t.test('a shard recovery with priority snapshot marks the other peer\'s replica of that shard Dead', async (t) => {
    const before = await statesOf(first, 'keyed');
    t.same([...before.keys()].sort(), [1, 2, 3], 'key left holds shard 1 (numbered from 1 as keys are created), key 7 shards 2 and 3');
    const expected = await pointsThrough(second, 'keyed');
    const shard = await result<{ name: string }>(first, 'POST', '/collections/keyed/shards/1/snapshots?wait=true');
    const bytes = new Uint8Array(await (await fetch(`${first.url}/collections/keyed/shards/1/snapshots/${shard.name}`)).arrayBuffer());
    t.equal(await upload(first, '/collections/keyed/shards/1/snapshots/upload?priority=snapshot', bytes), true);
    const states = await statesOf(first, 'keyed');
    t.equal(states.get(1)!.get(firstId), 'Active', 'the restored replica of shard 1 is Active');
    t.ok(markedForResync(states.get(1)!.get(secondId)), `the other replica of shard 1 is marked Dead: ${states.get(1)!.get(secondId)}`);
    for (const other of [2, 3]) t.same([states.get(other)!.get(firstId), states.get(other)!.get(secondId)], ['Active', 'Active'], `shard ${other} is untouched`);
    t.same(await pointsThrough(second, 'keyed'), expected, 'every point is still served through the other peer');
  });

  await t.test('priority no_sync: the restored replica is Active beside the other one, nothing is synchronized', async (t) => {
    await result(first, 'PUT', '/collections/src/points?wait=true', { points: pointsOf(range(31, 40)) });
    await result(first, 'POST', '/collections/src/points/delete?wait=true', { points: range(1, 5) });
    const newer = await pointsThrough(second, 'src');
    t.same(newer.map((p) => p.id), range(6, 40), 'both replicas took the changes');
    t.equal(await upload(first, '/collections/src/snapshots/upload?priority=no_sync', archive), true);
    for (const [shard, byPeer] of await statesOf(first, 'src')) t.same([byPeer.get(firstId), byPeer.get(secondId)], ['Active', 'Active'], `shard ${shard}: both replicas stay Active`);
    t.same(await pointsThrough(first, 'src'), original, 'the recovering peer\'s own replicas answer the snapshot');
    t.same(await pointsThrough(second, 'src'), newer, 'the other peer\'s replicas keep their newer data');
  });

  await t.test('priority replica (the default): the existing collection is kept, the restored replicas are marked Dead', async (t) => {
    const newer = await pointsThrough(second, 'src');
    t.equal(await upload(first, '/collections/src/snapshots/upload', archive), true);
    for (const [shard, byPeer] of await statesOf(first, 'src')) {
      t.ok(markedForResync(byPeer.get(firstId)), `shard ${shard}: the restored replica is marked Dead: ${byPeer.get(firstId)}`);
      t.equal(byPeer.get(secondId), 'Active', `shard ${shard}: the existing replica stays Active`);
    }
    t.same(await pointsThrough(first, 'src'), newer, 'reads through the recovering peer answer the existing replica\'s data');
    t.same(await pointsThrough(second, 'src'), newer, 'and through the other peer');
  });
});
