// A quantization on top of turbo4 storage, as Qdrant 1.19 serves it: the codes are built from the
// dequantized turbo4 vectors (so they equal the codes a float32 index of the read-back vectors
// gets), searches traverse the graph on the codes, and rescoring (and `ignore`, and `exact`)
// measures the 4-bit records. Per method: codes against a float32 twin, a recall floor against
// exact search over the dequantized vectors (fixed seeds), rescored and ignored scores against the
// records' exact scores, and the image round trip. Multivectors likewise, with one method.

import t from 'tap';
import { VectorIndex, type Distance, type Quantization } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { clustered, row } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';
import { bruteForce, recall } from './helpers/reference.js';
import { everyOffset } from './helpers/full-scan.js';
import { listOf, syntheticMultivectors } from '../src/bench/multivector-data.js';

// Binary codes of this uncentred Dot set lose much whatever the storage (the float32 twin of the
// same vectors does no better: checked below), hence a lower floor there.
const BINARY_DOT_FLOOR = 0.6;
const METHODS: { name: string; quantization: Quantization; floor: number }[] = [
  { name: 'scalar int8', quantization: { quantile: 1 }, floor: 0.9 },
  { name: 'binary one_bit', quantization: { method: 'binary' }, floor: 0.85 },
  { name: 'binary two_bits', quantization: { method: 'binary', encoding: 'two_bits' }, floor: 0.85 },
  { name: 'product x4', quantization: { method: 'product', compression: 'x4' }, floor: 0.85 },
  { name: 'turbo bits1', quantization: { method: 'turbo', bits: 'bits1' }, floor: 0.85 },
  { name: 'turbo bits2', quantization: { method: 'turbo', bits: 'bits2' }, floor: 0.85 },
  { name: 'turbo bits4', quantization: { method: 'turbo', bits: 'bits4' }, floor: 0.85 },
];
const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid'];
const N = 1500;
const DIM = 64;
const QUERIES = 20;
const all = clustered(N + QUERIES, DIM, 12, 31, 12, 0.15);
const data = all.subarray(0, N * DIM);

/** Every offset's score on the records: an exact scan of the whole index. */
function recordScores(index: VectorIndex, query: Float32Array): Map<number, number> {
  const exact = index.search(query, { limit: N, exact: true, filter: everyOffset(index) });
  return new Map(Array.from(exact.offsets, (o, i) => [o, exact.scores[i]]));
}

