// Binary quantization (Qdrant's one_bit encoding) in the engine: the stored codes against a
// packing done here, unrescored scores against Qdrant's dim - 2 * popcount(q XOR v) with its
// per-distance postprocessing, rescored answers against the exact top-k, recall on clustered
// data, multivectors (MaxSim on codes) and serialisation.

import t, { type Test } from 'tap';
import { VectorIndex, type Datatype, type Distance, type SearchResult } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { syntheticMultivectors, listOf } from '../src/bench/multivector-data.js';
import { clustered, row, uniform } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';
import { everyOffset } from './helpers/full-scan.js';
import { maxSimScore } from './helpers/maxsim.js';
import { better, bruteForce, recall, score } from './helpers/reference.js';

const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const DATATYPES: Datatype[] = ['float32', 'float16', 'uint8'];
const BINARY = { method: 'binary' } as const;

/** Qdrant's one_bit packing: bit i set iff value i > 0, LSB first, zero-padded to 16-byte words. */
function pack(values: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(Math.ceil(values.length / 128) * 16);
  for (let i = 0; i < values.length; i++) if (values[i] > 0) out[i >> 3] |= 1 << (i & 7);
  return out;
}

function popcountXor(a: Uint8Array, b: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < a.length; i++) for (let x = a[i] ^ b[i]; x; x &= x - 1) n++;
  return n;
}

/** The query as the engine scores it: converted to the datatype (uint8 truncates and saturates). */
function converted(datatype: Datatype, query: Float32Array): Float32Array {
  if (datatype === 'uint8') return query.map((x) => (x >= 255 ? 255 : x > 0 ? Math.trunc(x) : 0));
  return query;
}

/** Qdrant's internal binary score, d - 2 * xor. */
function binaryInternal(dim: number, query: Uint8Array, stored: Uint8Array): number {
  return dim - 2 * popcountXor(query, stored);
}

/** Qdrant's postprocessing of an internal score: as is for Cosine/Dot, sqrt(|s|) for Euclid, |s| for Manhattan (scores are f32). */
function postprocess(distance: Distance, internal: number): number {
  if (distance === 'Euclid') return Math.fround(Math.sqrt(Math.abs(internal)));
  return distance === 'Manhattan' ? Math.abs(internal) : internal;
}

/** Internal scores (bigger is closer), best first. */
function topInternal(scores: number[], k: number): number[] {
  return [...scores].sort((a, b) => b - a).slice(0, k);
}

function closeScores(t: Test, got: ArrayLike<number>, want: ArrayLike<number>, message: string): void {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i])));
  t.ok(got.length === want.length && worst < 1e-3, `${message} (worst relative error ${worst})`);
}

const N = 600;
const DIM = 130; // two 128-bit words, the second mostly padding

for (const datatype of DATATYPES) {
  for (const distance of DISTANCES) {
    t.test(`${datatype} ${distance}: codes, unrescored and rescored scores`, async (t) => {
      const lo = datatype === 'uint8' ? -3 : -1;
      const hi = datatype === 'uint8' ? 6 : 1;
      const data = uniform(N * DIM, 7, lo, hi);
      const index = await buildIndex({ dim: DIM, distance, datatype, quantization: BINARY }, data);
      const stored = Array.from({ length: N }, (_, i) => index.vector(i));
      const codes = stored.map(pack);
      let same = 0;
      for (let i = 0; i < N; i++) if (Buffer.compare(index.codes(i), codes[i]) === 0) same++;
      t.equal(same, N, 'every code is the reference packing of the stored vector');

      const k = 20;
      for (let q = 0; q < 10; q++) {
        const query = converted(datatype, uniform(DIM, 100 + q, lo, hi));
        const qBits = pack(query);
        const internal = codes.map((c) => binaryInternal(DIM, qBits, c));
        const expectScore = (found: SearchResult, what: string) => {
          const want = Array.from(found.offsets, (o) => postprocess(distance, internal[o]));
          t.same(Array.from(found.scores), want, `${what}: scores are Qdrant's binary scores`);
        };
        const exactCodes = index.search(query, { limit: k, filter: everyOffset(index), quantization: { rescore: false } });
        expectScore(exactCodes, 'exact scan on codes');
        t.same(Array.from(exactCodes.offsets, (o) => internal[o]), topInternal(internal, k), 'exact scan on codes: the top-k by binary score');
        expectScore(index.search(query, { limit: k, ef: 64, quantization: { rescore: false } }), 'graph search on codes');

        // Every point a candidate: the rescored answer is the exact top-k of the stored vectors.
        const rescored = index.search(query, { limit: k, filter: everyOffset(index), quantization: { oversampling: N / k } });
        const exact = stored.map((v) => score(distance, query, v));
        const order = exact.map((s, i) => ({ s, i })).sort((x, y) => (better(distance, x.s, y.s) ? -1 : better(distance, y.s, x.s) ? 1 : x.i - y.i));
        closeScores(t, rescored.scores, order.slice(0, k).map((x) => x.s), 'rescored (default) at full oversampling: the exact top-k scores');
        const ignored = index.search(query, { limit: k, exact: true, quantization: { ignore: true } });
        closeScores(t, ignored.scores, order.slice(0, k).map((x) => x.s), 'ignore: the exact top-k scores');
      }
    });
  }
}

