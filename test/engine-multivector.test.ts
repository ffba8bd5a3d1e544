// Multivector (MaxSim) indexes: exact search against a plain JS MaxSim reference for every
// distance, HNSW recall, filters, deletes and replacements with lists of another length, vacuum
// and serialisation. Lists have 1..8 vectors of dim 30 (padded to 32 inside the engine).

import t from 'tap';
import { Bitset, VectorIndex, type Distance, type SearchOptions } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { listOf, syntheticMultivectors, type MultivectorSet } from '../src/bench/multivector-data.js';
import { rng } from './helpers/data.js';
import { maxSimScore } from './helpers/maxsim.js';
import { better, recall } from './helpers/reference.js';

const N = 1500;
const DIM = 30;
const QUERIES = 40;
const set = syntheticMultivectors({ points: N, dim: DIM, minK: 1, maxK: 8, topics: 24, topicSeed: 3, seed: 4 });
const queries = syntheticMultivectors({ points: QUERIES, dim: DIM, minK: 1, maxK: 4, topics: 24, topicSeed: 3, seed: 5 });

/** The lists currently stored, by offset (undefined = absent). */
type Lists = (Float32Array | undefined)[];

function initialLists(data: MultivectorSet): Lists {
  return Array.from({ length: data.counts.length }, (_, i) => listOf(data, i));
}

function reference(distance: Distance, lists: Lists, query: Float32Array, k: number, allow: (i: number) => boolean = () => true): { offsets: number[]; scores: number[] } {
  const scored: { i: number; s: number }[] = [];
  lists.forEach((list, i) => {
    if (list && allow(i)) scored.push({ i, s: maxSimScore(distance, DIM, query, list) });
  });
  scored.sort((x, y) => (better(distance, x.s, y.s) ? -1 : better(distance, y.s, x.s) ? 1 : x.i - y.i));
  const top = scored.slice(0, k);
  return { offsets: top.map((x) => x.i), scores: top.map((x) => x.s) };
}

async function build(distance: Distance, lists: Lists, extra: { fullScanThreshold?: number; quantization?: { quantile?: number } } = {}): Promise<VectorIndex> {
  const index = await VectorIndex.create(await engineModule(), { dim: DIM, distance, multivector: { comparator: 'max_sim' }, ...extra });
  index.reserve(lists.length, lists.reduce((sum, list) => sum + (list ? list.length / DIM : 0), 0));
  lists.forEach((list, i) => { if (list) index.upsert(i, list, list.length / DIM); });
  return index;
}

/** Byte-for-byte equality (t.same on arrays of megabytes is slow). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function close(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b));
}

/** Exact search equals the reference (order and scores) for every query; returns mismatches. */
function exactMismatches(index: VectorIndex, distance: Distance, lists: Lists, filter?: Bitset): string[] {
  const bad: string[] = [];
  for (let q = 0; q < QUERIES; q++) {
    const query = listOf(queries, q);
    const got = index.search(query, { limit: 10, exact: true, filter }, queries.counts[q]);
    const want = reference(distance, lists, query, 10, filter ? (i) => filter.has(i) : undefined);
    const sameOrder = got.offsets.length === want.offsets.length && want.offsets.every((o, i) => o === got.offsets[i] || close(got.scores[i], want.scores[i]));
    const sameScores = want.scores.every((s, i) => close(got.scores[i], s));
    if (!sameOrder || !sameScores) bad.push(`query ${q}: got ${[...got.offsets]} ${[...got.scores]} want ${want.offsets} ${want.scores}`);
  }
  return bad;
}

function meanRecall(index: VectorIndex, distance: Distance, lists: Lists, options: Omit<SearchOptions, 'limit'>, allow?: (i: number) => boolean): number {
  let total = 0;
  for (let q = 0; q < QUERIES; q++) {
    const query = listOf(queries, q);
    const found = index.search(query, { ...options, limit: 10 }).offsets;
    total += recall(found, reference(distance, lists, query, 10, allow).offsets);
  }
  return total / QUERIES;
}

t.test('Euclid MaxSim reports sqrt(|sum of negated squared L2|), as Qdrant does', async (t) => {
  const index = await VectorIndex.create(await engineModule(), { dim: 3, distance: 'Euclid', multivector: { comparator: 'max_sim' } });
  index.upsert(0, new Float32Array([3, 3, 3, 4, 2, 1]), 2);
  const { scores } = index.search(new Float32Array([1, 2, 3, 3, 3, 3, 4, 5, 6]), { limit: 1 }, 3);
  t.ok(Math.abs(scores[0] - Math.sqrt(19)) < 1e-5, `score ${scores[0]} (Qdrant answers 4.358899)`);
  t.same([...index.vector(0)], [3, 3, 3, 4, 2, 1], 'the list reads back in the original order');
  t.equal(index.vectorCount(0), 2);
});

