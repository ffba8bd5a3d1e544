// Byte images move between the engine and storage in bounded parts (src/engine/image-parts.ts),
// so an image larger than the allocator's 1 GiB block can be written and loaded. Real sizes are
// too heavy for CI: small indexes are cut into many tiny parts instead, with every region
// (header, levels, links, upper blocks, vector chunks, lists, codes, trailers) split across part
// boundaries, and must load back exactly. The vectors, the multivector arena and the codes are
// kept in chunks of at most 2^14 rows (assembly/layout.ts), so indexes past two chunks of each
// round-trip too, and lists stored across chunk boundaries read back as given.
// QUIVER_HEAVY=1 adds images past 1 GiB: float32 vectors, a multivector arena, multivector codes.

import t, { type Test } from 'tap';
import { Bitset, VectorIndex, type IndexConfig } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { clustered, row } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';

const DIM = 20;
const N = 2500;
const QUERIES = 12;
// Part sizes that fall mid-region everywhere (primes), and the default.
const PART_SIZES = [97, 4093, undefined];

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength))));
}

/** Same offsets, scores, stored vectors and codes; reserialising gives the same bytes. */
function checkSame(t: Test, loaded: VectorIndex, index: VectorIndex, queries: Float32Array, dim: number, what: string): void {
  t.equal(loaded.size, index.size, `${what}: size`);
  t.equal(loaded.pendingCount, index.pendingCount, `${what}: pending`);
  t.equal(loaded.quantized, index.quantized, `${what}: quantized`);
  t.equal(loaded.config.datatype, index.config.datatype, `${what}: datatype`);
  let wrong = 0;
  for (let q = 0; q < QUERIES; q++) {
    const query = index.multivector ? queries.subarray(q * 2 * dim, (q * 2 + 2) * dim) : row(queries, dim, q);
    const count = index.multivector ? 2 : undefined;
    for (const exact of [false, true]) {
      const a = index.search(query, { limit: 10, ef: 64, exact }, count);
      const b = loaded.search(query, { limit: 10, ef: 64, exact }, count);
      if (Buffer.compare(Buffer.from(a.offsets.buffer, a.offsets.byteOffset, a.offsets.byteLength), Buffer.from(b.offsets.buffer, b.offsets.byteOffset, b.offsets.byteLength)) !== 0 || [...a.scores].some((s, i) => s !== b.scores[i])) wrong++;
    }
  }
  t.equal(wrong, 0, `${what}: every graph and exact search answers the same`);
  let differ = 0;
  for (let offset = 0; offset < index.offsetCount; offset += 7) {
    if (!index.has(offset)) continue;
    if ([...loaded.vector(offset)].some((v, i) => !Object.is(v, index.vector(offset)[i]))) differ++;
    if (index.quantized && !index.multivector && Buffer.compare(loaded.codes(offset), index.codes(offset)) !== 0) differ++;
  }
  t.equal(differ, 0, `${what}: stored vectors and codes are the same`);
  t.ok(Buffer.compare(loaded.serialize(), index.serialize()) === 0, `${what}: reserialising gives the same bytes`);
}

async function roundTrip(t: Test, config: IndexConfig, what: string, n = N): Promise<void> {
  const k = config.multivector ? 3 : 1;
  const data = clustered(n * k, config.dim, 12, 5);
  const queries = clustered(QUERIES * 2, config.dim, 12, 6);
  const index = await VectorIndex.create(await engineModule(), config);
  for (let i = 0; i < n; i++) index.upsert(i, data.subarray(i * k * config.dim, (i + 1) * k * config.dim), config.multivector ? k : undefined);
  for (let i = 0; i < n; i += 11) index.delete(i);
  for (let i = 0; i < 15; i++) index.stash(n + i, data.subarray(i * k * config.dim, (i + 1) * k * config.dim), config.multivector ? k : undefined);
  const whole = index.serialize();
  for (const size of PART_SIZES) {
    const parts = index.serializeParts(size);
    if (size !== undefined) t.ok(parts.length > 1 && parts.every((p) => p.byteLength <= size), `${what}: ${parts.length} parts of at most ${size} bytes`);
    t.ok(Buffer.compare(concat(parts), whole) === 0, `${what}: parts of ${size ?? 'default'} bytes make the one-part image`);
    checkSame(t, await VectorIndex.load(await engineModule(), parts), index, queries, config.dim, `${what}, parts of ${size ?? 'default'}`);
  }
}

