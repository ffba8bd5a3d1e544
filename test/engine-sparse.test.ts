// The sparse index against a brute-force dot product computed here: pruned and plain top-k,
// filters, deletes and replacements, empty vectors, unsorted input, ties, IDF weighting, and the
// byte image round trip.

import t from 'tap';
import { Bitset, InvalidSparseVector, NotASparseIndex, SparseIndex, idf, type SparseSearchOptions, type SparseVector } from '../src/engine/index.js';
import { sparseModule } from '../src/runtime/wasm-module.js';
import { rng } from './helpers/data.js';

const module = await sparseModule();
const create = (fullScanThreshold?: number) => SparseIndex.create(module, { fullScanThreshold });

interface Doc {
  indices: number[];
  values: number[];
}

/** Random sparse vectors over a small vocabulary (so documents share terms), some values negative, indices unsorted. */
function randomDocs(n: number, seed: number, vocab = 400, mean = 25, negative = 0.1): Doc[] {
  const next = rng(seed);
  return Array.from({ length: n }, () => {
    const size = Math.floor(next() * 2 * mean);
    const terms = new Set<number>();
    // Squaring the uniform draw favours small term numbers: a head of frequent terms, a long tail.
    while (terms.size < size) terms.add(Math.floor(next() ** 2 * vocab));
    const indices = [...terms];
    const values = indices.map(() => (next() < negative ? -1 : 1) * Math.fround(0.05 + next() * 2));
    return { indices, values };
  });
}

const orders = new WeakMap<Doc, number[]>();

/** Positions of a document's entries by ascending index (the order the reference sums in). */
function sortedOrder(d: Doc): number[] {
  let order = orders.get(d);
  if (!order) {
    order = d.indices.map((_, i) => i).sort((a, b) => d.indices[a] - d.indices[b]);
    orders.set(d, order);
  }
  return order;
}

/** The reference: dot products over shared indices in f64, rounded to f32; only documents sharing an index; score desc, offset asc. */
function bruteForce(docs: (Doc | null)[], query: Doc, k: number, allow?: (o: number) => boolean, weights?: number[]): { offsets: number[]; scores: number[] } {
  const q = new Map<number, number>();
  query.indices.forEach((x, i) => q.set(x, weights ? weights[i] : query.values[i]));
  const hits: { o: number; s: number }[] = [];
  docs.forEach((d, o) => {
    if (!d || (allow && !allow(o))) return;
    const order = sortedOrder(d);
    let s = 0;
    let shared = false;
    for (const i of order) {
      const w = q.get(d.indices[i]);
      if (w === undefined) continue;
      shared = true;
      s += w * Math.fround(d.values[i]);
    }
    if (shared) hits.push({ o, s: Math.fround(s) });
  });
  hits.sort((a, b) => b.s - a.s || a.o - b.o);
  const top = hits.slice(0, k);
  return { offsets: top.map((h) => h.o), scores: top.map((h) => h.s) };
}

/** The error `fn` throws (tap's throws() cannot test a class). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

/** The error `promise` rejects with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  return undefined;
}

async function build(docs: (Doc | null)[], fullScanThreshold?: number): Promise<SparseIndex> {
  const index = await create(fullScanThreshold);
  docs.forEach((d, o) => d && index.upsert(o, d));
  return index;
}

/** Runs every query through `index` and the reference; returns how many differ (offsets exactly, scores to 1e-6). */
function mismatches(index: SparseIndex, docs: (Doc | null)[], queries: Doc[], options: Omit<SparseSearchOptions, 'limit'>, k: number, allow?: (o: number) => boolean): number {
  let bad = 0;
  for (const q of queries) {
    const got = index.search(q, { ...options, limit: k });
    const want = bruteForce(docs, q, k, allow);
    const same = got.offsets.length === want.offsets.length
      && want.offsets.every((o, i) => got.offsets[i] === o && Math.abs(got.scores[i] - want.scores[i]) <= 1e-6 * Math.max(1, Math.abs(want.scores[i])));
    if (!same) bad++;
  }
  return bad;
}

