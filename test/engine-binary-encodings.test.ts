// Qdrant's two_bits and one_and_half_bits binary encodings and its scalar4bits / scalar8bits
// query encodings in the engine, against the plain reference in helpers/binary-reference.ts:
// the SIMD kernels against scalar sums, stored codes byte for byte (statistics fitted over every
// stored vector; Euclid/Manhattan indexes past 1024 vectors store their dimensions permuted,
// the codes keep Qdrant's original order), unrescored scores equal to Qdrant's formula, rescored
// answers equal to the exact top-k, recall floors on centred data, multivectors and serialisation.

import t, { type Test } from 'tap';
import { instantiate, VectorIndex, type BinaryEncoding, type BinaryQueryEncoding, type Distance, type Quantization } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { syntheticMultivectors, listOf } from '../src/bench/multivector-data.js';
import { clustered, rng, row, uniform } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';
import { maxSimScore } from './helpers/maxsim.js';
import { better, bruteForce, recall, score } from './helpers/reference.js';
import {
  encodeVector, postprocess, queryScorer, scalarQueryCodes, scalarQueryPlanes, vectorStats, xorCount, scalarXor, QUERY_BITS, type Stats,
} from './helpers/binary-reference.js';
import { everyOffset } from './helpers/full-scan.js';

const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const ENCODINGS: BinaryEncoding[] = ['one_bit', 'two_bits', 'one_and_half_bits'];
const QUERY_ENCODINGS: (BinaryQueryEncoding | undefined)[] = [undefined, 'scalar4bits', 'scalar8bits'];

function binary(encoding: BinaryEncoding, queryEncoding?: BinaryQueryEncoding): Quantization {
  return { method: 'binary', ...(encoding !== 'one_bit' ? { encoding } : {}), ...(queryEncoding ? { queryEncoding } : {}) };
}

const label = (encoding: BinaryEncoding, queryEncoding?: BinaryQueryEncoding): string => `${encoding}/${queryEncoding ?? 'binary'}`;

/** Statistics the engine fits: over every stored vector (the test sizes are powers of two, so the last refit saw them all). */
function statsOf(encoding: BinaryEncoding, stored: ArrayLike<number>[], dim: number): Stats | null {
  return encoding === 'one_bit' ? null : vectorStats(stored, dim);
}

/**
 * The query as the engine scores it: Cosine normalises it in f32 (with the engine's own summation
 * order), so it is read back from an unquantized index that stored it.
 */
async function asScored(distance: Distance, dim: number): Promise<(query: Float32Array) => Float32Array> {
  if (distance !== 'Cosine') return (query) => query;
  const scratch = await VectorIndex.create(await engineModule(), { dim, distance });
  return (query) => {
    scratch.upsert(0, query);
    return scratch.vector(0);
  };
}

function closeScores(t: Test, got: ArrayLike<number>, want: ArrayLike<number>, message: string): void {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i])));
  t.ok(got.length === want.length && worst < 1e-3, `${message} (worst relative error ${worst})`);
}

t.test('kernels: popcount(a XOR b) and the plane-weighted scalar popcount against scalar sums', async (t) => {
  const wasm = await instantiate(await engineModule());
  const next = rng(5);
  let ok = 0;
  let runs = 0;
  for (const words of [1, 2, 3, 7]) {
    for (const bits of [1, 4, 8]) {
      const bytes = words * 16;
      const a = Uint8Array.from({ length: bytes }, () => Math.floor(next() * 256));
      const b = Uint8Array.from({ length: bytes * bits }, () => Math.floor(next() * 256));
      const pa = wasm.alloc(a.length);
      const pb = wasm.alloc(b.length);
      new Uint8Array(wasm.memory.buffer).set(a, pa);
      new Uint8Array(wasm.memory.buffer).set(b, pb);
      let want = 0;
      for (let w = 0; w < words; w++) {
        for (let p = 0; p < bits; p++) {
          for (let i = 0; i < 16; i++) {
            let x = a[w * 16 + i] ^ b[(w * bits + p) * 16 + i];
            let n = 0;
            for (; x; x &= x - 1) n++;
            want += n << p;
          }
        }
      }
      if (wasm.kernelBits(bits, pa, pb, bytes) === want) ok++;
      runs++;
      wasm.free(pa);
      wasm.free(pb);
    }
  }
  t.equal(ok, runs, 'every kernel sum equals the scalar one');
});

