// float16 and uint8 storage (Qdrant's datatype): the values stored and returned are the reference
// conversions (test/helpers/datatype.ts), and every search scores over them as Qdrant does:
// exact search equals a brute force over the converted vectors, the graph finds the same
// neighbours, int8 quantization rescoring reads the stored datatype, lists score MaxSim over
// converted rows, and images keep the datatype. Memory per vector shrinks to a half / a quarter.

import t from 'tap';
import { VectorIndex, type Datatype, type Distance, type SearchOptions } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { clustered, rng, row } from './helpers/data.js';
import { better, recall } from './helpers/reference.js';
import { storedForm, storedScore, toByte, toHalf } from './helpers/datatype.js';
import { listOf, syntheticMultivectors } from '../src/bench/multivector-data.js';

const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const TYPES: Datatype[] = ['float16', 'uint8'];
const N = 3000;
const DIM = 40;
const QUERIES = 40;

/** Float data for float16; for uint8 the same shapes scaled around 128, some values outside 0..255 and fractional. */
function dataFor(datatype: Datatype, n: number, seed: number): Float32Array {
  const base = clustered(n, DIM, 30, seed, 8, 0.1);
  if (datatype === 'float16') return base;
  return base.map((x) => 128 + 60 * x);
}

const sets = new Map(TYPES.map((d) => [d, dataFor(d, N + QUERIES, 21)]));
const base = (d: Datatype): Float32Array => sets.get(d)!.subarray(0, N * DIM);
const query = (d: Datatype, q: number): Float32Array => row(sets.get(d)!, DIM, N + q);

interface Scored { offsets: number[]; scores: number[] }

function reference(datatype: Datatype, distance: Distance, stored: Float32Array[], q: Float32Array, k: number): Scored {
  const sq = storedForm(datatype, distance, q);
  const all = stored.map((s, i) => ({ i, s: storedScore(datatype, distance, sq, s) }));
  all.sort((x, y) => (better(distance, x.s, y.s) ? -1 : better(distance, y.s, x.s) ? 1 : x.i - y.i));
  const top = all.slice(0, k);
  return { offsets: top.map((x) => x.i), scores: top.map((x) => x.s) };
}

/** The spacing of halves at |x| (normal range). */
function halfUlp(x: number): number {
  return 2 ** (Math.floor(Math.log2(Math.max(Math.abs(x), 2 ** -14))) - 10);
}

function close(a: number, b: number, tolerance: number): boolean {
  return Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(b));
}

async function build(datatype: Datatype, distance: Distance, data: Float32Array, quantization: { quantile: number } | null = null): Promise<VectorIndex> {
  const index = await VectorIndex.create(await engineModule(), { dim: DIM, distance, datatype, quantization, m: 12, efConstruct: 64 });
  for (let i = 0; i < data.length / DIM; i++) index.upsert(i, row(data, DIM, i));
  return index;
}

t.test('conversions: float16 rounds to nearest even, uint8 is Rust `as u8`', async (t) => {
  // uint8 cases include Qdrant's own test_conversion_to_bytes: [-10, 1, 2, 3, 255, 300] -> [0, 1, 2, 3, 255, 255].
  const bytesIn = [-10, 1, 2, 3, 255, 300, -0.5, 254.99, 2.9, 1e30, 0.999, 127.5];
  const halvesIn = [1e-7, 3e-8, 2 ** -24, 2 ** -25, 6.1e-5, 0.1, 1 / 3, 1 + 2 ** -11, 1 + 3 * 2 ** -11, -2.5e-8, 65504, 65519, 2049, 2051, -1234.567, 0];
  for (const [datatype, values] of [['uint8', bytesIn], ['float16', halvesIn]] as const) {
    const index = await VectorIndex.create(await engineModule(), { dim: values.length, distance: 'Dot', datatype });
    index.upsert(0, values);
    const want = values.map((x) => (datatype === 'uint8' ? toByte(x) : toHalf(x)));
    t.same([...index.vector(0)], want, `${datatype} stores ${want}`);
  }
  t.same([0, 1, 2, 3, 255, 255].map(toByte), [0, 1, 2, 3, 255, 255]);
  t.equal(toHalf(1 + 2 ** -11), 1, 'a tie rounds to the even half');
  t.equal(toHalf(1 + 3 * 2 ** -11), 1 + 2 ** -9, 'a tie rounds to the even half (up)');
});

