// int8 scalar quantization against Qdrant 1.19's formulas (lib/quantization encoded_vectors_u8
// and quantile), restated here in f32 arithmetic: the codebook (whole range, and the quantile
// window counted in vectors), the u8 codes 0..127 with their padding, the per-vector corrections
// and the unrescored scores per distance with Qdrant's postprocessing. Then recall floors on
// clustered data, exact search on the originals, and images of the older codebook re-encoded.

import t from 'tap';
import { VectorIndex, Bitset, type Distance, type IndexConfig } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { clustered, row, uniform } from './helpers/data.js';
import { bruteForce, recall, score } from './helpers/reference.js';
import { codebookOf, codes, f, qdrantRange, qdrantScore } from './helpers/int8-reference.js';

const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const DIM = 20; // not a multiple of 16: the padding codes count
const PADDED = 32;

function normalised(v: Float32Array): Float32Array {
  let s = 0;
  for (const x of v) s = f(s + f(x * x));
  const n = f(Math.sqrt(s));
  return v.map((x) => f(x / n));
}

async function build(config: IndexConfig, data: Float32Array): Promise<VectorIndex> {
  const index = await VectorIndex.create(await engineModule(), { fullScanThreshold: 1e9, ...config });
  for (let i = 0; i < data.length / config.dim; i++) index.upsert(i, row(data, config.dim, i));
  index.refitQuantization(); // what the optimizer does once every vector is linked
  return index;
}

const N = 600;
const data = uniform(N * DIM, 7, -1, 1);
// A few outliers, so a quantile window differs from the whole range.
for (let i = 0; i < 12; i++) data[i * 97] = (i % 2 ? 1 : -1) * (5 + i);
const queries = Array.from({ length: 8 }, (_, i) => uniform(DIM, 100 + i, -1.2, 1.2));

for (const distance of DISTANCES) {
  for (const quantile of [null, 0.95]) {
    t.test(`${distance}, quantile ${quantile}: codes and unrescored scores are Qdrant's`, async (t) => {
      const index = await build({ dim: DIM, distance, quantization: quantile === null ? {} : { quantile } }, data);
      const stored = Array.from({ length: N }, (_, i) => index.vector(i));
      const cb = codebookOf(qdrantRange(stored, quantile));
      let codeMismatches = 0;
      for (let i = 0; i < N; i++) if (Buffer.compare(index.codes(i), codes(cb, distance, stored[i])) !== 0) codeMismatches++;
      t.equal(codeMismatches, 0, 'every stored vector has Qdrant\'s codes, padding included');
      t.ok(Math.max(...index.codes(0)) <= 127, 'codes are u8 in 0..127');

      const all = Bitset.of(N, Array.from({ length: N }, (_, i) => i));
      for (const raw of queries) {
        const query = distance === 'Cosine' ? normalised(raw) : raw;
        const found = index.search(raw, { limit: 10, filter: all, quantization: { rescore: false } });
        const expected = Array.from(found.offsets, (o) => qdrantScore(cb, distance, query, stored[o]));
        const tolerance = distance === 'Cosine' ? 1e-5 : 0; // the engine normalises the query itself
        t.ok(Array.from(found.scores).every((s, i) => Math.abs(s - expected[i]) <= tolerance * Math.max(1, Math.abs(s))), `scores ${Array.from(found.scores).slice(0, 3)} match ${expected.slice(0, 3)}`);
        // The allowed set is scanned on codes: the top 10 are the reference's best 10.
        const larger = distance === 'Cosine' || distance === 'Dot';
        const best = stored.map((v) => qdrantScore(cb, distance, query, v)).sort((a, b) => (larger ? b - a : a - b));
        // Qdrant's Euclid float form cancels terms of about alpha^2 sum(c^2), so near-ties may
        // order differently from the exact integer sum the engine ranks by (see quantize.ts).
        const slack = distance === 'Euclid' ? 1e-3 : 1e-5;
        t.ok(Math.abs(found.scores[9] - best[9]) <= slack * Math.max(1, Math.abs(best[9])), 'the scan keeps the 10 best quantized scores');
      }
    });
  }
}