const cases: [string, IndexConfig][] = [
  ['float32', { dim: DIM, distance: 'Euclid' }],
  ['float16', { dim: DIM, distance: 'Cosine', datatype: 'float16' }],
  ['uint8', { dim: DIM, distance: 'Dot', datatype: 'uint8' }],
  ['int8', { dim: DIM, distance: 'Euclid', quantization: { quantile: 0.99 } }],
  ['binary two_bits', { dim: DIM, distance: 'Cosine', quantization: { method: 'binary', encoding: 'two_bits' } }],
  ['product', { dim: DIM, distance: 'Euclid', quantization: { method: 'product', compression: 'x8' } }],
  ['turbo', { dim: DIM, distance: 'Dot', quantization: { method: 'turbo', bits: 'bits2' } }],
  ['multivector', { dim: DIM, distance: 'Dot', multivector: { comparator: 'max_sim' } }],
  ['multivector int8', { dim: DIM, distance: 'Cosine', multivector: { comparator: 'max_sim' }, quantization: { quantile: 0.99 } }],
  ['multivector turbo4', { dim: DIM, distance: 'Euclid', multivector: { comparator: 'max_sim' }, datatype: 'turbo4' }],
];
for (const [what, config] of cases) t.test(`${what}: round trip through many small parts`, (t) => roundTrip(t, config, what));

t.test('float32 across vector chunks: parts cut through the chunks', (t) => roundTrip(t, { dim: 4, distance: 'Euclid' }, 'chunked', (1 << 14) * 2 + 50));

// 4-d rows: 2^14 per chunk of vectors, of the arena and of the codes.
const ROWS_PER_CHUNK = 1 << 14;
t.test('int8 codes across code chunks: parts cut through the chunks', (t) => roundTrip(t, { dim: 4, distance: 'Euclid', quantization: { quantile: 0.99 } }, 'chunked codes', ROWS_PER_CHUNK * 2 + 50));
t.test('binary codes across code chunks', (t) => roundTrip(t, { dim: 4, distance: 'Dot', quantization: { method: 'binary' } }, 'chunked binary codes', ROWS_PER_CHUNK * 2 + 50));
t.test('product codes across code chunks (the fit installs its codes chunk by chunk)', (t) => roundTrip(t, { dim: 4, distance: 'Euclid', quantization: { method: 'product', compression: 'x4' } }, 'chunked product codes', ROWS_PER_CHUNK * 2 + 50));
// Lists of 3: 2^14 is not a multiple of 3, so lists meet chunk ends and move to the next chunk.
t.test('multivector arena and its codes across chunks', (t) => roundTrip(t, { dim: 4, distance: 'Dot', multivector: { comparator: 'max_sim' }, quantization: { quantile: 0.99 } }, 'chunked arena', Math.ceil((ROWS_PER_CHUNK * 2) / 3) + 50));

