// Product and TurboQuant training off the insert path (assembly/training.ts): a store that crosses a
// doubling of the stored count keeps the codebook in use; searches meanwhile score linked vectors
// on that codebook's codes and pending ones as Qdrant does (originals for product, codes for
// TurboQuant), against references computed here; the optimizer's steps then fit the codebook to
// the data (product: Qdrant's k-means, a round per step; TurboQuant: the TQ+ calibration a group
// of sample vectors or coordinates per step; then both code a batch of vectors per step with the
// new codebook and swap it in at the last), stores between steps still served with the old
// codebook, and images written before, during and after a fit load back identically. Step sizes
// are checked in work units (coordinates read), not time. The shard optimizer trains before it
// links, and reports the step.

import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VectorIndex, type Distance, type IndexConfig } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { Shard } from '../src/shard/shard.js';
import { clustered, row, uniform } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';
import { everyOffset } from './helpers/full-scan.js';
import { better, bruteForce, dot, score } from './helpers/reference.js';
import { chunkRange, kmeans, nearest, quantizedScore, rebuilt } from './helpers/product-reference.js';
import { decodeRecord, encode, fitModel, internalScore, type TurboModel } from './helpers/turbo-reference.js';

const DIM = 24;
const B = 2; // x8: two dimensions per chunk
const CHUNKS = DIM / B;
const LINKED = 512; // inserted and linked: the codebook was last fitted on them
const STASHED = 600; // stored unlinked after them: the count crosses 1024
const LATE = 20; // stored while a fit is in progress
const K = 15;
const f = Math.fround;

/** Every code of `index` is the nearest centroid of `codebook` for each chunk of its vector. */
function codedBy(index: VectorIndex, codebook: Float32Array, n: number): boolean {
  for (let i = 0; i < n; i++) {
    const v = index.vector(i);
    const code = index.codes(i);
    for (let c = 0; c < CHUNKS; c++) if (code[c] !== nearest(codebook, v, ...chunkRange(DIM, B, c))) return false;
  }
  return true;
}

function bestFirst(distance: Distance, scores: number[]): number[] {
  return [...scores].sort((x, y) => (better(distance, x, y) ? -1 : better(distance, y, x) ? 1 : 0));
}

function close(t: Test, got: ArrayLike<number>, want: ArrayLike<number>, message: string): void {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i])));
  t.ok(got.length === want.length && worst < 1e-4, `${message} (worst relative error ${worst.toExponential(2)})`);
}

/**
 * Searches of a product index against the scores Qdrant's scoring gives: linked vectors on their
 * codes with `codebook` (the vector rebuilt from its centroids), pending ones on their stored vectors.
 */
function checkProductSearches(t: Test, index: VectorIndex, codebook: Float32Array, pending: (i: number) => boolean, n: number, what: string): void {
  const scored = Array.from({ length: n }, (_, i) => (pending(i) ? index.vector(i) : rebuilt(codebook, index.codes(i), DIM, B)));
  for (let q = 0; q < 3; q++) {
    const query = uniform(DIM, 700 + q);
    const want = scored.map((v) => quantizedScore('Cosine', query, v));
    const scan = index.search(query, { limit: K, filter: everyOffset(index) });
    close(t, scan.scores, bestFirst('Cosine', want).slice(0, K), `${what}, query ${q}: the full scan's top ${K} by the scores used`);
    const graph = index.search(query, { limit: K, ef: 64 });
    close(t, graph.scores, Array.from(graph.offsets, (o) => want[o]), `${what}, query ${q}: graph and pending scan give each point its score`);
    const stored = Array.from({ length: n }, (_, i) => index.vector(i));
    const exact = bestFirst('Cosine', stored.map((v) => quantizedScore('Cosine', query, v))).slice(0, K);
    close(t, index.search(query, { limit: K, filter: everyOffset(index), quantization: { rescore: true, oversampling: n / K } }).scores, exact, `${what}, query ${q}: rescored at full oversampling, the exact top ${K}`);
  }
}