const N = 4000;
const VOCAB = 1500;
const docs = randomDocs(N, 1, VOCAB);
const queries = randomDocs(60, 2, VOCAB, 10);

t.test('pruned and plain top-k equal the brute-force reference', async (t) => {
  const index = await build(docs);
  t.equal(index.size, N);
  for (const k of [1, 10, 100]) {
    t.equal(mismatches(index, docs, queries, {}, k), 0, `pruned, k=${k}`);
    t.equal(mismatches(index, docs, queries, { exact: true }, k), 0, `plain scan, k=${k}`);
  }
  const all = index.search(queries[0], { limit: N });
  const want = bruteForce(docs, queries[0], N);
  t.ok(want.offsets.length < N, 'some documents share no index with the query');
  t.same(Array.from(all.offsets), want.offsets, 'a limit past the matches returns exactly the matching documents');
});

t.test('filters: posting lists with an allow-bitset, and the plain scan below full_scan_threshold', async (t) => {
  const graph = await build(docs, 0);
  const plain = await build(docs);
  t.equal(plain.fullScanThreshold, 5000, 'Qdrant\'s default sparse full_scan_threshold');
  for (const share of [0.5, 0.05, 0.002]) {
    const next = rng(Math.round(share * 1000));
    const bits = new Bitset(N);
    for (let o = 0; o < N; o++) if (next() < share) bits.add(o);
    t.equal(graph.usesFullScan(bits), false);
    t.equal(plain.usesFullScan(bits), true, `${bits.count()} allowed points < 5000: plain scan`);
    const allow = (o: number) => bits.has(o);
    t.equal(mismatches(graph, docs, queries, { filter: bits }, 10, allow), 0, `pruned with ${share * 100}% allowed`);
    t.equal(mismatches(plain, docs, queries, { filter: bits }, 10, allow), 0, `plain with ${share * 100}% allowed`);
  }
  // A filter smaller than the index's offsets, and one larger: missing words allow nothing.
  const small = Bitset.of(100, [5, 50, 99]);
  t.equal(mismatches(graph, docs, queries, { filter: small }, 10, (o) => small.has(o)), 0, 'a short bitset allows only its members');
  t.equal(mismatches(graph, docs, queries, { filter: Bitset.of(N * 2, [1, 2, 3]) }, 10, (o) => o <= 3 && o >= 1), 0, 'a long bitset works too');
  t.equal(plain.search(queries[0], { limit: 10, filter: new Bitset(N) }).offsets.length, 0, 'an empty filter returns nothing');
});

t.test('deletes and replacements', async (t) => {
  const current: (Doc | null)[] = docs.slice();
  const index = await build(current, 0);
  const replacements = randomDocs(N, 3);
  const next = rng(4);
  let deleted = 0;
  for (let o = 0; o < N; o++) {
    const r = next();
    if (r < 0.2) {
      t.equal(index.delete(o), true);
      current[o] = null;
      deleted++;
    } else if (r < 0.45) {
      // Half the replacements keep part of the old terms (updated in place), half are new vectors.
      const old = current[o]!;
      const fresh = replacements[o];
      const mixed = r < 0.33 ? { indices: [...new Set([...old.indices.slice(0, 5), ...fresh.indices])], values: [] as number[] } : fresh;
      if (mixed !== fresh) mixed.values = mixed.indices.map((_, i) => fresh.values[i % fresh.values.length] ?? 1);
      index.upsert(o, mixed);
      current[o] = mixed;
    }
  }
  t.equal(index.size, N - deleted);
  t.equal(index.delete(current.findIndex((d) => d === null)), false, 'deleting twice deletes nothing');
  t.equal(index.has(current.findIndex((d) => d === null)), false);
  for (const [name, options] of [['pruned', {}], ['plain', { exact: true }]] as const) {
    t.equal(mismatches(index, current, queries, options, 10), 0, `${name} after deletes and replacements`);
  }
  // Appended offsets after holes, then a full compaction: same answers.
  for (let o = N; o < N + 200; o++) {
    current[o] = replacements[o - N];
    index.upsert(o, replacements[o - N]);
  }
  const before = index.memoryBytes;
  index.compact();
  t.ok(index.memoryBytes <= before, `compaction does not grow memory (${before} -> ${index.memoryBytes} bytes)`);
  t.equal(mismatches(index, current, queries, {}, 10), 0, 'pruned after compaction');
  t.equal(mismatches(index, current, queries, { exact: true }, 10), 0, 'plain after compaction');
  // A deleted offset inserted again is found again.
  const again = current.findIndex((d) => d === null);
  index.upsert(again, { indices: [100000], values: [2] });
  t.same(Array.from(index.search({ indices: [100000], values: [1] }, { limit: 5 }).offsets), [again]);
});

