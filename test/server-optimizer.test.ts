// The optimizer through the server: a collection past indexing_threshold turns yellow while its
// shards link vectors in the background and green once done; /optimizations reports the real
// running and completed optimizations; searches during a build return correct results; a vacuum
// follows mass deletion; kill -9 in the middle of an optimization loses no acknowledged write.

import t, { type Test } from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { call, resultOf } from './helpers/api-http.js';
import { clustered, row } from './helpers/data.js';
import { bruteForce, recall, score } from './helpers/reference.js';
import { startServer, type RunningServer } from './helpers/server.js';

const DIM = 64;
const N = 16000;
const data = clustered(N, DIM, 16, 11);
const queries = clustered(20, DIM, 16, 12);
// 200 KiB = 800 vectors of 64-d per shard.
const OPTIMIZERS = { indexing_threshold: 200, vacuum_min_vector_number: 1000, deleted_threshold: 0.2 };

interface Progress { name: string; started_at?: string; finished_at?: string; duration_sec?: number; done?: number; total?: number; children?: Progress[] }
interface Optimization { uuid: string; optimizer: string; status: unknown; segments: { uuid: string; points_count: number }[]; progress: Progress }
interface Optimizations {
  summary: { queued_optimizations: number; queued_segments: number; queued_points: number; idle_segments: number };
  running: Optimization[];
  queued?: { optimizer: string; segments: unknown[] }[];
  completed?: Optimization[];
  idle_segments?: { uuid: string; points_count: number }[];
}

function points(ids: number[]) {
  return ids.map((id) => ({ id, vector: Array.from(row(data, DIM, id)), payload: { id } }));
}

async function load(client: QdrantClient, name: string, ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 4000) await client.upsert(name, { wait: true, points: points(ids.slice(i, i + 4000)) });
}

/** Polls the collection status until `until` holds (deadline 120 s); returns every status seen. */
async function watchStatus(client: QdrantClient, name: string, until: (status: string) => boolean, each: () => Promise<void> = async () => {}): Promise<string[]> {
  const seen: string[] = [];
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { status } = await client.getCollection(name);
    seen.push(status);
    if (until(status)) return seen;
    if (Date.now() > deadline) throw new Error(`status still ${status} after 120 s`);
    await each();
  }
}

async function optimizations(t: Test, server: RunningServer, name: string, query = ''): Promise<Optimizations> {
  return resultOf<Optimizations>(t, await call(server.url, 'GET', `/collections/${name}/optimizations${query}`));
}

t.test('yellow while indexing, green when done; /optimizations reports it; reads stay correct', async (t) => {
  const server = await startServer({ workers: 2 });
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('docs', { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 2, optimizers_config: OPTIMIZERS });

  await client.upsert('docs', { wait: true, points: points([0, 1, 2]) });
  const small = await client.getCollection('docs');
  t.equal(small.status, 'green', 'below the threshold nothing is to do');
  t.equal(small.indexed_vectors_count, 0, 'and nothing is indexed');

  const ids = Array.from({ length: N }, (_, i) => i);
  await load(client, 'docs', ids);

  // While the shards build their graphs: reports of the running optimization, and exact checks of searches.
  let running: Optimization | null = null;
  const recalls: number[] = [];
  let q = 0;
  const seen = await watchStatus(client, 'docs', (s) => s === 'green', async () => {
    const report = await optimizations(t, server, 'docs');
    running ??= report.running[0] ?? null;
    const query = Array.from(row(queries, DIM, q++ % 20));
    const hits = (await client.query('docs', { query, limit: 10 })).points;
    for (const hit of hits) t.ok(Math.abs(hit.score - score('Euclid', query, row(data, DIM, hit.id as number))) < 1e-3, `hit ${hit.id} has its exact distance`);
    recalls.push(recall(hits.map((h) => h.id as number), bruteForce('Euclid', data, DIM, query, 10)));
  });
  t.equal(seen[0], 'yellow', 'yellow right after the load');
  t.equal(seen.at(-1), 'green', 'then green');
  t.ok(running, 'a running optimization was reported');
  t.equal(running!.optimizer, 'indexing');
  t.equal(running!.status, 'optimizing');
  t.ok(running!.progress.total! > 0 && running!.progress.done! <= running!.progress.total!, `progress ${running!.progress.done}/${running!.progress.total}`);
  t.ok(running!.progress.started_at && !running!.progress.finished_at, 'started, not finished');
  t.ok(recalls.length > 0 && recalls.reduce((a, b) => a + b, 0) / recalls.length >= 0.9, `recall@10 of searches during the build over ${recalls.length} searches`);

  const info = await client.getCollection('docs');
  t.equal(info.optimizer_status, 'ok');
  const report = await optimizations(t, server, 'docs', '?with=queued,completed,idle_segments');
  t.same(report.running, [], 'nothing runs');
  t.same(report.queued, [], 'nothing is queued');
  t.equal(report.summary.queued_optimizations, 0);
  t.equal(report.summary.idle_segments, 2, 'one idle segment per shard');
  t.equal(report.idle_segments!.length, 2);
  t.equal(report.idle_segments!.reduce((n, s) => n + s.points_count, 0), N, 'idle segments hold every point');
  const completed = report.completed!;
  t.ok(completed.length >= 2, `${completed.length} completed optimizations`);
  for (const c of completed) {
    t.equal(c.status, 'done');
    t.ok(c.progress.finished_at && typeof c.progress.duration_sec === 'number', 'finished with a duration');
    t.same(c.progress.children!.map((s) => s.name), ['link_vectors', 'persist_graph']);
  }
  const linked = completed.reduce((n, c) => n + c.progress.done!, 0);
  t.equal(linked, info.indexed_vectors_count, 'indexed_vectors_count is what the optimizations linked');
  t.ok(info.indexed_vectors_count! > N - 2 * 800, `${info.indexed_vectors_count} of ${N} linked; fewer than a threshold per shard may wait unlinked`);
  const limited = await optimizations(t, server, 'docs', '?with=completed&completed_limit=1');
  t.equal(limited.completed!.length, 1, 'completed_limit');
  t.equal(limited.completed![0].uuid, completed[0].uuid, 'most recent first');
  t.equal(limited.queued, undefined, 'queued only when asked');
  const bad = await call(server.url, 'GET', '/collections/docs/optimizations?with=queued,everything');
  t.equal(bad.status, 400, 'an unknown with item is a 400');
  t.match((bad.body as { status: { error: string } }).status.error, /everything/);
  const missing = await call(server.url, 'GET', '/collections/nope/optimizations');
  t.equal(missing.status, 404);

  // Mass deletion: a vacuum rebuilds each shard's graph without the deleted vectors.
  const deleted = ids.filter((id) => id % 2 === 0);
  await client.delete('docs', { wait: true, points: deleted });
  await watchStatus(client, 'docs', (s) => s === 'green');
  const after = await optimizations(t, server, 'docs', '?with=completed');
  t.ok(after.completed!.some((c) => c.optimizer === 'vacuum' && c.status === 'done'), 'a vacuum completed');
  const query = Array.from(row(queries, DIM, 0));
  const hits = (await client.query('docs', { query, limit: 10 })).points;
  t.notOk(hits.some((h) => (h.id as number) % 2 === 0), 'no deleted point comes back');
  const live = new Set(ids.filter((id) => id % 2 === 1));
  const truth = bruteForce('Euclid', data, DIM, query, 10, (i) => live.has(i));
  t.ok(recall(hits.map((h) => h.id as number), truth) >= 0.9, 'search after the vacuum');
  t.equal((await client.getCollection('docs')).points_count, live.size);
});

