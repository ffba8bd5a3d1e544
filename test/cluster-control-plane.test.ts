// The control plane's transactions against a real one-member etcd: each change's effect as a
// second, independent peer's apply loop sees it, Qdrant's answers for refused changes, and races
// between peers (one winner; the loser answered for the state that won).

import t, { type Test } from 'tap';
import { fromCreateRequest } from '../src/api/collection-config.js';
import { changesBetween, isUnchanged } from '../src/cluster/cluster-view.js';
import { ControlPlane } from '../src/cluster/control-plane.js';
import { registerPeer } from '../src/cluster/peer-registry.js';
import type { CollectionConfig } from '../src/collection/config-model.js';
import { AlreadyExists, BadInput, BadRequest, NotFound, QuiverError } from '../src/errors.js';
import { controlPlaneCluster } from './helpers/control-plane-cluster.js';
import { testPeerInfo as peer } from './helpers/etcd-member.js';

function config(body: Record<string, unknown>, peers = 3): CollectionConfig {
  return fromCreateRequest({ vectors: { size: 4, distance: 'Cosine' }, ...body } as Parameters<typeof fromCreateRequest>[0], peers);
}

/** The error a refused change throws: its class, status and Qdrant's message. */
async function refused(t: Test, change: Promise<unknown>, type: new (...args: never[]) => QuiverError, message: string): Promise<void> {
  const err = await change.then(() => null, (e: unknown) => e);
  t.type(err, type, message);
  t.equal((err as Error | null)?.message, message);
}

t.test('two concurrent creates of one name: exactly one wins, the other gets 409', async (t) => {
  const { a, b, seen } = await controlPlaneCluster(t, 3);
  for (let round = 0; round < 5; round++) {
    const name = `race-${round}`;
    const results = await Promise.allSettled([a.createCollection(name, config({ shard_number: 2 })), b.createCollection(name, config({ shard_number: 3 }))]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    t.equal(won.length, 1, 'one create wins');
    t.equal(lost.length, 1, 'one create loses');
    t.type(lost[0]!.reason, AlreadyExists);
    t.equal((lost[0]!.reason as QuiverError).statusCode, 409);
    t.equal((lost[0]!.reason as Error).message, `Wrong input: Collection \`${name}\` already exists!`);
    const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<ControlPlane['createCollection']>>>).value;
    const view = await seen(winner.revision);
    t.same(view.collections.get(name), winner.record, 'the winner\'s record is stored');
    t.equal(view.shards.get(name)?.size, winner.record.config.params.shardNumber, 'the winner\'s shards only');
  }
});

t.test('create places shards over the peers with Initializing replicas; activation and Dead compare the state', async (t) => {
  const { a, seen } = await controlPlaneCluster(t, 3);
  const created = await a.createCollection('c', config({ shard_number: 3, replication_factor: 2 }));
  let view = await seen(created.revision);
  const record = view.collections.get('c')!;
  t.equal(record.storageId, created.record.storageId);
  t.same(record.indexes, []);
  const load = new Map<number, number>();
  for (let shard = 0; shard < 3; shard++) {
    const replicas = view.replicas('c', shard)!;
    t.same([...replicas.keys()].sort(), [...created.placement.get(shard)!].sort(), `shard ${shard} as placed`);
    t.equal(replicas.size, 2, 'replication_factor replicas');
    t.same([...replicas.values()], ['Initializing', 'Initializing']);
    for (const p of replicas.keys()) load.set(p, (load.get(p) ?? 0) + 1);
  }
  t.same([...load.values()].sort(), [2, 2, 2], 'balanced over the 3 peers');

  const [holder, other] = created.placement.get(0)!;
  const activated = await a.setReplicaState('c', 0, holder!, 'Active', ['Initializing']);
  t.same({ changed: activated.changed, previous: activated.previous }, { changed: true, previous: 'Initializing' });
  view = await seen(activated.revision);
  t.equal(view.replicas('c', 0)!.get(holder!), 'Active');
  t.equal(view.replicas('c', 0)!.get(other!), 'Initializing', 'the other replica is untouched');

  const again = await a.setReplicaState('c', 0, holder!, 'Active', ['Initializing']);
  t.same({ changed: again.changed, previous: again.previous }, { changed: false, previous: 'Active' }, 'activating twice writes nothing');
  const notFrom = await a.setReplicaState('c', 0, holder!, 'Dead', ['Initializing']);
  t.equal(notFrom.changed, false, 'a from-state that no longer holds writes nothing');

  const last = await a.setReplicaState('c', 0, holder!, 'Dead', ['Active']);
  t.same({ changed: last.changed, previous: last.previous }, { changed: false, previous: 'Active' }, 'the shard\'s last Active replica is never marked Dead');
  const otherActive = await a.setReplicaState('c', 0, other!, 'Active', ['Initializing']);
  view = await seen(otherActive.revision);
  const dead = await a.setReplicaState('c', 0, holder!, 'Dead', ['Active', 'Initializing']);
  t.equal(dead.changed, true);
  view = await seen(dead.revision);
  t.equal(view.replicas('c', 0)!.get(holder!), 'Dead');

  const absent = [1, 2, 3].find((p) => !created.placement.get(1)!.includes(p))!;
  const none = await a.setReplicaState('c', 1, absent, 'Dead', null);
  t.same({ changed: none.changed, previous: none.previous }, { changed: false, previous: null }, 'a peer without a replica');
  await refused(t, a.setReplicaState('c', 9, holder!, 'Active', null), NotFound, 'Not found: shard 9 not found');
  await refused(t, a.setReplicaState('nope', 0, holder!, 'Active', null), NotFound, 'Not found: Collection `nope` doesn\'t exist!');
});