function sameAnswers(a: VectorIndex, b: VectorIndex, dim = DIM): boolean {
  for (let q = 0; q < 3; q++) {
    const query = uniform(dim, 900 + q);
    const x = a.search(query, { limit: K, ef: 64 });
    const y = b.search(query, { limit: K, ef: 64 });
    if (x.offsets.join() !== y.offsets.join() || x.scores.join() !== y.scores.join()) return false;
  }
  return true;
}

async function reload(index: VectorIndex): Promise<VectorIndex> {
  return VectorIndex.load(await engineModule(), index.serialize());
}

t.test('product: stores crossing a doubling do not train; the optimizer steps fit the codebook while stores and searches go on', async (t) => {
  const total = LINKED + STASHED + LATE;
  // The seed of engine-product-quant's reference test: its k-means empties no centroid here either.
  const data = uniform(total * DIM, 6);
  const config: IndexConfig = { dim: DIM, distance: 'Cosine', quantization: { method: 'product', compression: 'x8' } };
  const index = await buildIndex(config, data.subarray(0, LINKED * DIM));
  t.equal(index.quantizationTrainedOn, LINKED, 'inserted and linked at once: fitted at each doubling, last at 512');
  const before = index.productCodebook();

  for (let i = LINKED; i < LINKED + STASHED; i++) index.stash(i, row(data, DIM, i));
  const stored = LINKED + STASHED;
  t.equal(index.quantizationTrainedOn, LINKED, `${stored} stored: the store that crossed 1024 did not train`);
  t.same(index.productCodebook(), before, 'the codebook in use is unchanged');
  t.ok(codedBy(index, before, stored), 'the stored vectors are coded with the codebook in use');
  checkProductSearches(t, index, before, (i) => i >= LINKED, stored, 'after the stores');

  // The optimizer's steps: a round of one chunk's k-means each, so many of them.
  let steps = 0;
  while (steps < 5 && index.trainQuantizationStep()) steps++;
  t.equal(steps, 5, 'the fit takes more than a few steps');
  t.same(index.productCodebook(), before, 'mid-fit: the codebook in use is still the old one');
  const midImage = await reload(index);
  t.same(midImage.productCodebook(), before, 'mid-fit: an image holds the codebook in use');
  t.equal(midImage.quantizationTrainedOn, LINKED, 'mid-fit: the image keeps what it was fitted on');
  t.ok(sameAnswers(index, midImage), 'mid-fit: the image answers as the index does');
  for (let i = stored; i < total; i++) index.stash(i, row(data, DIM, i));
  t.ok(codedBy(index, before, total), 'stores during the fit are coded with the codebook in use');
  checkProductSearches(t, index, before, (i) => i >= LINKED, total, 'mid-fit, with stores meanwhile');

  // Every vector the fit reads was gathered at its second step (one group holds all 12 chunks).
  const vectors = Array.from({ length: stored }, (_, i) => index.vector(i));
  // Stores at every step to the end, the coding steps included: linked vectors moved (they become
  // pending), behind and ahead of the coding cursor.
  const moves = uniform(200 * DIM, 8);
  const moved = new Set<number>();
  while (index.trainQuantizationStep()) {
    steps++;
    const at = (steps * 37) % LINKED;
    index.stash(at, row(moves, DIM, steps % 200));
    moved.add(at);
    if (steps % 40 === 0) checkProductSearches(t, index, before, (i) => i >= LINKED || moved.has(i), total, `step ${steps}, ${moved.size} vectors moved`);
  }
  t.ok(steps > CHUNKS, `${steps + 1} steps in all for ${CHUNKS} chunks`);
  t.equal(index.quantizationTrainedOn, stored, 'fitted on the vectors stored when the fit began');
  const want = new Float32Array(DIM * 256);
  let full = true;
  for (let c = 0; c < CHUNKS; c++) full &&= kmeans(vectors, ...chunkRange(DIM, B, c), want);
  t.ok(full, 'the reference run never emptied a centroid');
  t.same(Array.from(index.productCodebook()), Array.from(want), 'the codebook is Qdrant\'s k-means over every vector stored when the fit began');
  t.ok(codedBy(index, want, total), 'every vector is coded anew with it, those stored during the fit included');
  checkProductSearches(t, index, want, (i) => i >= LINKED || moved.has(i), total, 'after the fit, before linking');

  while (index.linkPending(64) > 0);
  t.equal(index.pendingCount, 0, 'every vector linked');
  t.notOk(index.trainQuantizationStep(), 'nothing left to train');
  checkProductSearches(t, index, want, () => false, total, 'after linking');
  const image = await reload(index);
  t.same(image.productCodebook(), index.productCodebook(), 'the image holds the fitted codebook');
  t.equal(image.quantizationTrainedOn, stored, 'and what it was fitted on');
  t.ok(Array.from({ length: total }, (_, i) => image.codes(i).join() === index.codes(i).join()).every(Boolean), 'and every code');
  t.ok(sameAnswers(index, image), 'the image answers as the index does');
  t.same(image.serialize(), index.serialize(), 'the image round-trips byte for byte');
});

