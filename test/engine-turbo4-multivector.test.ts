// turbo4 multivectors in the engine (Qdrant 1.19 stores a turbo4 multivector as one 4-bit record
// per row, its multi_turbo storage), against the JS reference of Qdrant's TurboQuant in Normal mode
// (helpers/turbo-reference): every row reads back as the reference dequantization of its record;
// MaxSim scores are the sum over query rows of the best estimator score on the records (exact
// scan, graph, pending lists, replaced and deleted lists, after vacuum); the graph linked on
// records keeps a recall floor against exact MaxSim over the dequantized lists; storing a list
// again as read back keeps its records; the image holds the records and no elements, and restores
// the same answers.

import t, { type Test } from 'tap';
import { VectorIndex, type Distance } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { listOf, syntheticMultivectors } from '../src/bench/multivector-data.js';
import { everyOffset } from './helpers/full-scan.js';
import { maxSimScore } from './helpers/maxsim.js';
import { better, recall } from './helpers/reference.js';
import { Turbo4Lists } from './helpers/turbo4-lists.js';

const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const N = 300;

function close(t: Test, got: ArrayLike<number>, want: ArrayLike<number>, tolerance: number, message: string): void {
  let worst = got.length === want.length ? 0 : Infinity;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  t.ok(worst <= tolerance, `${message} (worst error ${worst.toExponential(2)}, tolerance ${tolerance.toExponential(2)})`);
}

async function create(distance: Distance, dim: number): Promise<VectorIndex> {
  return VectorIndex.create(await engineModule(), { dim, distance, datatype: 'turbo4', multivector: { comparator: 'max_sim' } });
}

for (const distance of DISTANCES) {
  for (const dim of [30, 37]) {
    t.test(`${distance} ${dim}-d: rows as records, MaxSim on records, read-back, replace, delete, vacuum, image`, async (t) => {
      const set = syntheticMultivectors({ points: N, dim, minK: 1, maxK: 6, topics: 12, topicSeed: 3, seed: 4 });
      const queries = syntheticMultivectors({ points: 4, dim, minK: 1, maxK: 3, topics: 12, topicSeed: 3, seed: 5 });
      const ref = new Turbo4Lists(distance, dim);
      const index = await create(distance, dim);
      for (let i = 0; i < N; i++) {
        const list = listOf(set, i);
        index.upsert(i, list, list.length / dim);
        ref.store(i, list);
      }
      t.equal(index.quantized, false, 'no codes: the records are the stored rows');
      t.equal(index.config.quantization, null, 'no quantization on top');
      t.equal(index.storedVectorCount, set.counts.reduce((a, b) => a + b, 0), 'one stored row per row given');

      let readError = 0;
      for (let i = 0; i < N; i++) {
        const got = index.vector(i);
        const want = ref.dequantized(i);
        if (got.length !== want.length) readError = Infinity;
        for (let j = 0; j < want.length; j++) readError = Math.max(readError, Math.abs(got[j] - want[j]));
      }
      t.ok(readError < 1e-4, `every row reads back as the reference dequantization of its record (worst error ${readError.toExponential(2)})`);

      const check = (what: string): void => {
        for (let q = 0; q < 4; q++) {
          const query = listOf(queries, q);
          const k = query.length / dim;
          const all = index.search(query, { limit: N, filter: everyOffset(index) }, k);
          // f32 sums of k per-row scores: relative to the largest score.
          const tolerance = 1e-5 * k * Math.max(1, ...Array.from(all.scores, Math.abs));
          close(t, all.scores, Array.from(all.offsets, (o) => ref.score(query, o)), tolerance, `${what}, query ${q}: every MaxSim of the exact scan is the estimator's on the records`);
          close(t, all.scores, ref.ranked(query, N).map((x) => x.score), tolerance, `${what}, query ${q}: in the reference's order`);
          const graph = index.search(query, { limit: 10, ef: 64 }, k);
          close(t, graph.scores, Array.from(graph.offsets, (o) => ref.score(query, o)), tolerance, `${what}, query ${q}: graph search scores the records`);
          for (const [name, options] of [['exact', { exact: true }], ['rescore', { quantization: { rescore: true, oversampling: 4 } }]] as const) {
            const got = index.search(query, { limit: 10, ef: 64, ...options }, k);
            close(t, got.scores, Array.from(got.offsets, (o) => ref.score(query, o)), tolerance, `${what}, query ${q}: ${name} scores the records too`);
          }
        }
      };
      check('built');

      // Stored again as read back (the shard restages a point on payload updates): the records stay.
      const before = Array.from({ length: 20 }, (_, i) => Array.from(index.vector(i)));
      for (let i = 0; i < 20; i++) index.upsert(i, index.vector(i), index.vectorCount(i));
      t.same(Array.from({ length: 20 }, (_, i) => Array.from(index.vector(i))), before, 'storing the read-back list again keeps its records');

      // Replacements by longer and shorter lists, deletions, then a vacuum that compacts the arena.
      for (let i = 0; i < 40; i++) {
        const list = listOf(set, (i * 7 + 3) % N);
        const longer = new Float32Array([...list, ...listOf(set, (i * 11 + 5) % N)]);
        const replacement = i % 2 === 0 ? longer : list.subarray(0, dim);
        index.upsert(i, replacement, replacement.length / dim);
        ref.store(i, replacement);
      }
      for (let i = 40; i < 60; i++) {
        index.delete(i);
        ref.records[i] = undefined;
      }
      check('replaced and deleted');
      index.vacuum();
      index.linkPending(N);
      check('vacuumed and relinked');

      const copy = await VectorIndex.load(await engineModule(), index.serialize());
      t.same([copy.config.datatype, copy.config.quantization, copy.multivector], ['turbo4', null, true], 'the image restores a turbo4 multivector index');
      const query = listOf(queries, 0);
      t.same(copy.search(query, { limit: 10, ef: 64 }, query.length / dim), index.search(query, { limit: 10, ef: 64 }, query.length / dim), 'the restored index answers identically');
      t.same(Array.from(copy.vector(3)), Array.from(index.vector(3)), 'and reads back the same list');
      t.same(Array.from(copy.serialize()), Array.from(index.serialize()), 'the image round-trips byte for byte');
    });
  }
}

