// HNSW recall against exact brute force on clustered data (20000 x 128), filtered search
// through allow-bitsets, deletion, re-insertion, int8 quantization and serialisation.

import t from 'tap';
import { Bitset, VectorIndex, type Distance, type SearchOptions } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { clustered, rng, row } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';
import { bruteForce, recall } from './helpers/reference.js';

const N = 20000;
const DIM = 128;
const QUERIES = 200;
const all = clustered(N + QUERIES, DIM, 40, 11, 16, 0.1);
const data = all.subarray(0, N * DIM);
const queries = all.subarray(N * DIM);

function meanRecall(index: VectorIndex, distance: Distance, options: Omit<SearchOptions, 'limit'>, allow?: (i: number) => boolean, k = 10): number {
  let total = 0;
  for (let q = 0; q < QUERIES; q++) {
    const query = row(queries, DIM, q);
    const found = index.search(query, { ...options, limit: k }).offsets;
    total += recall(found, bruteForce(distance, data, DIM, query, k, allow));
  }
  return total / QUERIES;
}

/** A pseudo-random subset of offsets with the given selectivity. */
function subset(selectivity: number, seed: number): Bitset {
  const next = rng(seed);
  const bits = new Bitset(N);
  for (let i = 0; i < N; i++) if (next() < selectivity) bits.add(i);
  return bits;
}

for (const distance of ['Euclid', 'Cosine', 'Dot', 'Manhattan'] as const) {
  t.test(`${distance}: recall@10 >= 0.98 at ef=128`, async (t) => {
    const index = await buildIndex({ dim: DIM, distance }, data);
    t.equal(index.size, N);
    const r = meanRecall(index, distance, { ef: 128 });
    t.ok(r >= 0.98, `recall@10 ${r.toFixed(4)}`);
  });
}

t.test('filtered search keeps recall through the graph and by exact scan', async (t) => {
  // A threshold of 1 KiB (2 points at 128-d) forces graph traversal for every filter here; the
  // default (20000 points at 128-d) scans small sets exactly.
  const graph = await buildIndex({ dim: DIM, distance: 'Euclid', fullScanThreshold: 1 }, data);
  const bytes = graph.serialize();
  const planned = await VectorIndex.load(await engineModule(), bytes);
  for (const selectivity of [0.5, 0.1, 0.01]) {
    const bits = subset(selectivity, Math.round(selectivity * 1000));
    for (const [name, index] of [['graph', graph], ['planner', planned]] as const) {
      let leaked = 0;
      for (let q = 0; q < 20; q++) {
        for (const o of index.search(row(queries, DIM, q), { limit: 10, ef: 128, filter: bits }).offsets) if (!bits.has(o)) leaked++;
      }
      t.equal(leaked, 0, `${name} ${selectivity * 100}%: only allowed offsets returned`);
      const r = meanRecall(index, 'Euclid', { ef: 128, filter: bits }, (i) => bits.has(i));
      t.ok(r >= 0.95, `${name} ${selectivity * 100}% selectivity (${bits.count()} points): recall@10 ${r.toFixed(4)}`);
    }
  }
});

t.test('deleted points are never returned', async (t) => {
  const index = await buildIndex({ dim: DIM, distance: 'Euclid' }, data);
  const gone = subset(0.2, 5);
  let deleted = 0;
  for (let i = 0; i < N; i++) if (gone.has(i) && index.delete(i)) deleted++;
  t.equal(deleted, gone.count(), 'every delete reports a deletion');
  const again = [...Array(N).keys()].find((i) => gone.has(i))!;
  t.equal(index.delete(again), false, 'deleting twice reports nothing deleted');
  t.equal(index.size, N - gone.count());
  let leaked = 0;
  for (let q = 0; q < QUERIES; q++) {
    for (const exact of [false, true]) {
      for (const o of index.search(row(queries, DIM, q), { limit: 50, ef: 128, exact }).offsets) if (gone.has(o)) leaked++;
    }
  }
  t.equal(leaked, 0, 'no deleted offset in 2 x 200 searches of 50');
  const r = meanRecall(index, 'Euclid', { ef: 128 }, (i) => !gone.has(i));
  t.ok(r >= 0.98, `recall@10 over the remaining points ${r.toFixed(4)}`);
  // re-inserting a deleted offset brings it back
  index.upsert(again, row(data, DIM, again));
  t.equal(index.search(row(data, DIM, again), { limit: 1 }).offsets[0], again);
});

