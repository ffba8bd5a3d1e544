// Faults the server must survive (issue 11), through the real server with the test-only fault
// injection on (QUIVER_TEST_FAULTS=1, src/worker/faults.ts): a request whose task carries
// "quiver-fault:<kind>" makes its shard worker crash, trap in WebAssembly, run out of memory,
// hang, or die just after answering. The failed request gets Qdrant's 500, the worker is replaced with its shards reopened from
// storage, requests queued behind are served, and no acknowledged write is lost. A stuck read never
// holds up the requests after it, and a stuck request does not hold up a shutdown past its bound.

import t, { type Test } from 'tap';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { assertError, call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { startServer, type RunningServer, type StartOptions } from './helpers/server.js';

const DIM = 8;
const FAILED = /^Service internal error: shard worker [01] failed: /;

function vector(id: number): number[] {
  return Array.from({ length: DIM }, (_, j) => Math.cos(id * 0.7 + j));
}

/** The vector as a Cosine collection stores it. */
function normalized(v: number[]): number[] {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const points = (ids: number[]) => ids.map((id) => ({ id, vector: vector(id), payload: { n: id } }));
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
/** A filter that matches nothing but carries a fault marker to every shard it reaches. */
const faultFilter = (kind: string) => ({ must: [{ key: 'tag', match: { value: `quiver-fault:${kind}` } }] });

function faultyServer(env: Record<string, string>, storage?: string): Promise<RunningServer> {
  const options: StartOptions = { env: { QUIVER_TEST_FAULTS: '1', ...env } };
  return startServer(storage ? { ...options, storage } : options);
}

async function upsert(t: Test, base: string, ids: number[]): Promise<void> {
  resultOf(t, await call(base, 'PUT', '/collections/c/points?wait=true', { points: points(ids) }));
}

/** Every id in `ids` is stored with its own vector and payload, and nothing else is. */
async function holdsExactly(t: Test, base: string, ids: number[], what: string): Promise<void> {
  const found = resultOf<{ id: number; payload: { n: number }; vector: number[] }[]>(t, await call(base, 'POST', '/collections/c/points', { ids: [...ids, 999_999], with_vector: true }));
  t.same(found.map((p) => p.id), ids, `${what}: every acknowledged point is there`);
  t.ok(found.every((p) => p.payload.n === p.id && p.vector.every((x, j) => Math.abs(x - normalized(vector(p.id))[j]) < 1e-5)), `${what}: with its vector and payload`);
  const { count } = resultOf<{ count: number }>(t, await call(base, 'POST', '/collections/c/points/count', { exact: true }));
  t.equal(count, ids.length, `${what}: and nothing else`);
}

/** Polls `condition` until it holds or `ms` pass; whether it held. */
async function eventually(condition: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50)); // poll interval of a bounded wait on a condition, not a race fix
  }
  return true;
}

async function createCollection(t: Test, base: string): Promise<void> {
  resultOf(t, await call(base, 'PUT', '/collections/c', { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 2 }));
}

