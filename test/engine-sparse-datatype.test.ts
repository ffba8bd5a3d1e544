// Sparse index datatypes (Qdrant's sparse index `datatype`): posting values stored as float16 or
// as per-list uint8 codes, scores computed from them as Qdrant computes them; the stored vectors
// keep the values as given. The reference is computed here from the documented formulas:
//
// - float16: the value rounded to 11 significant bits (quantum 2^(floor(log2|v|) - 10), 2^-24
//   below 2^-14), ties to even, beyond 65504 an infinity;
// - uint8: per index over the live documents holding it, min and diff256 = (max - min) / 255 in
//   f32; code round((v - min) / diff256) (half away from zero, clamped to [0, 255], NaN -> 0);
//   value min + code * diff256 (f32 steps);
// - score: the products over shared indices summed in f64 in index order, rounded to f32.

import t from 'tap';
import { Bitset, SparseIndex, type SparseDatatype, type SparseSearchOptions } from '../src/engine/index.js';
import { fromHalf, toHalf } from '../src/engine/sparse-datatype.js';
import { sparseModule } from '../src/runtime/wasm-module.js';
import { rng } from './helpers/data.js';

const module = await sparseModule();
const VOCAB = 300;
const N = 1500;

interface Doc {
  indices: number[];
  values: number[];
}

/** Documents with indices ascending, values in f32, a tenth negative. */
function randomDocs(n: number, seed: number, mean: number): Doc[] {
  const next = rng(seed);
  return Array.from({ length: n }, () => {
    const terms = new Set<number>();
    const size = 1 + Math.floor(next() * 2 * mean);
    while (terms.size < size) terms.add(Math.floor(next() ** 2 * VOCAB));
    const indices = [...terms].sort((a, b) => a - b);
    return { indices, values: indices.map(() => Math.fround((next() < 0.1 ? -1 : 1) * (0.01 + next() * 3))) };
  });
}

function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
}

function halfReference(v: number): number {
  if (v === 0) return v;
  const quantum = Math.abs(v) < 2 ** -14 ? 2 ** -24 : 2 ** (Math.floor(Math.log2(Math.abs(v))) - 10);
  const r = roundHalfEven(v / quantum) * quantum;
  return Math.abs(r) > 65504 ? Math.sign(r) * Infinity : r;
}

/** What each document's value at each index scores as under `datatype`, given the live documents. */
function storedValues(docs: (Doc | null)[], datatype: SparseDatatype): Map<number, number>[] {
  const out = docs.map(() => new Map<number, number>());
  if (datatype !== 'uint8') {
    docs.forEach((d, o) => d?.indices.forEach((x, i) => out[o].set(x, datatype === 'float16' ? halfReference(d.values[i]) : d.values[i])));
    return out;
  }
  const range = new Map<number, [number, number]>();
  for (const d of docs) d?.indices.forEach((x, i) => {
    const [lo, hi] = range.get(x) ?? [Infinity, -Infinity];
    range.set(x, [Math.min(lo, d.values[i]), Math.max(hi, d.values[i])]);
  });
  docs.forEach((d, o) => d?.indices.forEach((x, i) => {
    const [min, max] = range.get(x)!;
    const diff256 = Math.fround(Math.fround(max - min) / 255);
    const r = Math.fround(Math.fround(d.values[i] - min) / diff256);
    const q = Number.isNaN(r) ? 0 : Math.min(255, Math.max(0, Math.sign(r) * Math.round(Math.abs(r))));
    out[o].set(x, Math.fround(min + Math.fround(q * diff256)));
  }));
  return out;
}

function reference(docs: (Doc | null)[], stored: Map<number, number>[], q: Doc, k: number, allow?: (o: number) => boolean): string {
  const hits: { o: number; s: number }[] = [];
  docs.forEach((d, o) => {
    if (!d || (allow && !allow(o))) return;
    let s = 0;
    let shared = false;
    q.indices.forEach((x, i) => {
      const v = stored[o].get(x);
      if (v === undefined) return;
      shared = true;
      s += q.values[i] * v;
    });
    if (shared) hits.push({ o, s: Math.fround(s) });
  });
  hits.sort((a, b) => b.s - a.s || a.o - b.o);
  return hits.slice(0, k).map((h) => `${h.o}:${h.s}`).join();
}

function got(index: SparseIndex, q: Doc, options: SparseSearchOptions): string {
  const r = index.search(q, options);
  return Array.from(r.offsets, (o, i) => `${o}:${r.scores[i]}`).join();
}