t.test('product Euclid: a fit begun past 1024 vectors chooses the dimension order and applies it when installed', async (t) => {
  const n = 1100;
  const data = clustered(n, DIM, 8, 5);
  const index = await VectorIndex.create(await engineModule(), { dim: DIM, distance: 'Euclid', quantization: { method: 'product', compression: 'x8' } });
  for (let i = 0; i < n; i++) index.stash(i, row(data, DIM, i));
  t.equal(index.quantizationTrainedOn, 0, 'stores never trained');
  t.ok(index.productCodebook().every((x) => x === 0), 'the codebook is still empty');
  const queries = clustered(5, DIM, 8, 6);
  for (let q = 0; q < 5; q++) {
    const query = row(queries, DIM, q);
    const truth = bruteForce('Euclid', data, DIM, query, K).map((i) => score('Euclid', query, row(data, DIM, i)));
    close(t, index.search(query, { limit: K }).scores, truth, `query ${q}: pending vectors are scored on the originals`);
  }
  while (index.trainQuantizationStep());
  t.equal(index.quantizationTrainedOn, n, 'fitted on every stored vector');
  t.ok(Array.from({ length: n }, (_, i) => index.vector(i).every((x, j) => x === f(data[i * DIM + j]))).every(Boolean), 'the stored vectors read back in their original order');
  while (index.linkPending(64) > 0);
  let found = 0;
  for (let q = 0; q < 5; q++) {
    const query = row(queries, DIM, q);
    const truth = bruteForce('Euclid', data, DIM, query, K);
    const rescored = index.search(query, { limit: K, filter: everyOffset(index), quantization: { rescore: true, oversampling: n / K } });
    close(t, rescored.scores, truth.map((i) => score('Euclid', query, row(data, DIM, i))), `query ${q}: rescored at full oversampling, the exact top ${K}`);
    const codes = index.search(query, { limit: K, ef: 128 }).offsets;
    found += truth.filter((i) => Array.from(codes).includes(i)).length;
  }
  t.ok(found / (5 * K) > 0.5, `the codes, permuted as the vectors are, rank the true neighbours first (recall ${(found / (5 * K)).toFixed(2)})`);
  const image = await reload(index);
  t.ok(sameAnswers(index, image), 'an image answers as the index does (order and codebook came back)');
});

// TurboQuant at 300-d bits4: P = 300 and the calibration reads the first 2^18 / 300 = 873 stored
// vectors (turbo-quant.ts turboFitLimit), so stores past offset 873 never change a fit.
const TQ_DIM = 300;
const TQ_SAMPLE = Math.floor(2 ** 18 / TQ_DIM);
// A training step reads at most 64 vectors' worth of coordinates (fresh-codes.ts CODE_ROWS * P).
const STEP_VALUES = 64 * TQ_DIM;

/** Every code of offsets [0, n) is the reference's code, with `model`, of the vector stored there now. */
function turboCodedBy(index: VectorIndex, model: TurboModel, n: number): boolean {
  for (let i = 0; i < n; i++) if (decodeRecord(model, index.codes(i)).idx.join() !== encode(model, index.vector(i)).idx.join()) return false;
  return true;
}