t.test('update, delete and aliases as a second peer sees them, with Qdrant\'s refusals', async (t) => {
  const { a, b, seen } = await controlPlaneCluster(t, 3);
  await a.createCollection('one', config({ shard_number: 1 }));
  const two = await a.createCollection('two', config({ shard_number: 2 }));
  let view = await seen(two.revision);
  t.same([...view.collections.keys()], ['one', 'two']);

  const aliased = await b.changeAliases([{ create_alias: { collection_name: 'one', alias_name: 'first' } }, { create_alias: { collection_name: 'two', alias_name: 'second' } }]);
  view = await seen(aliased.revision);
  t.same([...view.aliases], [['first', 'one'], ['second', 'two']]);

  await refused(t, a.createCollection('first', config({})), BadInput, "Wrong input: Can't create collection with name first. Alias with the same name already exists");
  await refused(t, a.createCollection('one', config({})), AlreadyExists, 'Wrong input: Collection `one` already exists!');
  // All or nothing: the rename applies on the copy, then the create fails; nothing is stored.
  await refused(t, b.changeAliases([{ rename_alias: { old_alias_name: 'first', new_alias_name: 'uno' } }, { create_alias: { collection_name: 'missing', alias_name: 'x' } }]), NotFound, 'Not found: Collection `missing` doesn\'t exist!');
  await refused(t, b.changeAliases([{ rename_alias: { old_alias_name: 'nope', new_alias_name: 'x' } }]), NotFound, 'Not found: Alias nope does not exists!');
  await refused(t, b.changeAliases([{ create_alias: { collection_name: 'one', alias_name: 'two' } }]), AlreadyExists, 'Wrong input: Collection `two` already exists!');
  view = await seen((await a.read()).revision);
  t.same([...view.aliases], [['first', 'one'], ['second', 'two']], 'refused alias actions changed nothing');

  const updated = await b.updateCollection('first', (r) => ({ ...r, indexes: [{ key: 'city', schema: { type: 'keyword' } }] as typeof r.indexes, storageId: 'ignored' }));
  view = await seen(updated.revision);
  t.same(view.collections.get('one')!.indexes, [{ key: 'city', schema: { type: 'keyword' } }], 'an update through an alias');
  t.equal(view.collections.get('one')!.storageId, updated.record.storageId, 'the storage id stays');
  t.not(updated.record.storageId, 'ignored');
  await refused(t, b.updateCollection('nope', (r) => r), NotFound, 'Not found: Collection `nope` doesn\'t exist!');

  const deleted = await a.deleteCollection('one');
  t.equal(deleted.deleted, true);
  view = await seen(deleted.revision);
  t.same([...view.collections.keys()], ['two']);
  t.notOk(view.shards.has('one'), 'its shards are gone');
  t.same([...view.aliases], [['second', 'two']], 'its aliases are gone');
  t.equal((await a.deleteCollection('one')).deleted, false, 'deleting it again finds none');
  t.equal((await a.deleteCollection('second')).deleted, false, 'delete takes a name, not an alias');
});

t.test('a delete racing an alias to it never leaves an alias to a missing collection', async (t) => {
  const { a, b } = await controlPlaneCluster(t, 3);
  for (let round = 0; round < 4; round++) {
    const name = `col-${round}`;
    await a.createCollection(name, config({ shard_number: 1 }));
    await Promise.allSettled([a.deleteCollection(name), b.changeAliases([{ create_alias: { collection_name: name, alias_name: `alias-${round}` } }])]);
    const view = await a.read();
    for (const [alias, target] of view.aliases) t.ok(view.collections.has(target), `alias ${alias} names an existing collection`);
    t.notOk(view.collections.has(name), 'the delete went through');
  }
});

