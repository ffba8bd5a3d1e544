// Numeric point ids over the whole u64 range inside a shard: order (numbers by value before
// UUIDs), storage keys that sort the same way, point records, log entries and graph metadata that
// give back the exact id (graph metadata too), shard routing and slices over the id's exact value.

import { ClassicLevel } from 'classic-level';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { PointId } from '../src/model.js';
import { idBytes, sliceOf } from '../src/shard/filter/slice.js';
import { decodeEntry, encodeEntry } from '../src/shard/log-entry-codec.js';
import { GraphStore } from '../src/shard/optimizer/graph-store.js';
import { decodePoint, encodePoint, pointKey } from '../src/shard/point-codec.js';
import { shardOf } from '../src/shard/routing.js';
import { compareIds } from '../src/shard/shard.js';
import { fromStoredId, toStoredId } from '../src/shard/stored-id.js';
import { refSlice } from './helpers/filter-reference.js';

const U64_MAX = 18446744073709551615n;
const UUID = '5c56c793-691f-4b3a-b0a6-a1b7e5a2e0c1';
const ORDERED: PointId[] = [
  0, 1, 9, 10, 9007199254740990, 9007199254740991,
  9007199254740992n, 9007199254740993n, 9223372036854775807n, 9223372036854775808n,
  U64_MAX - 2n, U64_MAX - 1n, U64_MAX,
  '00000000-0000-0000-0000-000000000000', UUID,
];

/** A fixed shuffle, so the sort has work to do. */
function shuffled<T>(items: T[]): T[] {
  return items.map((item, i) => [(i * 7919) % 13, item] as const).sort((a, b) => a[0] - b[0]).map(([, item]) => item);
}

t.test('ids order numerically across numbers and bigints, before UUIDs', async (t) => {
  t.same(shuffled(ORDERED).sort(compareIds), ORDERED);
  t.equal(compareIds(U64_MAX, U64_MAX), 0);
  t.equal(compareIds(9007199254740991, 9007199254740992n), -1);
  t.equal(compareIds(9007199254740992n, 9007199254740991), 1);
  t.equal(compareIds(UUID, U64_MAX), 1);
  t.equal(compareIds(U64_MAX, UUID), -1);
});

t.test('storage keys sort as the ids do and tell neighbours apart', async (t) => {
  const keys = ORDERED.map(pointKey);
  t.same([...keys].sort(), keys, 'byte order of keys is id order');
  t.equal(pointKey(U64_MAX), 'pn18446744073709551615');
  t.equal(pointKey(9007199254740993n), 'pn00009007199254740993');
  t.equal(pointKey(42), 'pn00000000000000000042', 'small ids keep the key they always had');
  t.equal(new Set(keys).size, keys.length);
});

t.test('point records and log entries give back the exact id', async (t) => {
  for (const id of [U64_MAX, U64_MAX - 1n, 9007199254740993n, 9007199254740991, 0, UUID]) {
    const record = { id, vectors: { '': new Float32Array([1, 2]) }, payload: { n: 1 }, version: 4 };
    const back = decodePoint(encodePoint(record));
    t.equal(back.id, id, `record ${String(id)}`);
    t.same(back.payload, { n: 1 });
    const entry = { seq: 1, opId: 2, clock: { peer: 0, clockId: 0, tick: 2 }, ops: [{ kind: 'delete' as const, target: { ids: [id] } }] };
    t.same(decodeEntry(encodeEntry(entry)), entry, `log entry ${String(id)}`);
  }
  t.same([U64_MAX, 7, UUID].map(toStoredId), [{ u64: '18446744073709551615' }, 7, UUID], 'only bigints change form in stored JSON');
  t.same([{ u64: '18446744073709551615' }, 7, UUID].map(fromStoredId), [U64_MAX, 7, UUID]);
});

t.test('slices hash the id\'s 8 little-endian bytes, bigints too', async (t) => {
  t.same([...idBytes(U64_MAX)], [255, 255, 255, 255, 255, 255, 255, 255]);
  t.same([...idBytes(U64_MAX - 1n)], [254, 255, 255, 255, 255, 255, 255, 255]);
  t.same([...idBytes(9007199254740993n)], [1, 0, 0, 0, 0, 0, 32, 0]);
  t.same([...idBytes(258)], [2, 1, 0, 0, 0, 0, 0, 0]);
  for (const id of ORDERED) {
    for (const total of [2, 3, 1000, 4294967295]) t.equal(sliceOf(id, total), refSlice(id, total), `${String(id)} of ${total}`);
  }
});

/** FNV-1a over the id's text form, as src/shard/routing.ts places points. */
function fnvShard(text: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % count;
}

t.test('routing hashes the exact digits of a numeric id', async (t) => {
  for (const id of ORDERED) {
    const text = typeof id === 'string' ? `u${id}` : `n${id.toString()}`;
    t.equal(shardOf(id, 7), fnvShard(text, 7), String(id));
  }
  t.equal(shardOf(9007199254740991, 1000), fnvShard('n9007199254740991', 1000), 'placement of small ids unchanged');
  const near = [U64_MAX, U64_MAX - 1n, U64_MAX - 2n, U64_MAX - 3n].map((id) => shardOf(id, 1000));
  t.same(near, [U64_MAX, U64_MAX - 1n, U64_MAX - 2n, U64_MAX - 3n].map((id) => fnvShard(`n${id}`, 1000)));
  t.ok(new Set(near).size > 1, 'neighbours in the low bits are spread (a rounded id would land them together)');
});

t.test('graph metadata keeps the id at each offset exactly', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-ids-'));
  const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
  await db.open();
  t.teardown(async () => {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });
  const ids: (PointId | null)[] = [U64_MAX, null, U64_MAX - 1n, 3, UUID, 9007199254740993n];
  await new GraphStore(db).write([], [], { dense: new Map(), sparse: new Map() }, ids, 9);
  const stored = await new GraphStore(db).read([], []);
  t.same(stored?.ids, ids);
  t.equal(stored?.lastOp, 9);
});
