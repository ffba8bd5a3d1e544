// Which replicas a set's lifecycle tasks reach (src/replica/replica-set.ts `localLifecycle`): on a
// single node every replica of the set; on a cluster peer only its own (each peer's reconcile runs
// them on its own replicas), and none when the peer holds no replica of the shard; point updates
// reach every replica that takes updates either way.

import t from 'tap';
import type { ReplicaState, ShardContent } from '../src/replica/replica.js';
import { ReplicaSet } from '../src/replica/replica-set.js';
import { LocalReplicaStates } from '../src/replica/replica-states.js';
import { DEFAULT_OPTIMIZER_SPEC } from '../src/shard/optimizer/plan.js';
import type { WriteOp } from '../src/shard/write-ops.js';
import { FakeReplica } from './helpers/fake-replica.js';

const SHARD = { collection: 'c', shard: 0 };
const OPS: WriteOp[] = [{ kind: 'upsert', points: [{ id: 1, vectors: { '': new Float32Array([1, 0]) }, payload: {} }], mode: 'upsert', updateFilter: null }];
const SPEC: ShardContent = { vectors: [], sparseVectors: [], indexes: [], optimizer: DEFAULT_OPTIMIZER_SPEC };

function setOf(thisPeer: number, peers: number[], localLifecycle: boolean, state: ReplicaState = 'Active') {
  const replicas = peers.map((peer) => new FakeReplica(SHARD, peer));
  const states = new LocalReplicaStates(peers);
  for (const peer of peers) states.set(peer, state);
  const set = new ReplicaSet(SHARD, replicas, { peer: thisPeer, states, params: () => ({ writeConsistencyFactor: 1, readFanOutFactor: null }), localLifecycle });
  const types = () => replicas.map((r) => r.received.map((x) => x.task.type));
  return { set, replicas, types };
}

t.test('a single node sends lifecycle tasks to every replica of the set', async (t) => {
  const { set, types } = setOf(1, [1, 2], false);
  await set.update({ type: 'open', spec: SPEC });
  await set.update({ type: 'create_index', index: { key: 'a', schema: 'keyword' } });
  await set.each({ type: 'close' });
  t.same(types(), [['open', 'create_index', 'close'], ['open', 'create_index', 'close']]);
});

t.test('a cluster peer sends them to its own replica only, whatever its state; point updates still reach every replica', async (t) => {
  const { set, types } = setOf(2, [1, 2, 3], true);
  t.same(await set.update({ type: 'open', spec: SPEC }), { lastOp: 0 });
  await set.update({ type: 'drop_index', key: 'a' });
  await set.each({ type: 'drop' });
  t.same(types(), [[], ['open', 'drop_index', 'drop'], []]);
  t.equal(await set.apply({ type: 'apply', ops: OPS, opId: 1, clock: { peer: 2, clockId: 0, tick: 1 }, wait: true, dryRun: false }), null, 'led here: the caller\'s numbering stands');
  t.same(types().map((list) => list.at(-1)), ['apply', 'apply', 'apply']);

  const initializing = setOf(1, [1], true, 'Initializing');
  await initializing.set.update({ type: 'open', spec: SPEC });
  t.same(initializing.types(), [['open']], 'a replica still Initializing is opened');
});

t.test('a peer without a replica of the shard has no lifecycle work on it', async (t) => {
  const { set, types } = setOf(3, [1, 2], true);
  t.same(await set.update({ type: 'open', spec: SPEC }), { lastOp: 0 }, 'as a shard with no operation applied');
  t.equal(await set.update({ type: 'create_index', index: { key: 'a', schema: 'keyword' } }), null);
  await set.each({ type: 'close' });
  t.same(types(), [[], []]);
  t.equal(set.localReplica, undefined);
});
