// The rules of a snapshot recovery on a cluster peer, below the REST routes: which replica states
// each `priority` leaves (Qdrant's), which existing collections a snapshot fits (Qdrant's
// refusals), and the control plane's transaction that creates the snapshot's collection (its
// indexes, its shard keys with their snapshot shard ids) or hands back the existing one, against
// a real one-member etcd as a second peer's apply loop sees it.

import { Etcd3 } from 'etcd3';
import t, { type Test } from 'tap';
import { fromCreateRequest } from '../src/api/collection-config.js';
import { ApplyLoop } from '../src/cluster/apply-loop.js';
import { ControlPlane } from '../src/cluster/control-plane.js';
import { clusterNamespace } from '../src/cluster/keys.js';
import { registerPeer } from '../src/cluster/peer-registry.js';
import { statesAfterRecovery } from '../src/cluster/recovered-replicas.js';
import type { CollectionConfig } from '../src/collection/config-model.js';
import { checkCollectionSnapshotFits } from '../src/collection/snapshot-compatibility.js';
import { BadInput, NotFound } from '../src/errors.js';
import type { ReplicaState } from '../src/replica/replica.js';
import { startTestEtcd } from './helpers/etcd-member.js';

const WAIT_MS = 10_000;

function config(body: Record<string, unknown>, peers = 3): CollectionConfig {
  return fromCreateRequest({ vectors: { size: 4, distance: 'Cosine' }, ...body } as Parameters<typeof fromCreateRequest>[0], peers);
}

t.test('replica states after a recovery, by priority (Qdrant\'s rules)', async (t) => {
  const states = (entries: [number, ReplicaState][]) => Object.fromEntries(entries.map(([p, s]) => [String(p), s]));
  const alone = states([[1, 'Active']]);
  for (const priority of ['replica', 'snapshot', 'no_sync'] as const) {
    t.equal(statesAfterRecovery(alone, 1, priority), null, `${priority}: the only replica stays Active, nothing written`);
    t.same(statesAfterRecovery(states([[1, 'Dead'], [2, 'Dead']]), 1, priority), states([[1, 'Active'], [2, 'Dead']]), `${priority}: no other Active replica: the restored one is activated`);
    t.equal(statesAfterRecovery(states([[2, 'Active']]), 1, priority), null, `${priority}: a peer without a replica of the shard changes nothing`);
  }
  const shared = states([[1, 'Active'], [2, 'Active'], [3, 'Dead']]);
  t.same(statesAfterRecovery(shared, 1, 'snapshot'), states([[1, 'Active'], [2, 'Dead'], [3, 'Dead']]), 'snapshot: the other Active replicas are marked Dead');
  t.same(statesAfterRecovery(shared, 1, 'replica'), states([[1, 'Dead'], [2, 'Active'], [3, 'Dead']]), 'replica: the restored replica is marked Dead');
  t.equal(statesAfterRecovery(shared, 1, 'no_sync'), null, 'no_sync: nothing changes');
  t.same(statesAfterRecovery(states([[1, 'Initializing'], [2, 'Active']]), 1, 'no_sync'), states([[1, 'Active'], [2, 'Active']]), 'no_sync: the restored replica is activated');
  t.same(statesAfterRecovery(states([[1, 'Active'], [2, 'Partial']]), 1, 'replica'), null, 'a Partial replica is not an Active one: nothing to resync from');
});

t.test('which existing collections a snapshot fits', async (t) => {
  const base = { config: config({ shard_number: 2 }) };
  const refuse = (snapshot: Parameters<typeof checkCollectionSnapshotFits>[1], existing: Parameters<typeof checkCollectionSnapshotFits>[0], message: string) => {
    const err = (() => {
      try {
        checkCollectionSnapshotFits(existing, snapshot);
        return null;
      } catch (e) {
        return e;
      }
    })();
    t.type(err, BadInput, message);
    t.equal((err as Error | null)?.message, `Wrong input: Snapshot is not compatible with existing collection: ${message}`);
  };
  t.doesNotThrow(() => checkCollectionSnapshotFits(base, { config: config({ shard_number: 2, optimizers_config: { indexing_threshold: 5 }, replication_factor: 3 }) }), 'other settings than vectors and shards may differ');
  refuse({ config: config({ shard_number: 3 }) }, base, 'Collection shard number: 2 Snapshot shard number: 3');
  refuse({ config: config({ shard_number: 2, vectors: { size: 8, distance: 'Cosine' } }) }, base, 'Collection vectors: {(default): 4 Cosine} Snapshot Vectors: {(default): 8 Cosine}');
  refuse({ config: config({ shard_number: 2, vectors: { a: { size: 4, distance: 'Cosine' } } }) }, base, 'Collection vectors: {(default): 4 Cosine} Snapshot Vectors: {a: 4 Cosine}');
  const custom = config({ sharding_method: 'custom' });
  refuse({ config: custom, shardKeys: [{ key: 'k', shards: [1] }] }, { config: custom, shardKeys: [{ key: 'k', shards: [1] }, { key: 'j', shards: [2] }] }, 'Collection shard keys: [["k",[1]],["j",[2]]] Snapshot shard keys: [["k",[1]]]');
  t.doesNotThrow(() => checkCollectionSnapshotFits({ config: custom, shardKeys: [{ key: 'k', shards: [1] }] }, { config: custom, shardKeys: [{ key: 'k', shards: [1] }] }), 'the same shard keys fit');
});

