// The turbo4 datatype in the engine against the JS reference of Qdrant's TurboQuant
// (helpers/turbo-reference) in Normal mode (bits4, no TQ+): the stored records are the encoding of
// the vectors (normalised for Cosine), searches score those records as Qdrant's estimator does
// (graph, exact scan, pending vectors; "rescoring" has only the records too), a stored vector reads
// back dequantized and rotated back, the graph links on records with a recall floor against exact
// f32 search, and the image keeps it all. A quantization on top: engine-turbo4-quantized.test.ts.

import t, { type Test } from 'tap';
import { VectorIndex, type Distance } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { clustered, row } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';
import { better, bruteForce, dot, recall } from './helpers/reference.js';
import { decodeRecord, dequantize, encode, internalScore, normalModel, type TurboCode } from './helpers/turbo-reference.js';
import { everyOffset } from './helpers/full-scan.js';

const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];

/** Qdrant's postprocessing of an internal score (f32). */
function postprocess(distance: Distance, internal: number): number {
  if (distance === 'Euclid') return Math.fround(Math.sqrt(Math.abs(internal)));
  return Math.fround(distance === 'Manhattan' ? Math.abs(internal) : internal);
}

function worstError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  let worst = got.length === want.length ? 0 : Infinity;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  return worst;
}

function close(t: Test, got: ArrayLike<number>, want: ArrayLike<number>, tolerance: number, message: string): void {
  const worst = worstError(got, want);
  t.ok(worst <= tolerance, `${message} (worst error ${worst.toExponential(2)}, tolerance ${tolerance.toExponential(2)})`);
}

const normalised = (v: ArrayLike<number>) => {
  const len = Math.fround(Math.sqrt(dot(v, v)));
  return Float32Array.from(v, (x) => x / len);
};

const N = 400;

