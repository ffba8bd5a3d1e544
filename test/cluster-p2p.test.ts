// Points between peers, in one process: a p2p server whose host serves a real local replica (a
// shard worker), and a RemoteReplica reaching it through the p2p client. Reads answer what the
// local replica answers directly; concurrent updates are applied in the order of the calls with
// one batch in flight; a Quiver error raised on the serving peer arrives with its kind, status and
// message; the API key, an unknown replica, an unreachable peer and the revision wait behave as
// the cluster plan says (docs/research/cluster-plan.md 4.3, R6-R8).

import { quiverFailure } from './helpers/quiver-failure.js';
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { toFilter } from '../src/api/filter.js';
import { type QuiverError, ServiceError, type WireError } from '../src/errors.js';
import { P2pClient, PeerUnreachable } from '../src/peer/p2p-client.js';
import { P2pServer, type LocalShard, type P2pHost } from '../src/peer/p2p-server.js';
import { CONTENT_TYPE, decode, encode, REVISION_HEADER, shardRoute, WIRE_FORMAT_HEADER } from '../src/peer/wire.js';
import { LocalPlacement } from '../src/replica/local-placement.js';
import { RemoteReplica } from '../src/peer/remote-replica.js';
import { ReplicaSet } from '../src/replica/replica-set.js';
import { LocalReplicaStates } from '../src/replica/replica-states.js';
import type { ForwardedUpdate, ReplicaState, ReplicaTask, ShardContent, ShardReplica } from '../src/replica/replica.js';
import type { LocalReplica } from '../src/replica/local-replica.js';
import type { DeadlineBudget } from '../src/shard/deadline.js';
import { DEFAULT_OPTIMIZER_SPEC } from '../src/shard/optimizer/plan.js';
import type { SearchSpec } from '../src/shard/search.js';
import type { PointRecord } from '../src/shard/write-ops.js';
import { ShardWorkers } from '../src/worker/pool.js';

const API_KEY = 'p2p-secret';
const SHARD = { collection: 'points and/more', shard: 0 };
const CONTENT: ShardContent = {
  vectors: [{ name: '', size: 4, distance: 'Euclid', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null }],
  sparseVectors: [],
  indexes: [],
  optimizer: DEFAULT_OPTIMIZER_SPEC,
};
const BUDGET: DeadlineBudget = { remainingMs: 60_000, seconds: 60, operation: 'Search' };
const ALL = { withPayload: { all: true }, withVector: true } as const;
const PARAMS = { hnswEf: null, exact: true, quantization: null, indexedOnly: false, idfCorpus: null };

function vectorOf(i: number): Float32Array {
  return new Float32Array([Math.sin(i), Math.cos(i), (i % 7) / 7, i / 100]);
}

const IDS = (n: number): (number | bigint | string)[] => Array.from({ length: n }, (_, i) => (i === 3 ? 2n ** 60n + 5n : i === 4 ? '936da01f-9abd-4d9d-80c7-02af85c822a8' : i));
const POINTS: PointRecord[] = IDS(40).map((id, i) => ({ id, vectors: { '': vectorOf(i) }, payload: { n: i, tag: ['a', 'b', 'c'][i % 3], nested: { big: 2n ** 60n } } as unknown as PointRecord['payload'] }));

function upsert(points: PointRecord[], opId: number, wait = true): ReplicaTask {
  return { type: 'apply', ops: [{ kind: 'upsert', points, mode: 'upsert', updateFilter: null }], opId, clock: { peer: 1, clockId: 0, tick: opId }, wait, dryRun: false };
}

/** A promise with its resolver, for a host answer the test gives when it chooses. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A host over one local replica; revisions up to `applied` are there, later ones wait for the test. */
class TestHost implements P2pHost {
  applied = 0;
  /** The local replica's state as this peer has it. */
  state: ReplicaState = 'Active';
  readonly revisionCalls: [number, number][] = [];
  pendingRevision: { revision: number; answer: (caughtUp: boolean) => void } | null = null;
  revisionAsked = deferred<void>();
  readonly forwarded: [string, number, ForwardedUpdate][] = [];
  forwardAnswer: () => Promise<number> = async () => 42;

  constructor(private readonly replica: ShardReplica) {}

  localReplica(collection: string, shard: number): LocalShard | null {
    return collection === SHARD.collection && shard === SHARD.shard ? { replica: this.replica, state: this.state } : null;
  }