t.test('matches, empty vectors, zero values and ties', async (t) => {
  const index = await create();
  index.upsert(0, { indices: [1, 2], values: [1, 1] });
  index.upsert(1, { indices: [], values: [] });
  index.upsert(2, { indices: [3], values: [5] });
  index.upsert(3, { indices: [2, 9], values: [0, 4] });
  index.upsert(4, { indices: [7, 1], values: [1, 1] });
  t.equal(index.size, 5, 'an empty vector is stored');
  t.equal(index.documentCount, 4, 'but not counted as an indexed document (IDF\'s N)');
  index.upsert(1, { indices: [8], values: [1] });
  t.equal(index.documentCount, 5, 'until it gets an index');
  index.upsert(1, { indices: [], values: [] });
  t.equal(index.documentCount, 4, 'and loses it again');
  for (const exact of [false, true]) {
    const r = index.search({ indices: [2, 1], values: [1, 1] }, { limit: 10, exact });
    t.same(Array.from(r.offsets), [0, 4, 3], `exact=${exact}: only documents sharing an index; a shared index with value 0 still matches`);
    t.same(Array.from(r.scores), [2, 1, 0]);
    t.equal(index.search({ indices: [], values: [] }, { limit: 10, exact }).offsets.length, 0, 'an empty query matches nothing');
    t.equal(index.search({ indices: [8], values: [1] }, { limit: 10, exact }).offsets.length, 0, 'an unknown index matches nothing');
    t.equal(index.search({ indices: [1], values: [1] }, { limit: 0, exact }).offsets.length, 0, 'limit 0');
  }
  // Many equal scores: ties come out by offset, the same on both paths.
  const ties = await create(0);
  const next = rng(9);
  const tieDocs: Doc[] = [];
  for (let o = 0; o < 500; o++) {
    const d = { indices: [Math.floor(next() * 4), 4 + Math.floor(next() * 4)], values: [1, 1] };
    tieDocs.push(d);
    ties.upsert(o, d);
  }
  const q = { indices: [0, 1, 4], values: [1, 1, 1] };
  const pruned = ties.search(q, { limit: 30 });
  const plain = ties.search(q, { limit: 30, exact: true });
  t.same(Array.from(pruned.offsets), bruteForce(tieDocs, q, 30).offsets, 'ties by offset ascending (pruned)');
  t.same(Array.from(plain.offsets), Array.from(pruned.offsets), 'and the same on the plain scan');
  // Tight bounds (all values 1): a document found only through the weak terms, in all of them,
  // beats every document of the strong term; pruning must not close before it is seen.
  const hidden = await create(0);
  for (let o = 0; o < 300; o++) hidden.upsert(o, { indices: [0, 1 + (o % 10)], values: [1, 1] });
  hidden.upsert(300, { indices: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], values: Array(10).fill(1) });
  const weak = { indices: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], values: [8.5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1] };
  for (const exact of [false, true]) {
    t.same(Array.from(hidden.search(weak, { limit: 1, exact }).offsets), [300], `exact=${exact}: the document of the weak terms only (10 > 8.5 + 1)`);
    t.same(Array.from(hidden.search(weak, { limit: 3, exact }).offsets), [300, 0, 1], `exact=${exact}: then the strong term's documents, ties by offset`);
  }
});