t.test('lists stored across arena chunk ends read back as given, before and after a vacuum', async (t) => {
  const dim = 4;
  const index = await VectorIndex.create(await engineModule(), { dim, distance: 'Dot', multivector: { comparator: 'max_sim' }, quantization: { method: 'binary' } });
  const next = (() => { let x = 12345; return () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 4 - 2; })();
  const stored = new Map<number, Float32Array>();
  const put = (offset: number, k: number) => {
    const list = Float32Array.from({ length: k * dim }, next);
    index.stash(offset, list, k);
    stored.set(offset, list);
  };
  // Lengths 1..97 until past two chunks, then replacements by longer lists (appended) and deletions.
  let rows = 0;
  let n = 0;
  for (; rows < ROWS_PER_CHUNK * 2 + 500; n++) {
    const k = 1 + ((n * 37) % 97);
    put(n, k);
    rows += k;
  }
  for (let i = 0; i < n; i += 5) put(i, 98);
  for (let i = 3; i < n; i += 7) {
    index.delete(i);
    stored.delete(i);
  }
  const check = (what: string) => {
    let differ = 0;
    for (const [offset, list] of stored) if (index.vectorCount(offset) !== list.length / dim || index.vector(offset).some((v, j) => v !== list[j])) differ++;
    t.equal(differ, 0, `${what}: all ${stored.size} lists (${rows} rows first, over two chunks) read back as stored`);
    // The codes of each row: binary one_bit is the sign of each value, so the exact scan on codes
    // scores a list as the reference computes from its rows.
    const query = Float32Array.from({ length: 2 * dim }, next);
    const got = index.search(query, { limit: 5, filter: Bitset.of(index.offsetCount, [...stored.keys()]), quantization: { rescore: false } }, 2);
    const bits = (v: ArrayLike<number>): number[] => Array.from(v, (x) => (x > 0 ? 1 : 0));
    const want = [...stored].map(([offset, list]) => {
      let sum = 0;
      for (let q = 0; q < 2; q++) {
        const qb = bits(query.subarray(q * dim, (q + 1) * dim));
        let best = -Infinity;
        for (let r = 0; r < list.length / dim; r++) {
          const vb = bits(list.subarray(r * dim, (r + 1) * dim));
          const xor = qb.reduce((c, b, j) => c + (b !== vb[j] ? 1 : 0), 0);
          best = Math.max(best, dim - 2 * xor);
        }
        sum += best;
      }
      return sum;
    }).sort((a, b) => b - a).slice(0, 5);
    t.same(Array.from(got.scores), want, `${what}: MaxSim on the rows' codes is the reference's`);
  };
  check('stored');
  index.vacuum();
  check('vacuumed');
  const loaded = await VectorIndex.load(await engineModule(), index.serializeParts(4093));
  t.ok(Buffer.compare(loaded.serialize(), index.serialize()) === 0, 'the vacuumed index round-trips through parts');
});

t.test('an image written before parts (version 6, int8) loads from parts', async (t) => {
  const data = clustered(N * DIM, DIM, 12, 7);
  const index = await buildIndex({ dim: DIM, distance: 'Euclid', quantization: { quantile: 0.95 } }, data);
  const old = index.serialize().slice();
  new DataView(old.buffer).setUint32(4, 6, true);
  const parts: Uint8Array[] = [];
  for (let at = 0; at < old.byteLength; at += 1009) parts.push(old.subarray(at, at + 1009));
  const fromParts = await VectorIndex.load(await engineModule(), parts);
  const whole = await VectorIndex.load(await engineModule(), old);
  t.ok(Buffer.compare(fromParts.serialize(), whole.serialize()) === 0, 'the same index as loaded in one part');
  for (let i = 0; i < N; i += 97) t.same([...fromParts.vector(i)], [...index.vector(i)]);
  const q = row(data, DIM, 3);
  t.same(fromParts.search(q, { limit: 5 }), whole.search(q, { limit: 5 }), 'same answer as loaded in one part');
});

t.test('empty indexes round-trip through 3-byte parts', async (t) => {
  for (const [what, config] of cases) {
    const index = await VectorIndex.create(await engineModule(), config);
    const loaded = await VectorIndex.load(await engineModule(), index.serializeParts(3));
    t.equal(loaded.size, 0, `${what}: empty`);
    t.ok(Buffer.compare(loaded.serialize(), index.serialize()) === 0, `${what}: same bytes`);
  }
});

