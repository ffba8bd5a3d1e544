// Byte images move between the engine and storage in bounded parts (src/engine/image-parts.ts),
// so an image larger than the allocator's 1 GiB block can be written and loaded. Real sizes are
// too heavy for CI: small indexes are cut into many tiny parts instead, with every region
// (header, levels, links, upper blocks, vector chunks, lists, codes, trailers) split across part
// boundaries, and must load back exactly. QUIVER_HEAVY=1 adds one image past 1 GiB.

import t, { type Test } from 'tap';
import { VectorIndex, type IndexConfig } from '../src/engine/index.js';
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
];
for (const [what, config] of cases) t.test(`${what}: round trip through many small parts`, (t) => roundTrip(t, config, what));

t.test('float32 across vector chunks: parts cut through the chunks', (t) => roundTrip(t, { dim: 4, distance: 'Euclid' }, 'chunked', (1 << 14) * 2 + 50));

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
}
