// Upserts packed for the hop to a shard's worker (src/shard/packed-upsert.ts): what the worker
// unpacks, after a real structured clone, is the upsert that was packed, point for point (ids,
// every named vector element, payloads, mode, update filter); upserts that do not pack (sparse or
// multi vectors, names or lengths that differ between points, a lone point) and other operations
// travel as they are; and a packed upsert logged by a shard replays to the same records.

import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packOp, unpackOp } from '../src/shard/packed-upsert.js';
import { decodeEntry, encodeEntry } from '../src/shard/log-entry-codec.js';
import type { PointRecord, WriteOp } from '../src/shard/write-ops.js';
import type { NamedVectors, Payload } from '../src/model.js';
import { toFilter } from '../src/api/filter.js';
import { Shard, type ShardSpec } from '../src/shard/shard.js';

const dense = (seed: number, dim: number): Float32Array => Float32Array.from({ length: dim }, (_, j) => Math.fround(Math.sin(seed * 31 + j) * 3));

function upsert(points: PointRecord[], extra: Partial<Extract<WriteOp, { kind: 'upsert' }>> = {}): WriteOp {
  return { kind: 'upsert', points, mode: 'upsert', updateFilter: null, ...extra };
}

/** Every point's vectors as plain arrays, so views and whole arrays compare by their elements. */
function plain(op: WriteOp): unknown {
  if (op.kind !== 'upsert') return op;
  return { ...op, points: op.points.map((p) => ({ ...p, vectors: Object.fromEntries(Object.entries(p.vectors).map(([name, v]) => [name, v instanceof Float32Array ? Array.from(v) : v])) })) };
}

t.test('a dense upsert packs into one array per name and unpacks to the same points after a thread hop\'s clone', async (t) => {
  const points: PointRecord[] = Array.from({ length: 7 }, (_, i) => ({
    id: i % 2 ? i : `00000000-0000-0000-0000-00000000000${i}`,
    vectors: { image: dense(i, 5), text: dense(i + 100, 3) },
    payload: i === 3 ? { city: 'Berlin', n: i } : ({} as Payload),
  }));
  const op = upsert(points, { mode: 'update_only', updateFilter: toFilter({ must: [{ key: 'n', range: { gte: 1 } }] }) });
  const packed = packOp(op);
  t.equal(packed.kind, 'packed_upsert', 'packed');
  if (packed.kind !== 'packed_upsert') return;
  t.same(packed.names, ['image', 'text']);
  t.same(packed.dims, [5, 3]);
  t.same(packed.data.map((d) => d.length), [35, 21], 'one array per name, every point\'s vector in it');
  const unpacked = unpackOp(structuredClone(packed));
  t.same(plain(unpacked), plain(op), 'ids, vectors, payloads, mode and update filter are the upsert\'s');
  t.ok(unpacked.kind === 'upsert' && unpacked.points.every((p) => Object.values(p.vectors).every((v) => v instanceof Float32Array)), 'vectors are Float32Arrays');
});

t.test('payloads all empty travel as null; a vector named __proto__ stays an own field', async (t) => {
  const points: PointRecord[] = [0, 1, 2].map((i) => {
    const vectors: NamedVectors = {};
    Object.defineProperty(vectors, '__proto__', { value: dense(i, 4), enumerable: true, writable: true, configurable: true });
    return { id: i, vectors, payload: {} };
  });
  const packed = packOp(upsert(points));
  t.ok(packed.kind === 'packed_upsert' && packed.payloads === null, 'no payload list');
  const unpacked = unpackOp(structuredClone(packed));
  if (unpacked.kind !== 'upsert') return t.fail('an upsert');
  for (const [i, p] of unpacked.points.entries()) {
    t.ok(Object.hasOwn(p.vectors, '__proto__'), `point ${i}: own field`);
    t.same(Array.from(p.vectors['__proto__'] as Float32Array), Array.from(dense(i, 4)));
    t.same(p.payload, {}, `point ${i}: empty payload`);
    t.equal(Object.getPrototypeOf(p.vectors), Object.prototype, 'the prototype is untouched');
  }
});

t.test('what does not pack travels as it is', async (t) => {
  const cases: [string, WriteOp][] = [
    ['a lone point', upsert([{ id: 1, vectors: { '': dense(1, 4) }, payload: {} }])],
    ['a sparse vector', upsert([{ id: 1, vectors: { s: { indices: new Uint32Array([1, 5]), values: new Float32Array([0.5, 1]) } }, payload: {} }, { id: 2, vectors: { s: { indices: new Uint32Array([2]), values: new Float32Array([1]) } }, payload: {} }])],
    ['a multivector', upsert([1, 2].map((id) => ({ id, vectors: { m: { dim: 2, data: new Float32Array([1, 2, 3, 4]) } }, payload: {} })))],
    ['names that differ', upsert([{ id: 1, vectors: { a: dense(1, 4) }, payload: {} }, { id: 2, vectors: { b: dense(2, 4) }, payload: {} }])],
    ['a point with a vector fewer', upsert([{ id: 1, vectors: { a: dense(1, 4), b: dense(1, 2) }, payload: {} }, { id: 2, vectors: { a: dense(2, 4) }, payload: {} }])],
    ['lengths that differ', upsert([{ id: 1, vectors: { a: dense(1, 4) }, payload: {} }, { id: 2, vectors: { a: dense(2, 3) }, payload: {} }])],
    ['a delete', { kind: 'delete', target: { ids: [1, 2] } }],
  ];
  for (const [name, op] of cases) {
    t.equal(packOp(op), op, name);
    t.equal(unpackOp(op), op, `${name}: unpacks to itself`);
  }
});

t.test('a packed upsert unpacked in a shard is logged and replayed to the same records', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-packed-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const spec: ShardSpec = { path: dir, vectors: [{ name: '', size: 6, distance: 'Euclid', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null }], sparseVectors: [], indexes: [] };
  const points: PointRecord[] = Array.from({ length: 40 }, (_, i) => ({ id: i, vectors: { '': dense(i, 6) }, payload: { i } }));
  const op = unpackOp(structuredClone(packOp(upsert(points))));
  const entry = decodeEntry(encodeEntry({ seq: 1, opId: 1, clock: { peer: 0, clockId: 0, tick: 1 }, ops: [op] }));
  t.same(plain(entry.ops[0]), plain(upsert(points)), 'the log entry holds the upsert');
  let shard = await Shard.open(spec);
  await shard.apply([op], 1, { peer: 0, clockId: 0, tick: 1 }, true);
  await shard.close();
  shard = await Shard.open(spec);
  t.teardown(() => shard.close());
  for (const p of points) {
    const record = shard.record(p.id);
    t.same(record && Array.from(record.vectors[''] as Float32Array), Array.from(p.vectors[''] as Float32Array), `point ${p.id}: vector`);
    t.same(record?.payload, p.payload, `point ${p.id}: payload`);
  }
});