t.test('a truncated or corrupt image is refused, whatever the parts', async (t) => {
  const index = await buildIndex({ dim: DIM, distance: 'Euclid', quantization: { method: 'product', compression: 'x4' } }, clustered(600 * DIM, DIM, 6, 8));
  const parts = index.serializeParts(501);
  await t.rejects(VectorIndex.load(await engineModule(), parts.slice(0, -3)), /not a serialised Quiver index/);
  await t.rejects(VectorIndex.load(await engineModule(), parts.slice(1)), /not a serialised Quiver index/);
  await t.rejects(VectorIndex.load(await engineModule(), []), /not a serialised Quiver index/);
  t.throws(() => index.serializeParts(0), RangeError);
});

if (process.env.QUIVER_HEAVY === '1') {
  t.test('heavy: a 180000 x 1536 float32 image (over 1 GiB) round-trips', async (t) => {
    const n = 180000, dim = 1536;
    const index = await VectorIndex.create(await engineModule(), { dim, distance: 'Dot', m: 4, efConstruct: 8 });
    const v = new Float32Array(dim);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < dim; j++) v[j] = Math.sin(i * 0.37 + j * 0.11);
      index.upsert(i, v);
    }
    let start = performance.now();
    const parts = index.serializeParts();
    const total = parts.reduce((s, p) => s + p.byteLength, 0);
    t.ok(total > 2 ** 30, `image of ${total} bytes in ${parts.length} parts (${((performance.now() - start) / 1000).toFixed(1)} s)`);
    start = performance.now();
    const loaded = await VectorIndex.load(await engineModule(), parts);
    t.pass(`loaded in ${((performance.now() - start) / 1000).toFixed(1)} s`);
    for (const i of [0, 16383, 16384, 99999, n - 1]) t.same([...loaded.vector(i)], [...index.vector(i)], `vector ${i}`);
    const q = index.vector(12345);
    t.same(loaded.search(q, { limit: 10, ef: 32 }), index.search(q, { limit: 10, ef: 32 }), 'same answer');
  });

  /** Stashes `points` lists of `k` rows (unlinked: the test is about the regions, not the graph), round-trips the image, compares. */
  async function heavyLists(t: Test, config: IndexConfig, points: number, k: number, what: string, scale = 1): Promise<void> {
    const index = await VectorIndex.create(await engineModule(), config);
    // Not sized up front: the arena and its codes grow a chunk at a time past the first chunk.
    const dim = config.dim;
    const list = new Float32Array(k * dim);
    for (let i = 0; i < points; i++) {
      for (let j = 0; j < list.length; j++) list[j] = scale * (Math.sin(i * 0.37 + j * 0.11) + 1);
      index.stash(i, list, k);
    }
    const parts = index.serializeParts();
    const total = parts.reduce((s, p) => s + p.byteLength, 0);
    t.ok(total > 2 ** 30, `${what}: image of ${total} bytes in ${parts.length} parts`);
    const loaded = await VectorIndex.load(await engineModule(), parts);
    for (const i of [0, 1, Math.floor(points / 2), points - 1]) t.same([...loaded.vector(i)], [...index.vector(i)], `${what}: list ${i}`);
    const q = index.vector(777);
    t.same(loaded.search(q, { limit: 10 }, k), index.search(q, { limit: 10 }, k), `${what}: same answer`);
  }

  t.test('heavy: a float32 multivector arena over 1 GiB round-trips', (t) => heavyLists(t, { dim: 1024, distance: 'Dot', multivector: { comparator: 'max_sim' } }, 90000, 3, 'arena'));
  // uint8 rows with int8 codes: 1 GiB of codes beside 1 GiB of rows, the cheapest codes to encode.
  t.test('heavy: multivector int8 codes over 1 GiB round-trip', (t) => heavyLists(t, { dim: 2048, distance: 'Dot', multivector: { comparator: 'max_sim' }, datatype: 'uint8', quantization: { quantile: 0.99 } }, 180000, 3, 'int8 codes', 127));
}