  forward(collection: string, shard: number, update: ForwardedUpdate): Promise<number> {
    this.forwarded.push([collection, shard, update]);
    return this.forwardAnswer();
  }

  awaitRevision(revision: number, ms: number): Promise<boolean> {
    this.revisionCalls.push([revision, ms]);
    if (revision <= this.applied) return Promise.resolve(true);
    const asked = this.revisionAsked;
    return new Promise((answer) => {
      this.pendingRevision = { revision, answer };
      asked.resolve();
    });
  }
}

const workers = new ShardWorkers(1);
const storage = await mkdtemp(join(tmpdir(), 'quiver-p2p-'));
const local: LocalReplica = new LocalPlacement(storage, workers).replica(SHARD, 'sid');
await local.run({ type: 'open', spec: CONTENT }, null);
await local.run(upsert(POINTS, 1), null);

const host = new TestHost(local);
const server = new P2pServer({ host, apiKey: API_KEY, revisionWaitMs: 2000 });
// Instrumented: how many /apply requests are in flight at once, and how many updates each carries.
let applying = 0;
let maxApplying = 0;
const batchSizes: number[] = [];
server.app.addHook('preHandler', async (req) => {
  if (!req.url.endsWith('/apply')) return;
  maxApplying = Math.max(maxApplying, ++applying);
});
server.app.addHook('onResponse', async (req) => {
  if (req.url.endsWith('/apply')) applying--;
});
server.app.addHook('preValidation', async (req) => {
  if (req.url.endsWith('/apply')) batchSizes.push(countFrames(req.body as Buffer));
});
const uri = await server.start('127.0.0.1', 0);

let revision = 0;
const clients: P2pClient[] = [];
function client(apiKey: string | null = API_KEY): P2pClient {
  const c = new P2pClient({ connectionTimeoutMs: 2000, requestTimeoutMs: 10_000, apiKey, appliedRevision: () => revision });
  clients.push(c);
  return c;
}
const p2p = client();
const remote = new RemoteReplica(SHARD, 2, uri, p2p);

t.teardown(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.stop();
  await workers.close();
  await rm(storage, { recursive: true, force: true });
});

function countFrames(body: Buffer): number {
  let n = 0;
  for (let at = 0; at < body.length; at += 4 + body.readUInt32LE(at)) n++;
  return n;
}


function sameError(t: Test, remoteErr: QuiverError, localErr: QuiverError, what: string): void {
  t.strictSame([remoteErr.kind, remoteErr.statusCode, remoteErr.message], [localErr.kind, localErr.statusCode, localErr.message], what);
}

const spec = (over: Partial<SearchSpec>): SearchSpec => ({ using: '', query: { kind: 'nearest', vector: [0.5, 0.5, 0.2, 0.1] }, filter: null, top: 7, params: PARAMS, scoreThreshold: null, ...ALL, ...over });

t.test('reads through the remote replica answer what the local replica answers', async (t) => {
  const filter = toFilter({ must: [{ key: 'n', range: { gte: 10, lt: 30 } }], must_not: [{ key: 'tag', match: { value: 'b' } }] });
  const tasks: ReplicaTask[] = [
    { type: 'retrieve', ids: [0, 2n ** 60n + 5n, '936da01f-9abd-4d9d-80c7-02af85c822a8', 12345], shape: ALL },
    { type: 'scroll', filter, from: null, limit: 5, shape: ALL, orderBy: null },
    { type: 'scroll', filter: null, from: 7, limit: 100, shape: { withPayload: { all: false }, withVector: false }, orderBy: null },
    { type: 'count', filter },
    { type: 'search', searches: [spec({}), spec({ filter, top: 3, withVector: false })] },
    { type: 'query', queries: [{ step: { kind: 'search', query: { kind: 'nearest', input: { vector: [1, 0, 0, 0] } }, spec: { using: '', filter, params: PARAMS, scoreThreshold: null, ...ALL } }, prefetches: [], limit: 4, offset: 1 }] },
  ];
  for (const task of tasks) {
    const expected = await local.run(task, BUDGET);
    t.strictSame(await remote.run(task, BUDGET), expected, `${task.type}: the same answer`);
  }
  const retrieved = (await remote.run(tasks[0], null)) as Awaited<ReturnType<typeof local.run<Extract<ReplicaTask, { type: 'retrieve' }>>>>;
  t.equal(retrieved.length, 3, 'the three stored points of four ids');
  t.ok(retrieved.some((p) => p.id === 2n ** 60n + 5n), 'an id past 2^53 comes back a bigint');
  t.strictSame((await remote.run({ type: 'stats' }, null)).lastOp, (await local.run({ type: 'stats' }, null)).lastOp, 'a task that is not a read goes in the lane and answers');
});

