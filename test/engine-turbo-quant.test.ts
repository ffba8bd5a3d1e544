// TurboQuant in the engine against the JS reference of Qdrant's algorithm (helpers/turbo-reference):
// the rotation (vs the reference, orthogonal, norm-preserving), the Lloyd-Max tables, the stored
// codes and unrescored scores, Qdrant's rescoring defaults, recall on clustered data,
// pending vectors, multivectors (MaxSim on codes) and serialisation.

import t, { type Test } from 'tap';
import { instantiate, VectorIndex, type Distance, type TurboBits, type TurboQuantization } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { syntheticMultivectors, listOf } from '../src/bench/multivector-data.js';
import { clustered, row, uniform } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';
import { toByte, toHalf } from './helpers/datatype.js';
import { maxSimScore } from './helpers/maxsim.js';
import { better, bruteForce, dot, recall, score } from './helpers/reference.js';
import { DOCUMENTED_CENTROIDS, decodeRecord, encode, fitModel, internalScore, paddedDim, rotate, storedBits, type TurboModel } from './helpers/turbo-reference.js';

const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const BITS: TurboBits[] = ['bits4', 'bits2', 'bits1_5', 'bits1'];
const HALF_BITS: Record<TurboBits, number> = { bits1: 2, bits1_5: 3, bits2: 4, bits4: 8 };
const turbo = (bits: TurboBits): TurboQuantization => ({ method: 'turbo', bits });

/** Qdrant's postprocessing of an internal score (f32). */
function postprocess(distance: Distance, internal: number): number {
  if (distance === 'Euclid') return Math.fround(Math.sqrt(Math.abs(internal)));
  return Math.fround(distance === 'Manhattan' ? Math.abs(internal) : internal);
}

function sortBest(distance: Distance, scores: number[]): number[] {
  return [...scores].sort((x, y) => (better(distance, x, y) ? -1 : better(distance, y, x) ? 1 : 0));
}

function closeScores(t: Test, got: ArrayLike<number>, want: ArrayLike<number>, tolerance: number, message: string): void {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  t.ok(got.length === want.length && worst <= tolerance, `${message} (worst error ${worst.toExponential(2)}, tolerance ${tolerance.toExponential(2)})`);
}

/** A raw engine instance configured for TurboQuant at `dim`, for its kernels. */
async function rawEngine(dim: number, bits: TurboBits) {
  const wasm = await instantiate(await engineModule());
  wasm.init(dim, 1, 16, 100, 1, 0, 0);
  wasm.setTurboBits(HALF_BITS[bits]);
  wasm.enableQuantization(1, 5);
  return wasm;
}

t.test('rotation: Qdrant\'s Hadamard rotation, orthogonal and norm-preserving', async (t) => {
  for (const [dim, bits, chunks] of [[300, 'bits4', '256+32+8+4'], [12, 'bits2', '8+4'], [5, 'bits1_5', '8'], [1536, 'bits1', '1024+512'], [391, 'bits4', '256+128+8']] as const) {
    const wasm = await rawEngine(dim, bits);
    const p = wasm.turboPadded();
    t.equal(p, paddedDim(dim, bits), `${dim}-d ${bits}: P = ${p} (${chunks})`);
    const ptr = wasm.alloc(p * 4);
    const f32 = () => new Float32Array(wasm.memory.buffer, ptr, p);
    let worst = 0;
    let normError = 0;
    for (let s = 0; s < 5; s++) {
      const x = uniform(p, 40 + s, -2, 2);
      f32().set(x);
      wasm.turboRotate(ptr);
      const want = rotate(x, p);
      const got = f32();
      for (let i = 0; i < p; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
      normError = Math.max(normError, Math.abs(Math.sqrt(dot(got, got)) / Math.sqrt(dot(x, x)) - 1));
    }
    t.ok(worst < 1e-4, `${dim}-d ${bits}: the engine's rotation is the reference's (worst ${worst.toExponential(2)})`);
    t.ok(normError < 1e-5, `${dim}-d ${bits}: norms preserved (worst relative error ${normError.toExponential(2)})`);
    if (p <= 16) {
      // Columns of the rotation: images of the basis vectors, orthonormal.
      const columns = Array.from({ length: p }, (_, i) => {
        const e = new Float32Array(p);
        e[i] = 1;
        f32().set(e);
        wasm.turboRotate(ptr);
        return f32().slice();
      });
      let off = 0;
      for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) off = Math.max(off, Math.abs(dot(columns[i], columns[j]) - (i === j ? 1 : 0)));
      t.ok(off < 1e-6, `${dim}-d ${bits}: R^T R = I (worst ${off.toExponential(2)})`);
    }
  }
});