/**
 * Searches of a TurboQuant Dot index scored on the codes with `model` (pending vectors too, as
 * Qdrant scores an appendable segment's): the unrescored scan's top 10 by the estimator; rescored
 * at full oversampling, the exact top 10; the graph, rescoring 4x candidates, finds the exact
 * top 10 at or above the recall floor.
 */
function checkTurboSearches(t: Test, index: VectorIndex, model: TurboModel, queries: Float32Array, n: number, what: string): void {
  const stored = Array.from({ length: n }, (_, i) => index.vector(i));
  const flat = new Float32Array(n * TQ_DIM);
  stored.forEach((v, i) => flat.set(v, i * TQ_DIM));
  const reach = Math.max(...stored.map((v) => Math.sqrt(dot(v, v))));
  let found = 0;
  for (let q = 0; q < 3; q++) {
    const query = row(queries, TQ_DIM, q);
    const internal = stored.map((_, i) => f(internalScore(model, query, decodeRecord(model, index.codes(i)))));
    const scan = index.search(query, { limit: 10, filter: everyOffset(index), quantization: { rescore: false } });
    const want = bestFirst('Dot', internal).slice(0, 10);
    let worst = 0;
    for (let i = 0; i < 10; i++) worst = Math.max(worst, Math.abs(scan.scores[i] - want[i]));
    t.ok(scan.scores.length === 10 && worst <= 1e-5 * Math.max(1, Math.sqrt(dot(query, query)) * reach), `${what}, query ${q}: the unrescored scan's top 10 by the estimator on the codes in use (worst error ${worst.toExponential(2)})`);
    const truth = bruteForce('Dot', flat, TQ_DIM, query, 10);
    close(t, index.search(query, { limit: 10, filter: everyOffset(index), quantization: { rescore: true, oversampling: n / 10 } }).scores, truth.map((i) => dot(query, stored[i])), `${what}, query ${q}: rescored at full oversampling, the exact top 10`);
    const graph = index.search(query, { limit: 10, ef: 64, quantization: { rescore: true, oversampling: 4 } });
    found += truth.filter((i) => Array.from(graph.offsets).includes(i)).length;
  }
  t.ok(found / 30 >= 0.9, `${what}: the graph on codes, rescored, finds the exact top 10 (recall ${(found / 30).toFixed(2)} >= 0.9)`);
}