const N = 2048; // past 1024 vectors Euclid and Manhattan store their dimensions permuted
const DIM = 130; // two_bits: 260 bits, three 128-bit words; one_and_half_bits: 195 bits, an odd last dimension

for (const encoding of ['two_bits', 'one_and_half_bits'] as const) {
  for (const distance of DISTANCES) {
    t.test(`${encoding} ${distance}: codes, and scores for each query encoding`, async (t) => {
      const data = uniform(N * DIM, 17);
      const scoredForm = await asScored(distance, DIM);
      for (const queryEncoding of QUERY_ENCODINGS) {
        const index = await buildIndex({ dim: DIM, distance, quantization: binary(encoding, queryEncoding) }, data);
        const stored = Array.from({ length: N }, (_, i) => index.vector(i));
        const stats = statsOf(encoding, stored, DIM);
        const codes = stored.map((v) => encodeVector(encoding, v, DIM, stats));
        let same = 0;
        for (let i = 0; i < N; i++) if (Buffer.compare(index.codes(i), codes[i]) === 0) same++;
        t.equal(same, N, `${label(encoding, queryEncoding)}: every code is Qdrant's encoding of the stored vector`);

        const k = 20;
        for (let q = 0; q < 6; q++) {
          const query = uniform(DIM, 300 + q);
          const internal = codes.map(queryScorer(encoding, queryEncoding, DIM, stats, scoredForm(query)));
          const at = `${label(encoding, queryEncoding)} q${q}`;
          const exactCodes = index.search(query, { limit: k, filter: everyOffset(index), quantization: { rescore: false } });
          t.same(Array.from(exactCodes.scores), Array.from(exactCodes.offsets, (o) => postprocess(distance, internal[o])), `${at}: exact scan scores are Qdrant's`);
          t.same(Array.from(exactCodes.offsets, (o) => internal[o]), [...internal].sort((a, b) => b - a).slice(0, k), `${at}: the top-k by that score`);
          const graph = index.search(query, { limit: k, ef: 64, quantization: { rescore: false } });
          t.same(Array.from(graph.scores), Array.from(graph.offsets, (o) => postprocess(distance, internal[o])), `${at}: graph search scores are Qdrant's`);
          const rescored = index.search(query, { limit: k, filter: everyOffset(index), quantization: { oversampling: N / k } });
          const exact = stored.map((v) => score(distance, query, v)).sort((x, y) => (better(distance, x, y) ? -1 : better(distance, y, x) ? 1 : 0));
          closeScores(t, rescored.scores, exact.slice(0, k), `${at}: rescored at full oversampling is the exact top-k`);
        }
      }
    });
  }
}

t.test('float16 and uint8: codes of the stored (rounded or truncated) values', async (t) => {
  const n = 512;
  const dim = 40;
  for (const datatype of ['float16', 'uint8'] as const) {
    const data = uniform(n * dim, 29, datatype === 'uint8' ? 0 : -1, datatype === 'uint8' ? 40 : 1);
    for (const encoding of ['two_bits', 'one_and_half_bits'] as const) {
      for (const distance of ['Dot', 'Euclid'] as const) {
        const index = await buildIndex({ dim, distance, datatype, quantization: binary(encoding, 'scalar8bits') }, data);
        const stored = Array.from({ length: n }, (_, i) => index.vector(i));
        const stats = vectorStats(stored, dim);
        let same = 0;
        for (let i = 0; i < n; i++) if (Buffer.compare(index.codes(i), encodeVector(encoding, stored[i], dim, stats)) === 0) same++;
        t.equal(same, n, `${datatype} ${encoding} ${distance}: every code is Qdrant's encoding of the stored values`);
        const query = Float32Array.from(stored[3]); // a stored vector: the same values whichever conversion
        const internal = stored.map((v) => queryScorer(encoding, 'scalar8bits', dim, stats, query)(encodeVector(encoding, v, dim, stats)));
        const found = index.search(query, { limit: 10, filter: everyOffset(index), quantization: { rescore: false } });
        t.same(Array.from(found.scores), Array.from(found.offsets, (o) => postprocess(distance, internal[o])), `${datatype} ${encoding} ${distance}: Qdrant's scores`);
      }
    }
  }
});