t.test('pending lists are scored on their records; the image holds records instead of elements', async (t) => {
  const dim = 32;
  const set = syntheticMultivectors({ points: 200, dim, minK: 1, maxK: 5, topics: 8, topicSeed: 1, seed: 2 });
  const linked = await create('Dot', dim);
  const pending = await create('Dot', dim);
  const f32 = await VectorIndex.create(await engineModule(), { dim, distance: 'Dot', multivector: { comparator: 'max_sim' } });
  for (let i = 0; i < 200; i++) {
    const list = listOf(set, i);
    linked.upsert(i, list, list.length / dim);
    pending.stash(i, list, list.length / dim);
    f32.stash(i, list, list.length / dim);
  }
  t.equal(pending.pendingCount, 200, 'stashed unlinked');
  const query = listOf(set, 7);
  const want = linked.search(query, { limit: 10, exact: true }, query.length / dim);
  const got = pending.search(query, { limit: 10 }, query.length / dim);
  t.same({ offsets: got.offsets, scores: got.scores }, { offsets: want.offsets, scores: want.scores }, 'pending lists: the exact answer on records');
  // The same stashes draw the same levels, so the images differ by the rows only: float32 rows
  // against records (16 code bytes and a scaling).
  const rows = set.counts.reduce((a, b) => a + b, 0);
  t.equal(pending.vectorBytes, 20, 'a record takes 20 bytes');
  t.equal(f32.imageBytes - pending.imageBytes, rows * dim * 4 - rows * 20, 'the image keeps the records, not the rows');
});

// Recall floors (a regression alarm) for graph search on records, against exact MaxSim over the
// dequantized lists (what the index stores): the graph is linked on records, list against list.
const FLOORS: Record<Distance, number> = { Cosine: 0.85, Dot: 0.85, Euclid: 0.85, Manhattan: 0.8 };

t.test('recall: a graph of turbo4 lists against exact MaxSim over the dequantized lists', async (t) => {
  const dim = 48;
  const n = 1500;
  const set = syntheticMultivectors({ points: n, dim, minK: 1, maxK: 6, topics: 24, topicSeed: 3, seed: 8 });
  const queries = syntheticMultivectors({ points: 20, dim, minK: 1, maxK: 3, topics: 24, topicSeed: 3, seed: 9 });
  for (const distance of DISTANCES) {
    const index = await create(distance, dim);
    for (let i = 0; i < n; i++) {
      const list = listOf(set, i);
      index.upsert(i, list, list.length / dim);
    }
    const stored = Array.from({ length: n }, (_, i) => index.vector(i));
    let found = 0;
    for (let q = 0; q < 20; q++) {
      const query = listOf(queries, q);
      const scored = stored.map((list, i) => ({ i, s: maxSimScore(distance, dim, query, list) }));
      scored.sort((x, y) => (better(distance, x.s, y.s) ? -1 : better(distance, y.s, x.s) ? 1 : x.i - y.i));
      found += recall(index.search(query, { limit: 10, ef: 128 }, query.length / dim).offsets, scored.slice(0, 10).map((x) => x.i));
    }
    t.ok(found / 20 >= FLOORS[distance], `${distance}: recall@10 ${(found / 20).toFixed(3)} (>= ${FLOORS[distance]})`);
  }
});