t.test('TurboQuant: stores crossing a doubling keep the calibration in use; the optimizer refits it in bounded steps while stores and searches go on', async (t) => {
  const data = clustered(LINKED + STASHED + LATE + 200 + 3, TQ_DIM, 8, 3, 12, 0.2);
  const moves = data.subarray((LINKED + STASHED + LATE) * TQ_DIM);
  const queries = data.subarray((LINKED + STASHED + LATE + 200) * TQ_DIM);
  const index = await buildIndex({ dim: TQ_DIM, distance: 'Dot', quantization: { method: 'turbo', bits: 'bits4' } }, data.subarray(0, LINKED * TQ_DIM));
  for (let i = LINKED; i < LINKED + STASHED; i++) index.stash(i, row(data, TQ_DIM, i));
  const n = LINKED + STASHED;
  t.equal(index.quantizationTrainedOn, LINKED, 'the store that crossed 1024 did not refit the calibration');
  const inUse = fitModel('Dot', 'bits4', TQ_DIM, Array.from({ length: LINKED }, (_, i) => index.vector(i)), true);
  t.ok(turboCodedBy(index, inUse, n), 'every vector, pending ones included, is coded with the calibration fitted at 512');
  checkTurboSearches(t, index, inUse, queries, n, 'after the stores');
  const sample = Array.from({ length: TQ_SAMPLE }, (_, i) => index.vector(i));

  // The optimizer's steps, with stores between them from the first to the last: vectors past the
  // sampled offsets moved (pending again), behind and ahead of the coding cursor, and new offsets.
  const work: number[] = [];
  let more = true;
  for (let step = 0; more; step++) {
    more = index.trainQuantizationStep();
    work.push(index.trainingStepWork);
    if (step === 2) {
      const midImage = await reload(index);
      t.ok(turboCodedBy(midImage, inUse, n), 'mid-fit: an image holds the calibration and codes in use');
      t.equal(midImage.quantizationTrainedOn, LINKED, 'mid-fit: the image keeps what it was fitted on');
      t.ok(sameAnswers(index, midImage, TQ_DIM), 'mid-fit: the image answers as the index does');
    }
    if (!more) break;
    const at = TQ_SAMPLE + ((step * 37) % (n - TQ_SAMPLE));
    index.stash(at, row(moves, TQ_DIM, step % 200));
    if (step === 10) for (let i = n; i < n + LATE; i++) index.stash(i, row(data, TQ_DIM, i));
    // Once while the calibration is fitted, once while the vectors are coded with it.
    if (step === 6 || step === 30) {
      const stored = step > 10 ? n + LATE : n;
      t.ok(turboCodedBy(index, inUse, stored), `step ${step}: every vector is coded with the calibration in use, those stored meanwhile too`);
      checkTurboSearches(t, index, inUse, queries, stored, `step ${step}`);
    }
  }
  const total = n + LATE;
  t.ok(work.length > total / 64, `${work.length} steps for ${total} vectors`);
  t.ok(work.every((w) => w <= STEP_VALUES), `every step reads at most 64 vectors' coordinates (largest ${Math.max(...work)}, bound ${STEP_VALUES})`);
  t.ok(work.reduce((a, b) => a + b, 0) >= (TQ_SAMPLE + total) * TQ_DIM, 'the steps read the sample and code every vector');
  t.equal(index.quantizationTrainedOn, n, 'fitted on the vectors stored when the fit began');
  const refitted = fitModel('Dot', 'bits4', TQ_DIM, sample, true);
  t.ok(turboCodedBy(index, refitted, total), 'every vector is coded with the calibration Qdrant fits on the first 873, those stored during the fit included');
  checkTurboSearches(t, index, refitted, queries, total, 'after the fit, before linking');

  while (index.linkPending(64) > 0);
  t.notOk(index.trainQuantizationStep(), 'nothing left to train');
  checkTurboSearches(t, index, refitted, queries, total, 'after linking');
  const image = await reload(index);
  t.ok(Array.from({ length: total }, (_, i) => image.codes(i).join() === index.codes(i).join()).every(Boolean), 'an image keeps every code');
  t.same(image.serialize(), index.serialize(), 'and round-trips byte for byte');
});

t.test('TurboQuant: a stepped fit is deterministic, searches between its steps change nothing', async (t) => {
  const n = 400;
  const data = clustered(n + 3, TQ_DIM, 8, 9, 12, 0.2);
  const queries = data.subarray(n * TQ_DIM);
  const config: IndexConfig = { dim: TQ_DIM, distance: 'Dot', quantization: { method: 'turbo', bits: 'bits2' } };
  const make = async () => {
    const index = await VectorIndex.create(await engineModule(), config);
    for (let i = 0; i < n; i++) index.stash(i, row(data, TQ_DIM, i));
    return index;
  };
  const searched = await make();
  const straight = await make();
  let steps = 0;
  while (searched.trainQuantizationStep()) {
    steps++;
    searched.search(row(queries, TQ_DIM, steps % 3), { limit: 10, ef: 32 });
  }
  while (straight.trainQuantizationStep());
  t.ok(steps > 1, `${steps + 1} steps`);
  t.same(searched.serialize(), straight.serialize(), 'the same image whether searches ran between the steps or not');
  const model = fitModel('Dot', 'bits2', TQ_DIM, Array.from({ length: n }, (_, i) => straight.vector(i)), true);
  t.ok(turboCodedBy(straight, model, n), 'every code is the code of the reference fit in one go');
});

