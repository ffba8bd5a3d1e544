// The shard optimizer at unit level: vectors below indexing_threshold stay unlinked and are found
// exactly; past it they are linked in background slices while searches stay correct; vacuum
// rebuilds a graph without its deleted vectors; persisted graphs reload to identical results and
// are brought up to date with records written after them. References are exact brute force.

import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../src/shard/shard.js';
import type { OptimizerSpec } from '../src/shard/optimizer/plan.js';
import type { ShardOptimizations } from '../src/shard/optimizer/report.js';
import { clustered, row } from './helpers/data.js';
import { bruteForce, recall, score } from './helpers/reference.js';

const DIM = 32;
const N = 4000;
const K = 10;
const data = clustered(N, DIM, 12, 7);
const queries = clustered(40, DIM, 12, 8);

// 100 KiB of 32-d f32 vectors = 800 vectors.
const LOW: OptimizerSpec = { indexingThresholdKb: 100, deletedThreshold: 0.2, vacuumMinVectorNumber: 1000, maxOptimizationThreads: null };
const NEVER: OptimizerSpec = { ...LOW, indexingThresholdKb: 0 };

async function openShard(path: string, optimizer: OptimizerSpec): Promise<Shard> {
  return Shard.open({
    path,
    vectors: [{ name: 'v', size: DIM, distance: 'Euclid', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null }],
    sparseVectors: [],
    indexes: [],
    optimizer,
  });
}

let opId = 0;
/** One write of every listed point (so the optimizer sees them all at once). */
async function upsert(shard: Shard, ids: number[], vectorOf: (id: number) => ArrayLike<number>): Promise<void> {
  const points = ids.map((id) => ({ id, vectors: { v: Float32Array.from(vectorOf(id)) }, payload: { id } }));
  await shard.apply([{ kind: 'upsert', points, mode: 'upsert', updateFilter: null }], ++opId, { peer: 0, clockId: 0, tick: opId }, true);
}

async function remove(shard: Shard, ids: number[]): Promise<void> {
  await shard.apply([{ kind: 'delete', target: { ids } }], ++opId, { peer: 0, clockId: 0, tick: opId }, true);
}

/** Point ids of the top k for `query`, through the shard's engine (graph plus exact scan of unlinked vectors). */
function search(shard: Shard, query: ArrayLike<number>, exact = false): { ids: number[]; scores: number[] } {
  const found = shard.vectorIndex('v')!.search(query, { limit: K, exact });
  return { ids: Array.from(found.offsets, (o) => shard.pointId(o) as number), scores: Array.from(found.scores) };
}

/** Exact top k over the rows of `live` ids, as ids. */
function truth(live: number[], vectorOf: (id: number) => Float32Array, query: ArrayLike<number>): number[] {
  const rows = new Float32Array(live.length * DIM);
  live.forEach((id, i) => rows.set(vectorOf(id), i * DIM));
  return bruteForce('Euclid', rows, DIM, query, K).map((i) => live[i]);
}

function busy(report: ShardOptimizations): boolean {
  return report.running.length > 0 || report.queued.length > 0;
}

/** Lets the optimizer's slices run until it is idle (bounded by a deadline), calling `between` after each turn of the event loop. */
async function settle(shard: Shard, between: () => void = () => {}): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (busy(shard.optimizations())) {
    if (Date.now() > deadline) throw new Error('optimizer did not finish');
    await new Promise((r) => setImmediate(r));
    between();
  }
}

const vectorOf = (id: number) => row(data, DIM, id);
const all = Array.from({ length: N }, (_, i) => i);

t.test('below the threshold vectors stay unlinked and every search is exact', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-opt-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const shard = await openShard(dir, NEVER);
  await upsert(shard, all, vectorOf);
  const report = shard.optimizations();
  t.equal(report.indexedVectors, 0, 'nothing is linked with indexing disabled');
  t.same(report.running, [], 'no optimization runs');
  t.equal(report.idle.length, 1, 'the vector index is an idle segment');
  for (let q = 0; q < 10; q++) {
    const query = row(queries, DIM, q);
    const found = search(shard, query);
    t.same(found.ids, truth(all, vectorOf, query), `query ${q}: exact top ${K}`);
    found.ids.forEach((id, i) => t.ok(Math.abs(found.scores[i] - score('Euclid', query, vectorOf(id))) < 1e-3));
  }
  await shard.close();
});

