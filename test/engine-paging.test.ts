// Paged regions (assembly/pages.ts, Qdrant's `cold` placement): the stored vectors (a multivector
// index's lists) and/or codes live in a page store and in linear memory only while used. With a
// budget of a few pages every search, store and training step reads pages back and evicts others,
// so any row read after its page left memory, or any write lost on eviction or put at the wrong
// place of the file, changes an answer: each index below is built twice from the same inserts,
// once with every row in memory, and must answer bit for bit alike, write the same image, and
// load into a paged index that answers alike again.

import t from 'tap';
import { VectorIndex, type IndexConfig, type PageStore, type Paging } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { clustered, row } from './helpers/data.js';

const N = 3000;
const DIM = 24;
const BUDGET = 16 * 1024;

/** A page store as a file would be: a growable byte run per region (unwritten bytes read as 0); counts its traffic. */
class BytePages implements PageStore {
  private readonly files = new Map<number, Uint8Array>();
  reads = 0;
  writes = 0;
  read(region: number, position: number, into: Uint8Array): void {
    this.reads++;
    const file = this.files.get(region) ?? new Uint8Array(0);
    into.fill(0);
    into.set(file.subarray(Math.min(position, file.length), Math.min(position + into.length, file.length)));
  }
  write(region: number, position: number, from: Uint8Array): void {
    this.writes++;
    let file = this.files.get(region) ?? new Uint8Array(0);
    if (file.length < position + from.length) {
      const grown = new Uint8Array(Math.max(position + from.length, file.length * 2));
      grown.set(file);
      file = grown;
      this.files.set(region, file);
    }
    file.set(from, position);
  }
}

function paging(vectors: boolean, codes: boolean, graph: boolean, store = new BytePages()): Paging & { store: BytePages } {
  return { vectors, codes, graph, budgetBytes: BUDGET, store };
}

interface Case { label: string; config: IndexConfig; vectors: boolean; codes: boolean; graph?: boolean; viaOptimizer?: boolean }

const CASES: Case[] = [
  // Euclid fits the dimension order at 1024 vectors: every stored vector is rewritten in place.
  { label: 'float32 Euclid, vectors and graph paged', config: { dim: DIM, distance: 'Euclid' }, vectors: true, codes: false, graph: true },
  { label: 'float16 Dot, vectors paged', config: { dim: DIM, distance: 'Dot', datatype: 'float16' }, vectors: true, codes: false },
  { label: 'uint8 Manhattan, vectors paged', config: { dim: DIM, distance: 'Manhattan', datatype: 'uint8' }, vectors: true, codes: false },
  { label: 'int8 Cosine, vectors, codes and graph paged', config: { dim: DIM, distance: 'Cosine', quantization: { quantile: 0.99 } }, vectors: true, codes: true, graph: true },
  { label: 'int8 Euclid, codes paged only', config: { dim: DIM, distance: 'Euclid', quantization: {} }, vectors: false, codes: true },
  { label: 'float32 Dot, graph paged only', config: { dim: DIM, distance: 'Dot' }, vectors: false, codes: false, graph: true },
  { label: 'binary two_bits Dot, vectors paged only', config: { dim: DIM, distance: 'Dot', quantization: { method: 'binary', encoding: 'two_bits' } }, vectors: true, codes: false },
  { label: 'product x8 Euclid, all paged, trained by the optimizer', config: { dim: DIM, distance: 'Euclid', quantization: { method: 'product', compression: 'x8' } }, vectors: true, codes: true, graph: true, viaOptimizer: true },
  { label: 'TurboQuant bits2 Cosine, both paged, trained by the optimizer', config: { dim: DIM, distance: 'Cosine', quantization: { method: 'turbo', bits: 'bits2' } }, vectors: true, codes: true, viaOptimizer: true },
  { label: 'turbo4 datatype Dot, records paged', config: { dim: DIM, distance: 'Dot', datatype: 'turbo4' }, vectors: true, codes: false },
];