t.test('codebooks: the documented Lloyd-Max centroids at 4, 2, 1.5 and 1 bits', async (t) => {
  for (const bits of BITS) {
    const wasm = await rawEngine(16, bits);
    const table = DOCUMENTED_CENTROIDS[storedBits(bits)];
    t.same(table.map((_, i) => wasm.turboCentroid(i)), table.map(Math.fround), `${bits}: ${table.length} centroids`);
  }
});

const N = 600;
const DIM = 100;

for (const bits of BITS) {
  for (const distance of DISTANCES) {
    t.test(`${bits} ${distance}: codes and unrescored scores against the reference, rescoring defaults`, async (t) => {
      const data = clustered(N + 10, DIM, 8, 3, 12, 0.2);
      const index = await buildIndex({ dim: DIM, distance, quantization: turbo(bits) }, data.subarray(0, N * DIM));
      const stored = Array.from({ length: N }, (_, i) => index.vector(i));
      // Inserted one by one, the calibration was last fitted at 512 vectors (fits at each doubling).
      const model: TurboModel = fitModel(distance, bits, DIM, stored.slice(0, 512));
      const engineCodes = stored.map((_, i) => decodeRecord(model, index.codes(i)));
      const rounded = fitModel(distance, bits, DIM, stored.slice(0, 512), true);
      t.ok(engineCodes.every((code, i) => code.idx.join() === encode(rounded, stored[i]).idx.join()), 'indices are the reference encoding rounded to f32 as the engine rounds');
      let same = 0;
      let scalingError = 0;
      for (let i = 0; i < N; i++) {
        const want = encode(model, stored[i]);
        for (let j = 0; j < model.p; j++) if (engineCodes[i].idx[j] === want.idx[j]) same++;
        const extras = encode(model, stored[i], engineCodes[i].idx);
        scalingError = Math.max(scalingError, Math.abs(engineCodes[i].scaling / extras.scaling - 1));
        // Euclid and Manhattan also store the length.
        if (distance === 'Euclid' || distance === 'Manhattan') scalingError = Math.max(scalingError, Math.abs(engineCodes[i].l2 / extras.l2 - 1));
      }
      // The engine rotates in f32, the reference in f64: a coordinate on a boundary may round either way.
      t.ok(same / (N * model.p) > 0.995, `indices match the reference encoding (${((100 * same) / (N * model.p)).toFixed(2)}%)`);
      t.ok(scalingError < 1e-4, `per-vector extras (scaling, length) are the reference's for the stored indices (worst relative error ${scalingError.toExponential(2)})`);

      for (let q = 0; q < 5; q++) {
        const raw = row(data, DIM, N + q);
        const query = distance === 'Cosine' ? raw.map((x) => x / Math.sqrt(dot(raw, raw))) : raw;
        const internal = engineCodes.map((code) => internalScore(model, query, code));
        // Errors scale with the magnitudes involved (f32 rotation against f64).
        const reach = Math.sqrt(dot(query, query)) * Math.max(...stored.map((v) => Math.sqrt(dot(v, v))));
        const tolerance = 1e-5 * Math.max(1, reach);
        const unrescored = index.search(query, { limit: 10, exact: true, quantization: { rescore: false } });
        closeScores(t, unrescored.scores, Array.from(unrescored.offsets, (o) => postprocess(distance, internal[o])), tolerance, `query ${q}: unrescored scores are Qdrant's estimator on the stored codes`);
        const wantTop = sortBest(distance, internal.map((s) => postprocess(distance, s))).slice(0, 10);
        closeScores(t, unrescored.scores, wantTop, tolerance, `query ${q}: exact scan on codes returns the reference's top 10`);
        const graph = index.search(query, { limit: 10, ef: 64, quantization: { rescore: false } });
        closeScores(t, graph.scores, Array.from(graph.offsets, (o) => postprocess(distance, internal[o])), tolerance, `query ${q}: graph search scores on codes`);

        const exact = sortBest(distance, stored.map((v) => score(distance, query, v))).slice(0, 10);
        const full = index.search(query, { limit: 10, exact: true, quantization: { rescore: true, oversampling: N / 10 } });
        closeScores(t, full.scores, exact, 1e-3 * Math.max(1, Math.abs(exact[0])), `query ${q}: rescored at full oversampling is the exact top 10`);
        // Qdrant's default: bits4 does not rescore, the smaller widths do.
        const byDefault = index.search(query, { limit: 10, exact: true, quantization: { oversampling: N / 10 } });
        t.same(Array.from(byDefault.scores), Array.from(bits === 'bits4' ? index.search(query, { limit: 10, exact: true, quantization: { rescore: false, oversampling: N / 10 } }).scores : full.scores), `query ${q}: rescore defaults to ${bits !== 'bits4'}`);
        const ignored = index.search(query, { limit: 10, exact: true, quantization: { ignore: true } });
        closeScores(t, ignored.scores, exact, 1e-3 * Math.max(1, Math.abs(exact[0])), `query ${q}: ignore searches the stored vectors`);
      }
    });
  }
}