t.test('input: unsorted indices are sorted, invalid vectors are refused', async (t) => {
  const a = await create();
  const b = await create();
  for (const [o, d] of docs.slice(0, 500).entries()) {
    a.upsert(o, d);
    const order = d.indices.map((_, i) => i).sort((x, y) => d.indices[x] - d.indices[y]);
    b.upsert(o, { indices: order.map((i) => d.indices[i]), values: order.map((i) => d.values[i]) });
  }
  const q = queries[3];
  t.same(a.search(q, { limit: 20 }), b.search(q, { limit: 20 }), 'unsorted and sorted input give the same index');
  const stored = a.vector(0)!;
  t.ok(stored.indices.every((x, i) => i === 0 || stored.indices[i - 1] < x), 'stored vectors come back sorted by index');
  t.same(a.vector(0), b.vector(0));
  t.equal(a.vector(99999), null);
  const bad: [SparseVector, RegExp][] = [
    [{ indices: [1, 2], values: [1] }, /2 indices but 1 values/],
    [{ indices: [3, 1, 3], values: [1, 2, 3] }, /index 3 appears more than once/],
    [{ indices: [-1], values: [1] }, /not an integer/],
    [{ indices: [1.5], values: [1] }, /not an integer/],
    [{ indices: [2 ** 32], values: [1] }, /not an integer/],
    [{ indices: [1], values: [NaN] }, /not a finite number/],
  ];
  for (const [vector, message] of bad) {
    t.ok(thrown(() => a.upsert(1, vector)) instanceof InvalidSparseVector, `refused: ${message.source}`);
    t.throws(() => a.search(vector, { limit: 1 }), message);
  }
  t.throws(() => a.upsert(-1, { indices: [1], values: [1] }), RangeError);
  t.same(a.vector(1), b.vector(1), 'a refused upsert changes nothing');
});

t.test('IDF: document frequencies and Qdrant\'s formula on query weights', async (t) => {
  t.equal(idf(10, 2), Math.log((10 - 2 + 0.5) / (2 + 0.5) + 1), 'ln((N - n + 0.5) / (n + 0.5) + 1)');
  const current: (Doc | null)[] = docs.slice(0, 2000);
  const index = await build(current, 0);
  // Zero values do not count toward a term's document frequency; deletes lower it.
  index.upsert(0, { indices: [1, 2], values: [0, 3] });
  current[0] = { indices: [1, 2], values: [0, 3] };
  for (let o = 1; o < 100; o += 3) {
    index.delete(o);
    current[o] = null;
  }
  const df = (term: number) => current.filter((d) => d && d.indices.some((x, i) => x === term && d.values[i] !== 0)).length;
  let wrong = 0;
  for (let term = 0; term < VOCAB; term++) if (index.documentFrequency(term) !== df(term)) wrong++;
  t.equal(wrong, 0, 'documentFrequency counts live documents with a non-zero value');
  t.equal(index.documentCount, current.filter((d) => d !== null && d.indices.length > 0).length, 'documentCount: stored vectors that have an index (an empty one is indexed nowhere)');
  t.same(Array.from(index.documentFrequencies([2, 1, 123456])), [df(2), df(1), 0]);
  for (const exact of [false, true]) {
    let bad = 0;
    for (const q of queries) {
      // Statistics as a caller gives them: say, over this shard and another of 500 documents.
      const frequencies = Array.from(index.documentFrequencies(q.indices), (n, i) => n + (q.indices[i] % 7));
      const stats = { documentCount: index.documentCount + 500, documentFrequencies: frequencies };
      const weights = q.values.map((v, i) => v * Math.log((stats.documentCount - frequencies[i] + 0.5) / (frequencies[i] + 0.5) + 1));
      const got = index.search(q, { limit: 10, exact, idf: stats });
      const want = bruteForce(current, q, 10, undefined, weights);
      if (Array.from(got.offsets).join() !== want.offsets.join() || want.scores.some((s, i) => Math.abs(s - got.scores[i]) > 1e-5 * Math.max(1, Math.abs(s)))) bad++;
    }
    t.equal(bad, 0, `exact=${exact}: top-10 with IDF weights equals the reference`);
  }
  t.ok(thrown(() => index.search(queries[0], { limit: 1, idf: { documentCount: 1, documentFrequencies: [] } })) instanceof InvalidSparseVector, 'statistics must match the query');
  t.ok(thrown(() => index.search(queries[0], { limit: 1, idf: { documentCount: NaN, documentFrequencies: queries[0].indices.map(() => 1) } })) instanceof InvalidSparseVector, 'a NaN document count is refused');
  t.ok(thrown(() => index.search(queries[0], { limit: 1, idf: { documentCount: 5, documentFrequencies: queries[0].indices.map(() => -1) } })) instanceof InvalidSparseVector, 'a negative document frequency is refused');
});

