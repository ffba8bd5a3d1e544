// wait=false as Qdrant means it, against a real server: `acknowledged` once the operation is in
// the shard's log, `completed` once applied, reads see every answered write; and kill -9 at each
// step of a write (the server kills itself at a deterministic crash point, QUIVER_TEST_CRASH_AT)
// loses nothing logged: after a restart the points equal a reference model of every operation up
// to the one the crash stopped, and a second restart (replaying nothing twice) changes nothing.

import t, { type Test } from 'tap';
import { rm } from 'node:fs/promises';
import { call, resultOf } from './helpers/api-http.js';
import { startServer, type RunningServer } from './helpers/server.js';

type Json = Record<string, unknown>;
interface ModelPoint {
  vector: number[];
  payload: Json;
}
type Model = Map<number, ModelPoint>;
interface UpdateResult {
  operation_id: number;
  status: string;
}

/** One write request: method, path (under the collection), body, and what it does to the model. */
interface Step {
  method: 'PUT' | 'POST';
  path: string;
  body: Json;
  apply(model: Model): void;
}

const COLLECTION = 'logged';
const DIM = 4;
// Values exact in f32, so stored vectors compare equal.
const vectorOf = (id: number, round: number): number[] => Array.from({ length: DIM }, (_, j) => ((id * 7 + j * 3 + round) % 17) - 8 + 0.5);

/** A deterministic mix of every kind of point update, ids 0..39. */
function steps(count: number): Step[] {
  const out: Step[] = [];
  for (let i = 0; i < count; i++) {
    const ids = Array.from({ length: 6 }, (_, j) => (i * 5 + j * 3) % 40);
    switch (i % 6) {
      case 0:
      case 3:
        out.push({
          method: 'PUT', path: '/points', body: { points: ids.map((id) => ({ id, vector: vectorOf(id, i), payload: { n: id, round: i, tag: `r${i}` } })) },
          apply: (m) => ids.forEach((id) => m.set(id, { vector: vectorOf(id, i), payload: { n: id, round: i, tag: `r${i}` } })),
        });
        break;
      case 1:
        out.push({ method: 'POST', path: '/points/delete', body: { points: ids.slice(0, 2) }, apply: (m) => ids.slice(0, 2).forEach((id) => m.delete(id)) });
        break;
      case 2:
        out.push({
          method: 'POST', path: '/points/payload', body: { payload: { touched: i }, filter: { must: [{ key: 'round', range: { lt: i } }] } },
          apply: (m) => m.forEach((p) => (p.payload.round as number) < i && (p.payload.touched = i)),
        });
        break;
      case 4:
        out.push({
          method: 'POST', path: '/points/payload/delete', body: { keys: ['tag'], filter: { must: [{ key: 'n', range: { gte: 20 } }] } },
          apply: (m) => m.forEach((p) => (p.payload.n as number) >= 20 && delete p.payload.tag),
        });
        break;
      case 5:
        out.push({
          method: 'POST', path: '/points/batch',
          body: { operations: [
            { upsert: { points: [{ id: 40 + i, vector: vectorOf(40 + i, i), payload: { n: 40 + i, round: i } }] } },
            { overwrite_payload: { payload: { only: i }, filter: { must: [{ key: 'n', range: { lt: 5 } }] } } },
          ] },
          apply: (m) => {
            m.set(40 + i, { vector: vectorOf(40 + i, i), payload: { n: 40 + i, round: i } });
            m.forEach((p) => (p.payload.n as number) < 5 && (p.payload = { only: i }));
          },
        });
        break;
    }
  }
  return out;
}

function modelAfter(all: Step[], count: number): Model {
  const model: Model = new Map();
  for (const step of all.slice(0, count)) step.apply(model);
  return model;
}

/** Every point of the collection, as the model holds them, in id order. */
async function pointsOf(t: Test, server: RunningServer): Promise<[number, ModelPoint][]> {
  const result = resultOf<{ points: { id: number; vector: number[]; payload: Json }[] }>(t,
    await call(server.url, 'POST', `/collections/${COLLECTION}/points/scroll`, { limit: 1000, with_payload: true, with_vector: true }));
  return result.points.map((p) => [p.id, { vector: p.vector, payload: p.payload }]);
}

function sorted(model: Model): [number, ModelPoint][] {
  return [...model].sort((a, b) => a[0] - b[0]);
}