t.test('completed optimizations: completed_limit defaults to 16, most recent first', async (t) => {
  const server = await startServer({ workers: 1 });
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  // 1 KiB = 4 vectors of 64-d: every batch of 8 points is one indexing optimization.
  await client.createCollection('many', { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 1, optimizers_config: { indexing_threshold: 1 } });
  let all: Optimization[] = [];
  for (let batch = 0; all.length < 17; batch++) {
    if (batch >= 40) throw new Error(`only ${all.length} optimizations completed after ${batch} batches`);
    await client.upsert('many', { wait: true, points: points(Array.from({ length: 8 }, (_, i) => batch * 8 + i)) });
    await watchStatus(client, 'many', (s) => s === 'green');
    all = (await optimizations(t, server, 'many', '?with=completed&completed_limit=100')).completed!;
  }
  const byDefault = (await optimizations(t, server, 'many', '?with=completed')).completed!;
  t.equal(byDefault.length, 16, `16 of the ${all.length} completed optimizations by default`);
  t.same(byDefault.map((c) => c.uuid), all.slice(0, 16).map((c) => c.uuid), 'the most recent ones');
  const finished = all.map((c) => Date.parse(c.progress.finished_at!));
  t.ok(finished.every((time, i) => i === 0 || time <= finished[i - 1]), 'most recent first');
  t.same((await optimizations(t, server, 'many', '?with=completed&completed_limit=0')).completed, [], 'completed_limit=0');
  for (const query of ['?completed_limit=-1', '?completed_limit=x', '?with=completed,nothing']) {
    t.equal((await call(server.url, 'GET', `/collections/many/optimizations${query}`)).status, 400, `${query} is refused`);
  }
});

t.test('kill -9 during an optimization loses no acknowledged write; the restart serves everything', async (t) => {
  const server = await startServer({ workers: 2 });
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('crash', { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 2, optimizers_config: OPTIMIZERS });
  const first = Array.from({ length: N / 2 }, (_, i) => i);
  await load(client, 'crash', first);
  await watchStatus(client, 'crash', (s) => s === 'green'); // a persisted graph exists now
  const second = Array.from({ length: N / 2 }, (_, i) => N / 2 + i);
  await load(client, 'crash', second);
  const report = await optimizations(t, server, 'crash');
  t.ok(report.running.length > 0 || report.summary.queued_optimizations > 0, 'killed while optimizing');
  await server.stop('SIGKILL');

  const again = await startServer({ storage: server.storage, workers: 2 });
  t.teardown(() => again.stop());
  const client2 = new QdrantClient({ url: again.url, checkCompatibility: false });
  const info = await client2.getCollection('crash');
  t.equal(info.points_count, N, 'every acknowledged point is counted');
  const found = await client2.retrieve('crash', { ids: [...first, ...second], with_vector: true, with_payload: true });
  t.equal(found.length, N, 'every acknowledged point is back');
  let intact = 0;
  for (const p of found) {
    const v = p.vector as number[];
    const expected = row(data, DIM, p.id as number);
    if ((p.payload as { id: number }).id === p.id && v.every((x, j) => Math.abs(x - expected[j]) < 1e-5)) intact++;
  }
  t.equal(intact, N, 'with its vector and payload');
  const query = Array.from(row(queries, DIM, 3));
  const hits = (await client2.query('crash', { query, limit: 10 })).points;
  t.ok(recall(hits.map((h) => h.id as number), bruteForce('Euclid', data, DIM, query, 10)) >= 0.9, 'searches right after the restart');
  await watchStatus(client2, 'crash', (s) => s === 'green');
  const done = await client2.getCollection('crash');
  t.ok(done.indexed_vectors_count! > N - 2 * 800, `the restarted optimizer linked the rest (${done.indexed_vectors_count})`);
});