t.test('a Quiver error raised on the serving peer arrives as the same error', async (t) => {
  const dryRun: ReplicaTask = { type: 'apply', ops: [{ kind: 'update_vectors', points: [{ id: 777, vectors: { '': new Float32Array([1, 2, 3, 4]) } }] }], opId: 2, clock: { peer: 1, clockId: 0, tick: 2 }, wait: true, dryRun: true };
  const cases: [string, ReplicaTask, DeadlineBudget | null][] = [
    ['a missing point in a dry run', dryRun, null],
    ['an unknown vector name', { type: 'search', searches: [spec({ using: 'nope' })] }, BUDGET],
    ['a facet without an index', { type: 'facet', key: 'tag', filter: null }, BUDGET],
    ['a deadline already passed', { type: 'count', filter: null }, { remainingMs: 0, seconds: 3, operation: 'Count' }],
  ];
  for (const [what, task, deadline] of cases) {
    const expected = await quiverFailure(local.run(task, deadline));
    const got = await quiverFailure(remote.run(task, deadline));
    sameError(t, got, expected, what);
    t.ok(got.statusCode < 500, `${what}: an answer, not a replica failure (${got.statusCode})`);
  }
});

t.test('200 concurrent updates are applied in the order of the calls, one batch in flight', async (t) => {
  const first = 100;
  const calls = Array.from({ length: 200 }, (_, i) =>
    remote.run(upsert([{ id: 1000, vectors: { '': vectorOf(i) }, payload: { n: i } }, { id: 2000 + i, vectors: { '': vectorOf(i) }, payload: { i } }], first + i, i % 2 === 0), null));
  const answers = await Promise.all(calls);
  t.strictSame(answers, answers.map(() => null), 'each caller has its answer');
  t.equal(maxApplying, 1, 'never two batches in flight');
  t.equal(batchSizes.reduce((a, b) => a + b, 0), 200, 'every update sent once');
  t.ok(batchSizes.length < 200, `updates queued behind a batch go together (${batchSizes.length} batches)`);
  t.equal(remote.pending, 0, 'the lane is empty');

  const log = await local.run({ type: 'log_after', after: 1, limit: 1000 }, null);
  t.strictSame(log.map((e) => e.opId), Array.from({ length: 200 }, (_, i) => first + i), 'the shard logged them in call order');
  const [last] = await local.run({ type: 'retrieve', ids: [1000], shape: ALL }, null);
  t.strictSame(last.payload, { n: 199 }, 'the last call wrote the final value');
  t.equal(await local.run({ type: 'count', filter: toFilter({ must: [{ key: 'i', range: { gte: 0 } }] }) }, null), 200, 'no update skipped');
  t.equal((await local.run({ type: 'stats' }, null)).lastOp, first + 199);

  const bad: ReplicaTask = { type: 'apply', ops: [{ kind: 'update_vectors', points: [{ id: 777, vectors: { '': vectorOf(1) } }] }], opId: 400, clock: { peer: 1, clockId: 0, tick: 400 }, wait: true, dryRun: false };
  const outcomes = await Promise.allSettled([remote.run(upsert([{ id: 6, vectors: { '': vectorOf(6) }, payload: null }], 399), null), remote.run(bad, null), remote.run(upsert([{ id: 7, vectors: { '': vectorOf(7) }, payload: null }], 401), null)]);
  t.strictSame(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled'], 'one refused update of a batch fails alone');
  // Checked under a tick the shard has not seen: it skips an update whose tag it already covers.
  const expected = await quiverFailure(local.run({ ...bad, opId: 402, clock: { peer: 1, clockId: 0, tick: 402 }, dryRun: true }, null));
  sameError(t, (outcomes[1] as PromiseRejectedResult).reason as QuiverError, expected, 'with the error the shard raised');
});

t.test('an update forwarded to the leader is handed to the host', async (t) => {
  const update: ForwardedUpdate = { ops: [{ kind: 'delete', target: { ids: [2n ** 60n + 5n] } }], wait: true, ordering: 'strong' };
  t.equal(await remote.forward(update), 42, "the leader's operation id");
  t.strictSame(host.forwarded, [[SHARD.collection, SHARD.shard, update]], 'the host got the collection, the shard and the update as sent');
  host.forwardAnswer = async () => {
    throw new ServiceError('Cannot update shard x:0 with Strong ordering because no leader could be selected');
  };
  const err = await quiverFailure(remote.forward(update));
  t.strictSame([err.kind, err.statusCode, err.message], ['ServiceError', 500, 'Service internal error: Cannot update shard x:0 with Strong ordering because no leader could be selected']);
});

t.test('the API key is required, and only the API key', async (t) => {
  const count: ReplicaTask = { type: 'count', filter: null };
  for (const [what, key] of [['no key', null], ['a wrong key', 'p2p-secreT'], ['a longer key', `${API_KEY}x`]] as const) {
    const err = await quiverFailure(new RemoteReplica(SHARD, 2, uri, client(key)).run(count, null));
    t.strictSame([err.kind, err.statusCode, err.message], ['Unauthorized', 401, 'Invalid API key or JWT'], `${what}: refused`);
  }
  t.equal(await new RemoteReplica(SHARD, 2, uri, client(API_KEY)).run(count, null), await local.run(count, null), 'the key: served');
});

t.test('a replica the peer does not hold, or holds in no state to serve, is a replica failure', async (t) => {
  const count: ReplicaTask = { type: 'count', filter: null };
  for (const shard of [{ collection: 'other', shard: 0 }, { collection: SHARD.collection, shard: 3 }]) {
    const err = await quiverFailure(new RemoteReplica(shard, 2, uri, p2p).run(count, null));
    t.strictSame([err.kind, err.statusCode, err.message], ['ServiceError', 500, `Service internal error: no replica of shard ${shard.shard} of collection ${shard.collection} on this peer`]);
    const update = await quiverFailure(new RemoteReplica(shard, 2, uri, p2p).run(upsert([], 500), null));
    t.equal(update.statusCode, 500, 'an update to it too');
  }
  const missing = new RemoteReplica({ collection: 'other', shard: 0 }, 2, uri, p2p);
  const params = () => ({ writeConsistencyFactor: 1, readFanOutFactor: null });
  const set = new ReplicaSet(SHARD, [missing, local], { peer: local.peer, states: new LocalReplicaStates([missing.peer, local.peer]), params });
  t.equal(await set.read(count, null), await local.run(count, null), 'the replica set takes it as a failed replica and asks the next');

  host.state = 'Dead';
  try {
    const err = await quiverFailure(remote.run(count, null));
    t.strictSame([err.statusCode, err.message], [500, `Service internal error: the replica of shard 0 of collection ${SHARD.collection} on this peer is Dead`], 'a Dead replica serves no read');
    t.equal((await quiverFailure(remote.run(upsert([], 501), null))).statusCode, 500, 'and takes no update');
    host.state = 'Partial';
    t.equal((await quiverFailure(remote.run(count, null))).statusCode, 500, 'a Partial replica serves no read');
  } finally {
    host.state = 'Active';
  }
});

t.test('an unreachable peer is a transient failure, counted per peer URI', async (t) => {
  const gone = new P2pServer({ host, apiKey: API_KEY, revisionWaitMs: 2000 });
  const goneUri = await gone.start('127.0.0.1', 0);
  const c = client();
  const replica = new RemoteReplica(SHARD, 3, goneUri, c);
  const all = await local.run({ type: 'count', filter: null }, null);
  t.equal(await replica.run({ type: 'count', filter: null }, null), all, 'served while it runs');
  await gone.stop();
  t.strictSame(c.sendFailures(), {}, 'no failure yet');
  const err = await quiverFailure(replica.run({ type: 'count', filter: null }, null));
  t.ok(err instanceof PeerUnreachable, 'PeerUnreachable');
  t.equal(err.statusCode, 500, 'a replica failure to the replica set');
  t.match(err.message, new RegExp(`^Service internal error: failed to reach peer ${goneUri.replace(/[.]/g, '\\.')}: `));
  const updates = await Promise.allSettled([replica.run(upsert([], 600), null), replica.run(upsert([], 601), null)]);
  t.ok(updates.every((o) => o.status === 'rejected' && (o.reason as QuiverError).statusCode === 500), 'queued updates fail with it');
  const failures = c.sendFailures();
  t.strictSame(Object.keys(failures), [goneUri], 'keyed by the peer URI');
  t.ok(failures[goneUri].count >= 2, `each failed send counted (${failures[goneUri].count})`);
  t.type(failures[goneUri].latest_error, 'string');
  t.ok(Math.abs(Date.parse(failures[goneUri].latest_error_timestamp!) - Date.now()) < 60_000, 'an RFC 3339 timestamp of now');
  t.strictSame(p2p.sendFailures(), {}, 'another client counts its own');
});

t.test('a request waits until this peer applied the sender\'s revision', async (t) => {
  host.revisionCalls.length = 0;
  host.applied = 5;
  revision = 5;
  const all = await local.run({ type: 'count', filter: null }, null);
  t.equal(await remote.run({ type: 'count', filter: null }, null), all, 'a revision applied: served at once');
  t.strictSame(host.revisionCalls, [[5, 2000]], 'asked with the bound');

  revision = 9;
  let settled = false;
  const read = remote.run({ type: 'count', filter: null }, null).finally(() => (settled = true));
  await host.revisionAsked.promise;
  t.equal(host.pendingRevision?.revision, 9, 'the server waits for the sender\'s revision');
  t.notOk(settled, 'no answer before it is applied');
  host.revisionAsked = deferred();
  host.pendingRevision!.answer(true);
  t.equal(await read, all, 'answered once applied');

  const late = remote.run({ type: 'count', filter: null }, null);
  await host.revisionAsked.promise;
  host.revisionAsked = deferred();
  host.pendingRevision!.answer(false);
  const err = await quiverFailure(late);
  t.strictSame([err.statusCode, err.message], [500, 'Service internal error: this peer has not applied revision 9 within 2000 ms'], 'not applied in time: a replica failure');
  revision = 0;
});

t.test('a peer on another wire format is refused', async (t) => {
  const answer = await request(new URL(shardRoute(SHARD.collection, 0, 'run'), uri), {
    method: 'POST',
    headers: { 'api-key': API_KEY, 'content-type': CONTENT_TYPE, [WIRE_FORMAT_HEADER]: 'node-18', [REVISION_HEADER]: '0' },
    body: encode({ task: { type: 'count', filter: null }, deadline: null }),
  });
  t.equal(answer.statusCode, 400);
  const body = decode<{ error: WireError }>(Buffer.from(await answer.body.arrayBuffer()));
  t.match(body.error, { quiverError: 'BadRequest', statusCode: 400, message: /^Bad request: peer sent wire format node-18, this peer reads node-\d+/ });
});

t.test('batches stay under the byte budget; a body past the server limit is refused', async (t) => {
  const small = new P2pServer({ host, apiKey: API_KEY, revisionWaitMs: 2000, bodyLimitBytes: 64 * 1024 });
  const sizes: number[] = [];
  small.app.addHook('preValidation', async (req) => {
    if (req.url.endsWith('/apply')) sizes.push((req.body as Buffer).length);
  });
  const smallUri = await small.start('127.0.0.1', 0);
  t.teardown(() => small.stop());
  const replica = new RemoteReplica(SHARD, 4, smallUri, client(), { batchBytes: 8 * 1024 });
  const text = 'x'.repeat(1000);
  const first = 1000;
  const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => replica.run(upsert([{ id: 5000 + i, vectors: { '': vectorOf(i) }, payload: { text } }], first + i, false), null)));
  t.equal(answers.length, 60, 'every update answered');
  t.ok(sizes.length > 1, `more than one batch (${sizes.length})`);
  t.ok(sizes.every((size) => size <= 8 * 1024 + 4 * 60), `each batch within the budget (largest ${Math.max(...sizes)} bytes)`);
  const stored = await local.run({ type: 'retrieve', ids: [5000, 5059], shape: { withPayload: { all: true }, withVector: false } }, null);
  t.strictSame(stored.map((p) => p.payload), [{ text }, { text }], 'all applied');

  const huge = upsert([{ id: 6000, vectors: { '': vectorOf(1) }, payload: { text: 'y'.repeat(100 * 1024) } }], first + 100);
  const err = await quiverFailure(replica.run(huge, null));
  t.strictSame([err.kind, err.statusCode], ['FormatError', 413], `an update past the body limit: ${err.message}`);
  t.strictSame(await local.run({ type: 'retrieve', ids: [6000], shape: { withPayload: { all: false }, withVector: false } }, null), [], 'and not applied');
});