t.test('shard keys: placement, replication, initial state; refusals', async (t) => {
  const { a, b, seen } = await controlPlaneCluster(t, 3);
  await refused(t, a.createShardKey('nope', 'k'), NotFound, 'Not found: Collection `nope` doesn\'t exist!');
  await a.createCollection('auto', config({ shard_number: 1 }));
  await refused(t, a.createShardKey('auto', 'k'), BadRequest, 'Bad request: Shard Key cannot be created with Auto sharding method');
  const custom = await a.createCollection('custom', config({ sharding_method: 'custom', shard_number: 2, replication_factor: 2 }));
  let view = await seen(custom.revision);
  t.notOk(view.shards.has('custom'), 'custom sharding creates no shard');

  const first = await a.createShardKey('custom', 'eu');
  t.same(first.shards, [1, 2], 'numbered from 1, shard_number shards');
  view = await seen(first.revision);
  t.same(view.collections.get('custom')!.shardKeys, [{ key: 'eu', shards: [1, 2] }]);
  for (const shard of [1, 2]) {
    t.equal(view.shards.get('custom')!.get(shard)!.shard_key, 'eu');
    t.same([...view.replicas('custom', shard)!.values()], ['Active', 'Active'], 'replication_factor replicas, Active');
  }

  const second = await b.createShardKey('custom', 7, { shardsNumber: 3, replicationFactor: 1, placement: [2], initialState: 'Partial' });
  t.same(second.shards, [3, 4, 5], 'after the highest id');
  view = await seen(second.revision);
  for (const shard of second.shards) t.same([...view.replicas('custom', shard)!], [[2, 'Partial']], 'on the placement peer, in the initial state');

  await refused(t, a.createShardKey('custom', 'eu'), BadRequest, 'Bad request: Sharding key eu already exists for collection custom');
  await refused(t, a.createShardKey('custom', 'us', { placement: [2, 9] }), BadRequest, 'Bad request: Peer 9 does not exist');

  const dropped = await a.dropShardKey('custom', 'eu');
  view = await seen(dropped.revision);
  t.same(view.collections.get('custom')!.shardKeys, [{ key: 7, shards: [3, 4, 5] }]);
  t.same([...view.shards.get('custom')!.keys()], [3, 4, 5], 'its shards are gone');
  await refused(t, a.dropShardKey('custom', 'eu'), BadRequest, 'Bad request: Sharding key eu does not exist for collection custom');
  const third = await a.createShardKey('custom', 'eu');
  t.same(third.shards, [6, 7], 'a dropped key\'s ids are not reused while higher ones exist');
});

t.test('two concurrent shard keys of one collection both land, on distinct ids', async (t) => {
  const { a, b, seen } = await controlPlaneCluster(t, 3);
  await a.createCollection('c', config({ sharding_method: 'custom' }));
  const [x, y] = await Promise.all([a.createShardKey('c', 'x'), b.createShardKey('c', 'y')]);
  const view = await seen(Math.max(x.revision, y.revision));
  t.same(view.collections.get('c')!.shardKeys!.map((e) => e.key).sort(), ['x', 'y']);
  t.same([...view.shards.get('c')!.keys()], [1, 2]);
});

t.test('quota, metadata (a delete stores null) and a peer registered later', async (t) => {
  const { a, b, seen, registrar } = await controlPlaneCluster(t, 2);
  const quota = await a.putQuota({ enabled: true, max_resident_memory_percent: 80, max_disk_usage_percent: null, release_margin_percent: null });
  let view = await seen(quota.revision);
  t.same(view.quota, { enabled: true, max_resident_memory_percent: 80, max_disk_usage_percent: null, release_margin_percent: null });

  const put = await b.putMetadata('team/a b', { owner: 'x', big: 18446744073709551615n });
  view = await seen(put.revision);
  t.same(view.metadata.get('team/a b'), { owner: 'x', big: 18446744073709551615n }, 'any JSON, integers past 2^53 exact');
  const deleted = await b.deleteMetadata('team/a b');
  view = await seen(deleted.revision);
  t.ok(view.metadata.has('team/a b'), 'the key stays');
  t.equal(view.metadata.get('team/a b'), null, 'holding null');

  await registerPeer(registrar, 3, peer(3));
  view = await seen((await b.read()).revision);
  t.same([...view.peers.keys()], [1, 2, 3]);
  t.same(view.peers.get(3), peer(3));
});

t.test('names holding `/` stay apart; a collection re-created between two views is removed and added', async (t) => {
  const { a } = await controlPlaneCluster(t, 3);
  await a.createCollection('a', config({ shard_number: 1 }));
  await a.createCollection('a/b', config({ shard_number: 2 }));
  const before = await a.read();
  t.same([...before.collections.keys()], ['a', 'a/b']);
  t.same([...before.shards.get('a/b')!.keys()], [0, 1]);
  t.ok(before.entries.has('collections/a%2Fb'), 'the name is encoded in its key');

  await a.deleteCollection('a');
  await a.createCollection('a', config({ shard_number: 1 }));
  const after = await a.read();
  t.same([...after.shards.get('a/b')!.keys()], [0, 1], 'deleting `a` left the shards of `a/b`');
  const changes = changesBetween(before, after);
  t.same(changes.collectionsRemoved, ['a']);
  t.same(changes.collectionsAdded, ['a']);
  t.same(changes.collectionsChanged, []);
  t.same(changes.shardsRemoved, [{ collection: 'a', shard: 0 }]);
  t.same(changes.shardsAdded, [{ collection: 'a', shard: 0 }]);
  t.ok(isUnchanged(changesBetween(after, after)), 'a view has no changes from itself');
  t.notOk(isUnchanged(changes));
});