/** Same inserts: upserts, or stashes linked and trained as the shard optimizer does; a few replaced and removed. */
function fill(index: VectorIndex, data: Float32Array, viaOptimizer: boolean): void {
  for (let i = 0; i < N; i++) {
    if (viaOptimizer) index.stash(i, row(data, DIM, i));
    else index.upsert(i, row(data, DIM, i));
    if (viaOptimizer && i % 500 === 499) {
      while (index.trainQuantizationStep());
      index.linkPending(500);
    }
  }
  for (let i = 0; i < N; i += 97) index.upsert(i, row(data, DIM, (i * 7) % N));
  for (let i = 5; i < N; i += 131) index.delete(i);
}

function answers(index: VectorIndex, queries: Float32Array): string {
  const out: string[] = [];
  for (let q = 0; q < queries.length / DIM; q++) {
    const query = row(queries, DIM, q);
    for (const options of [{ limit: 10, ef: 40 }, { limit: 10, exact: true }, { limit: 5, ef: 30, quantization: { rescore: true, oversampling: 3 } }, { limit: 5, ef: 30, quantization: { ignore: true } }]) {
      const found = index.search(query, options);
      out.push(`${Array.from(found.offsets)}|${Array.from(found.scores)}`);
    }
  }
  return out.join('\n');
}

for (const c of CASES) {
  t.test(c.label, async (t) => {
    const module = await engineModule();
    const data = clustered(N, DIM, 12, 31);
    const queries = clustered(20, DIM, 12, 32);
    const pinned = await VectorIndex.create(module, c.config);
    const paged = paging(c.vectors, c.codes, c.graph ?? false);
    const cold = await VectorIndex.create(module, { ...c.config, paging: paged });
    fill(pinned, data, c.viaOptimizer ?? false);
    fill(cold, data, c.viaOptimizer ?? false);
    t.ok(paged.store.writes > 0 && paged.store.reads > 0, `pages went out and came back (${paged.store.writes} writes, ${paged.store.reads} reads)`);

    t.equal(answers(cold, queries), answers(pinned, queries), 'graph, exact and quantized searches answer bit for bit alike');
    for (const offset of [0, 1, 97, N - 1]) t.same(cold.storedBytes(offset), pinned.storedBytes(offset), `stored row ${offset} reads back`);
    if (pinned.quantized) t.same(cold.codes(N - 2), pinned.codes(N - 2), 'codes read back');
    t.ok(cold.residentPageBytes <= BUDGET, `between calls at most the budget is resident (${cold.residentPageBytes} bytes)`);

    const image = cold.serialize();
    t.same(image, pinned.serialize(), 'the image is the one the unpaged index writes');
    const reloaded = await VectorIndex.load(module, image, { paging: paging(c.vectors, c.codes, c.graph ?? false) });
    t.equal(answers(reloaded, queries), answers(pinned, queries), 'loaded paged from the image: the same answers');
    t.ok(reloaded.residentPageBytes <= BUDGET, 'and after a load');
  });
}

// Multivector lists are paged a list at a time, at their arena place in the file; their codes by
// arena row. Lists of 1 to 9 vectors; some stored again longer (moved to the arena's end, a hole
// left in the file) or shorter (kept in place), some deleted; then a vacuum compacts the arena in
// place in the file, and the answers must still be those of the index in memory.
const LISTS = 800;
const MULTI_CASES: Case[] = [
  { label: 'float32 Dot lists and graph paged', config: { dim: DIM, distance: 'Dot' }, vectors: true, codes: false, graph: true },
  { label: 'int8 Cosine lists and codes paged', config: { dim: DIM, distance: 'Cosine', quantization: {} }, vectors: true, codes: true },
  { label: 'binary Euclid codes paged only', config: { dim: DIM, distance: 'Euclid', quantization: { method: 'binary' } }, vectors: false, codes: true },
  { label: 'product x4 Dot, both paged, trained by the optimizer', config: { dim: DIM, distance: 'Dot', quantization: { method: 'product', compression: 'x4' } }, vectors: true, codes: true, viaOptimizer: true },
  { label: 'turbo4 datatype Cosine, list records paged', config: { dim: DIM, distance: 'Cosine', datatype: 'turbo4' }, vectors: true, codes: false },
];