for (const distance of DISTANCES) {
  for (const dim of [48, 37]) {
    t.test(`${distance} ${dim}-d: records, scores, read-back against Qdrant's turbo4 arithmetic`, async (t) => {
      const data = clustered(N + 5, dim, 8, 7, 12, 0.2);
      const index = await buildIndex({ dim, distance, datatype: 'turbo4' }, data.subarray(0, N * dim));
      t.equal(index.quantized, false, 'no codes: the records are the stored vectors');
      t.equal(index.config.quantization, null, 'no quantization on top');
      const model = normalModel(distance, dim);
      const rounded = normalModel(distance, dim, true);
      t.equal(index.vectorBytes, Math.ceil(model.p / 2 / 16) * 16 + (distance === 'Euclid' ? 8 : 4), `a vector takes ${index.vectorBytes} bytes (codes, then the extras)`);
      // What Qdrant encodes: the vector as given, normalised first for Cosine.
      const given = Array.from({ length: N }, (_, i) => (distance === 'Cosine' ? normalised(row(data, dim, i)) : row(data, dim, i)));
      const codes: TurboCode[] = given.map((_, i) => decodeRecord(model, index.storedBytes(i)));
      t.ok(codes.every((code, i) => code.idx.join() === encode(rounded, given[i]).idx.join()), 'indices are the reference encoding (Normal mode) rounded to f32 as the engine rounds');
      let extrasError = 0;
      for (let i = 0; i < N; i++) {
        const want = encode(model, given[i], codes[i].idx);
        extrasError = Math.max(extrasError, Math.abs(codes[i].scaling / want.scaling - 1));
        if (distance === 'Euclid') extrasError = Math.max(extrasError, Math.abs(codes[i].l2 / want.l2 - 1));
      }
      t.ok(extrasError < 1e-5, `extras (scaling, length) are the reference's (worst relative error ${extrasError.toExponential(2)})`);

      // Read back: dequantized and rotated back to the original coordinates, as Qdrant returns it.
      let readError = 0;
      for (let i = 0; i < N; i++) readError = Math.max(readError, worstError(index.vector(i), dequantize(model, codes[i])));
      t.ok(readError < 1e-4, `a stored vector reads back as the reference dequantization (worst error ${readError.toExponential(2)})`);

      for (let q = 0; q < 3; q++) {
        const raw = row(data, dim, N + q);
        const query = distance === 'Cosine' ? normalised(raw) : raw;
        const internal = codes.map((code) => internalScore(model, query, code));
        const reach = Math.sqrt(dot(query, query)) * Math.max(...given.map((v) => Math.sqrt(dot(v, v))));
        const tolerance = 1e-5 * Math.max(1, reach);
        const all = index.search(query, { limit: N, filter: everyOffset(index) });
        close(t, all.scores, Array.from(all.offsets, (o) => postprocess(distance, internal[o])), tolerance, `query ${q}: every score of the exact scan is Qdrant's estimator on the records`);
        const sorted = internal.map((s) => postprocess(distance, s)).sort((x, y) => (better(distance, x, y) ? -1 : better(distance, y, x) ? 1 : 0));
        close(t, all.scores, sorted, tolerance, `query ${q}: in the reference's order`);
        const graph = index.search(query, { limit: 10, ef: 64 });
        close(t, graph.scores, Array.from(graph.offsets, (o) => postprocess(distance, internal[o])), tolerance, `query ${q}: graph search scores the records`);
        // No originals: exact, rescore and ignore all measure the records.
        for (const [name, options] of [['exact', { exact: true }], ['rescore', { quantization: { rescore: true, oversampling: 4 } }], ['ignore', { quantization: { ignore: true } }]] as const) {
          const got = index.search(query, { limit: 10, ef: 64, ...options });
          close(t, got.scores, Array.from(got.offsets, (o) => postprocess(distance, internal[o])), tolerance, `query ${q}: ${name} scores the records too`);
        }
        const exact = index.search(query, { limit: 10, exact: true });
        close(t, exact.scores, sorted.slice(0, 10), tolerance, `query ${q}: exact: true is the top 10 of the records`);
      }

      // A point's record stored again as read back (the shard restages records on payload updates) keeps its codes.
      const before = Array.from({ length: 20 }, (_, i) => index.storedBytes(i));
      for (let i = 0; i < 20; i++) index.upsert(i, index.vector(i));
      t.same(Array.from({ length: 20 }, (_, i) => index.storedBytes(i)), before, 'storing the read-back vector again keeps the record');

      // Read-back vectors stored in a fresh index (a shard rebuilt from its persisted records) give the same records.
      const again = await buildIndex({ dim, distance, datatype: 'turbo4' }, Float32Array.from(Array.from({ length: N }, (_, i) => [...index.vector(i)]).flat()));
      let idxSame = 0;
      let againError = 0;
      for (let i = 0; i < N; i++) {
        const a = decodeRecord(model, again.storedBytes(i));
        if (a.idx.join() === codes[i].idx.join()) idxSame++;
        againError = Math.max(againError, Math.abs(a.scaling / codes[i].scaling - 1), Math.abs(a.l2 / codes[i].l2 - 1));
      }
      if (dim % 2 === 0) t.ok(idxSame === N && againError < 1e-5, `read-back vectors encode to their records (${idxSame}/${N} indices, worst extras error ${againError.toExponential(2)})`);
      // An odd dim reads back without the padding coordinate P - 1 (as Qdrant truncates it), so a few records move.
      else t.ok(idxSame >= 0.98 * N, `read-back vectors of an odd dim mostly encode to their records (${idxSame}/${N})`);

      // The image holds no vectors besides the records, and restores the same answers.
      const copy = await VectorIndex.load(await engineModule(), index.serialize());
      t.same([copy.config.datatype, copy.config.quantization], ['turbo4', null], 'the image restores a turbo4 index');
      const query = row(data, dim, N);
      t.same(copy.search(query, { limit: 10, ef: 64 }), index.search(query, { limit: 10, ef: 64 }), 'the restored index answers identically');
      t.same(Array.from(copy.vector(3)), Array.from(index.vector(3)), 'and reads back the same vector');
    });
  }
}

t.test('pending (unlinked) vectors are scored on their records; the image holds records instead of vectors', async (t) => {
  const dim = 64;
  const data = clustered(300, dim, 5, 9, 10, 0.2);
  const linked = await buildIndex({ dim, distance: 'Dot', datatype: 'turbo4' }, data);
  const pending = await VectorIndex.create(await engineModule(), { dim, distance: 'Dot', datatype: 'turbo4' });
  for (let i = 0; i < 300; i++) pending.stash(i, row(data, dim, i));
  t.equal(pending.pendingCount, 300, 'stashed unlinked');
  const query = row(data, dim, 7);
  const want = linked.search(query, { limit: 10, exact: true });
  t.same(pending.search(query, { limit: 10 }), { ...want, cost: pending.search(query, { limit: 10 }).cost }, 'pending vectors: the exact answer on records');
  // The same stashes into float32 storage draw the same levels, so the images differ only by the
  // vectors: 300 float32 vectors against 300 records (32 code bytes and a scaling).
  const f32 = await VectorIndex.create(await engineModule(), { dim, distance: 'Dot' });
  for (let i = 0; i < 300; i++) f32.stash(i, row(data, dim, i));
  t.equal(pending.vectorBytes, 36, 'a record takes 36 bytes');
  t.equal(f32.imageBytes - pending.imageBytes, 300 * dim * 4 - 300 * 36, 'the image keeps the records, not the vectors');
});