for (const { name, quantization, floor } of METHODS) {
  for (const distance of DISTANCES) {
    t.test(`${name} on turbo4, ${distance}`, async (t) => {
      const floorHere = distance === 'Dot' && 'method' in quantization && quantization.method === 'binary' ? BINARY_DOT_FLOOR : floor;
      const index = await buildIndex({ dim: DIM, distance, datatype: 'turbo4', quantization }, data);
      t.equal(index.quantized, true, 'codes exist on top of the records');
      t.same(index.config.quantization, quantization, 'the quantization is the one asked for');
      const plain = await buildIndex({ dim: DIM, distance, datatype: 'turbo4' }, data);
      t.equal(index.vectorBytes, plain.vectorBytes, 'the stored vectors are turbo4 records still');
      const dequantized = Float32Array.from(Array.from({ length: N }, (_, i) => [...index.vector(i)]).flat());

      let twin: VectorIndex | null = null;
      if (distance === 'Dot') {
        // Cosine renormalises a float32 vector as it stores it, which moves its last bits, and
        // Euclid reorders a float32 index's dimensions (assembly/permute.ts): Dot compares as is.
        twin = await buildIndex({ dim: DIM, distance, quantization }, dequantized);
        let same = 0;
        for (let i = 0; i < N; i++) if (index.codes(i).join() === twin.codes(i).join()) same++;
        t.equal(same, N, 'codes are those of the dequantized vectors (a float32 index of them has the same)');
      }

      let found = 0;
      let twinFound = 0;
      let rescoredOff = 0;
      let ignoredOff = 0;
      for (let q = 0; q < QUERIES; q++) {
        const query = row(all, DIM, N + q);
        const truth = bruteForce(distance, dequantized, DIM, query, 10);
        const records = recordScores(index, query);
        const rescored = index.search(query, { limit: 10, ef: 128, quantization: { rescore: true, oversampling: 4 } });
        found += recall(rescored.offsets, truth);
        if (twin) twinFound += recall(twin.search(query, { limit: 10, ef: 128, quantization: { rescore: true, oversampling: 4 } }).offsets, truth);
        rescored.offsets.forEach((o, i) => { rescoredOff = Math.max(rescoredOff, Math.abs(rescored.scores[i] - records.get(o)!)); });
        const ignored = index.search(query, { limit: 10, ef: 128, quantization: { ignore: true } });
        ignored.offsets.forEach((o, i) => { ignoredOff = Math.max(ignoredOff, Math.abs(ignored.scores[i] - records.get(o)!)); });
      }
      t.ok(found / QUERIES >= floorHere, `recall@10 ${(found / QUERIES).toFixed(3)} against exact search of the dequantized vectors (>= ${floorHere})`);
      if (twin) t.ok(found >= twinFound - 0.05 * QUERIES, `as good as the float32 index of the dequantized vectors with the same codes (${(twinFound / QUERIES).toFixed(3)}) within 0.05`);
      t.equal(rescoredOff, 0, 'rescored scores are the records\' scores');
      t.equal(ignoredOff, 0, 'ignore: scores are the records\' scores');

      const query = row(all, DIM, N);
      const unrescored = index.search(query, { limit: 10, ef: 128, quantization: { rescore: false } });
      const records = recordScores(index, query);
      t.ok(unrescored.offsets.some((o, i) => unrescored.scores[i] !== records.get(o)), 'rescore: false reports the codes\' scores');

      const copy = await VectorIndex.load(await engineModule(), index.serialize());
      t.same([copy.config.datatype, copy.config.quantization], ['turbo4', quantization], 'the image restores turbo4 with the quantization on top');
      t.same(copy.search(query, { limit: 10, ef: 64 }), index.search(query, { limit: 10, ef: 64 }), 'the restored index answers identically');
      t.same(copy.codes(5), index.codes(5), 'with the same codes');
      t.same(copy.storedBytes(5), index.storedBytes(5), 'and the same record');
    });
  }
}

t.test('a quantization on top of turbo4 multivectors: traversal on codes, MaxSim rescored on the records', async (t) => {
  const dim = 32;
  const n = 600;
  const set = syntheticMultivectors({ points: n, dim, minK: 1, maxK: 4, topics: 16, topicSeed: 5, seed: 6 });
  const queries = syntheticMultivectors({ points: 10, dim, minK: 1, maxK: 3, topics: 16, topicSeed: 5, seed: 7 });
  for (const [quantization, floor] of [[{ method: 'binary' }, 0.7], [{ method: 'turbo', bits: 'bits2' }, 0.85]] as [Quantization, number][]) {
    const index = await VectorIndex.create(await engineModule(), { dim, distance: 'Dot', datatype: 'turbo4', quantization, multivector: { comparator: 'max_sim' } });
    for (let i = 0; i < n; i++) {
      const list = listOf(set, i);
      index.upsert(i, list, list.length / dim);
    }
    t.equal(index.quantized, true, `${JSON.stringify(quantization)}: codes exist on top of the records`);
    let found = 0;
    let off = 0;
    for (let q = 0; q < 10; q++) {
      const query = listOf(queries, q);
      const k = query.length / dim;
      const exact = index.search(query, { limit: n, exact: true, filter: everyOffset(index) }, k);
      const records = new Map(Array.from(exact.offsets, (o, i) => [o, exact.scores[i]]));
      const got = index.search(query, { limit: 10, ef: 128, quantization: { rescore: true, oversampling: 2 } }, k);
      found += recall(got.offsets, Array.from(exact.offsets.subarray(0, 10)));
      got.offsets.forEach((o, i) => { off = Math.max(off, Math.abs(got.scores[i] - records.get(o)!)); });
    }
    t.ok(found / 10 >= floor, `recall@10 ${(found / 10).toFixed(3)} against exact MaxSim on the records (>= ${floor})`);
    t.equal(off, 0, 'rescored MaxSim scores are the records\'');
    const copy = await VectorIndex.load(await engineModule(), index.serialize());
    const query = listOf(queries, 0);
    t.same(copy.search(query, { limit: 10 }, query.length / dim), index.search(query, { limit: 10 }, query.length / dim), 'the image restores the same answers');
  }
});