t.test('recall on clustered data: rescored binary against brute force, and the stored order kept (Euclid permutes)', async (t) => {
  const n = 6000;
  const dim = 128;
  const all = clustered(n + 50, dim, 30, 21, 16, 0.1);
  const data = all.subarray(0, n * dim);
  for (const distance of DISTANCES) {
    const index = await buildIndex({ dim, distance, quantization: BINARY }, data);
    let rescored = 0;
    let raw = 0;
    let formula = 0;
    for (let q = 0; q < 50; q++) {
      const query = row(all, dim, n + q);
      const truth = bruteForce(distance, data, dim, query, 10);
      rescored += recall(index.search(query, { limit: 10, ef: 128, quantization: { oversampling: 8 } }).offsets, truth);
      const unrescored = index.search(query, { limit: 10, ef: 128, quantization: { rescore: false } });
      raw += recall(unrescored.offsets, truth);
      const qBits = pack(query);
      unrescored.offsets.forEach((o, i) => {
        if (unrescored.scores[i] === postprocess(distance, binaryInternal(dim, qBits, pack(row(data, dim, o))))) formula++;
      });
    }
    t.equal(formula, 500, `${distance}: unrescored scores follow the formula after ${n} inserts`);
    // Signs ignore magnitudes, which Dot on unnormalised vectors depends on: its candidates are weaker.
    const floor = distance === 'Dot' ? 0.75 : 0.9;
    t.ok(rescored / 50 >= floor, `${distance}: rescored recall@10 at oversampling 8 is ${(rescored / 50).toFixed(3)} (>= ${floor})`);
    t.ok(rescored > raw, `${distance}: rescoring beats raw codes (${(raw / 50).toFixed(3)})`);
  }
});

t.test('multivectors: MaxSim on per-row codes, rescored MaxSim on the stored rows', async (t) => {
  const dim = 30;
  const set = syntheticMultivectors({ points: 300, dim, minK: 1, maxK: 6, topics: 12, topicSeed: 3, seed: 4 });
  const queries = syntheticMultivectors({ points: 8, dim, minK: 1, maxK: 3, topics: 12, topicSeed: 3, seed: 5 });
  for (const distance of DISTANCES) {
    const index = await VectorIndex.create(await engineModule(), { dim, distance, multivector: { comparator: 'max_sim' }, quantization: BINARY });
    const lists = Array.from({ length: 300 }, (_, i) => listOf(set, i));
    lists.forEach((list, i) => index.upsert(i, list, list.length / dim));
    for (let q = 0; q < 8; q++) {
      const query = listOf(queries, q);
      const internal = lists.map((list) => {
        let sum = 0;
        for (let a = 0; a < query.length; a += dim) {
          let best = -Infinity;
          for (let b = 0; b < list.length; b += dim) best = Math.max(best, binaryInternal(dim, pack(query.subarray(a, a + dim)), pack(list.subarray(b, b + dim))));
          sum += best;
        }
        return sum;
      });
      const raw = index.search(query, { limit: 10, filter: everyOffset(index), quantization: { rescore: false } }, query.length / dim);
      t.same(Array.from(raw.scores), Array.from(raw.offsets, (o) => postprocess(distance, internal[o])), `${distance}: unrescored MaxSim scores on codes`);
      t.same(Array.from(raw.offsets, (o) => internal[o]), topInternal(internal, 10), `${distance}: the top 10 by binary MaxSim`);
      const full = index.search(query, { limit: 10, filter: everyOffset(index), quantization: { oversampling: 30 } }, query.length / dim);
      const exact = lists.map((list) => maxSimScore(distance, dim, query, list)).sort((x, y) => (better(distance, x, y) ? -1 : better(distance, y, x) ? 1 : 0));
      closeScores(t, full.scores, exact.slice(0, 10), `${distance}: rescored MaxSim at full oversampling is exact`);
    }
  }
});

t.test('a serialised binary index loads as binary, with the same codes and answers', async (t) => {
  const data = uniform(2000 * 64, 9);
  const index = await buildIndex({ dim: 64, distance: 'Euclid', quantization: BINARY }, data);
  const copy = await VectorIndex.load(await engineModule(), index.serialize());
  t.same(copy.config.quantization, BINARY);
  let same = true;
  for (let i = 0; i < 2000; i++) same &&= Buffer.compare(index.codes(i), copy.codes(i)) === 0;
  t.ok(same, 'identical codes');
  for (let q = 0; q < 20; q++) {
    const query = uniform(64, 500 + q);
    for (const quantization of [{ rescore: false }, { oversampling: 3 }]) {
      const a = index.search(query, { limit: 10, quantization });
      const b = copy.search(query, { limit: 10, quantization });
      same &&= a.offsets.join() === b.offsets.join() && a.scores.join() === b.scores.join();
    }
  }
  t.ok(same, 'identical answers for 20 queries, unrescored and rescored');
});
