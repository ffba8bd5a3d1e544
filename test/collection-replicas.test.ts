// The collection over its replica sets, with in-memory replicas (test/helpers/fake-replica.ts):
// no server, no workers. Routing and fan-out, replicas failing or running out of time, the
// order of writes per shard, the all-or-nothing write across shards, and the read policy over
// replicas in different states.

import t from 'tap';
import { Collection, type RoutedOp } from '../src/collection/collection.js';
import { withReadScope } from '../src/replica/request-scope.js';
import { shardOf } from '../src/shard/routing.js';
import type { ShardKeyEntry } from '../src/collection/shard-keys.js';
import { BadInput, ServiceError } from '../src/errors.js';
import type { PointId, ShardKey } from '../src/model.js';
import { ReplicaSet } from '../src/replica/replica-set.js';
import { LocalReplicaStates } from '../src/replica/replica-states.js';
import type { VectorSpec } from '../src/shard/shard.js';
import { FakeReplica } from './helpers/fake-replica.js';

const VECTORS: VectorSpec[] = [{ name: '', size: 2, distance: 'Dot', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null }];
const NAME = 'c';
const ALL = { withPayload: { all: true }, withVector: false } as const;

interface Harness {
  collection: Collection;
  /** Replicas by shard id. */
  replicas: Map<number, FakeReplica[]>;
  /** Their states by shard id (the replica of peer 0 is this node's). */
  states: Map<number, LocalReplicaStates>;
}

/** A collection of fake replica sets: `shards` ids (with their key, if any), `copies` replicas each, of peers 0, 1, ... */
async function harness(shards: { id: number; key?: ShardKey }[], keys: ShardKeyEntry[] | null, copies = 1): Promise<Harness> {
  const replicas = new Map<number, FakeReplica[]>();
  const states = new Map<number, LocalReplicaStates>();
  const sets = shards.map(({ id, key }) => {
    const shard = { collection: NAME, shard: id };
    replicas.set(id, Array.from({ length: copies }, (_, peer) => new FakeReplica(shard, peer)));
    states.set(id, new LocalReplicaStates(replicas.get(id)!.map((r) => r.peer)));
    return new ReplicaSet(shard, replicas.get(id)!, { peer: 0, states: states.get(id)!, params: () => ({ writeConsistencyFactor: 1, readFanOutFactor: null }), shardKey: key });
  });
  const collection = new Collection(NAME, { keys, shards: sets }, VECTORS, [], []);
  await collection.open();
  return { collection, replicas, states };
}

function automatic(count: number, copies = 1): Promise<Harness> {
  return harness(Array.from({ length: count }, (_, id) => ({ id })), null, copies);
}

function replicaOf(h: Harness, shard: number): FakeReplica {
  return h.replicas.get(shard)![0];
}

/** The first `n` numeric ids at least `from` that hash to shard `index` of `count`. */
function idsOn(index: number, count: number, n: number, from = 0): number[] {
  const out: number[] = [];
  for (let id = from; out.length < n && id < from + 1000 * n; id++) if (shardOf(id, count) === index) out.push(id);
  return out;
}

function upsert(ids: PointId[], payload: Record<string, number> = {}, shardKey?: ShardKey): RoutedOp {
  return { op: { kind: 'upsert', points: ids.map((id) => ({ id, vectors: { '': new Float32Array([1, 0]) }, payload })), mode: 'upsert', updateFilter: null }, shardKey };
}

function setPayload(ids: PointId[], payload: Record<string, number>): RoutedOp {
  return { op: { kind: 'set_payload', target: { ids }, payload, key: null } };
}