t.test('one_bit with scalar query encodings: Qdrant\'s asymmetric scores', async (t) => {
  const n = 512;
  const dim = 100;
  const data = uniform(n * dim, 23);
  for (const queryEncoding of ['scalar4bits', 'scalar8bits'] as const) {
    for (const distance of DISTANCES) {
      const index = await buildIndex({ dim, distance, quantization: binary('one_bit', queryEncoding) }, data);
      const codes = Array.from({ length: n }, (_, i) => encodeVector('one_bit', index.vector(i), dim, null));
      const query = uniform(dim, 31);
      const internal = codes.map(queryScorer('one_bit', queryEncoding, dim, null, (await asScored(distance, dim))(query)));
      const found = index.search(query, { limit: 10, filter: everyOffset(index), quantization: { rescore: false } });
      t.same(Array.from(found.scores), Array.from(found.offsets, (o) => postprocess(distance, internal[o])), `${queryEncoding} ${distance}: Qdrant's scores`);
    }
  }
});

t.test('the reference planes are the codes the scalar xor reads', async (t) => {
  // Ties the two reference forms together: the per-position sum and the engine's plane layout.
  const wasm = await instantiate(await engineModule());
  const dim = 70;
  const query = uniform(dim, 3);
  const stored = encodeVector('one_and_half_bits', uniform(dim, 4), dim, vectorStats([uniform(dim, 5), uniform(dim, 6)], dim));
  for (const queryEncoding of ['scalar4bits', 'scalar8bits'] as const) {
    const bits = QUERY_BITS[queryEncoding];
    const codes = scalarQueryCodes('one_and_half_bits', query, dim, bits);
    const planes = scalarQueryPlanes(codes, stored.length, bits);
    const pa = wasm.alloc(stored.length);
    const pb = wasm.alloc(planes.length);
    new Uint8Array(wasm.memory.buffer).set(stored, pa);
    new Uint8Array(wasm.memory.buffer).set(planes, pb);
    t.equal(Math.fround(wasm.kernelBits(bits, pa, pb, stored.length) / ((1 << bits) - 1)), scalarXor(stored, codes, bits), `${queryEncoding}: same xor`);
  }
  t.equal(xorCount(stored, stored), 0);
});

t.test('recall on centred clustered data: rescored recall floors per encoding and distance', async (t) => {
  const n = 4096;
  const dim = 128;
  const all = clustered(n + 40, dim, 30, 21, 16, 0.1);
  // Centred, as binary quantization wants its embeddings (Qdrant's guidance).
  const mean = new Float64Array(dim);
  for (let i = 0; i < n; i++) for (let j = 0; j < dim; j++) mean[j] += all[i * dim + j] / n;
  for (let i = 0; i < all.length; i++) all[i] -= mean[i % dim];
  const data = all.subarray(0, n * dim);
  const configs: [BinaryEncoding, BinaryQueryEncoding | undefined][] = [
    ['one_bit', undefined], ['two_bits', undefined], ['one_and_half_bits', undefined], ['one_bit', 'scalar8bits'], ['two_bits', 'scalar4bits'],
  ];
  for (const distance of DISTANCES) {
    const truths = Array.from({ length: 40 }, (_, q) => bruteForce(distance, data, dim, row(all, dim, n + q), 10));
    for (const [encoding, queryEncoding] of configs) {
      const index = await buildIndex({ dim, distance, quantization: binary(encoding, queryEncoding) }, data);
      let rescored = 0;
      let raw = 0;
      for (let q = 0; q < 40; q++) {
        const query = row(all, dim, n + q);
        rescored += recall(index.search(query, { limit: 10, ef: 128, quantization: { oversampling: 4 } }).offsets, truths[q]);
        raw += recall(index.search(query, { limit: 10, ef: 128, quantization: { rescore: false } }).offsets, truths[q]);
      }
      // Signs and z-scores ignore magnitudes, which Dot on unnormalised vectors depends on: its floor is lower.
      const floor = distance === 'Dot' ? 0.6 : 0.85;
      t.ok(rescored / 40 >= floor, `${distance} ${label(encoding, queryEncoding)}: rescored recall@10 at oversampling 4 is ${(rescored / 40).toFixed(3)} (>= ${floor}; raw codes ${(raw / 40).toFixed(3)})`);
    }
  }
});