t.test('TurboQuant Euclid: a fit begun past 1024 vectors chooses the dimension order and applies it when installed', async (t) => {
  const n = 1100;
  const dim = 48;
  const data = clustered(n + 5, dim, 8, 5);
  const queries = data.subarray(n * dim);
  const index = await VectorIndex.create(await engineModule(), { dim, distance: 'Euclid', quantization: { method: 'turbo', bits: 'bits4' } });
  for (let i = 0; i < n; i++) index.stash(i, row(data, dim, i));
  const stored = data.subarray(0, n * dim);
  t.equal(index.quantizationTrainedOn, 0, 'stores never trained');
  // Fitted on one vector, every coordinate is flat: shift 0 and scale 1, the calibration before any fit.
  const identity = fitModel('Euclid', 'bits4', dim, [row(data, dim, 0)], true);
  const coded = () => Array.from({ length: n }, (_, i) => decodeRecord(identity, index.codes(i)).idx.join() === encode(identity, row(data, dim, i)).idx.join()).every(Boolean);
  t.ok(coded(), 'before the first fit every vector is coded uncalibrated, in its original order');
  let steps = 0;
  const work: number[] = [];
  for (let more = true; more; ) {
    more = index.trainQuantizationStep();
    work.push(index.trainingStepWork);
    if (!more) break;
    steps++;
    if (steps === 3) {
      const midImage = await reload(index);
      t.ok(sameAnswers(index, midImage, dim), 'mid-fit (the order chosen, not applied): an image answers as the index does');
    }
    if (steps % 5 !== 1) continue;
    t.ok(coded(), `step ${steps}: the codes in use are unchanged`);
    const query = row(queries, dim, steps % 5);
    const truth = bruteForce('Euclid', stored, dim, query, K);
    close(t, index.search(query, { limit: K, filter: everyOffset(index), quantization: { rescore: true, oversampling: n / K } }).scores, truth.map((i) => score('Euclid', query, row(data, dim, i))), `step ${steps}: rescored at full oversampling, the exact top ${K}`);
  }
  t.equal(index.quantizationTrainedOn, n, 'fitted on every stored vector');
  const middle = work.slice(1, -1);
  t.equal(work[0], n * dim, 'the first step reads the stored vectors to choose the order (a sample of at most 4096 of them, permute.ts)');
  t.ok(middle.every((w) => w <= 64 * dim), `every other step reads at most 64 vectors' coordinates (largest ${Math.max(...middle)})`);
  t.ok(work[work.length - 1] >= n * dim, 'the last step moves every stored vector into the new order (once, the first fit past 1024 vectors)');
  t.ok(Array.from({ length: n }, (_, i) => index.vector(i).every((x, j) => x === f(data[i * dim + j]))).every(Boolean), 'the stored vectors read back in their original order');
  while (index.linkPending(64) > 0);
  let found = 0;
  for (let q = 0; q < 5; q++) {
    const query = row(queries, dim, q);
    const truth = bruteForce('Euclid', stored, dim, query, K);
    close(t, index.search(query, { limit: K, filter: everyOffset(index), quantization: { rescore: true, oversampling: n / K } }).scores, truth.map((i) => score('Euclid', query, row(data, dim, i))), `query ${q}: rescored at full oversampling, the exact top ${K}`);
    const codes = index.search(query, { limit: K, ef: 128, quantization: { rescore: false } }).offsets;
    found += truth.filter((i) => Array.from(codes).includes(i)).length;
  }
  t.ok(found / (5 * K) > 0.8, `the codes of the permuted vectors rank the true neighbours first (recall ${(found / (5 * K)).toFixed(2)})`);
  const image = await reload(index);
  t.ok(sameAnswers(index, image, dim), 'an image answers as the index does (order and calibration came back)');
});