t.test('the quantile window needs 127 vectors; below, the whole range is used', async (t) => {
  const few = data.subarray(0, 100 * DIM);
  const a = await build({ dim: DIM, distance: 'Dot', quantization: { quantile: 0.5 } }, few);
  const b = await build({ dim: DIM, distance: 'Dot', quantization: {} }, few);
  t.same(Array.from({ length: 100 }, (_, i) => Array.from(a.codes(i))), Array.from({ length: 100 }, (_, i) => Array.from(b.codes(i))));
  const c = await build({ dim: DIM, distance: 'Dot', quantization: { quantile: 0.5 } }, data);
  const d = await build({ dim: DIM, distance: 'Dot', quantization: {} }, data);
  t.not(Buffer.compare(c.codes(1), d.codes(1)), 0, 'with 600 vectors, quantile 0.5 narrows the range');
});

t.test('recall floors on clustered data, unrescored and rescored, and exact search on the originals', async (t) => {
  const dim = 48;
  const n = 3000;
  const base = clustered(n, dim, 12, 5);
  const qs = clustered(40, dim, 12, 6);
  for (const distance of DISTANCES) {
    const index = await build({ dim, distance, quantization: { quantile: 0.99 } }, base);
    let raw = 0, rescored = 0;
    for (let i = 0; i < 40; i++) {
      const q = row(qs, dim, i);
      const truth = bruteForce(distance, base, dim, q, 10);
      const unrescored = index.search(q, { limit: 10, ef: 128, quantization: { rescore: false } });
      raw += recall(unrescored.offsets, truth) / 40;
      t.same(index.search(q, { limit: 10, ef: 128 }), unrescored, `${distance}: rescore unset is false for scalar codes, as Qdrant's default`);
      rescored += recall(index.search(q, { limit: 10, ef: 128, quantization: { rescore: true, oversampling: 2 } }).offsets, truth) / 40;
      const exact = index.search(q, { limit: 10, exact: true, quantization: { rescore: false } });
      t.same(Array.from(exact.offsets), truth, `${distance}: exact search ignores the codes`);
      const want = truth.map((o) => score(distance, q, index.vector(o)));
      t.ok(Array.from(exact.scores).every((s, i) => Math.abs(s - want[i]) <= 1e-5 * Math.max(1, Math.abs(want[i]))), `${distance}: exact scores are the f32 ones`);
    }
    t.ok(raw >= 0.8, `${distance}: unrescored recall@10 ${raw.toFixed(3)} >= 0.8`);
    t.ok(rescored >= 0.95, `${distance}: rescored recall@10 ${rescored.toFixed(3)} >= 0.95`);
  }
});

t.test('an image of the older int8 codebook (version 6) loads with its codes fitted again', async (t) => {
  const index = await build({ dim: DIM, distance: 'Euclid', quantization: { quantile: 0.95 } }, data);
  const image = index.serialize();
  const view = new DataView(image.buffer, image.byteOffset, image.byteLength);
  t.equal(view.getUint32(4, true), 10, 'dense images are version 10');
  const old = image.slice();
  new DataView(old.buffer).setUint32(4, 6, true);
  old.fill(0, old.byteLength - N * (PADDED + 4)); // codes and corrections of the older form are not read
  const loaded = await VectorIndex.load(await engineModule(), old);
  for (let i = 0; i < N; i++) if (Buffer.compare(loaded.codes(i), index.codes(i)) !== 0) t.fail(`codes of ${i} differ`);
  const q = queries[0];
  t.same(loaded.search(q, { limit: 5, quantization: { rescore: false } }), index.search(q, { limit: 5, quantization: { rescore: false } }));
});
