// Product quantization (Qdrant's `product`) in the engine: codebooks and codes against a k-means and
// a nearest-centroid search done here in plain JS, unrescored scores against the distances to the
// vectors rebuilt from their centroids, rescored answers and recall against brute force, pending
// vectors, multivectors (MaxSim on codes) and serialisation.

import t, { type Test } from 'tap';
import { VectorIndex, type Compression, type Distance, type IndexConfig } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { syntheticMultivectors, listOf } from '../src/bench/multivector-data.js';
import { clustered, row, uniform } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';
import { maxSimScore } from './helpers/maxsim.js';
import { better, bruteForce, recall, score } from './helpers/reference.js';
import { everyOffset } from './helpers/full-scan.js';
import { chunkRange, kmeans, nearest, normalised, quantizedScore, rebuilt } from './helpers/product-reference.js';

const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const BUCKET: Record<Compression, number> = { x4: 1, x8: 2, x16: 4, x32: 8, x64: 16 };
// A seed whose reference run empties no centroid (an empty one is refilled at random, which a JS run cannot replay).
const SEED = 6;
const product = (compression: Compression) => ({ method: 'product', compression }) as const;

function closeScores(t: Test, got: ArrayLike<number>, want: ArrayLike<number>, message: string, tolerance = 1e-4): void {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i])));
  t.ok(got.length === want.length && worst < tolerance, `${message} (worst relative error ${worst})`);
}

function sortedBest(distance: Distance, scores: number[], k: number): number[] {
  return [...scores].sort((x, y) => (better(distance, x, y) ? -1 : better(distance, y, x) ? 1 : 0)).slice(0, k);
}

t.test('up to 256 vectors: each is its own centroid (the rest zero), every code picks it back', async (t) => {
  const dim = 26; // x8..x64 leave a shorter last chunk
  const n = 128; // the last fit (at 1, 2, 4, ... stored offsets) saw them all
  for (const compression of ['x4', 'x8', 'x16', 'x32', 'x64'] as Compression[]) {
    const b = BUCKET[compression];
    const data = uniform(n * dim, 3);
    const index = await buildIndex({ dim, distance: 'Euclid', quantization: product(compression) }, data);
    const codebook = index.productCodebook();
    let centroids = true;
    for (let k = 0; k < 256; k++) for (let j = 0; j < dim; j++) centroids &&= codebook[j * 256 + k] === (k < n ? data[k * dim + j] : 0);
    t.ok(centroids, `${compression}: centroid k is vector k`);
    t.equal(index.codes(0).length, Math.ceil(dim / b), `${compression}: one code byte per chunk of ${b}`);
    let own = 0;
    for (let i = 0; i < n; i++) if (index.codes(i).every((k) => k === i)) own++;
    t.equal(own, n, `${compression}: every vector's chunks code to its own centroid`);
    // Rebuilt vectors are the vectors, so unrescored scores are the exact ones.
    const query = uniform(dim, 99);
    const found = index.search(query, { limit: 10, filter: everyOffset(index) });
    const want = bruteForce('Euclid', data, dim, query, 10).map((i) => score('Euclid', query, row(data, dim, i)));
    closeScores(t, found.scores, want, `${compression}: unrescored top-10 scores are exact`);
  }
});

for (const compression of ['x8', 'x16'] as Compression[]) {
  for (const distance of ['Euclid', 'Cosine'] as Distance[]) {
    t.test(`${compression} ${distance}: the codebook is Qdrant's k-means over the first 512 vectors, codes their nearest centroids`, async (t) => {
      const dim = 24;
      const n = 600; // fitted at 1, 2, 4, ..., 512 stored vectors; 600 < 1024 keeps the original dimension order
      const b = BUCKET[compression];
      const index = await buildIndex({ dim, distance, quantization: product(compression) }, uniform(n * dim, SEED));
      const stored = Array.from({ length: n }, (_, i) => index.vector(i));
      const want = new Float32Array(dim * 256);
      let full = true;
      for (let c = 0; c < Math.ceil(dim / b); c++) full &&= kmeans(stored.slice(0, 512), ...chunkRange(dim, b, c), want);
      t.ok(full, 'the reference run never emptied a centroid (so no random refill was drawn)');
      t.same(Array.from(index.productCodebook()), Array.from(want), 'codebook identical to the reference k-means');
      let coded = 0;
      for (let i = 0; i < n; i++) {
        const code = Array.from({ length: Math.ceil(dim / b) }, (_, c) => nearest(want, stored[i], ...chunkRange(dim, b, c)));
        if (code.join() === index.codes(i).join()) coded++;
      }
      t.equal(coded, n, 'every code is the nearest centroid of each chunk (vectors after the fit included)');
    });
  }
}