t.test('float16 and uint8 storage: codes encode the stored values (uint8 Cosine normalised), rescoring reads them', async (t) => {
  for (const [datatype, distance] of [['float16', 'Dot'], ['uint8', 'Cosine'], ['uint8', 'Euclid']] as const) {
    const data = uniform(N * DIM, 31, 0, 40);
    const index = await buildIndex({ dim: DIM, distance, datatype, quantization: turbo('bits4') }, data);
    const stored = Array.from({ length: N }, (_, i) => index.vector(i));
    const coded = stored.map((v) => (datatype === 'uint8' && distance === 'Cosine' ? v.map((x) => x / Math.sqrt(dot(v, v))) : v));
    const model = fitModel(distance, 'bits4', DIM, coded.slice(0, 512));
    let same = 0;
    for (let i = 0; i < N; i++) {
      const got = decodeRecord(model, index.codes(i)).idx;
      const want = encode(model, coded[i]).idx;
      for (let j = 0; j < model.p; j++) if (got[j] === want[j]) same++;
    }
    t.ok(same / (N * model.p) > 0.995, `${datatype} ${distance}: indices match the reference encoding of the stored values (${((100 * same) / (N * model.p)).toFixed(2)}%)`);
    // The query converted to the datatype, as Qdrant (and the engine) convert it before scoring.
    const query = uniform(DIM, 32, 0, 40).map(datatype === 'uint8' ? toByte : toHalf);
    const full = index.search(query, { limit: 10, exact: true, quantization: { rescore: true, oversampling: N / 10 } });
    const exact = sortBest(distance, stored.map((v) => score(distance, query, v))).slice(0, 10);
    closeScores(t, full.scores, exact, 1e-5 * Math.max(1, Math.abs(exact[0])), `${datatype} ${distance}: rescored at full oversampling is the exact top 10 of the stored vectors`);
  }
});

// Recall floors (a regression alarm) for graph search with rescoring, on normalised clustered data.
const FLOORS: Record<TurboBits, number> = { bits4: 0.95, bits2: 0.9, bits1_5: 0.85, bits1: 0.8 };