t.test('past the threshold vectors are linked in background slices; searches stay correct meanwhile', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-opt-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const shard = await openShard(dir, LOW);
  await upsert(shard, all, vectorOf);
  const started = shard.optimizations();
  t.ok(busy(started), 'an indexing optimization is queued or running once the writes are applied');

  // Between slices: partially linked, and the searches merge the graph with an exact scan of the rest.
  const midway: number[] = [];
  let partial = 0;
  let q = 0;
  await settle(shard, () => {
    const index = shard.vectorIndex('v')!;
    if (index.pendingCount > 0 && index.linkedCount > 0) partial++;
    const query = row(queries, DIM, q++ % 40);
    midway.push(recall(search(shard, query).ids, truth(all, vectorOf, query)));
  });
  t.ok(partial > 0, `searches ran while the graph was partly built (${partial} times)`);
  const midRecall = midway.reduce((a, b) => a + b, 0) / midway.length;
  t.ok(midRecall >= 0.95, `recall@${K} during the build ${midRecall.toFixed(3)}`);

  const done = shard.optimizations();
  t.equal(done.indexedVectors, N, 'every vector is linked');
  t.equal(done.completed[0].optimizer, 'indexing');
  t.equal(done.completed[0].status, 'done');
  t.equal(done.completed[0].progress.done, N, 'progress counted every linked vector');
  t.equal(done.completed[0].progress.total, N);
  t.same(done.completed[0].progress.children.map((c) => c.name), ['link_vectors', 'persist_graph']);
  let sum = 0;
  for (let i = 0; i < 40; i++) {
    const query = row(queries, DIM, i);
    sum += recall(search(shard, query).ids, truth(all, vectorOf, query));
  }
  t.ok(sum / 40 >= 0.95, `recall@${K} after the build ${(sum / 40).toFixed(3)}`);
  await shard.close();
});

t.test('vacuum rebuilds the graph without deleted vectors and keeps every live one', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-opt-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const shard = await openShard(dir, LOW);
  await upsert(shard, all, vectorOf);
  await settle(shard);
  const deleted = all.filter((id) => id % 5 < 2); // 40 % > deleted_threshold 0.2
  await remove(shard, deleted);
  const live = all.filter((id) => id % 5 >= 2);
  t.equal(shard.vectorIndex('v')!.deletedCount, deleted.length, 'deletes are tombstones until the vacuum');
  await settle(shard);
  const report = shard.optimizations();
  t.equal(report.completed[0].optimizer, 'vacuum', 'a vacuum ran');
  t.same(report.completed[0].progress.children.map((c) => c.name), ['purge_deleted', 'link_vectors', 'persist_graph']);
  t.equal(report.completed[0].progress.children[0].done, deleted.length, 'it purged every deleted vector');
  const index = shard.vectorIndex('v')!;
  t.equal(index.deletedCount, 0, 'no tombstone is left in the graph');
  t.equal(index.size, live.length);
  t.equal(report.indexedVectors, live.length, 'every live vector is linked again');
  const gone = new Set(deleted);
  let own = 0;
  for (const id of live) if (search(shard, vectorOf(id)).ids.includes(id)) own++;
  t.equal(own, live.length, 'every live point is found by its own vector');
  let sum = 0;
  for (let i = 0; i < 40; i++) {
    const query = row(queries, DIM, i);
    const found = search(shard, query).ids;
    t.notOk(found.some((id) => gone.has(id)), `query ${i} returns no deleted point`);
    sum += recall(found, truth(live, vectorOf, query));
  }
  t.ok(sum / 40 >= 0.95, `recall@${K} after the vacuum ${(sum / 40).toFixed(3)}`);

  // New points reuse the purged offsets and are searched exactly until linked.
  const fresh = deleted.slice(0, 300).map((id) => id + N);
  const freshVector = (id: number) => row(data, DIM, id - N);
  await upsert(shard, fresh, freshVector);
  t.ok(shard.vectorIndex('v')!.offsetCount <= N, 'new points took freed offsets');
  t.equal((shard.record(fresh[0])!.vectors.v as Float32Array).length, DIM);
  await shard.close();
});