t.test('the control plane creates the snapshot\'s collection or hands back the existing one', async (t) => {
  const member = await startTestEtcd(t);
  const clientOf = (): Etcd3 => {
    const c = new Etcd3({ hosts: member.clientUrl });
    t.teardown(() => c.close());
    return c;
  };
  const plane = new ControlPlane(clusterNamespace(clientOf()));
  const registrar = clientOf();
  for (let id = 1; id <= 3; id++) await registerPeer(registrar, id, { uri: `http://127.0.0.1:${6000 + id}/`, etcd_member_id: String(1000 + id), etcd_peer_url: `http://127.0.0.1:${7000 + id}`, version: '0.1.0' });
  const loop = new ApplyLoop({ namespace: clusterNamespace(clientOf()), onApply: async () => {} });
  t.teardown(() => loop.stop());
  await loop.start();
  const seen = async (revision: number) => {
    await loop.waitApplied(revision, WAIT_MS);
    return loop.current;
  };
  const never = () => t.fail('an absent collection is not checked');

  const indexes = [{ key: 'n', type: 'integer' }] as unknown as Parameters<ControlPlane['recoverCollection']>[1]['indexes'];
  const keyed = config({ sharding_method: 'custom', replication_factor: 2 });
  const created = await plane.recoverCollection('keyed', { config: keyed, indexes, shardKeys: [{ key: 'a', shards: [1, 2] }, { key: 7, shards: [4] }] }, never);
  t.equal(created.created, true);
  let view = await seen(created.revision);
  t.same(view.collections.get('keyed'), created.record, 'the record as proposed');
  t.same(created.record.indexes, indexes, 'with the snapshot\'s payload indexes');
  t.same([...view.shards.get('keyed')!.keys()].sort(), [1, 2, 4], 'the shards of the snapshot\'s keys, with their ids');
  for (const [shard, key] of [[1, 'a'], [2, 'a'], [4, 7]] as const) {
    const entry = view.shards.get('keyed')!.get(shard)!;
    t.equal(entry.shard_key, key, `shard ${shard} belongs to key ${key}`);
    t.same(Object.values(entry.replicas), ['Initializing', 'Initializing'], `shard ${shard}: replication_factor Initializing replicas`);
  }

  const auto = await plane.recoverCollection('auto', { config: config({ shard_number: 3 }), indexes: [] }, never);
  view = await seen(auto.revision);
  t.same([...view.shards.get('auto')!.keys()].sort(), [0, 1, 2], 'automatic sharding: shards 0..n-1');
  t.equal(view.shards.get('auto')!.get(0)!.shard_key, undefined);

  let checked = 0;
  const existing = await plane.recoverCollection('auto', { config: config({ shard_number: 3 }), indexes }, (record) => {
    checked++;
    t.equal(record.storageId, auto.record.storageId, 'the check sees the existing record');
  });
  t.same([existing.created, checked, existing.record], [false, 1, auto.record], 'the existing collection is handed back unchanged');
  const refusal = await plane.recoverCollection('auto', { config: config({ shard_number: 2 }), indexes: [] }, (record) => checkCollectionSnapshotFits(record, { config: config({ shard_number: 2 }) })).catch((e: unknown) => e);
  t.type(refusal, BadInput, 'an existing collection the snapshot does not fit is refused');
  view = await seen((await plane.read()).revision);
  t.same(view.collections.get('auto'), auto.record, 'and left as it was');

  const aliased = await plane.changeAliases([{ create_alias: { collection_name: 'auto', alias_name: 'other' } }]);
  await seen(aliased.revision);
  const onAlias = await plane.recoverCollection('other', { config: config({}), indexes: [] }, never).catch((e: unknown) => e);
  t.type(onAlias, BadInput, 'an alias\'s name is refused as for a create');
  t.equal((onAlias as Error).message, 'Wrong input: Can\'t create collection with name other. Alias with the same name already exists');

  const [holder] = Object.keys(view.shards.get('auto')!.get(0)!.replicas);
  const marked = await plane.changeReplicaStates('auto', auto.record.storageId, 0, (replicas) => ({ ...replicas, [holder!]: 'Dead' }));
  t.equal(marked.changed, true);
  view = await seen(marked.revision);
  t.equal(view.shards.get('auto')!.get(0)!.replicas[holder!], 'Dead', 'the states as `change` made them');
  t.equal((await plane.changeReplicaStates('auto', auto.record.storageId, 0, () => null)).changed, false, 'no change writes nothing');
  const gone = await plane.changeReplicaStates('auto', 'another-incarnation', 0, () => ({})).catch((e: unknown) => e);
  t.type(gone, NotFound, 'another incarnation of the collection is not changed');
});