for (const distance of ['Cosine', 'Dot', 'Euclid', 'Manhattan'] as const) {
  t.test(`${distance}: exact search equals the MaxSim reference; HNSW recall@10 >= 0.95`, async (t) => {
    const lists = initialLists(set);
    const index = await build(distance, lists);
    t.equal(index.size, N);
    t.same(exactMismatches(index, distance, lists), [], 'exact: same offsets, same order, same scores');
    const r = meanRecall(index, distance, lists, { ef: 64 });
    t.ok(r >= 0.95, `recall@10 at ef 64: ${r.toFixed(4)}`);
  });
}

t.test('Cosine lists are stored normalised, vector by vector', async (t) => {
  const index = await build('Cosine', initialLists(set).slice(0, 5));
  const stored = index.vector(3);
  const original = listOf(set, 3);
  t.equal(stored.length, original.length);
  for (let v = 0; v < stored.length; v += DIM) {
    let norm = 0, n0 = 0;
    for (let j = 0; j < DIM; j++) { norm += stored[v + j] ** 2; n0 += original[v + j] ** 2; }
    t.ok(Math.abs(norm - 1) < 1e-5, `vector ${v / DIM} has unit norm`);
    t.ok(Math.abs(stored[v] - original[v] / Math.sqrt(n0)) < 1e-5, 'same direction');
  }
});

t.test('filtered search returns only allowed offsets, through the graph and by exact scan', async (t) => {
  const lists = initialLists(set);
  const next = rng(9);
  for (const selectivity of [0.3, 0.05]) {
    const bits = new Bitset(N);
    for (let i = 0; i < N; i++) if (next() < selectivity) bits.add(i);
    // Threshold 1 KiB forces the graph for every filter; the default scans small sets exactly.
    for (const threshold of [1, 10000]) {
      const index = await build('Dot', lists, { fullScanThreshold: threshold });
      let leaked = 0;
      for (let q = 0; q < QUERIES; q++) {
        for (const o of index.search(listOf(queries, q), { limit: 10, ef: 64, filter: bits }).offsets) if (!bits.has(o)) leaked++;
      }
      t.equal(leaked, 0, `${selectivity * 100}% threshold ${threshold}: nothing outside the filter`);
      const r = meanRecall(index, 'Dot', lists, { ef: 64, filter: bits }, (i) => bits.has(i));
      t.ok(r >= 0.95, `${selectivity * 100}% threshold ${threshold}: recall@10 ${r.toFixed(4)}`);
    }
    const index = await build('Dot', lists);
    t.same(exactMismatches(index, 'Dot', lists, bits), [], `${selectivity * 100}%: exact filtered search equals the reference`);
  }
});

t.test('deletes and replacements by lists of other lengths, then vacuum', async (t) => {
  const lists = initialLists(set);
  const index = await build('Euclid', lists);
  const fresh = syntheticMultivectors({ points: N, dim: DIM, minK: 1, maxK: 12, topics: 24, topicSeed: 3, seed: 77 });
  const next = rng(21);
  let deleted = 0;
  for (let i = 0; i < N; i++) {
    const r = next();
    if (r < 0.2) {
      t.equal(index.delete(i), true);
      lists[i] = undefined;
      deleted++;
    } else if (r < 0.35) {
      const list = listOf(fresh, i);
      lists[i] = list;
      index.upsert(i, list, fresh.counts[i]);
    }
  }
  t.equal(index.size, N - deleted);
  t.equal(index.vectorCount(lists.findIndex((list) => list === undefined)), 0, 'a deleted offset holds no vectors');
  const check = (stage: string): void => {
    let leaked = 0;
    for (let q = 0; q < QUERIES; q++) {
      for (const exact of [false, true]) {
        for (const o of index.search(listOf(queries, q), { limit: 30, ef: 64, exact }).offsets) if (!lists[o]) leaked++;
      }
    }
    t.equal(leaked, 0, `${stage}: no deleted offset returned`);
    t.same(exactMismatches(index, 'Euclid', lists), [], `${stage}: exact search equals the reference`);
    const r = meanRecall(index, 'Euclid', lists, { ef: 64 });
    t.ok(r >= 0.95, `${stage}: recall@10 ${r.toFixed(4)}`);
    const wrong = lists.findIndex((list, i) => list !== undefined && (index.vectorCount(i) * DIM !== list.length || !index.vector(i).every((x, j) => x === list[j])));
    t.equal(wrong, -1, `${stage}: every stored list reads back`);
  };
  check('after deletes and replacements');
  index.vacuum();
  while (index.linkPending(256) > 0);
  t.equal(index.deletedCount, 0);
  check('after vacuum and relinking');
});

