// A stream transfer's ordering on the source (src/replica/transfer-proxy.ts) over in-memory
// replicas, the receiver reached through a real RemoteReplica lane whose p2p client applies each
// request to an in-memory receiver: the receiver's stale copy is cleared first; an update that
// races a batch (queued on the source while the batch's read waits) lands after the batch on the
// receiver, so the receiver ends with the newest value, equal to the source; once the transfer
// finished only updates sent from before its end (arriving late) or relayed go on; a relay that fails is reported while the update stands on the source. And the replica set's side: a Partial
// receiver gets updates only through its transfer's source (`relay`), and once it becomes a
// direct target the next update waits until the relayed ones settled. And a copy of points into
// another shard (`replicate_points`): what it passes on for each update, on which clock, and when.

import t from 'tap';
import { toFilter } from '../src/api/filter.js';
import { decode } from '../src/peer/wire.js';
import type { P2pClient } from '../src/peer/p2p-client.js';
import { RemoteReplica } from '../src/peer/remote-replica.js';
import type { ReplicaState } from '../src/replica/replica.js';
import { ReplicaSet } from '../src/replica/replica-set.js';
import type { ReplicaStates } from '../src/replica/replica-states.js';
import { TransferProxy, transferClock, transferClockId, type ApplyTask } from '../src/replica/transfer-proxy.js';
import type { PointRecord, WriteOp } from '../src/shard/write-ops.js';
import { FakeReplica } from './helpers/fake-replica.js';

const SHARD = { collection: 'c', shard: 0 };
const SOURCE = 1;
const RECEIVER = 2;

function point(id: number, value: string): PointRecord {
  return { id, vectors: { '': new Float32Array([id, 1]) }, payload: { value } };
}

function upsert(...points: PointRecord[]): WriteOp[] {
  return [{ kind: 'upsert', points, mode: 'upsert', updateFilter: null }];
}

let tick = 0;
function update(ops: WriteOp[], relay?: number[]): ApplyTask {
  tick++;
  return { type: 'apply', ops, opId: tick, clock: { peer: 9, clockId: 1, tick }, wait: true, dryRun: false, ...(relay ? { relay } : {}) };
}

/** The receiver behind a real lane: each /apply request's updates applied to `receiver` in order; `requests` records them. */
function laneTo(receiver: FakeReplica, fail: () => boolean = () => false) {
  const requests: ApplyTask[][] = [];
  const client = {
    async apply(_uri: string, _shard: unknown, frames: readonly Uint8Array[]) {
      const updates = frames.map((f) => decode<ApplyTask>(f));
      requests.push(updates);
      if (fail()) throw new Error('connection refused');
      const outcomes = await Promise.allSettled(updates.map((u) => receiver.run(u, null)));
      return outcomes.map((o) => (o.status === 'fulfilled' ? { ok: null } : { error: { kind: 'ServiceError', statusCode: 500, message: String(o.reason) } }));
    },
  } as unknown as P2pClient;
  return { lane: new RemoteReplica(SHARD, RECEIVER, 'http://receiver/', client), requests };
}

function values(replica: FakeReplica): [number, unknown][] {
  return [...replica.points].map(([id, p]): [number, unknown] => [Number(id), p.payload?.value]).sort((a, b) => a[0] - b[0]);
}