t.test('TurboQuant multivectors: a vacuum during a fit (the arena compacted) starts it again; the codes are a fresh index\'s', async (t) => {
  const dim = 32;
  const n = 400;
  const data = clustered(n * 3 + 6, dim, 6, 21);
  const queries = data.subarray(n * 3 * dim);
  // List i: 1 to 3 rows; every tenth is stored again with 3, orphaning its first slot in the arena.
  const rows = new Map<number, number>();
  const config: IndexConfig = { dim, distance: 'Dot', multivector: { comparator: 'max_sim' }, quantization: { method: 'turbo', bits: 'bits4' } };
  const index = await VectorIndex.create(await engineModule(), config);
  const store = (target: VectorIndex, i: number, k: number) => target.stash(i, data.subarray(i * 3 * dim, (i * 3 + k) * dim), k);
  for (let i = 0; i < n; i++) rows.set(i, 1 + (i % 3));
  for (const [i, k] of rows) store(index, i, k);
  for (let i = 0; i < n; i += 10) {
    rows.set(i, 3);
    store(index, i, 3);
  }
  // About 800 rows: the sample is gathered and calibrated in ~30 steps, then coded 64 rows a step.
  let more = true;
  for (let steps = 0; steps < 40 && more; steps++) more = index.trainQuantizationStep();
  t.ok(more, 'the fit is still coding rows');
  for (let i = 5; i < n; i += 10) {
    index.delete(i);
    rows.delete(i);
  }
  index.vacuum();
  while (index.trainQuantizationStep());
  const fresh = await VectorIndex.create(await engineModule(), config);
  for (const [i, k] of rows) store(fresh, i, k);
  while (fresh.trainQuantizationStep());
  t.equal(index.quantizationTrainedOn, fresh.quantizationTrainedOn, 'fitted on the same offsets');
  for (let q = 0; q < 3; q++) {
    const query = queries.subarray(q * 2 * dim, (q + 1) * 2 * dim);
    const a = index.search(query, { limit: 20, filter: everyOffset(index), quantization: { rescore: false } }, 2);
    const b = fresh.search(query, { limit: 20, filter: everyOffset(fresh), quantization: { rescore: false } }, 2);
    t.ok(a.offsets.join() === b.offsets.join() && a.scores.join() === b.scores.join(), `query ${q}: MaxSim on the codes answers as the fresh index's`);
  }
});

t.test('shard: writes crossing a doubling do not train; the optimizer trains before it links, and reports it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-train-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const dim = 32;
  const n = 1200;
  const data = clustered(n, dim, 12, 7);
  const shard = await Shard.open({
    path: dir,
    vectors: [{ name: 'v', size: dim, distance: 'Euclid', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: { method: 'product', compression: 'x16' } }],
    sparseVectors: [],
    indexes: [],
    // 100 KiB of 32-d f32 vectors = 800 vectors.
    optimizer: { indexingThresholdKb: 100, deletedThreshold: 0.2, vacuumMinVectorNumber: 1000, maxOptimizationThreads: null },
  });
  t.teardown(() => shard.close());
  const index = shard.vectorIndex('v')!;
  let op = 0;
  for (const [from, to] of [[0, 500], [500, n]]) {
    const points = Array.from({ length: to - from }, (_, i) => ({ id: from + i, vectors: { v: row(data, dim, from + i) }, payload: {} }));
    await shard.apply([{ kind: 'upsert', points, mode: 'upsert', updateFilter: null }], ++op, { peer: 0, clockId: 0, tick: op }, true);
    t.equal(index.quantizationTrainedOn, 0, `${to} points written: the writes did not train`);
  }
  const deadline = Date.now() + 60_000;
  while (shard.optimizations().running.length > 0 || shard.optimizations().queued.length > 0) {
    if (Date.now() > deadline) throw new Error('optimizer did not finish');
    await new Promise((r) => setImmediate(r));
  }
  t.equal(index.quantizationTrainedOn, n, 'the optimizer fitted the codebook on every point');
  t.equal(index.pendingCount, 0, 'and linked every point');
  const done = shard.optimizations().completed[0];
  t.same(done.progress.children.map((s) => s.name), ['train_quantization', 'link_vectors', 'persist_graph'], 'the optimization trained, then linked, then persisted');
  const query = row(data, dim, 7);
  const truth = bruteForce('Euclid', data, dim, query, 10);
  const found = index.search(query, { limit: 10, filter: everyOffset(index), quantization: { rescore: true, oversampling: n / 10 } });
  t.same(Array.from(found.offsets, (o) => shard.pointId(o)), truth, 'rescored at full oversampling: the exact top 10');
});
