// A replica set's reads by the request's read consistency (src/replica/read-consistency.ts
// through src/replica/replica-set.ts), over in-memory replicas: how replicas are counted, how
// many must answer, which are asked and in what order, fan-out, transient failures, and
// Qdrant's error texts.

import t from 'tap';
import { withReadScope, type ReadConsistency } from '../src/replica/request-scope.js';
import { BadInput, ServiceError, Timeout } from '../src/errors.js';
import { countReplicas, fanOut, readOrder, readRequirement } from '../src/replica/read-consistency.js';
import type { ReplicaState, ReplicaTask } from '../src/replica/replica.js';
import { ReplicaSet } from '../src/replica/replica-set.js';
import { LocalReplicaStates } from '../src/replica/replica-states.js';
import { FakeReplica } from './helpers/fake-replica.js';

const SHARD = { collection: 'c', shard: 3 };
const COUNT = { type: 'count', filter: null } as const;
const NOT_ENOUGH = 'Service internal error: The replica set for shard 3 on peer 0 does not have enough active replicas';

interface Options {
  thisPeer?: number;
  readFanOutFactor?: number | null;
  random?: () => number;
}

/** A set of one replica per state given, of peers 0, 1, ...; replica i holds `sizes[i]` points. */
function replicaSet(states: ReplicaState[], sizes: number[] = states.map(() => 1), { thisPeer = 0, readFanOutFactor = null, random = () => 0.999 }: Options = {}) {
  const replicas = states.map((_, peer) => new FakeReplica(SHARD, peer));
  replicas.forEach((r, i) => {
    for (let id = 0; id < sizes[i]; id++) r.points.set(id, { id, vectors: {}, payload: {} });
  });
  const held = new LocalReplicaStates(replicas.map((r) => r.peer));
  states.forEach((state, peer) => held.set(peer, state));
  const set = new ReplicaSet(SHARD, replicas, { peer: thisPeer, states: held, params: () => ({ writeConsistencyFactor: 1, readFanOutFactor }), random });
  return { set, replicas };
}

function count(set: ReplicaSet, consistency?: ReadConsistency): Promise<number> {
  return withReadScope({ consistency }, 'Count', () => set.read(COUNT, null));
}

function asked(replicas: FakeReplica[]): number[] {
  return replicas.filter((r) => r.tasks('count').length > 0).map((r) => r.peer);
}

t.test('answers needed per consistency (Qdrant\'s table)', async (t) => {
  const table: [ReadConsistency, number, number, string][] = [
    ['all', 3, 3, 'All'], ['majority', 3, 3, 'Majority'], ['quorum', 3, 2, 'All'], ['quorum', 4, 3, 'All'], ['quorum', 1, 1, 'All'],
    [1, 3, 1, 'All'], [2, 3, 2, 'All'], [7, 3, 3, 'All'],
  ];
  for (const [consistency, total, required, condition] of table) t.same(readRequirement(consistency, total), { required, condition }, `${consistency} of ${total}`);
});

t.test('counting: every replica is in the total, only readable ones answer', async (t) => {
  const standings = (['Active', 'Dead', 'Partial', 'ActiveRead', 'ReshardingScaleDown', 'Listener'] as ReplicaState[]).map((state) => ({ state, disabled: false }));
  t.same(countReplicas(standings), { total: 6, readable: 3 });
  t.same(countReplicas([{ state: 'Active', disabled: true }, { state: 'Active', disabled: false }]), { total: 2, readable: 1 }, 'a replica this peer disabled does not answer');
});

t.test('a Dead replica counts: `all` fails while one is Dead; quorum as Qdrant counts', async (t) => {
  const { set, replicas } = replicaSet(['Active', 'Dead', 'Active'], [5, 9, 4]);
  await t.rejects(count(set, 'all'), { message: NOT_ENOUGH, statusCode: 500 });
  await t.rejects(count(set, 'majority'), { message: NOT_ENOUGH }, 'majority also needs every replica');
  await t.rejects(count(set, 5), { message: NOT_ENOUGH }, 'a factor is clamped to the total (3), more than the 2 readable');
  t.same(asked(replicas), [], 'no replica was asked');
  t.equal(await count(set, 'quorum'), 4, 'quorum: 2 of 3, the smaller count of the two readable ones');
  t.same(asked(replicas), [0, 2], 'the readable ones');
});

t.test('counts resolve: all -> the smallest, majority -> the median', async (t) => {
  const { set } = replicaSet(['Active', 'Active', 'Active'], [5, 9, 4]);
  t.equal(await count(set, 'all'), 4);
  t.equal(await count(set, 'majority'), 5);
  t.equal(await count(set, 2), 5, 'a factor of 2: this peer\'s and the next asked (peer 1 with this random), the smaller');
  t.equal(await count(set), 5, 'the default (1): this peer\'s replica alone');
});

t.test('order: this peer\'s replica first, then the others shuffled', async (t) => {
  t.same(readOrder('L', ['a', 'b', 'c'], () => 0.999), ['L', 'a', 'b', 'c'], 'a random that swaps nothing');
  t.same(readOrder('L', ['a', 'b', 'c'], () => 0), ['L', 'b', 'c', 'a'], 'Fisher-Yates with every draw 0');
  t.same(readOrder(null, ['a', 'b'], () => 0), ['b', 'a'], 'no local replica');
  let draws = 0;
  const { set, replicas } = replicaSet(['Active', 'Active', 'Active'], undefined, { thisPeer: 1, random: () => (draws++, 0) });
  t.equal(await count(set), 1);
  t.same(asked(replicas), [1], 'consistency 1: only this peer\'s replica (no fan-out while it is idle)');
  t.equal(draws, 1, 'the other two were shuffled');
  replicas[1].failNext('count', new ServiceError('disk on fire'));
  t.equal(await count(set), 1);
  t.same(replicas.map((r) => r.tasks('count').length), [0, 2, 1], 'after its transient failure, the first of the shuffled others (peer 2, with draws of 0)');
});