t.test('an update racing a batch lands after it: the receiver ends with the newest value, equal to the source', async (t) => {
  const source = new FakeReplica(SHARD, SOURCE);
  const receiver = new FakeReplica(SHARD, RECEIVER);
  for (let id = 1; id <= 5; id++) await source.run(update(upsert(point(id, 'v1'))), null);
  const sourceTick = tick;
  // The receiver's Dead copy: a stale value, and a point the source deleted meanwhile.
  await receiver.run(update(upsert(point(1, 'stale'), point(9, 'deleted since'))), null);
  const { lane, requests } = laneTo(receiver);
  const failures: number[] = [];
  const proxy = new TransferProxy(source, (peer) => (peer === RECEIVER ? lane : null), (peer) => failures.push(peer));
  const tag = transferClock(SOURCE, transferClockId(40));

  let ready!: () => void;
  proxy.feed(RECEIVER);
  const cleared = proxy.clear(RECEIVER, tag(1), new Promise<void>((resolve) => (ready = resolve)));
  // The first batch's read waits in the source's queue; an update of a point it holds is queued behind it.
  const held = source.hold('scroll');
  const first = proxy.batch(RECEIVER, null, 3, tag(2));
  await held.arrived;
  const racing = proxy.run(update(upsert(point(2, 'v2'))), null);
  held.release();
  await new Promise((resolve) => setTimeout(resolve, 10));
  t.same(requests, [], 'nothing reaches the receiver before the clearing may go');
  ready();
  const read = await first.read;
  t.same(read, { count: 3, next: 4 }, 'the batch holds points 1-3; the next starts at 4');
  // An update of a point of the next batch, and a delete of one, before that batch is read.
  // One named in `relay` as well (a replica set that saw the transfer running): passed on once.
  const later = proxy.run(update(upsert(point(5, 'v3')), [RECEIVER]), null);
  const removed = proxy.run(update([{ kind: 'delete', target: { ids: [4] } }]), null);
  const second = proxy.batch(RECEIVER, read.next, 3, tag(3));
  t.same(await second.read, { count: 1, next: null }, 'the last batch: point 5 (4 was deleted before it was read)');
  await Promise.all([cleared, first.sent, second.sent, racing, later, removed]);

  t.same(values(source), [[1, 'v1'], [2, 'v2'], [3, 'v1'], [5, 'v3']]);
  t.same(values(receiver), values(source), 'the receiver equals the source');
  const order = requests.flat().map((u) => (u.clock.clockId === -40 ? `transfer ${u.clock.tick}` : `update ${u.clock.tick}`));
  t.same(order, ['transfer 1', 'transfer 2', `update ${tick - 2}`, `update ${tick - 1}`, `update ${tick}`, 'transfer 3'],
    'the clear, the first batch, then the updates queued after it, then the last batch');
  t.same(requests.flat()[0].adopt, [{ peer: 9, clockId: 1, tick: sourceTick }], 'the clearing carries the source\'s clock map as it stood before the updates passed on');
  const batch = requests.flat()[1];
  t.same((batch.ops[0] as Extract<WriteOp, { kind: 'upsert' }>).points.map((p) => [p.id, p.payload?.value]), [[1, 'v1'], [2, 'v1'], [3, 'v1']],
    'the batch holds the value read before the racing update');
  t.same(requests.flat().map((u) => u.relay), requests.flat().map(() => undefined), 'the receiver is asked to pass nothing on');
  t.same(failures, []);

  // The transfer finished at revision 20: only what was sent from an earlier view, or relayed, goes on.
  proxy.stopFeeding(RECEIVER, 20);
  const sentBefore = requests.flat().length;
  await proxy.run({ ...update(upsert(point(6, 'direct'))), seen: 20 }, null);
  t.equal(requests.flat().length, sentBefore, 'an update sent once the receiver was Active stays here (its sender sent it there)');
  await proxy.run({ ...update(upsert(point(7, 'late'))), seen: 19 }, null);
  await proxy.run(update(upsert(point(8, 'relayed')), [RECEIVER]), null);
  t.same(requests.flat().slice(sentBefore).map((u) => (u.ops[0] as Extract<WriteOp, { kind: 'upsert' }>).points[0].id), [7, 8], 'one sent before the end and arriving late, and a relayed one, go on');
  proxy.stopFeeding(RECEIVER, null);
  await proxy.run({ ...update(upsert(point(9, 'after an abort'))), seen: 19 }, null);
  t.equal(requests.flat().length, sentBefore + 2, 'after an abort (the receiver Dead) nothing goes on');
});