t.test('multivectors: statistics over every row, MaxSim on per-row codes, rescored MaxSim', async (t) => {
  const dim = 30;
  const points = 256;
  const set = syntheticMultivectors({ points, dim, minK: 1, maxK: 5, topics: 12, topicSeed: 3, seed: 4 });
  const queries = syntheticMultivectors({ points: 4, dim, minK: 1, maxK: 3, topics: 12, topicSeed: 3, seed: 5 });
  const lists = Array.from({ length: points }, (_, i) => listOf(set, i));
  for (const distance of DISTANCES) {
    const scoredForm = await asScored(distance, dim);
    for (const [encoding, queryEncoding] of [['two_bits', undefined], ['one_and_half_bits', 'scalar8bits'], ['two_bits', 'scalar4bits']] as const) {
      const index = await VectorIndex.create(await engineModule(), { dim, distance, multivector: { comparator: 'max_sim' }, quantization: binary(encoding, queryEncoding) });
      lists.forEach((list, i) => index.upsert(i, list, list.length / dim));
      const rows = lists.flatMap((_, i) => {
        const v = index.vector(i);
        return Array.from({ length: v.length / dim }, (_, r) => v.subarray(r * dim, (r + 1) * dim));
      });
      const stats = vectorStats(rows, dim);
      const storedLists = lists.map((_, i) => {
        const v = index.vector(i);
        return Array.from({ length: v.length / dim }, (_, r) => encodeVector(encoding, v.subarray(r * dim, (r + 1) * dim), dim, stats));
      });
      for (let q = 0; q < 4; q++) {
        const query = listOf(queries, q);
        const scorers = Array.from({ length: query.length / dim }, (_, a) => queryScorer(encoding, queryEncoding, dim, stats, scoredForm(query.subarray(a * dim, (a + 1) * dim))));
        const internal = storedLists.map((codes) => scorers.reduce((sum, s) => Math.fround(sum + Math.max(...codes.map(s))), 0));
        const at = `${distance} ${label(encoding, queryEncoding)} q${q}`;
        const raw = index.search(query, { limit: 10, filter: everyOffset(index), quantization: { rescore: false } }, query.length / dim);
        closeScores(t, raw.scores, Array.from(raw.offsets, (o) => postprocess(distance, internal[o])), `${at}: unrescored MaxSim on codes`);
        const full = index.search(query, { limit: 10, filter: everyOffset(index), quantization: { oversampling: points / 10 } }, query.length / dim);
        const exact = lists.map((list) => maxSimScore(distance, dim, query, list)).sort((x, y) => (better(distance, x, y) ? -1 : better(distance, y, x) ? 1 : 0));
        closeScores(t, full.scores, exact.slice(0, 10), `${at}: rescored MaxSim at full oversampling is exact`);
      }
    }
  }
});

t.test('serialised indexes keep the encoding, query encoding, statistics and codes', async (t) => {
  const data = uniform(N * 64, 9);
  for (const [encoding, queryEncoding, distance] of [['two_bits', 'scalar4bits', 'Euclid'], ['one_and_half_bits', undefined, 'Cosine'], ['one_bit', 'scalar8bits', 'Manhattan']] as const) {
    const quantization = binary(encoding, queryEncoding);
    const index = await buildIndex({ dim: 64, distance, quantization }, data);
    const copy = await VectorIndex.load(await engineModule(), index.serialize());
    t.same(copy.config.quantization, quantization, `${label(encoding, queryEncoding)}: the quantization is read back`);
    let same = true;
    for (let i = 0; i < N; i++) same &&= Buffer.compare(index.codes(i), copy.codes(i)) === 0;
    t.ok(same, 'identical codes');
    for (let q = 0; q < 10; q++) {
      const query = uniform(64, 500 + q);
      for (const params of [{ rescore: false }, { oversampling: 3 }]) {
        const a = index.search(query, { limit: 10, quantization: params });
        const b = copy.search(query, { limit: 10, quantization: params });
        same &&= a.offsets.join() === b.offsets.join() && a.scores.join() === b.scores.join();
      }
    }
    t.ok(same, 'identical answers, unrescored and rescored');
    // Statistics persisted: a vector stored after the load gets the code it gets in the original.
    const extra = uniform(64, 77);
    index.upsert(N, extra);
    copy.upsert(N, extra);
    t.same(copy.codes(N), index.codes(N), 'a new vector is encoded with the same statistics');
  }
});

t.test('encodings in bytes per vector: 16 x ceil(bits / 128)', async (t) => {
  for (const encoding of ENCODINGS) {
    const index = await buildIndex({ dim: 200, distance: 'Dot', quantization: binary(encoding) }, uniform(4 * 200, 1));
    const bits = encoding === 'one_bit' ? 200 : encoding === 'two_bits' ? 400 : 300;
    t.equal(index.codes(0).length, 16 * Math.ceil(bits / 128), `${encoding}: ${bits} bits`);
  }
});