t.test('re-inserting an offset moves it to its new vector', async (t) => {
  const index = await buildIndex({ dim: DIM, distance: 'Euclid' }, data);
  const next = rng(3);
  const moved: number[] = [];
  for (let j = 0; j < 500; j++) moved.push(Math.floor(next() * N));
  // move each chosen offset onto the vector of another point, slightly shifted
  const target = (i: number) => row(data, DIM, (i * 7919) % N).map((x) => x + 0.001);
  for (const i of moved) index.upsert(i, target(i));
  let found = 0;
  for (const i of moved) {
    const res = index.search(target(i), { limit: 3, ef: 64 });
    if (Array.from(res.offsets).includes(i)) found++;
  }
  t.ok(found / moved.length >= 0.98, `moved offsets found at their new place: ${found}/${moved.length}`);
  const v = index.vector(moved[0]);
  t.ok(Math.abs(v[0] - target(moved[0])[0]) < 1e-6, 'stored vector is the new one');
});

for (const distance of ['Euclid', 'Cosine', 'Dot'] as const) {
  t.test(`${distance}: int8 quantization with rescoring keeps recall@10 >= 0.95`, async (t) => {
    const index = await buildIndex({ dim: DIM, distance, quantization: { quantile: 0.99 } }, data);
    t.equal(index.quantized, true);
    const rescored = meanRecall(index, distance, { ef: 128, quantization: { rescore: true, oversampling: 2 } });
    t.ok(rescored >= 0.95, `rescored recall@10 ${rescored.toFixed(4)}`);
    const ignored = meanRecall(index, distance, { ef: 128, quantization: { ignore: true } });
    t.ok(ignored >= 0.98, `ignore: true searches f32, recall@10 ${ignored.toFixed(4)}`);
    const q = row(queries, DIM, 0);
    const res = index.search(q, { limit: 5, quantization: { rescore: true } });
    const exact = index.search(q, { limit: 5, exact: true, quantization: { ignore: true } });
    const o = Array.from(exact.offsets).indexOf(res.offsets[0]);
    if (o >= 0) t.ok(Math.abs(res.scores[0] - exact.scores[o]) < 1e-4, 'rescored scores are the exact f32 scores');
    const raw = index.search(q, { limit: 5, quantization: { rescore: false } });
    t.equal(raw.offsets.length, 5, 'without rescoring, int8 scores are returned');
  });
}

t.test('serialisation round trip gives identical results', async (t) => {
  for (const quantization of [null, { quantile: 0.99 }]) {
    const index = await buildIndex({ dim: DIM, distance: 'Cosine', quantization }, data);
    for (let i = 0; i < 1000; i += 3) index.delete(i);
    const bytes = index.serialize();
    const copy = await VectorIndex.load(await engineModule(), bytes);
    t.equal(copy.size, index.size);
    t.equal(copy.quantized, quantization !== null);
    let same = true;
    for (let q = 0; q < QUERIES && same; q++) {
      for (const options of [{ limit: 10, ef: 64 }, { limit: 10, exact: true }, { limit: 10, filter: subset(0.3, q) }]) {
        const a = index.search(row(queries, DIM, q), options);
        const b = copy.search(row(queries, DIM, q), options);
        same &&= a.offsets.join() === b.offsets.join() && a.scores.join() === b.scores.join();
      }
    }
    t.ok(same, `quantized=${quantization !== null}: identical offsets and scores for 200 queries x 3 modes`);
    // both go on identically after more inserts
    for (const ix of [index, copy]) for (let i = 0; i < 100; i++) ix.upsert(N + i, row(queries, DIM, i));
    t.same(Array.from(copy.search(row(queries, DIM, 7), { limit: 10 }).offsets), Array.from(index.search(row(queries, DIM, 7), { limit: 10 }).offsets));
    t.same(Array.from(copy.vector(5)), Array.from(index.vector(5)), 'stored vectors survive');
  }
  await t.rejects(VectorIndex.load(await engineModule(), new Uint8Array([1, 2, 3, 4])), /not a serialised Quiver index/);
});

t.test('search on an empty index and limit 0', async (t) => {
  const index = await VectorIndex.create(await engineModule(), { dim: 4, distance: 'Euclid' });
  t.equal(index.search([0, 0, 0, 0], { limit: 10 }).offsets.length, 0);
  index.upsert(3, [1, 1, 1, 1]);
  t.same(Array.from(index.search([0, 0, 0, 0], { limit: 10 }).offsets), [3], 'holes below an offset are never returned');
  t.equal(index.search([0, 0, 0, 0], { limit: 0 }).offsets.length, 0);
});