t.test('a relay that fails is reported; the update stands on the source', async (t) => {
  const source = new FakeReplica(SHARD, SOURCE);
  const receiver = new FakeReplica(SHARD, RECEIVER);
  const { lane } = laneTo(receiver, () => true);
  const failures: [number, string][] = [];
  const proxy = new TransferProxy(source, (peer) => (peer === RECEIVER ? lane : null), (peer, err) => failures.push([peer, (err as Error).message]));
  t.equal(await proxy.run(update(upsert(point(1, 'v1')), [RECEIVER]), null), null);
  t.same(values(source), [[1, 'v1']]);
  t.same(failures, [[RECEIVER, 'connection refused']]);
  t.equal(await proxy.run(update(upsert(point(2, 'v1')), [7]), null), null, 'a receiver the view does not name');
  t.same(failures.at(-1), [7, 'no lane to peer 7']);
});

/** States with one transfer: `receiver`'s replica fed by `source`'s while it is Partial. */
class TransferStates implements ReplicaStates {
  constructor(readonly states: Map<number, ReplicaState>, private readonly source: number, private readonly receiver: number) {}

  stateOf(peer: number): ReplicaState | undefined {
    return this.states.get(peer);
  }

  readonly marked: { peer: number; from: ReplicaState | null }[] = [];

  markFailed(peer: number, from: ReplicaState | null): Promise<null> {
    this.marked.push({ peer, from });
    if (from === null || this.states.get(peer) === from) this.states.set(peer, 'Dead');
    return Promise.resolve(null);
  }

  transferSourceOf(peer: number): number | undefined {
    return peer === this.receiver && this.states.get(peer) === 'Partial' ? this.source : undefined;
  }
}

t.test('a replica set: a Partial receiver only through its source; once Active, the next update waits for the relayed ones', async (t) => {
  const replicas = [new FakeReplica(SHARD, 0), new FakeReplica(SHARD, SOURCE), new FakeReplica(SHARD, RECEIVER)];
  const states = new TransferStates(new Map<number, ReplicaState>([[0, 'Active'], [SOURCE, 'Active'], [RECEIVER, 'Partial']]), SOURCE, RECEIVER);
  const set = new ReplicaSet(SHARD, replicas, { peer: 0, states, params: () => ({ writeConsistencyFactor: 1, readFanOutFactor: null }) });

  // The source holds the relayed update a while (it waits for the receiver's answer).
  const held = replicas[SOURCE].hold('apply');
  const relayed = set.apply(update(upsert(point(1, 'v1'))));
  await held.arrived;
  t.same(replicas.map((r) => r.tasks('apply').map((u) => u.relay ?? null)), [[null], [[RECEIVER]], []], 'the source is asked to pass it on; the receiver gets nothing directly');

  states.states.set(RECEIVER, 'Active');
  const direct = set.apply(update(upsert(point(1, 'v2'))));
  const behind = set.apply(update(upsert(point(1, 'v3'))));
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(replicas[RECEIVER].tasks('apply'), [], 'nothing goes directly to the new target while a relayed update is in flight');
  held.release();
  await Promise.all([relayed, direct, behind]);
  t.same(replicas.map((r) => r.tasks('apply').length), [3, 3, 2]);
  t.same(replicas[RECEIVER].tasks('apply').map((u) => (u.ops[0] as Extract<WriteOp, { kind: 'upsert' }>).points[0].payload), [{ value: 'v2' }, { value: 'v3' }], 'then in the order called');
  t.same(replicas[SOURCE].tasks('apply').slice(1).map((u) => u.relay ?? null), [null, null], 'and nothing relayed any more');
});