async function createCollection(t: Test, server: RunningServer): Promise<void> {
  resultOf(t, await call(server.url, 'PUT', `/collections/${COLLECTION}`, { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 1 }));
}

/** Resolves once the server process is gone (it kills itself at the crash point); fails after `withinMs`. */
async function exited(server: RunningServer, withinMs: number): Promise<void> {
  const child = server.process;
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not die within ${withinMs} ms`)), withinMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

t.test('wait=false answers acknowledged, wait=true completed; reads see every answered write', async (t) => {
  const server = await startServer({ workers: 1 });
  t.teardown(async () => {
    await server.stop();
    await rm(server.storage, { recursive: true, force: true });
  });
  await createCollection(t, server);
  const all = steps(24);
  for (const [i, step] of all.entries()) {
    const wait = i % 3 === 0;
    const result = resultOf<UpdateResult | UpdateResult[]>(t, await call(server.url, step.method, `/collections/${COLLECTION}${step.path}?wait=${wait}`, step.body));
    // A batch answers one result per operation, each with its own id.
    const first = i + 1 + all.slice(0, i).filter((s) => s.path === '/points/batch').length;
    const status = wait ? 'completed' : 'acknowledged';
    t.same(result, step.path === '/points/batch' ? [{ operation_id: first, status }, { operation_id: first + 1, status }] : { operation_id: first, status }, `step ${i}: ${status}`);
    t.same(await pointsOf(t, server), sorted(modelAfter(all, i + 1)), `step ${i} (wait=${wait}) is visible to the next read`);
  }
});

/** `idleAtSeq`: the client stops after operation `seq`, so the shard goes idle and flushes it. */
const CRASH_CASES: { step: string; seq: number; wait: boolean; lastAcknowledged: number[]; idleAtSeq?: true }[] = [
  // Logged (and, with wait=true, applied) but killed before the reply: not acknowledged, present.
  { step: 'after-log-append', seq: 7, wait: false, lastAcknowledged: [6] },
  { step: 'after-log-append', seq: 8, wait: true, lastAcknowledged: [7] },
  // Acknowledged (the reply may or may not have left before the kill), not applied.
  { step: 'before-apply', seq: 9, wait: false, lastAcknowledged: [8, 9] },
  // Applied in memory, its records (with earlier ones) flushed, the log not truncated yet: the
  // replay must not apply it again. The flush follows the reply, which may not have left.
  { step: 'after-flush-write', seq: 11, wait: false, lastAcknowledged: [10, 11], idleAtSeq: true },
  { step: 'after-flush-write', seq: 12, wait: true, lastAcknowledged: [11, 12], idleAtSeq: true },
];

for (const crash of CRASH_CASES) {
  t.test(`kill -9 at ${crash.step} of entry ${crash.seq} (wait=${crash.wait}): every logged operation is there after a restart`, async (t) => {
    const server = await startServer({ workers: 1, env: { QUIVER_TEST_CRASH_AT: `${crash.step}:${crash.seq}` } });
    t.teardown(async () => {
      await server.stop('SIGKILL');
      await rm(server.storage, { recursive: true, force: true });
    });
    await createCollection(t, server);
    const all = steps(crash.seq + 4);
    let acknowledged = 0;
    for (const step of crash.idleAtSeq ? all.slice(0, crash.seq) : all) {
      const response = await call(server.url, step.method, `/collections/${COLLECTION}${step.path}?wait=${crash.wait}`, step.body).catch(() => null);
      if (response === null) break;
      const result = resultOf<UpdateResult | UpdateResult[]>(t, response);
      t.same([result].flat().map((r) => r.status), [result].flat().map(() => (crash.wait ? 'completed' : 'acknowledged')), `operation ${acknowledged + 1} answered`);
      acknowledged++;
    }
    await exited(server, 30_000);
    t.ok(crash.lastAcknowledged.includes(acknowledged), `operations 1..${acknowledged} were answered before the kill`);

    const expected = sorted(modelAfter(all, crash.seq));
    const again = await startServer({ workers: 1, storage: server.storage });
    t.same(await pointsOf(t, again), expected, `the points are those of operations 1..${crash.seq}`);
    const count = resultOf<{ count: number }>(t, await call(again.url, 'POST', `/collections/${COLLECTION}/points/count`, { exact: true }));
    t.equal(count.count, expected.length, 'count agrees');
    const next = resultOf<{ operation_id: number }>(t, await call(again.url, 'PUT', `/collections/${COLLECTION}/points?wait=true`, { points: [{ id: 999, vector: vectorOf(999, 0), payload: {} }] }));
    t.ok(next.operation_id > crash.seq, `operation ids go on after ${crash.seq} (${next.operation_id})`);
    await again.stop('SIGKILL');

    const third = await startServer({ workers: 1, storage: server.storage });
    // Stopped here, not by a teardown: the storage it runs on is removed by the teardown above.
    try {
      expected.push([999, { vector: vectorOf(999, 0), payload: {} }]);
      t.same(await pointsOf(t, third), expected, 'another kill -9 and restart: nothing applied twice, nothing lost');
    } finally {
      t.equal(await third.stop(), 0, 'the restarted server shuts down cleanly');
    }
  });
}

// Group commit: requests that reach a shard together are logged with one synced write and each is
// answered only once that write is durable (with wait=true, once applied too). A first wave of
// concurrent requests is answered; a second is in flight when the server kills itself after the
// write of entry CRASH_SEQ, before any reply of that write's group leaves. Each request upserts
// points of its own, so whatever order they were logged in, the points after a restart must be
// whole requests: every answered one, and at least the first CRASH_SEQ logged.
const WAVE = 8;
const CRASH_SEQ = WAVE + 4;

function waveRequest(wave: number, r: number): { body: Json; points: [number, ModelPoint][] } {
  const points = Array.from({ length: 5 }, (_, j): [number, ModelPoint] => {
    const id = 1000 + wave * 100 + r * 10 + j;
    return [id, { vector: vectorOf(id, wave), payload: { wave, r } }];
  });
  return { body: { points: points.map(([id, p]) => ({ id, vector: p.vector, payload: p.payload })) }, points };
}

t.test('group commit: kill -9 between a group\'s log write and its replies loses no answered request and splits none', async (t) => {
  const server = await startServer({ workers: 1, env: { QUIVER_TEST_CRASH_AT: `after-log-append:${CRASH_SEQ}` } });
  t.teardown(async () => {
    await server.stop('SIGKILL');
    await rm(server.storage, { recursive: true, force: true });
  });
  await createCollection(t, server);
  const send = (wave: number, r: number) => call(server.url, 'PUT', `/collections/${COLLECTION}/points?wait=${r % 2 === 0}`, waveRequest(wave, r).body).then((res) => res.status === 200, () => false);
  const first = await Promise.all(Array.from({ length: WAVE }, (_, r) => send(0, r)));
  t.same(first, first.map(() => true), `the ${WAVE} concurrent requests of the first wave are answered`);
  const second = await Promise.all(Array.from({ length: WAVE }, (_, r) => send(1, r)));
  await exited(server, 30_000);

  const again = await startServer({ workers: 1, storage: server.storage });
  const present = new Map(await pointsOf(t, again));
  const requests = [0, 1].flatMap((wave) => Array.from({ length: WAVE }, (_, r) => ({ wave, r, answered: (wave === 0 ? first : second)[r], ...waveRequest(wave, r) })));
  let whole = 0;
  for (const request of requests) {
    const held = request.points.filter(([id]) => present.has(id));
    t.ok(held.length === 0 || held.length === request.points.length, `request ${request.wave}.${request.r} is all there or not at all`);
    if (request.answered) t.equal(held.length, request.points.length, `answered request ${request.wave}.${request.r} is there`);
    if (held.length === 0) continue;
    whole++;
    t.same(held.map(([id]) => [id, present.get(id)]), request.points, `request ${request.wave}.${request.r} holds what it wrote`);
  }
  t.equal(present.size, whole * 5, 'no other point');
  t.ok(whole >= CRASH_SEQ, `every request logged up to entry ${CRASH_SEQ} is there (${whole})`);
  t.ok(second.filter(Boolean).length < WAVE, 'the crash stopped some reply of the second wave');
  await again.stop('SIGKILL');

  const third = await startServer({ workers: 1, storage: server.storage });
  try {
    t.same(await pointsOf(t, third), [...present].sort((a, b) => a[0] - b[0]), 'another kill -9 and restart: the same points');
  } finally {
    t.equal(await third.stop(), 0, 'the restarted server shuts down cleanly');
  }
});