// Recall floors (a regression alarm) for graph search on records built on records, against exact
// f32 search of the vectors as given: there is nothing to rescore with.
const FLOORS: Record<Distance, number> = { Cosine: 0.85, Dot: 0.85, Euclid: 0.85, Manhattan: 0.8 };

t.test('recall: a graph linked on turbo4 records against exact f32 search', async (t) => {
  const n = 3000;
  const dim = 96;
  const all = clustered(n + 30, dim, 25, 21, 16, 0.1);
  const data = all.subarray(0, n * dim);
  for (const distance of DISTANCES) {
    const index = await buildIndex({ dim, distance, datatype: 'turbo4', efConstruct: 100 }, data);
    let found = 0;
    let exactOnCodes = 0;
    for (let q = 0; q < 30; q++) {
      const query = row(all, dim, n + q);
      const truth = bruteForce(distance, data, dim, query, 10);
      found += recall(index.search(query, { limit: 10, ef: 128 }).offsets, truth);
      exactOnCodes += recall(index.search(query, { limit: 10, exact: true }).offsets, truth);
    }
    t.ok(found / 30 >= FLOORS[distance], `${distance}: recall@10 ${(found / 30).toFixed(3)} (>= ${FLOORS[distance]}; an exact scan of the records reaches ${(exactOnCodes / 30).toFixed(3)})`);
  }
});


/**
 * The image a turbo4 index of `rows` stored rows was written as before version 10 (8 dense, 9
 * multivector), from today's: the records sat in the codes' place, each with a correction word,
 * and the image ended with the bits4 trailer (identity calibration over P, then the half bits).
 * No vectors and no codes came between, so the records keep their place.
 */
function legacyImage(image: Uint8Array, dim: number, rows: number, multivector: boolean): Uint8Array {
  const p = dim + (dim % 2);
  const old = new Uint8Array(image.byteLength + rows * 4 + p * 8 + 4);
  old.set(image);
  const view = new DataView(old.buffer);
  view.setUint32(4, multivector ? 9 : 8, true);
  view.setUint32(40, 6, true); // quantized: TurboQuant's word (QM_TURBO + 1)
  const trailer = image.byteLength + rows * 4;
  for (let i = 0; i < p; i++) view.setFloat32(trailer + (p + i) * 4, 1, true);
  view.setUint32(trailer + p * 8, 8, true);
  return old;
}

t.test('images of versions 8 and 9 (records in the codes\' place) still load', async (t) => {
  const dim = 37;
  const data = clustered(300, dim, 5, 11, 10, 0.2);
  const dense = await buildIndex({ dim, distance: 'Euclid', datatype: 'turbo4' }, data);
  const image = dense.serialize();
  t.equal(new DataView(image.buffer, image.byteOffset).getUint32(4, true), 10, 'dense images are version 10');
  const loaded = await VectorIndex.load(await engineModule(), legacyImage(image, dim, 300, false));
  t.same([loaded.config.datatype, loaded.config.quantization], ['turbo4', null], 'a version 8 image restores a turbo4 index with no quantization');
  const query = row(data, dim, 3);
  t.same(loaded.search(query, { limit: 10, ef: 64 }), dense.search(query, { limit: 10, ef: 64 }), 'and answers identically');
  t.same(Array.from({ length: 300 }, (_, i) => loaded.storedBytes(i)), Array.from({ length: 300 }, (_, i) => dense.storedBytes(i)), 'with the same records');

  const lists = await VectorIndex.create(await engineModule(), { dim, distance: 'Dot', datatype: 'turbo4', multivector: { comparator: 'max_sim' } });
  for (let i = 0; i < 100; i++) lists.upsert(i, data.subarray(i * 3 * dim, (i * 3 + 1 + (i % 3)) * dim), 1 + (i % 3));
  const rows = Array.from({ length: 100 }, (_, i) => 1 + (i % 3)).reduce((a, b) => a + b, 0);
  const multiImage = lists.serialize();
  t.equal(new DataView(multiImage.buffer, multiImage.byteOffset).getUint32(4, true), 11, 'multivector images are version 11');
  const again = await VectorIndex.load(await engineModule(), legacyImage(multiImage, dim, rows, true));
  const q = data.subarray(0, 2 * dim);
  t.same(again.search(q, { limit: 10 }, 2), lists.search(q, { limit: 10 }, 2), 'a version 9 image answers identically');
  t.same(Array.from(again.vector(7)), Array.from(lists.vector(7)), 'and reads back the same list');
});