for (const datatype of TYPES) {
  // Integer sums of bytes are exact; float16 products are added in f32 (the reference in f64).
  const tolerance = datatype === 'uint8' ? 1e-6 : 2e-5;
  for (const distance of DISTANCES) {
    t.test(`${datatype} ${distance}: stored values, exact search, graph, int8 rescoring, image`, async (t) => {
      const data = base(datatype);
      const stored = Array.from({ length: N }, (_, i) => storedForm(datatype, distance, row(data, DIM, i)));
      const index = await build(datatype, distance, data);
      t.equal(index.config.datatype, datatype);

      // Cosine over float16 normalises in f32 first, whose last bit depends on the order of the
      // norm's sum (Qdrant's SIMD order is not the reference's either): a value may then round to
      // the neighbouring half. It is still a half, within one half-ulp of the reference.
      const normalising = datatype === 'float16' && distance === 'Cosine';
      let wrongVectors = 0;
      for (let i = 0; i < N; i++) {
        const v = index.vector(i);
        const ok = (x: number, want: number): boolean => x === want || (normalising && toHalf(x) === x && Math.abs(x - want) <= halfUlp(want));
        if (!v.every((x, j) => ok(x, stored[i][j]))) wrongVectors++;
      }
      t.equal(wrongVectors, 0, 'every stored vector is the reference conversion');

      const check = (idx: VectorIndex, options: Omit<SearchOptions, 'limit'>, label: string, minRecall: number): void => {
        let total = 0;
        const bad: string[] = [];
        for (let q = 0; q < QUERIES; q++) {
          const got = idx.search(query(datatype, q), { ...options, limit: 10 });
          const want = reference(datatype, distance, stored, query(datatype, q), 10);
          total += recall(got.offsets, want.offsets);
          const sq = storedForm(datatype, distance, query(datatype, q));
          // Whatever came back is scored exactly over the converted vectors.
          got.offsets.forEach((o, i) => {
            const s = storedScore(datatype, distance, sq, stored[o]);
            if (!close(got.scores[i], s, tolerance)) bad.push(`q${q} offset ${o}: ${got.scores[i]} vs ${s}`);
          });
          if (options.exact && !options.quantization) {
            want.scores.forEach((s, i) => { if (!close(got.scores[i], s, tolerance)) bad.push(`q${q} rank ${i}: ${got.scores[i]} vs ${s}`); });
          }
        }
        t.same(bad.slice(0, 5), [], `${label}: scores equal the reference`);
        t.ok(total / QUERIES >= minRecall, `${label}: recall@10 ${(total / QUERIES).toFixed(3)} >= ${minRecall}`);
      };
      check(index, { exact: true }, 'exact', 1);
      check(index, { ef: 64 }, 'graph', 0.9);

      const image = index.serialize();
      const loaded = await VectorIndex.load(await engineModule(), image);
      t.equal(loaded.config.datatype, datatype, 'the image keeps the datatype');
      t.same([...loaded.vector(7)], [...stored[7]]);
      const a = index.search(query(datatype, 0), { limit: 10, ef: 64 });
      const b = loaded.search(query(datatype, 0), { limit: 10, ef: 64 });
      t.same([...b.offsets], [...a.offsets]);
      t.same([...b.scores], [...a.scores]);

      const quantized = await build(datatype, distance, data, { quantile: 0.99 });
      check(quantized, { ef: 64, quantization: { rescore: true, oversampling: 3 } }, 'int8 + rescoring', 0.85);
      check(quantized, { exact: true, quantization: { rescore: true, oversampling: 3 } }, 'exact int8 + rescoring', 0.9);
    });
  }
}

/** Qdrant's MaxSim over stored forms: per query row the best similarity (negated squared L2 / L1), summed; Euclid sqrt(|sum|), Manhattan |sum|. */
function maxSimReference(datatype: Datatype, distance: Distance, dim: number, query: Float32Array, doc: Float32Array): number {
  let sum = 0;
  for (let q = 0; q < query.length; q += dim) {
    let best = -Infinity;
    for (let p = 0; p < doc.length; p += dim) {
      const s = storedScore(datatype, distance, query.subarray(q, q + dim), doc.subarray(p, p + dim));
      best = Math.max(best, distance === 'Euclid' ? -(s * s) : distance === 'Manhattan' ? -s : s);
    }
    sum += best;
  }
  return distance === 'Euclid' ? Math.sqrt(Math.abs(sum)) : distance === 'Manhattan' ? Math.abs(sum) : sum;
}