for (const distance of DISTANCES) {
  t.test(`${distance}: unrescored scores are the scores against the rebuilt vectors (graph and full scan); pending vectors score on the originals`, async (t) => {
    const dim = 40;
    const n = 900;
    const data = clustered(n, dim, 10, 11, 6, 0.1);
    const config: IndexConfig = { dim, distance, quantization: product('x8') };
    const index = await buildIndex(config, data);
    const pending = await VectorIndex.create(await engineModule(), config);
    for (let i = 0; i < n; i++) pending.stash(i, row(data, dim, i));
    t.equal(pending.pendingCount, n, 'stashed vectors stay pending');
    for (const idx of [index, pending]) {
      const codebook = idx.productCodebook();
      // Qdrant keeps product codes off appendable segments: unlinked vectors are scored as stored.
      const scored = idx === pending
        ? Array.from({ length: n }, (_, i) => idx.vector(i))
        : Array.from({ length: n }, (_, i) => rebuilt(codebook, idx.codes(i), dim, 2));
      const what = idx === pending ? 'pending' : 'linked';
      for (let q = 0; q < 8; q++) {
        const query = uniform(dim, 300 + q, -2, 2);
        const want = scored.map((v) => quantizedScore(distance, query, v));
        for (const [how, found] of [
          ['full scan', idx.search(query, { limit: 15, filter: everyOffset(idx) })],
          ['graph or pending scan', idx.search(query, { limit: 15, ef: 64 })],
        ] as const) {
          closeScores(t, found.scores, Array.from(found.offsets, (o) => want[o]), `${what}, ${how}: the default (unrescored) scores`);
        }
        const scan = idx.search(query, { limit: 15, filter: everyOffset(idx), quantization: { rescore: false } });
        closeScores(t, scan.scores, sortedBest(distance, want, 15), `${what}, full scan unrescored: the best 15 by the score used`);
        const rescored = idx.search(query, { limit: 15, filter: everyOffset(idx), quantization: { rescore: true, oversampling: n / 15 } });
        const truth = bruteForce(distance, data, dim, query, 15).map((i) => score(distance, query, row(data, dim, i)));
        closeScores(t, rescored.scores, truth, `${what}: rescored at full oversampling: the exact top-15`);
        closeScores(t, idx.search(query, { limit: 15, exact: true }).scores, truth, `${what}: params.exact: the exact top-15`);
        closeScores(t, idx.search(query, { limit: 15, filter: everyOffset(idx), quantization: { ignore: true } }).scores, truth, `${what}: ignore: the exact top-15`);
      }
    }
  });
}

t.test('recall on clustered data: rescored product codes against brute force (Euclid and Manhattan also refit after reordering)', async (t) => {
  const n = 6000;
  const dim = 64;
  const all = clustered(n + 50, dim, 30, 21, 16, 0.1);
  const data = all.subarray(0, n * dim);
  for (const distance of DISTANCES) {
    for (const compression of ['x8', 'x32'] as Compression[]) {
      const index = await buildIndex({ dim, distance, quantization: product(compression) }, data);
      let rescored = 0;
      let raw = 0;
      for (let q = 0; q < 50; q++) {
        const query = row(all, dim, n + q);
        const truth = bruteForce(distance, data, dim, query, 10);
        rescored += recall(index.search(query, { limit: 10, ef: 128, quantization: { rescore: true, oversampling: 4 } }).offsets, truth);
        raw += recall(index.search(query, { limit: 10, ef: 128 }).offsets, truth);
      }
      const floor = compression === 'x8' ? 0.95 : 0.7;
      t.ok(rescored / 50 >= floor, `${distance} ${compression}: rescored recall@10 at oversampling 4 is ${(rescored / 50).toFixed(3)} (>= ${floor}); unrescored ${(raw / 50).toFixed(3)}`);
      t.ok(rescored >= raw, `${distance} ${compression}: rescoring does not lose recall`);
    }
  }
});