t.test('a persisted graph reloads to identical results and is brought up to date with later writes', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-opt-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  let shard = await openShard(dir, LOW);
  await upsert(shard, all, vectorOf);
  await settle(shard);
  const before = Array.from({ length: 40 }, (_, i) => search(shard, row(queries, DIM, i)));
  await shard.close();

  shard = await openShard(dir, LOW);
  const reopened = shard.optimizations();
  t.equal(reopened.indexedVectors, N, 'the graph is loaded with every vector linked');
  t.notOk(busy(reopened), 'nothing to rebuild');
  const after = Array.from({ length: 40 }, (_, i) => search(shard, row(queries, DIM, i)));
  t.same(after, before, 'identical ids and scores');

  // Later writes: moved vectors, deletions, new points (few enough to stay unlinked), then a crash-like close.
  const moved = [3, 14, 15, 92, 653];
  const movedVector = (id: number) => row(queries, DIM, id % 40);
  await upsert(shard, moved, movedVector);
  const deleted = [1, 2, 7, 100, 2500];
  await remove(shard, deleted);
  const added = [N + 1, N + 2, N + 3];
  await upsert(shard, added, (id) => row(queries, DIM, id - N + 30));
  t.notOk(busy(shard.optimizations()), 'too few new vectors to be linked');
  await shard.close();

  shard = await openShard(dir, LOW);
  const current = new Map<number, Float32Array>();
  for (const id of all) current.set(id, vectorOf(id));
  for (const id of moved) current.set(id, movedVector(id));
  for (const id of deleted) current.delete(id);
  for (const id of added) current.set(id, row(queries, DIM, id - N + 30));
  const index = shard.vectorIndex('v')!;
  t.equal(index.size, current.size, 'live vectors match the records');
  t.equal(index.pendingCount, moved.length + added.length, 'changed and new vectors are unlinked');
  t.equal(shard.pointCount, current.size);
  for (const id of [...moved, ...added]) t.same(shard.record(id)!.vectors.v, Array.from(current.get(id)!), `point ${id} has its latest vector`);
  for (const id of deleted) t.equal(shard.record(id), undefined, `point ${id} stays deleted`);
  const ids = [...current.keys()];
  let sum = 0;
  for (let i = 0; i < 40; i++) {
    const query = row(queries, DIM, i);
    const found = search(shard, query).ids;
    t.notOk(found.some((id) => deleted.includes(id)), `query ${i} returns no deleted point`);
    sum += recall(found, truth(ids, (id) => current.get(id)!, query));
  }
  t.ok(sum / 40 >= 0.95, `recall@${K} after the reload ${(sum / 40).toFixed(3)}`);
  for (const id of [...moved, ...added]) t.equal(search(shard, current.get(id)!).ids[0], id, `point ${id} is found at its new place`);
  await shard.close();
});

t.test('engine: unlinked, partly linked and vacuumed indexes against brute force; images keep unlinked vectors', async (t) => {
  const { VectorIndex } = await import('../src/engine/index.js');
  const { engineModule } = await import('../src/runtime/wasm-module.js');
  const module = await engineModule();
  for (const distance of ['Cosine', 'Euclid'] as const) {
    const index = await VectorIndex.create(module, { dim: DIM, distance });
    for (let i = 0; i < 2000; i++) index.stash(i, vectorOf(i));
    t.equal(index.pendingCount, 2000, `${distance}: every stashed vector is pending`);
    t.notOk(index.hasGraph, 'no graph yet');
    const exactTop = (query: ArrayLike<number>, live: (i: number) => boolean) => bruteForce(distance, data.subarray(0, 2000 * DIM), DIM, query, K, live);
    for (let q = 0; q < 5; q++) {
      const query = row(queries, DIM, q);
      t.same(Array.from(index.search(query, { limit: K }).offsets), exactTop(query, () => true), `${distance} query ${q}: unlinked search is exact`);
    }
    t.equal(index.linkPending(700), 700, 'links as many as asked');
    t.equal(index.linkedCount, 700);
    for (let i = 0; i < 2000; i += 3) index.delete(i);
    let sum = 0;
    for (let q = 0; q < 20; q++) {
      const query = row(queries, DIM, q);
      const found = Array.from(index.search(query, { limit: K }).offsets);
      t.notOk(found.some((o) => o % 3 === 0), 'deleted offsets never come back');
      sum += recall(found, exactTop(query, (i) => i % 3 !== 0));
    }
    t.ok(sum / 20 >= 0.95, `${distance}: graph + exact scan recall ${(sum / 20).toFixed(3)}`);

    const copy = await VectorIndex.load(module, index.serialize());
    t.equal(copy.pendingCount, index.pendingCount, 'the image keeps unlinked vectors unlinked');
    t.equal(copy.deletedCount, index.deletedCount, 'and tombstones');
    const query = row(queries, DIM, 0);
    t.same(copy.search(query, { limit: K }), index.search(query, { limit: K }), 'and answers identically');

    index.linkPending(Infinity);
    index.vacuum();
    t.equal(index.deletedCount, 0, 'vacuum drops tombstones');
    t.equal(index.pendingCount, index.size, 'and unlinks every live vector');
    t.notOk(index.hasGraph);
    index.linkPending(Infinity);
    t.equal(index.linkedCount, 2000 - 667, 'relinked');
  }
});