t.test('serialisation round trip gives identical results', async (t) => {
  const current: (Doc | null)[] = docs.slice();
  const index = await build(current, 0);
  for (let o = 0; o < N; o += 7) {
    index.delete(o);
    current[o] = null;
  }
  index.upsert(N + 10, { indices: [], values: [] });
  const bytes = index.serialize();
  const copy = await SparseIndex.load(module, bytes, { fullScanThreshold: 0 });
  t.equal(copy.size, index.size);
  t.equal(copy.offsetCount, index.offsetCount);
  t.equal(copy.termCount, index.termCount);
  let same = true;
  for (const q of queries) {
    for (const options of [{ limit: 10 }, { limit: 10, exact: true }, { limit: 50, filter: Bitset.of(N, [...Array(N).keys()].filter((o) => o % 3 === 0)) }]) {
      const a = index.search(q, options);
      const b = copy.search(q, options);
      same &&= a.offsets.join() === b.offsets.join() && a.scores.join() === b.scores.join();
    }
  }
  t.ok(same, 'identical offsets and scores for 60 queries x 3 modes');
  t.same(Array.from(copy.documentFrequencies([0, 1, 2, 3])), Array.from(index.documentFrequencies([0, 1, 2, 3])));
  t.same(copy.serialize(), bytes, 'the copy writes the same image');
  t.equal(mismatches(copy, current, queries, {}, 10), 0, 'and equals the reference');
  // Both go on identically after more writes.
  for (const ix of [index, copy]) for (let o = 0; o < 50; o++) ix.upsert(o * 2, queries[o % queries.length]);
  t.same(copy.search(queries[5], { limit: 10 }), index.search(queries[5], { limit: 10 }));
  t.ok(await rejection(SparseIndex.load(module, new Uint8Array([1, 2, 3, 4]))) instanceof NotASparseIndex, 'random bytes are refused');
  const damaged = bytes.slice(0, bytes.length - 4);
  t.ok(await rejection(SparseIndex.load(module, damaged)) instanceof NotASparseIndex, 'a cut image is refused');
  const empty = await SparseIndex.load(module, (await create()).serialize());
  t.equal(empty.size, 0, 'an empty index round-trips');
});

t.test('memory report', async (t) => {
  const index = await create();
  const empty = index.dataBytes;
  docs.slice(0, 1000).forEach((d, o) => index.upsert(o, d));
  const entries = docs.slice(0, 1000).reduce((n, d) => n + d.indices.length, 0);
  t.ok(index.dataBytes >= empty + entries * 16, `at least 16 bytes per non-zero (posting + stored vector): ${index.dataBytes} bytes for ${entries}`);
  t.ok(index.dataBytes < empty + entries * 64 + 5_000_000, 'and not wildly more (vectors fill 4 MiB chunks)');
  t.ok(index.memoryBytes >= index.dataBytes, `the engine memory holds the data (${index.memoryBytes} bytes)`);
});
