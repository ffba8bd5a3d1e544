// Stored vectors live in chunks of 2^14 vectors (assembly/layout.ts), so one index can hold more
// than the allocator's 1 GiB block. 40000 small vectors span three chunks: every read across a
// chunk boundary (graph and exact search, the Euclid dimension reorder fitted at 1024 vectors,
// reading a vector back, the byte image's round trip) must see the vectors as stored.

import t, { type Test } from 'tap';
import { VectorIndex, type Datatype, type Distance, type IndexConfig } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { clustered, rng, row } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';
import { bruteForce, recall, score } from './helpers/reference.js';

const CHUNK = 1 << 14;
const N = 40000;
const DIM = 8;
const QUERIES = 30;
// Offsets on each side of every chunk boundary, and the last one.
const EDGES = [0, CHUNK - 1, CHUNK, 2 * CHUNK - 1, 2 * CHUNK, N - 1];

/** Values every datatype stores exactly: integers 0..255 (uint8), eighths in [-4, 4) otherwise. */
function exactValues(n: number, datatype: Datatype, seed: number): Float32Array {
  const next = rng(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = datatype === 'uint8' ? Math.floor(next() * 256) : Math.floor(next() * 64 - 32) / 8;
  return out;
}

/** Exact search returns the brute-force top-k scores, each the true score of the offset returned. */
function checkExact(t: Test, index: VectorIndex, distance: Distance, data: Float32Array, queries: Float32Array, label: string, dim = DIM): void {
  let wrong = 0;
  for (let q = 0; q < queries.length / dim; q++) {
    const query = row(queries, dim, q);
    const found = index.search(query, { limit: 10, exact: true });
    const truth = bruteForce(distance, data, dim, query, 10).map((i) => score(distance, query, row(data, dim, i)));
    for (let i = 0; i < 10; i++) {
      const own = score(distance, query, row(data, dim, found.offsets[i]));
      const tol = 1e-4 * Math.max(1, Math.abs(truth[i]));
      if (Math.abs(own - truth[i]) > tol || Math.abs(found.scores[i] - truth[i]) > tol) wrong++;
    }
  }
  t.equal(wrong, 0, `${label}: exact top-10 equals brute force`);
}

function checkEdges(t: Test, index: VectorIndex, data: Float32Array, label: string, edges = EDGES, dim = DIM): void {
  for (const offset of edges) t.same(Array.from(index.vector(offset)), Array.from(row(data, dim, offset)), `${label}: vector ${offset} reads back`);
}

for (const [datatype, distance] of [['float32', 'Euclid'], ['float16', 'Dot'], ['uint8', 'Manhattan']] as const) {
  t.test(`${datatype} ${distance}: ${N} vectors over three chunks, stored, searched exactly, persisted`, async (t) => {
    const data = exactValues(N * DIM, datatype, 7);
    const queries = exactValues(QUERIES * DIM, datatype, 8);
    const config: IndexConfig = { dim: DIM, distance, datatype };
    const index = await VectorIndex.create(await engineModule(), config);
    for (let i = 0; i < N; i++) index.stash(i, row(data, DIM, i));
    t.equal(index.size, N);
    checkEdges(t, index, data, 'stored');
    checkExact(t, index, distance, data, queries, 'stored');
    const copy = await VectorIndex.load(await engineModule(), index.serialize());
    t.equal(copy.size, N);
    checkEdges(t, copy, data, 'loaded');
    checkExact(t, copy, distance, data, queries, 'loaded');
  });
}

t.test('graph over three chunks: recall against brute force, identical after a round trip', async (t) => {
  const distance = 'Euclid';
  const all = clustered(N + QUERIES, DIM, 20, 5, 4, 0.05);
  const data = all.subarray(0, N * DIM);
  const queries = all.subarray(N * DIM);
  const index = await buildIndex({ dim: DIM, distance, m: 8, efConstruct: 40 }, data);
  t.equal(index.linkedCount, N);
  checkEdges(t, index, data, 'graph');
  const copy = await VectorIndex.load(await engineModule(), index.serialize());
  let total = 0;
  let differ = 0;
  for (let q = 0; q < QUERIES; q++) {
    const query = row(queries, DIM, q);
    const found = index.search(query, { limit: 10, ef: 100 });
    total += recall(found.offsets, bruteForce(distance, data, DIM, query, 10));
    if (Array.from(copy.search(query, { limit: 10, ef: 100 }).offsets).join() !== Array.from(found.offsets).join()) differ++;
  }
  t.ok(total / QUERIES >= 0.95, `recall@10 ${(total / QUERIES).toFixed(4)}`);
  t.equal(differ, 0, 'the loaded index answers as the original');
});

t.test('wide vectors get smaller chunks: 70000-d float32 (280 KB each) in chunks of 512', async (t) => {
  // 2^14 such vectors would be 4.6 GB; a chunk stays within 256 MiB, so 2^9 vectors.
  const dim = 70000;
  const n = 520;
  const data = exactValues(n * dim, 'float32', 3);
  const queries = exactValues(3 * dim, 'float32', 4);
  const index = await VectorIndex.create(await engineModule(), { dim, distance: 'Dot' });
  for (let i = 0; i < n; i++) index.stash(i, row(data, dim, i));
  checkEdges(t, index, data, 'wide', [0, 511, 512, n - 1], dim);
  checkExact(t, index, 'Dot', data, queries, 'wide', dim);
});