t.test('fan-out: read_fan_out_factor, or one when this peer holds no readable replica', async (t) => {
  const fanned = replicaSet(['Active', 'Active', 'Active'], undefined, { readFanOutFactor: 1 });
  const held = fanned.replicas[0].hold('count');
  const reading = count(fanned.set);
  await held.arrived;
  t.equal(await reading, 1, 'answered by the replica asked beside the held local one');
  t.same(asked(fanned.replicas), [0, 1], 'two asked at once');
  held.release();

  const remote = replicaSet(['Active', 'Active', 'Active'], undefined, { thisPeer: 9 });
  t.equal(await count(remote.set), 1);
  t.same(asked(remote.replicas), [0, 1], 'no local replica: one more than needed');
  const dead = replicaSet(['Dead', 'Active', 'Active']);
  await count(dead.set);
  t.same(asked(dead.replicas), [1, 2], 'local replica not readable: one more than needed');
  t.equal(fanOut(null, true, true), 1, 'local replica busy with an update: one more');
  t.equal(fanOut(null, true, false), 0);
  t.equal(fanOut(3, false, true), 3, 'the collection\'s factor wins');
});

t.test('transient errors launch the next replica; too few answers: Qdrant\'s summary', async (t) => {
  const { set, replicas } = replicaSet(['Active', 'Active', 'Active']);
  replicas[0].failNext('count', new ServiceError('disk on fire'));
  replicas[1].failNext('count', new Timeout('Timeout error: slow'));
  t.equal(await count(set), 1, 'two failures (an internal error, a timeout), the third answers');
  t.same(replicas.map((r) => r.tasks('count').length), [1, 1, 1]);

  replicas[0].failNext('count', new ServiceError('disk on fire'));
  replicas[1].failNext('count', new ServiceError('peer unreachable'));
  await t.rejects(count(set, 2), {
    message: 'Service internal error: 2 of 2 read operations failed:\n  Service internal error: disk on fire\n  Service internal error: peer unreachable',
    statusCode: 500,
  }, 'two needed: once two failed, one left to ask cannot make two (the operations counted are those settled)');
  for (const r of replicas) r.failNext('count', new Error(`socket ${r.peer} closed`));
  await t.rejects(count(set, 'all'), { message: 'Service internal error: 1 of 1 read operations failed:\n  socket 0 closed' }, 'all needed: the first failure (an unreachable replica, no Quiver error, is transient) settles it');
});

t.test('a non-transient error is the answer at once', async (t) => {
  const { set, replicas } = replicaSet(['Active', 'Active', 'Active']);
  replicas[0].failNext('count', new BadInput('bad filter'));
  await t.rejects(count(set, 'quorum'), { message: 'Wrong input: bad filter', statusCode: 400 });
});

t.test('a set of one replica (a single node) answers that replica\'s own error', async (t) => {
  const { set, replicas } = replicaSet(['Active']);
  replicas[0].failNext('count', new ServiceError('disk on fire'));
  for (const consistency of [undefined, 'all', 'majority', 'quorum', 3] as const) {
    if (consistency !== undefined) replicas[0].failNext('count', new ServiceError('disk on fire'));
    await t.rejects(count(set, consistency), { message: 'Service internal error: disk on fire' }, `consistency ${consistency ?? 'default'}`);
  }
  for (const consistency of ['all', 'majority', 'quorum', 3] as const) t.equal(await count(set, consistency), 1, `${consistency}: the one replica's answer`);
});

t.test('records resolve across replicas by the request\'s consistency', async (t) => {
  const { set, replicas } = replicaSet(['Active', 'Active', 'Active']);
  for (const r of replicas) for (const id of [1, 2, 3]) r.points.set(id, { id, vectors: {}, payload: { v: 1 } });
  replicas[1].points.set(2, { id: 2, vectors: {}, payload: { v: 2 } });
  replicas[2].points.delete(3);
  const task: ReplicaTask = { type: 'retrieve', ids: [1, 2, 3], shape: { withPayload: { all: true }, withVector: false } };
  const retrieve = (consistency: ReadConsistency) => withReadScope({ consistency }, 'Retrieve', () => set.read(task, null));
  t.same(await retrieve('all'), [{ id: 1, payload: { v: 1 } }], 'all: what every replica holds identically');
  t.same(await retrieve('majority'), [{ id: 1, payload: { v: 1 } }, { id: 2, payload: { v: 1 } }, { id: 3, payload: { v: 1 } }], 'majority: what two of three hold');
  t.same(await retrieve(1), [{ id: 1, payload: { v: 1 } }, { id: 2, payload: { v: 1 } }, { id: 3, payload: { v: 1 } }], 'one: this peer\'s answer as is');
});

t.test('a task that does not resolve takes one replica, whatever the consistency', async (t) => {
  const { set, replicas } = replicaSet(['Active', 'Active', 'Dead']);
  const dryRun: ReplicaTask = { type: 'apply', ops: [], opId: 1, clock: { peer: 0, clockId: 0, tick: 1 }, wait: true, dryRun: true };
  await withReadScope({ consistency: 'all' }, 'Check', () => set.read(dryRun, null));
  t.same(replicas.map((r) => r.tasks('apply').length), [1, 0, 0], 'a dry run: this peer\'s replica alone');
});
