// The engine's count of Qdrant's `cpu` hardware measure for a search: bytes of vector data
// compared. An exact scan compares every live allowed vector once (dim * 4 bytes of f32); int8
// codes compare dim bytes each, binary codes their padded bytes, and the rescored candidates
// dim * 4 again; a multivector search compares every pair of query and stored rows.

import t from 'tap';
import { Bitset, VectorIndex } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { rng } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';

const DIM = 8;
const N = 50;
const random = rng(5);
const data = Float32Array.from({ length: N * DIM }, () => random() - 0.5);
const query = Array.from({ length: DIM }, () => random() - 0.5);
// Every offset: an allowed set this small is scanned on the codes (params.exact reads the originals).
const all = Bitset.of(N, Array.from({ length: N }, (_, i) => i));

t.test('exact f32 scan: every live allowed vector once', async (t) => {
  const index = await buildIndex({ dim: DIM, distance: 'Dot' }, data);
  t.equal(index.search(query, { limit: 5, exact: true }).cost, N * DIM * 4);
  index.delete(3);
  const allowed = new Bitset(N);
  for (let i = 0; i < N; i += 2) allowed.add(i);
  t.equal(index.search(query, { limit: 5, exact: true, filter: allowed }).cost, (N / 2) * DIM * 4, 'deleted and filtered-out vectors are not compared');
  t.ok(index.search(query, { limit: 5 }).cost > 0, 'a graph search compares some vectors');
  t.equal(index.search(query, { limit: 0 }).cost, 0, 'a search for nothing compares nothing');
});

t.test('int8 codes: dim bytes per code, dim * 4 per rescored candidate', async (t) => {
  const index = await buildIndex({ dim: DIM, distance: 'Dot', quantization: { quantile: 1 } }, data);
  const limit = 4;
  t.equal(index.search(query, { limit, filter: all, quantization: { rescore: false } }).cost, N * DIM, 'codes only');
  t.equal(index.search(query, { limit, filter: all, quantization: { rescore: true, oversampling: 2 } }).cost, N * DIM + 2 * limit * DIM * 4, 'codes, then the oversampled pool rescored');
  t.equal(index.search(query, { limit, exact: true, quantization: { rescore: false } }).cost, N * DIM * 4, 'exact: the f32 vectors, as Qdrant');
});

t.test('binary codes: ceil(dim / 128) * 16 bytes per code, dim * 4 per rescored candidate', async (t) => {
  const index = await buildIndex({ dim: DIM, distance: 'Dot', quantization: { method: 'binary' } }, data);
  const limit = 4;
  const codeBytes = Math.ceil(DIM / 128) * 16;
  t.equal(index.search(query, { limit, filter: all, quantization: { rescore: false } }).cost, N * codeBytes, 'codes only');
  t.equal(index.search(query, { limit, filter: all, quantization: { oversampling: 2 } }).cost, N * codeBytes + 2 * limit * DIM * 4, 'codes, then the oversampled pool rescored (by default)');
});

t.test('multivectors: every pair of query and stored rows', async (t) => {
  const index = await VectorIndex.create(await engineModule(), { dim: 2, distance: 'Dot', multivector: { comparator: 'max_sim' } });
  const rows = [1, 3, 2];
  rows.forEach((k, id) => index.upsert(id, Array.from({ length: k * 2 }, () => random()), k));
  const queryRows = 2;
  const found = index.search(Array.from({ length: queryRows * 2 }, () => random()), { limit: 3, exact: true }, queryRows);
  t.equal(found.cost, rows.reduce((n, k) => n + queryRows * k * 2 * 4, 0));
});