for (const datatype of TYPES) {
  t.test(`${datatype} multivectors: MaxSim over converted rows, exact, graph and int8 rescoring`, async (t) => {
    const dim = 24;
    const scale = (v: Float32Array): Float32Array => (datatype === 'uint8' ? v.map((x) => 128 + 60 * x) : v);
    const docs = syntheticMultivectors({ points: 600, dim, minK: 1, maxK: 6, topics: 12, topicSeed: 3, seed: 8 });
    const queries = syntheticMultivectors({ points: 20, dim, minK: 1, maxK: 3, topics: 12, topicSeed: 3, seed: 9 });
    const tolerance = datatype === 'uint8' ? 1e-6 : 5e-5;
    for (const distance of DISTANCES) {
      const lists = Array.from(docs.counts, (_, i) => scale(listOf(docs, i)));
      const stored = lists.map((l) => storedForm(datatype, distance, l, dim));
      for (const quantization of [null, { quantile: 0.99 }]) {
        const index = await VectorIndex.create(await engineModule(), { dim, distance, datatype, multivector: { comparator: 'max_sim' }, quantization });
        lists.forEach((l, i) => index.upsert(i, l, l.length / dim));
        // (float16 Cosine rows may differ by one half-ulp: see the dense test.)
        if (quantization === null && !(datatype === 'float16' && distance === 'Cosine')) t.same([...index.vector(3)], [...stored[3]], `${distance}: a list is stored converted`);
        const bad: string[] = [];
        let total = 0;
        for (let q = 0; q < queries.counts.length; q++) {
          const qv = scale(listOf(queries, q));
          const sq = storedForm(datatype, distance, qv, dim);
          const want = stored.map((d, i) => ({ i, s: maxSimReference(datatype, distance, dim, sq, d) }))
            .sort((x, y) => (better(distance, x.s, y.s) ? -1 : better(distance, y.s, x.s) ? 1 : x.i - y.i)).slice(0, 10);
          const options = quantization ? { quantization: { rescore: true, oversampling: 3 } } : {};
          const exact = index.search(qv, { limit: 10, exact: true, ...options }, queries.counts[q]);
          const graph = index.search(qv, { limit: 10, ef: 64, ...options }, queries.counts[q]);
          for (const got of [exact, graph]) {
            got.offsets.forEach((o, i) => {
              const s = maxSimReference(datatype, distance, dim, sq, stored[o]);
              if (!close(got.scores[i], s, tolerance)) bad.push(`q${q} offset ${o}: ${got.scores[i]} vs ${s}`);
            });
          }
          if (!quantization) want.forEach((w, i) => { if (!close(exact.scores[i], w.s, tolerance)) bad.push(`q${q} rank ${i}: ${exact.scores[i]} vs ${w.s}`); });
          total += recall(graph.offsets, want.map((w) => w.i));
        }
        const label = `${distance}${quantization ? ' int8' : ''}`;
        t.same(bad.slice(0, 5), [], `${label}: MaxSim scores equal the reference`);
        t.ok(total / queries.counts.length >= 0.85, `${label}: graph recall@10 ${(total / queries.counts.length).toFixed(3)}`);
      }
    }
  });
}

t.test('memory per vector: float16 half of float32, uint8 a quarter', async (t) => {
  const dim = 784;
  const n = 2000;
  const next = rng(5);
  const data = Float32Array.from({ length: n * dim }, () => Math.floor(next() * 256));
  const bytes: Record<string, number> = {};
  for (const datatype of ['float32', 'float16', 'uint8'] as Datatype[]) {
    const index = await VectorIndex.create(await engineModule(), { dim, distance: 'Euclid', datatype });
    index.reserve(n);
    for (let i = 0; i < n; i++) index.stash(i, row(data, dim, i));
    bytes[datatype] = index.memoryBytes;
    t.equal(index.vectorBytes, datatype === 'float32' ? dim * 4 : datatype === 'float16' ? dim * 2 : dim, `${datatype}: bytes per stored vector`);
  }
  // Vectors dominate at 784-d (the graph adds ~150 bytes per node, memory grows by pages).
  t.ok(bytes.float16 < bytes.float32 * 0.6, `float16 ${bytes.float16} vs float32 ${bytes.float32}`);
  t.ok(bytes.uint8 < bytes.float32 * 0.4, `uint8 ${bytes.uint8} vs float32 ${bytes.float32}`);
});

t.test('a query is converted to the datatype too (Qdrant: MetricQueryScorer)', async (t) => {
  // uint8: a query of fractions truncates to zeros, so every Dot score is 0 and every cosine 0.
  const index = await VectorIndex.create(await engineModule(), { dim: 4, distance: 'Dot', datatype: 'uint8' });
  index.upsert(0, [10, 20, 30, 40]);
  t.same([...index.search([0.9, 0.5, 0.2, 0.99], { limit: 1 }).scores], [0]);
  t.same([...index.search([1.9, 2.5, -3, 300], { limit: 1 }).scores], [1 * 10 + 2 * 20 + 0 + 255 * 40]);
  // SIMD widening of halves: negatives, subnormals and -0 score as their exact values.
  const special = [-3e-6, 2.5e-7, -60000, 1e-3, -0, 5.9e-8, -1.5, 65504];
  const wide = await VectorIndex.create(await engineModule(), { dim: special.length, distance: 'Dot', datatype: 'float16' });
  wide.upsert(0, special);
  const probe = [1e4, -1e4, 1e-4, 3, 7, 6e-8, -2, 1e-4];
  const want = special.reduce((sum, x, i) => sum + toHalf(x) * toHalf(probe[i]), 0);
  t.ok(close(wide.search(probe, { limit: 1 }).scores[0], want, 1e-6), `special halves: ${wide.search(probe, { limit: 1 }).scores[0]} vs ${want}`);
  t.throws(() => wide.upsert(1, [1, 2, 3, 70000, 5, 6, 7, 8]), /float16 overflow: value 70000 at index 3/, 'a float16 index refuses to store an infinity');
  const half = await VectorIndex.create(await engineModule(), { dim: 2, distance: 'Dot', datatype: 'float16' });
  half.upsert(0, [1, 1]);
  t.same([...half.search([1 + 2 ** -12, 2049], { limit: 1 }).scores], [1 + 2048]);
});