/** Rejects if `promise` has not settled within `ms` (a bound on a wait, not a delay). */
function within<T>(promise: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

/** Lets every job that can run without a held task run (the fakes answer at once). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

t.test('a write sends each point to the shard its id hashes to; reads fan out and merge', async (t) => {
  const h = await automatic(3);
  const ids = Array.from({ length: 30 }, (_, i) => i);
  const results = await h.collection.write([upsert(ids)], true);
  t.same(results, [{ operation_id: 1, status: 'completed' }], 'one operation, the first id');
  for (const shard of [0, 1, 2]) {
    t.same([...replicaOf(h, shard).points.keys()].sort((a, b) => Number(a) - Number(b)), ids.filter((id) => shardOf(id, 3) === shard), `shard ${shard} holds the ids that hash to it`);
    t.same(replicaOf(h, shard).applied, [1], `shard ${shard} applied operation 1 once`);
  }

  t.equal(await h.collection.reader().count(null), 30, 'counts of the shards summed');
  t.same([0, 1, 2].map((s) => replicaOf(h, s).tasks('count').length), [1, 1, 1], 'one count task per shard');

  const asked = [5, 3, 999, 5];
  const points = await h.collection.reader().retrieve(asked, ALL);
  t.same(points.map((p) => p.id), [5, 3], 'in the order asked, each once, missing ids left out');
  const reached = [0, 1, 2].filter((s) => replicaOf(h, s).tasks('retrieve').length > 0);
  t.same(reached, [...new Set([5, 3, 999].map((id) => shardOf(id, 3)))].sort(), 'only the shards holding the ids are asked');
  for (const s of reached) t.same(replicaOf(h, s).tasks('retrieve')[0].ids, [5, 3, 999].filter((id) => shardOf(id, 3) === s), `shard ${s} is asked for its own ids only`);
});

t.test('custom shard keys: a write goes to the key it names, a read to the keys it selects', async (t) => {
  const keys = [{ key: 'a', shards: [1, 2] }, { key: 'b', shards: [3] }];
  const h = await harness([{ id: 1, key: 'a' }, { id: 2, key: 'a' }, { id: 3, key: 'b' }], keys);
  const ids = Array.from({ length: 10 }, (_, i) => i);
  await h.collection.write([upsert(ids, { k: 1 }, 'b')], true);
  t.same([...replicaOf(h, 3).points.keys()], ids, 'key b: its one shard holds every point');
  t.equal(replicaOf(h, 1).points.size + replicaOf(h, 2).points.size, 0, 'key a untouched');
  await h.collection.write([upsert(ids, { k: 2 }, 'a')], true);
  t.same([...replicaOf(h, 1).points.keys()], ids.filter((id) => shardOf(id, 2) === 0), 'key a: the hash picks among its own two shards');
  t.same([...replicaOf(h, 2).points.keys()], ids.filter((id) => shardOf(id, 2) === 1));

  t.equal(await h.collection.reader('b').count(null), 10);
  t.equal(await h.collection.reader().count(null), 20, 'no selector: every key');
  t.equal(replicaOf(h, 3).tasks('count').length, 2, 'key b counted twice, key a once');
  t.equal(replicaOf(h, 1).tasks('count').length, 1);
  const [point] = await h.collection.reader('b').retrieve([4], ALL);
  t.same(point, { id: 4, payload: { k: 1 }, shardKey: 'b' }, 'a point read from a keyed shard carries its key');
  await t.rejects(h.collection.write([upsert([1])], true), { message: 'Wrong input: Shard key not specified' }, 'a write without a key is refused');
  t.equal(replicaOf(h, 1).applied.length + replicaOf(h, 2).applied.length + replicaOf(h, 3).applied.length, 3, 'and reached no shard (three applies: one for key b, one per shard of key a)');
});

t.test('a replica that fails fails the request; the shard takes the next write', async (t) => {
  const h = await automatic(2);
  const ids = [...idsOn(0, 2, 2), ...idsOn(1, 2, 2)];
  await h.collection.write([upsert(ids)], true);
  replicaOf(h, 1).failNext('retrieve', new ServiceError('disk on fire'));
  await t.rejects(h.collection.reader().retrieve(ids, ALL), { message: 'Service internal error: disk on fire', statusCode: 500 }, 'the failure is the answer (one replica: nothing to fail over to)');
  t.same((await h.collection.reader().retrieve(ids, ALL)).map((p) => p.id), ids, 'the next read is whole');

  replicaOf(h, 0).failNext('apply', new ServiceError('disk full'));
  await t.rejects(h.collection.write([upsert(idsOn(0, 2, 1, 100))], true), { message: 'Service internal error: disk full' });
  const [next] = await h.collection.write([upsert(idsOn(0, 2, 1, 200))], true);
  t.equal(next.status, 'completed', 'the failed write did not keep the shard locked');
  t.equal(replicaOf(h, 0).applied.at(-1), next.operation_id, 'and the shard recorded the next write');
});

t.test('a replica that runs out of time: Qdrant\'s timeout error, and writes carry no deadline', async (t) => {
  const h = await automatic(2);
  await h.collection.write([upsert([...idsOn(0, 2, 3), ...idsOn(1, 2, 3)])], true);
  const held = replicaOf(h, 0).hold('count');
  const counting = withReadScope({ timeout: 0.2 }, 'Count', () => h.collection.reader().count(null));
  await within(held.arrived);
  await t.rejects(within(counting), { message: "Timeout: Timeout error: Operation 'Count' timed out after 0.2s", statusCode: 408 });
  const [{ deadline }] = replicaOf(h, 0).received.filter((r) => r.task.type === 'count');
  t.equal(deadline?.seconds, 0.2, 'the task carries the request\'s timeout');
  t.ok(deadline !== null && deadline.remainingMs > 0 && deadline.remainingMs <= 200, `as what was left of it when sent (${deadline?.remainingMs} ms)`);
  t.equal(replicaOf(h, 1).tasks('count').length, 1, 'the other shard answered its part');
  t.ok(h.collection.shards.length === 2 && replicaOf(h, 0).received.filter((r) => r.task.type === 'apply').every((r) => r.deadline === null), 'a write is never cut short');
});

t.test('writes to different shards run side by side; writes to one shard keep their order', async (t) => {
  const h = await automatic(3);
  const [a] = idsOn(0, 3, 1);
  const [b] = idsOn(1, 3, 1);
  const [c] = idsOn(2, 3, 1);
  const held = replicaOf(h, 0).hold('apply');
  const w1 = h.collection.write([upsert([a, b], { w: 1 })], true);
  await within(held.arrived);
  const w2 = await within(h.collection.write([upsert([c], { w: 2 })], true));
  t.equal(w2[0].status, 'completed', 'a write to another shard completes while the first waits on shard 0');
  const [r3] = await within(h.collection.write([upsert([b], { w: 3 })], true));
  t.same(replicaOf(h, 1).applied, [1, 3], 'a write to shard 1 queues behind the one before it there, without waiting for that one to finish on shard 0');
  held.release();
  const [r1] = await within(w1);
  t.same([r1.operation_id, w2[0].operation_id, r3.operation_id], [1, 2, 3], 'ids in the order the writes took their shards');
  t.same(replicaOf(h, 1).applied, [1, 3], 'shard 1 applied them in that order');
  t.same(replicaOf(h, 1).points.get(b)?.payload, { w: 3 }, 'the later write is the one that stays');
  t.same(replicaOf(h, 0).applied, [1]);
  t.same(replicaOf(h, 2).applied, [2]);

  const many = await within(Promise.all(Array.from({ length: 12 }, (_, i) => h.collection.write([upsert([a + 3 * i, b + 3 * i], { i })], true))));
  const opIds = many.map(([r]) => r.operation_id).sort((x, y) => x - y);
  t.same(opIds, opIds.map((_, i) => 4 + i), 'concurrent writes: distinct, consecutive ids');
  for (const shard of [0, 1, 2]) {
    const applied = replicaOf(h, shard).applied;
    t.same(applied, [...applied].sort((x, y) => x - y), `shard ${shard} applied its writes in increasing id order`);
  }
});

t.test('a write refused on one shard changes no shard', async (t) => {
  const h = await automatic(3);
  const [a] = idsOn(0, 3, 1);
  const [b] = idsOn(1, 3, 1);
  const [missing] = idsOn(2, 3, 1);
  await h.collection.write([upsert([a, b], { v: 0 })], true);
  const before = [0, 1, 2].map((s) => structuredClone([...replicaOf(h, s).points]));

  await t.rejects(h.collection.write([setPayload([a, b, missing], { v: 1 })], true), { message: `Not found: No point with id ${missing} found`, statusCode: 404 });
  t.same([0, 1, 2].map((s) => [...replicaOf(h, s).points]), before, 'every shard as it was');
  t.same([0, 1, 2].map((s) => replicaOf(h, s).tasks('apply').filter((task) => task.dryRun).length), [1, 1, 1], 'each shard was asked first');
  t.same([0, 1, 2].map((s) => replicaOf(h, s).tasks('apply').filter((task) => !task.dryRun).length), [1, 1, 0], 'none was then asked to apply');

  await t.rejects(h.collection.write([setPayload([missing], { v: 1 })], true), { message: `Not found: No point with id ${missing} found`, statusCode: 404 }, 'one shard: the apply itself refuses');
  t.same(replicaOf(h, 2).points.size, 0);

  const [ok] = await h.collection.write([setPayload([a, b], { v: 2 })], true);
  t.equal(ok.status, 'completed');
  t.same([replicaOf(h, 0).points.get(a)?.payload, replicaOf(h, 1).points.get(b)?.payload], [{ v: 2 }, { v: 2 }], 'an acceptable write across shards applies on each');
});

t.test('reads pass over a Dead replica and fail over to the next Active one; a replica that fails an update is Dead', async (t) => {
  const h = await automatic(1, 2);
  const [r0, r1] = h.replicas.get(0)!;
  const states = h.states.get(0)!;
  states.set(0, 'Dead');
  await h.collection.write([upsert([1, 2])], true);
  t.same(r0.tasks('apply').length, 0, 'a Dead replica takes no update');
  t.same([...r1.points.keys()], [1, 2]);
  t.same((await h.collection.reader().retrieve([1], ALL)).map((p) => p.id), [1], 'read answered');
  t.same([r0.tasks('retrieve').length, r1.tasks('retrieve').length], [0, 1], 'by the Active replica only');

  states.set(0, 'Active');
  r0.points.set(1, r1.points.get(1)!);
  r0.failNext('retrieve', new ServiceError('peer unreachable'));
  t.same((await h.collection.reader().retrieve([1], ALL)).map((p) => p.id), [1], 'a replica failing: the next Active one answers');
  t.same([r0.tasks('retrieve').length, r1.tasks('retrieve').length], [1, 2]);

  r0.failNext('retrieve', new BadInput('no such vector'));
  await t.rejects(h.collection.reader().retrieve([1], ALL), { message: 'Wrong input: no such vector', statusCode: 400 }, 'a refusal of the request is the answer: any replica would give it');
  t.equal(r1.tasks('retrieve').length, 2, 'no other replica was asked');

  r0.failNext('apply', new ServiceError('disk full'));
  const [written] = await h.collection.write([upsert([3])], true);
  t.equal(written.status, 'completed', 'an update stands once an Active replica applied it');
  t.equal(states.stateOf(0), 'Dead', 'the replica that failed it is Dead');
  t.ok(r1.points.has(3));
  await h.collection.reader().retrieve([3], ALL);
  t.equal(r0.tasks('retrieve').length, 2, 'and reads pass it over');

  states.set(1, 'Dead');
  await t.rejects(h.collection.reader().count(null), { message: 'Service internal error: The replica set for shard 0 on peer 0 does not have enough active replicas', statusCode: 500 }, 'no readable replica left');
});

t.test('a drop waits for the writes under way and refuses the ones after it', async (t) => {
  const h = await automatic(2);
  const held = replicaOf(h, 0).hold('apply');
  const before = h.collection.write([upsert(idsOn(0, 2, 1))], true);
  await within(held.arrived);
  const dropped = h.collection.drop();
  const after = h.collection.write([upsert(idsOn(1, 2, 1))], true);
  await settle();
  t.same(replicaOf(h, 0).tasks('drop').length, 0, 'the drop waits for the write under way');
  held.release();
  t.equal((await within(before))[0].status, 'completed', 'which completes');
  await within(dropped);
  await t.rejects(within(after), { message: `Not found: Collection \`${NAME}\` doesn't exist!`, statusCode: 404 }, 'a write queued after the drop is refused');
  t.same(replicaOf(h, 1).tasks('apply').length, 0, 'and reached no shard');
  t.same(replicaOf(h, 0).received.map((r) => r.task.type), ['open', 'apply', 'drop']);
});