t.test('a worker that crashes, traps, runs out of memory or overruns a task is replaced and loses nothing', async (t) => {
  const server = await faultyServer({ QDRANT__WORKER_LIMITS__MEMORY_MB: '64', QDRANT__WORKER_LIMITS__TASK_TIMEOUT_SEC: '8' });
  stopAtEnd(t, server);
  const base = server.url;
  // A collection deleted before the faults: its shards must not be reopened (nor their folders made again).
  resultOf(t, await call(base, 'PUT', '/collections/gone', { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 2 }));
  resultOf(t, await call(base, 'DELETE', '/collections/gone'));
  await createCollection(t, base);
  const acknowledged = range(1, 300);
  await upsert(t, base, acknowledged);

  // A write whose worker crashes under it; the read sent right behind it waits for the replacement.
  const crashed = call(base, 'PUT', '/collections/c/points?wait=true', { points: [{ id: 5000, vector: vector(5000), payload: { tag: 'quiver-fault:crash' } }] });
  const behind = call(base, 'POST', '/collections/c/points', { ids: acknowledged });
  assertError(t, await crashed, 500, FAILED, 'crash during a write');
  t.equal(resultOf<unknown[]>(t, await behind).length, acknowledged.length, 'the read queued behind the crash is served');
  await holdsExactly(t, base, acknowledged, 'after a crash');
  t.equal((await readdir(join(server.storage, 'collections'))).length, 1, 'only the live collection has a folder after the crash');
  await upsert(t, base, range(301, 50));
  acknowledged.push(...range(301, 50));

  // A search that traps in WebAssembly on both shards, with a write sent right behind it.
  const trapped = call(base, 'POST', '/collections/c/points/search', { vector: vector(1), limit: 3, filter: faultFilter('trap') });
  const written = call(base, 'PUT', '/collections/c/points?wait=true', { points: points(range(351, 50)) });
  assertError(t, await trapped, 500, /^Service internal error: shard worker [01] failed: WebAssembly trap: unreachable$/, 'trap during a search');
  resultOf(t, await written);
  acknowledged.push(...range(351, 50));
  await holdsExactly(t, base, acknowledged, 'after a trap');

  assertError(t, await call(base, 'POST', '/collections/c/points/scroll', { filter: faultFilter('oom') }), 500, /^Service internal error: shard worker [01] failed: .*memory limit/, 'out of memory during a scroll');
  await holdsExactly(t, base, acknowledged, 'after running out of memory');

  // A read with no deadline is stopped by the hard bound on any task (8 s here).
  assertError(t, await call(base, 'POST', '/collections/c/points/count', { filter: faultFilter('hang') }), 500, /^Service internal error: shard worker [01] failed: a task ran longer than 8s$/, 'a task past the hard bound');
  await upsert(t, base, range(401, 10));
  acknowledged.push(...range(401, 10));
  await holdsExactly(t, base, acknowledged, 'after a stuck task');

  // A thread that dies between tasks (as when a background optimizer fails) is noticed and replaced.
  const counted = resultOf<{ count: number }>(t, await call(base, 'POST', '/collections/c/points/count', { filter: faultFilter('die-later') }));
  t.same(counted, { count: 0 }, 'the task before the death is answered');
  // Both shards' workers ran the task (one shard each), so both die; the next request must not
  // reach a thread whose death is not noticed yet.
  const deaths = (): number => server.output().match(/shard worker [01] failed \(injected crash between tasks\): replacing it/g)?.length ?? 0;
  t.ok(await eventually(() => deaths() === 2, 30_000), 'the death of both workers between tasks is noticed');
  await holdsExactly(t, base, acknowledged, 'after a death between tasks');

  const hits = resultOf<{ id: number }[]>(t, await call(base, 'POST', '/collections/c/points/search', { vector: vector(77), limit: 1, params: { exact: true } }));
  t.same(hits.map((h) => h.id), [77], 'search works on the replaced workers');
  t.equal(server.process.exitCode, null, 'the server process stayed up throughout');
});

t.test('a read stuck past its deadline does not hold up the requests after it', async (t) => {
  const server = await faultyServer({ QDRANT__WORKER_LIMITS__DEADLINE_GRACE_SEC: '1' });
  stopAtEnd(t, server);
  const base = server.url;
  await createCollection(t, base);
  const acknowledged = range(1, 100);
  await upsert(t, base, acknowledged);

  const begin = performance.now();
  const stuck = call(base, 'POST', '/collections/c/points/scroll?timeout=1', { filter: faultFilter('hang') });
  const after = call(base, 'POST', '/collections/c/points', { ids: acknowledged });
  const stuckAnswer = await stuck;
  t.equal(stuckAnswer.status, 408, 'the stuck read is answered at its deadline');
  t.same((stuckAnswer.body as { status: unknown }).status, { error: "Timeout: Timeout error: Operation 'Scroll' timed out after 1s" }, "with Qdrant's timeout error");
  t.equal(resultOf<unknown[]>(t, await after).length, acknowledged.length, 'the read sent after it is answered in full');
  const seconds = (performance.now() - begin) / 1000;
  // 1 s deadline + 1 s grace, then the replacement reopens the shards; far below anything unbounded.
  t.ok(seconds < 30, `once the stuck worker is replaced (${seconds.toFixed(1)} s)`);
  await holdsExactly(t, base, acknowledged, 'after the stuck read');
});

t.test('shutdown cuts a stuck request short within its bound; acknowledged writes survive the restart', async (t) => {
  const server = await faultyServer({ QDRANT__SERVICE__SHUTDOWN_TIMEOUT_SEC: '2' });
  stopAtEnd(t, server);
  const base = server.url;
  await createCollection(t, base);
  const acknowledged = range(1, 200);
  await upsert(t, base, acknowledged);

  // No deadline: only the hard bound on tasks (600 s by default) would end this read.
  const stuck = call(base, 'POST', '/collections/c/points/count', { filter: faultFilter('hang') }).then(() => 'answered', () => 'cut');
  // A read with a timeout queued behind it comes back 408: proof the stuck read is in its workers.
  const probe = await call(base, 'POST', '/collections/c/points/count?timeout=1', { exact: true });
  t.equal(probe.status, 408, 'the workers are busy with the stuck read');

  const begin = performance.now();
  const code = await server.stop('SIGTERM');
  const seconds = (performance.now() - begin) / 1000;
  t.equal(code, 0, 'the server exits cleanly');
  t.ok(seconds < 2 + 10, `within the 2 s bound plus the time to stop the workers (${seconds.toFixed(1)} s)`);
  t.equal(await stuck, 'cut', 'the stuck request was cut short');

  const again = await startServer({ storage: server.storage });
  stopAtEnd(t, again);
  await holdsExactly(t, again.url, acknowledged, 'after the restart');
});