t.test('recall on normalised clustered data: rescored TurboQuant against brute force', async (t) => {
  const n = 5000;
  const dim = 128;
  const all = clustered(n + 40, dim, 30, 21, 16, 0.1);
  for (let i = 0; i < n + 40; i++) {
    const v = all.subarray(i * dim, (i + 1) * dim);
    const len = Math.sqrt(dot(v, v));
    for (let j = 0; j < dim; j++) v[j] /= len;
  }
  const data = all.subarray(0, n * dim);
  for (const distance of DISTANCES) {
    for (const bits of BITS) {
      const index = await buildIndex({ dim, distance, quantization: turbo(bits) }, data);
      let rescored = 0;
      let raw = 0;
      for (let q = 0; q < 40; q++) {
        const query = row(all, dim, n + q);
        const truth = bruteForce(distance, data, dim, query, 10);
        rescored += recall(index.search(query, { limit: 10, ef: 128, quantization: { rescore: true, oversampling: 4 } }).offsets, truth);
        raw += recall(index.search(query, { limit: 10, ef: 128, quantization: { rescore: false } }).offsets, truth);
      }
      const floor = FLOORS[bits];
      t.ok(rescored / 40 >= floor, `${distance} ${bits}: rescored recall@10 at oversampling 4 is ${(rescored / 40).toFixed(3)} (>= ${floor}); unrescored ${(raw / 40).toFixed(3)}`);
    }
  }
});

t.test('the calibration follows the dimension order (Euclid permutes its dimensions at 1024 vectors)', async (t) => {
  // 600-d: the calibration sample holds 436 vectors, so it is last fitted before the order is;
  // it must be fitted again on the permuted vectors. Dot keeps its order: on normalised data both
  // rank alike, so their unrescored recall must agree.
  const n = 1500;
  const dim = 600;
  const all = clustered(n + 20, dim, 12, 5, 12, 0.1);
  for (let i = 0; i < n + 20; i++) {
    const v = all.subarray(i * dim, (i + 1) * dim);
    const len = Math.sqrt(dot(v, v));
    for (let j = 0; j < dim; j++) v[j] /= len;
  }
  const data = all.subarray(0, n * dim);
  const measured: Record<string, number> = {};
  for (const distance of ['Dot', 'Euclid'] as const) {
    const index = await buildIndex({ dim, distance, quantization: turbo('bits2') }, data);
    let sum = 0;
    for (let q = 0; q < 20; q++) {
      const query = row(all, dim, n + q);
      sum += recall(index.search(query, { limit: 10, exact: true, quantization: { rescore: false } }).offsets, bruteForce(distance, data, dim, query, 10));
    }
    measured[distance] = sum / 20;
  }
  t.ok(Math.abs(measured.Euclid - measured.Dot) < 0.1, `unrescored recall@10: Euclid ${measured.Euclid.toFixed(3)}, Dot ${measured.Dot.toFixed(3)}`);
});

t.test('pending vectors are scanned on their codes, as linked ones are', async (t) => {
  const data = clustered(800, 64, 6, 8);
  const index = await VectorIndex.create(await engineModule(), { dim: 64, distance: 'Dot', quantization: turbo('bits2') });
  for (let i = 0; i < 800; i++) index.stash(i, row(data, 64, i));
  t.equal(index.pendingCount, 800, 'nothing linked');
  const query = uniform(64, 77);
  const pending = index.search(query, { limit: 10, quantization: { rescore: false } });
  const scan = index.search(query, { limit: 10, exact: true, quantization: { rescore: false } });
  t.same(Array.from(pending.scores), Array.from(scan.scores), 'the pending scan scores codes as the exact scan does');
  index.linkPending(800);
  const linked = index.search(query, { limit: 10, ef: 800, quantization: { rescore: false } });
  t.same(Array.from(linked.scores), Array.from(scan.scores), 'once linked, the graph (ef = n) finds the same top 10 on codes');
});