t.test('serialise round trip: same answers, same lists, same config', async (t) => {
  const lists = initialLists(set);
  const index = await build('Manhattan', lists);
  // A replaced list leaves an unused arena slot behind; the image holds the lists compacted.
  lists[7] = listOf(set, 8);
  index.upsert(7, lists[7]);
  index.delete(9);
  lists[9] = undefined;
  for (let i = 0; i < 20; i++) index.stash(N + i, listOf(set, i));
  const loaded = await VectorIndex.load(await engineModule(), index.serialize());
  t.equal(loaded.multivector, true);
  t.same(loaded.config.multivector, { comparator: 'max_sim' });
  t.equal(loaded.size, index.size);
  t.equal(loaded.pendingCount, 20);
  for (let q = 0; q < QUERIES; q++) {
    for (const exact of [false, true]) {
      const a = index.search(listOf(queries, q), { limit: 10, ef: 64, exact });
      const b = loaded.search(listOf(queries, q), { limit: 10, ef: 64, exact });
      if (!t.same([...b.offsets], [...a.offsets], `query ${q} exact=${exact}: same offsets`)) break;
      t.same([...b.scores], [...a.scores]);
    }
  }
  t.same([...loaded.vector(7)], [...listOf(set, 8)], 'the replaced list survives');
  t.equal(loaded.vectorCount(9), index.vectorCount(9));
  t.ok(sameBytes(loaded.serialize(), index.serialize()), 'reserialising gives the same bytes');
});

t.test('inputs are checked', async (t) => {
  const index = await build('Dot', []);
  t.throws(() => index.upsert(0, new Float32Array(DIM * 2 + 1)), RangeError, 'not a whole number of vectors');
  t.throws(() => index.upsert(0, new Float32Array(DIM * 2), 3), RangeError, 'count disagrees with the length');
  t.throws(() => index.upsert(0, new Float32Array(0)), RangeError, 'an empty list');
  t.same(index.search(new Float32Array(DIM), { limit: 5 }).offsets.length, 0, 'an empty index answers nothing');
});

t.test('int8 quantization: every vector of every list gets codes; rescored search keeps recall', async (t) => {
  for (const distance of ['Cosine', 'Euclid', 'Manhattan'] as const) {
    const lists = initialLists(set);
    const index = await build(distance, lists, { quantization: { quantile: 0.99 } });
    t.equal(index.quantized, true);
    const rescored = meanRecall(index, distance, lists, { ef: 64, quantization: { rescore: true, oversampling: 2 } });
    t.ok(rescored >= 0.95, `${distance}: rescored recall@10 ${rescored.toFixed(4)}`);
    const raw = meanRecall(index, distance, lists, { ef: 64, quantization: { rescore: false } });
    t.ok(raw >= 0.8, `${distance}: recall@10 on codes alone ${raw.toFixed(4)}`);
    // Rescored results carry exact f32 MaxSim scores.
    const query = listOf(queries, 0);
    const got = index.search(query, { limit: 5, ef: 64, quantization: { rescore: true } });
    const want = reference(distance, lists, query, lists.length);
    const byOffset = new Map(want.offsets.map((o, i) => [o, want.scores[i]]));
    t.ok([...got.offsets].every((o, i) => close(got.scores[i], byOffset.get(o)!)), `${distance}: rescored scores are exact`);
  }
});

t.test('int8 quantization survives replacements, vacuum and a serialise round trip', async (t) => {
  const lists = initialLists(set);
  const index = await build('Dot', lists, { quantization: {} });
  const fresh = syntheticMultivectors({ points: N, dim: DIM, minK: 6, maxK: 12, topics: 24, topicSeed: 3, seed: 78 });
  for (let i = 0; i < N; i += 5) {
    const list = listOf(fresh, i);
    lists[i] = list;
    index.upsert(i, list);
  }
  for (let i = 1; i < N; i += 7) {
    index.delete(i);
    lists[i] = undefined;
  }
  index.vacuum();
  while (index.linkPending(256) > 0);
  const r = meanRecall(index, 'Dot', lists, { ef: 64, quantization: { rescore: true } });
  t.ok(r >= 0.95, `after replacements and vacuum: recall@10 ${r.toFixed(4)}`);
  const loaded = await VectorIndex.load(await engineModule(), index.serialize());
  t.equal(loaded.quantized, true);
  let differ = 0;
  for (let q = 0; q < QUERIES; q++) {
    for (const rescore of [true, false]) {
      const a = index.search(listOf(queries, q), { limit: 10, ef: 64, quantization: { rescore } });
      const b = loaded.search(listOf(queries, q), { limit: 10, ef: 64, quantization: { rescore } });
      if (a.offsets.join() !== b.offsets.join() || a.scores.join() !== b.scores.join()) differ++;
    }
  }
  t.equal(differ, 0, 'the loaded index answers identically, with and without rescoring');
  t.ok(sameBytes(loaded.serialize(), index.serialize()), 'reserialising gives the same bytes');
});