function listOf(data: Float32Array, at: number, k: number): Float32Array {
  return data.subarray(at * DIM, (at + k) * DIM);
}

function fillLists(index: VectorIndex, data: Float32Array, viaOptimizer: boolean): void {
  const rows = data.length / DIM;
  for (let i = 0; i < LISTS; i++) {
    const k = 1 + (i % 9);
    const list = listOf(data, (i * 5) % (rows - 9), k);
    if (viaOptimizer) index.stash(i, list, k);
    else index.upsert(i, list, k);
    if (viaOptimizer && i % 200 === 199) {
      while (index.trainQuantizationStep());
      index.linkPending(200);
    }
  }
  for (let i = 0; i < LISTS; i += 13) index.upsert(i, listOf(data, (i * 3) % (rows - 9), 9), 9); // longer: moved
  for (let i = 7; i < LISTS; i += 17) index.upsert(i, listOf(data, (i * 11) % (rows - 9), 1), 1); // shorter: in place
  for (let i = 3; i < LISTS; i += 29) index.delete(i);
}

function listAnswers(index: VectorIndex, queries: Float32Array): string {
  const out: string[] = [];
  for (let q = 0; q < 12; q++) {
    const query = listOf(queries, q * 3, 3);
    for (const options of [{ limit: 10, ef: 40 }, { limit: 10, exact: true }, { limit: 5, ef: 30, quantization: { rescore: true, oversampling: 2 } }]) {
      const found = index.search(query, options, 3);
      out.push(`${Array.from(found.offsets)}|${Array.from(found.scores)}`);
    }
  }
  return out.join('\n');
}

for (const c of MULTI_CASES) {
  t.test(`multivector: ${c.label}`, async (t) => {
    const module = await engineModule();
    const data = clustered(4000, DIM, 12, 41);
    const queries = clustered(40, DIM, 12, 42);
    const config: IndexConfig = { ...c.config, multivector: { comparator: 'max_sim' } };
    const pinned = await VectorIndex.create(module, config);
    const paged = paging(c.vectors, c.codes, c.graph ?? false);
    const cold = await VectorIndex.create(module, { ...config, paging: paged });
    fillLists(pinned, data, c.viaOptimizer ?? false);
    fillLists(cold, data, c.viaOptimizer ?? false);
    t.ok(paged.store.writes > 0 && paged.store.reads > 0, `pages went out and came back (${paged.store.writes} writes, ${paged.store.reads} reads)`);
    t.equal(listAnswers(cold, queries), listAnswers(pinned, queries), 'searches answer bit for bit alike');
    for (const offset of [0, 7, 13, LISTS - 1]) t.same(cold.vector(offset), pinned.vector(offset), `list ${offset} reads back`);
    t.ok(cold.residentPageBytes <= BUDGET, `between calls at most the budget is resident (${cold.residentPageBytes} bytes)`);
    t.same(cold.serialize(), pinned.serialize(), 'the image is the one the unpaged index writes');

    pinned.vacuum();
    cold.vacuum();
    pinned.linkPending(LISTS);
    cold.linkPending(LISTS);
    t.equal(listAnswers(cold, queries), listAnswers(pinned, queries), 'after a vacuum compacted the arena: the same answers');
    for (const offset of [0, 7, 13, LISTS - 1]) t.same(cold.vector(offset), pinned.vector(offset), `list ${offset} reads back after it`);
    const image = cold.serialize();
    t.same(image, pinned.serialize(), 'and the same image');
    const reloaded = await VectorIndex.load(module, image, { paging: paging(c.vectors, c.codes, c.graph ?? false) });
    t.equal(listAnswers(reloaded, queries), listAnswers(pinned, queries), 'loaded paged from the image: the same answers');
    t.ok(reloaded.residentPageBytes <= BUDGET, 'and after a load');
  });
}