t.test('a replica set: a source that failed the update is Dead, and so is the receiver it was to pass it on to', async (t) => {
  const replicas = [new FakeReplica(SHARD, 0), new FakeReplica(SHARD, SOURCE), new FakeReplica(SHARD, RECEIVER)];
  const states = new TransferStates(new Map<number, ReplicaState>([[0, 'Active'], [SOURCE, 'Active'], [RECEIVER, 'Partial']]), SOURCE, RECEIVER);
  const set = new ReplicaSet(SHARD, replicas, { peer: 0, states, params: () => ({ writeConsistencyFactor: 1, readFanOutFactor: null }) });
  replicas[SOURCE].failNext('apply', new Error('connection reset'));
  t.equal(await set.apply(update(upsert(point(1, 'v1')))), null, 'the update stands on this peer\'s replica');
  t.same(states.marked, [{ peer: SOURCE, from: 'Active' }, { peer: RECEIVER, from: 'Partial' }]);
});

t.test('a copy of points into another shard passes on what each update left of the points it names, and operations on a filter as they are', async (t) => {
  const source = new FakeReplica(SHARD, SOURCE);
  const receiver = new FakeReplica({ collection: 'c', shard: 1 }, RECEIVER);
  for (let id = 1; id <= 4; id++) await source.run(update(upsert(point(id, id % 2 ? 'in' : 'out'))), null);
  await receiver.run(update(upsert(point(9, 'its own'))), null);
  const { lane, requests } = laneTo(receiver);
  const failures: unknown[] = [];
  const proxy = new TransferProxy(source, () => null, () => undefined);
  const wanted = toFilter({ must: [{ key: 'value', match: { value: 'in' } }] });
  let tick = 0;
  const copy = proxy.copyPoints('k', lane, wanted, { opening: { peer: SOURCE, clockId: -7, tick: 1 }, next: () => ({ peer: SOURCE, clockId: 2 ** 50 + 7, tick: ++tick }) }, (err) => failures.push(err));
  const opened = copy.open(Promise.resolve());
  const first = copy.batch(null, 10);
  t.same(await first.read, { count: 2, next: null }, 'the batch reads the matching points (1 and 3)');
  // Point 1 moves out of the filter, 2 moves in, 5 is new and matches; then a payload set on a filter.
  await proxy.run(update(upsert(point(1, 'out'), point(2, 'in'), point(5, 'in'))), null);
  await proxy.run(update([{ kind: 'set_payload', target: { filter: {} }, payload: { seen: true }, key: null }]), null);
  await proxy.run(update([{ kind: 'delete', target: { ids: [3] } }]), null);
  await Promise.all([opened, first.sent]);
  await until(() => requests.flat().length === 5);
  t.same(failures, []);
  t.same(values(receiver), [[2, 'in'], [5, 'in'], [9, 'its own']], 'the receiver holds the matching points as they are now, and its own');
  const sent = requests.flat();
  t.same(sent.map((u) => u.clock.clockId), [-7, 2 ** 50 + 7, 2 ** 50 + 7, 2 ** 50 + 7, 2 ** 50 + 7], 'the opening on the transfer\'s clock, the rest on the copy\'s');
  t.same(sent.map((u) => u.ops.map((op) => op.kind)), [[], ['upsert'], ['upsert', 'delete'], ['set_payload'], ['delete']],
    'a batch; the upsert as the matching points it left and the deletion of the others; the payload set as it came; the deletion');
  t.same((sent[2].ops[1] as Extract<WriteOp, { kind: 'delete' }>).target, { ids: [1] });

  proxy.stopCopying('k', 20);
  await proxy.run({ ...update(upsert(point(6, 'in'))), seen: 20 }, null);
  await proxy.run({ ...update(upsert(point(7, 'in'))), seen: 19 }, null);
  await until(() => requests.flat().length === 6);
  t.same(values(receiver).map(([id]) => id), [2, 5, 7, 9], 'once finished, only an update sent from a view before the end goes on');
  proxy.stopCopying('k', null);
  await proxy.run({ ...update(upsert(point(8, 'in'))), seen: 19 }, null);
  t.equal(requests.flat().length, 6, 'after an abort nothing goes on');
});

/** Waits (bounded) for the lane's requests to arrive: the copy's sends are not awaited by the updates. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!check()) throw new Error('the lane did not send what was expected');
}