t.test('multivectors: MaxSim on per-row codes, rescored MaxSim on the stored rows', async (t) => {
  const dim = 30;
  const set = syntheticMultivectors({ points: 300, dim, minK: 1, maxK: 6, topics: 12, topicSeed: 3, seed: 4 });
  const queries = syntheticMultivectors({ points: 6, dim, minK: 1, maxK: 3, topics: 12, topicSeed: 3, seed: 5 });
  for (const distance of DISTANCES) {
    const index = await VectorIndex.create(await engineModule(), { dim, distance, multivector: { comparator: 'max_sim' }, quantization: turbo('bits4') });
    const lists = Array.from({ length: 300 }, (_, i) => listOf(set, i));
    lists.forEach((list, i) => index.upsert(i, list, list.length / dim));
    const storedLists = lists.map((_, i) => index.vector(i));
    const rows = (list: Float32Array) => Array.from({ length: list.length / dim }, (_, r) => list.subarray(r * dim, (r + 1) * dim));
    // 300 inserts: the calibration was last fitted at 256 points, over the rows of the first ones (up to the limit).
    const model = fitModel(distance, 'bits4', dim, storedLists.slice(0, 256).flatMap(rows));
    for (let q = 0; q < 6; q++) {
      const query = listOf(queries, q);
      const queryRows = rows(query).map((r) => (distance === 'Cosine' ? r.map((x) => x / Math.sqrt(dot(r, r))) : r));
      const internal = storedLists.map((list) => queryRows.reduce((sum, qr) => sum + Math.max(...rows(list).map((v) => internalScore(model, qr, encode(model, v)))), 0));
      const raw = index.search(query, { limit: 10, exact: true, quantization: { rescore: false } }, query.length / dim);
      const reach = queryRows.length * 4 * (distance === 'Euclid' ? 4 : 1);
      closeScores(t, raw.scores, Array.from(raw.offsets, (o) => postprocess(distance, internal[o])), 2e-2 * reach, `${distance} query ${q}: unrescored MaxSim on codes`);
      const full = index.search(query, { limit: 10, exact: true, quantization: { rescore: true, oversampling: 30 } }, query.length / dim);
      const exact = sortBest(distance, lists.map((list) => maxSimScore(distance, dim, query, list))).slice(0, 10);
      closeScores(t, full.scores, exact, 1e-3 * Math.max(1, Math.abs(exact[0])), `${distance} query ${q}: rescored MaxSim at full oversampling is exact`);
    }
  }
});

t.test('a serialised TurboQuant index loads with its bits, calibration, codes and answers', async (t) => {
  for (const bits of ['bits2', 'bits1_5'] as const) {
    // 2000 Euclid vectors: the dimension order is fitted (at 1024) and persisted too.
    const data = clustered(2000, 48, 10, 9);
    const index = await buildIndex({ dim: 48, distance: 'Euclid', quantization: turbo(bits) }, data);
    const copy = await VectorIndex.load(await engineModule(), index.serialize());
    t.same(copy.config.quantization, turbo(bits), `${bits}: the method and bits are restored`);
    let same = true;
    for (let i = 0; i < 2000; i++) same &&= Buffer.compare(index.codes(i), copy.codes(i)) === 0;
    t.ok(same, `${bits}: identical code records`);
    for (let q = 0; q < 10; q++) {
      const query = uniform(48, 600 + q, -3, 3);
      for (const quantization of [{ rescore: false }, { oversampling: 3 }]) {
        const a = index.search(query, { limit: 10, quantization });
        const b = copy.search(query, { limit: 10, quantization });
        same &&= a.offsets.join() === b.offsets.join() && a.scores.join() === b.scores.join();
      }
    }
    t.ok(same, `${bits}: identical answers, unrescored and rescored (the calibration came back)`);
    t.same(Array.from(copy.serialize()), Array.from(index.serialize()), `${bits}: the image round-trips byte for byte`);
  }
});