t.test('float16 conversion: nearest, ties to even, subnormals, overflow', async (t) => {
  const cases: [number, number][] = [
    [1, 0x3c00], [-2, 0xc000], [65504, 0x7bff], [65519.99, 0x7bff], [65520, 0x7c00], [1e6, 0x7c00], [-1e6, 0xfc00],
    [1 + 2 ** -11, 0x3c00], [1 + 3 * 2 ** -11, 0x3c02], [2 ** -24, 0x0001], [2 ** -25, 0x0000], [1.5 * 2 ** -25, 0x0001],
    [2 ** -14, 0x0400], [0, 0], [-0, 0x8000], [Infinity, 0x7c00], [Math.fround(0.1), 0x2e66],
  ];
  for (const [x, bits] of cases) t.equal(toHalf(x), bits, `${x} -> 0x${bits.toString(16)}`);
  t.ok(Number.isNaN(fromHalf(toHalf(NaN))), 'NaN stays NaN');
  const next = rng(5);
  let bad = 0;
  for (let i = 0; i < 20000; i++) {
    const x = Math.fround((next() - 0.5) * 2 ** (Math.floor(next() * 40) - 26));
    if (fromHalf(toHalf(x)) !== halfReference(x)) bad++;
  }
  t.equal(bad, 0, '20000 values across the range round as the reference');
});

for (const datatype of ['float16', 'uint8'] as const) {
  t.test(`${datatype}: searches score the stored form, retrieve gives the values as given`, async (t) => {
    const docs: (Doc | null)[] = randomDocs(N, 3, 20);
    const queries = randomDocs(30, 4, 6);
    const index = await SparseIndex.create(module, { fullScanThreshold: 200, datatype });
    docs.forEach((d, o) => index.upsert(o, d!));
    // Replacements and deletions move uint8 ranges: the codes must follow.
    const next = rng(9);
    for (let o = 0; o < N; o += 5) {
      if (next() < 0.5) {
        index.delete(o);
        docs[o] = null;
      } else {
        const d = randomDocs(1, 100 + o, 20)[0];
        d.values = d.values.map((v) => v * 4);
        index.upsert(o, d);
        docs[o] = d;
      }
    }
    const stored = storedValues(docs, datatype);
    const few = Bitset.of(N, [...Array(N).keys()].filter((o) => o % 13 === 0));
    const many = Bitset.of(N, [...Array(N).keys()].filter((o) => o % 3 !== 0));
    let bad = 0;
    for (const q of queries) {
      const want = reference(docs, stored, q, 10);
      if (got(index, q, { limit: 10 }) !== want) bad++;
      if (got(index, q, { limit: 10, exact: true }) !== want) bad++;
      if (got(index, q, { limit: 10, filter: few }) !== reference(docs, stored, q, 10, (o) => o % 13 === 0)) bad++;
      if (got(index, q, { limit: 10, filter: many }) !== reference(docs, stored, q, 10, (o) => o % 3 !== 0)) bad++;
    }
    t.equal(bad, 0, `${queries.length * 4} searches (pruned, exact, small and large filters) equal the reference`);
    const asGiven = storedValues(docs, 'float32');
    t.ok(queries.some((q) => reference(docs, asGiven, q, 10) !== got(index, q, { limit: 10 })), 'and differ from the float32 scores');
    let changed = 0;
    docs.forEach((d, o) => {
      const v = index.vector(o);
      if (d === null ? v !== null : v === null || Array.from(v.values).join() !== d.values.join() || Array.from(v.indices).join() !== d.indices.join()) changed++;
    });
    t.equal(changed, 0, 'every stored vector keeps its values as given');

    const copy = await SparseIndex.load(module, index.serialize(), { fullScanThreshold: 200, datatype });
    let differ = 0;
    for (const q of queries) if (got(copy, q, { limit: 10 }) !== got(index, q, { limit: 10 })) differ++;
    t.equal(differ, 0, 'the byte image reloads to identical results');
    await t.rejects(SparseIndex.load(module, index.serialize(), { datatype: 'float32' }), /another datatype/, 'an image loads only with its own datatype');
  });
}

t.test('memory: a narrower datatype holds less', async (t) => {
  const docs = randomDocs(3000, 8, 30);
  const bytes: Record<string, number> = {};
  for (const datatype of ['float32', 'float16', 'uint8'] as const) {
    const index = await SparseIndex.create(module, { datatype });
    docs.forEach((d, o) => index.upsert(o, d));
    index.compact();
    bytes[datatype] = index.dataBytes;
  }
  t.ok(bytes.float16 < bytes.float32 && bytes.uint8 < bytes.float16, `float32 ${bytes.float32}, float16 ${bytes.float16}, uint8 ${bytes.uint8} bytes`);
});