t.test('multivectors: MaxSim on per-row codes, rescored MaxSim on the stored rows', async (t) => {
  const dim = 30;
  const set = syntheticMultivectors({ points: 300, dim, minK: 1, maxK: 6, topics: 12, topicSeed: 3, seed: 4 });
  const queries = syntheticMultivectors({ points: 6, dim, minK: 1, maxK: 3, topics: 12, topicSeed: 3, seed: 5 });
  for (const distance of DISTANCES) {
    const index = await VectorIndex.create(await engineModule(), { dim, distance, multivector: { comparator: 'max_sim' }, quantization: product('x16') });
    const lists = Array.from({ length: 300 }, (_, i) => listOf(set, i));
    lists.forEach((list, i) => index.upsert(i, list, list.length / dim));
    // 300 lists: last fitted at 256 of them, on all their rows in storage order (fewer than 10000).
    const stored = lists.map((_, i) => index.vector(i));
    const rows = (list: Float32Array) => Array.from({ length: list.length / dim }, (_, r) => list.subarray(r * dim, (r + 1) * dim));
    const want = new Float32Array(dim * 256);
    let full = true;
    for (let c = 0; c < Math.ceil(dim / 4); c++) full &&= kmeans(stored.slice(0, 256).flatMap(rows), ...chunkRange(dim, 4, c), want);
    t.ok(full, `${distance}: the reference run never emptied a centroid`);
    const codebook = index.productCodebook();
    t.same(Array.from(codebook), Array.from(want), `${distance}: the codebook is k-means over the flattened rows`);
    const approxLists = stored.map((list) => {
      const out = new Float32Array(list.length);
      rows(list).forEach((r, i) => {
        const code = Uint8Array.from({ length: Math.ceil(dim / 4) }, (_, c) => nearest(codebook, r, ...chunkRange(dim, 4, c)));
        out.set(rebuilt(codebook, code, dim, 4), i * dim);
      });
      return out;
    });
    for (let q = 0; q < 6; q++) {
      const query = listOf(queries, q);
      const k = query.length / dim;
      const want = approxLists.map((list) => {
        let sum = 0;
        for (let a = 0; a < query.length; a += dim) {
          let best = -Infinity;
          const qa = query.subarray(a, a + dim);
          for (let b = 0; b < list.length; b += dim) {
            const s = quantizedScore(distance, qa, list.subarray(b, b + dim));
            best = Math.max(best, distance === 'Euclid' ? -(s * s) : distance === 'Manhattan' ? -s : s);
          }
          sum += best;
        }
        return distance === 'Euclid' ? Math.sqrt(Math.abs(sum)) : distance === 'Manhattan' ? Math.abs(sum) : sum;
      });
      const raw = index.search(query, { limit: 10, filter: everyOffset(index) }, k);
      closeScores(t, raw.scores, Array.from(raw.offsets, (o) => want[o]), `${distance}: unrescored MaxSim scores on codes`);
      closeScores(t, raw.scores, sortedBest(distance, want, 10), `${distance}: the top 10 by quantized MaxSim`);
      const full = index.search(query, { limit: 10, filter: everyOffset(index), quantization: { rescore: true, oversampling: 30 } }, k);
      const exact = sortedBest(distance, lists.map((list) => maxSimScore(distance, dim, query, list)), 10);
      closeScores(t, full.scores, exact, `${distance}: rescored MaxSim at full oversampling is exact`);
    }
  }
});

t.test('float16 and uint8: codes are fitted to the stored values (uint8 Cosine normalised)', async (t) => {
  const dim = 16;
  for (const [datatype, distance] of [['float16', 'Dot'], ['uint8', 'Cosine'], ['uint8', 'Euclid']] as const) {
    const data = uniform(128 * dim, 8, 0, 200);
    const index = await buildIndex({ dim, distance, datatype, quantization: product('x16') }, data);
    const codebook = index.productCodebook();
    let own = true;
    for (let i = 0; i < 128; i++) {
      const v = index.vector(i);
      const source = datatype === 'uint8' && distance === 'Cosine' ? normalised(v) : v;
      // The engine's norm is an f32 SIMD sum, so a normalised value may differ in the last bit.
      for (let j = 0; j < dim; j++) own &&= Math.abs(codebook[j * 256 + i] - source[j]) <= 1e-6 * Math.abs(source[j]);
    }
    t.ok(own, `${datatype} ${distance}: centroid k is stored vector k in code space`);
  }
});

t.test('a serialised product index loads with its codebook, codes and answers', async (t) => {
  // Dot: 1030 crosses the doubling at 1024 after the load, so the copy must refit as the original does.
  for (const [distance, n] of [['Euclid', 2000], ['Dot', 1020]] as const) {
    const data = clustered(n, 48, 8, 9, 6, 0.1);
    const index = await buildIndex({ dim: 48, distance, quantization: product('x32') }, data);
    const copy = await VectorIndex.load(await engineModule(), index.serialize());
    t.same(copy.config.quantization, product('x32'), `${distance}: the method and compression come back`);
    t.same(Array.from(copy.productCodebook()), Array.from(index.productCodebook()), `${distance}: identical codebook`);
    let same = true;
    for (let i = 0; i < n; i++) same &&= Buffer.compare(index.codes(i), copy.codes(i)) === 0;
    t.ok(same, `${distance}: identical codes`);
    for (let q = 0; q < 20; q++) {
      const query = uniform(48, 500 + q);
      for (const quantization of [{}, { rescore: true, oversampling: 3 }]) {
        const a = index.search(query, { limit: 10, quantization });
        const b = copy.search(query, { limit: 10, quantization });
        same &&= a.offsets.join() === b.offsets.join() && a.scores.join() === b.scores.join();
      }
    }
    t.ok(same, `${distance}: identical answers for 20 queries, unrescored and rescored`);
    // Inserting into the copy keeps refitting on the same schedule as the original.
    const more = uniform(48 * 10, 77);
    for (let i = 0; i < 10; i++) {
      index.upsert(n + i, row(more, 48, i));
      copy.upsert(n + i, row(more, 48, i));
    }
    t.same(Array.from(copy.productCodebook()), Array.from(index.productCodebook()), `${distance}: the same codebook after more inserts`);
  }
});
