// Slices of the id space: SipHash-2-4 against the reference test vectors of its authors, the
// canonical id bytes, and the properties the spec promises (disjoint, covering, nested, uniform).

import siphash from 'siphash';
import t from 'tap';
import type { PointId } from '../src/model.js';
import { idBytes, inSlice, sliceOf } from '../src/shard/filter/slice.js';
import { matchingIds, sourceOf } from './helpers/filter-cases.js';
import { rng } from './helpers/data.js';
import { refSlice } from './helpers/filter-reference.js';

t.test('the siphash package computes SipHash-2-4', async (t) => {
  // Reference vectors (Aumasson & Bernstein, vectors.h): key 00..0f, message 00..(n-1).
  const key = [0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c];
  const vectors: Record<number, string> = {
    0: '726fdb47dd0e0e31', 1: '74f839c593dc67fd', 2: '0d6c8009d9a94f5a', 3: '85676696d7fb7e2d',
    4: 'cf2794e0277187b7', 5: '18765564cd99a68d', 6: 'cbc9466e58fee3ce', 7: 'ab0200f58b01d137',
    8: '93f5f5799a932462', 15: 'a129ca6149be45e5', 63: '958a324ceb064572',
  };
  for (const [n, hex] of Object.entries(vectors)) {
    const message = Uint8Array.from({ length: Number(n) }, (_, i) => i);
    t.equal(siphash.hash_hex(key, message), hex, `${n}-byte message`);
  }
});

t.test('canonical id bytes', async (t) => {
  t.same([...idBytes(1)], [1, 0, 0, 0, 0, 0, 0, 0], 'numbers: 8 bytes little-endian');
  t.same([...idBytes(0x0102030405)], [5, 4, 3, 2, 1, 0, 0, 0]);
  t.same([...idBytes(2 ** 53 - 1)], [255, 255, 255, 255, 255, 255, 31, 0]);
  t.same([...idBytes('550e8400-e29b-41d4-a716-446655440000')], [0x55, 0x0e, 0x84, 0x00, 0xe2, 0x9b, 0x41, 0xd4, 0xa7, 0x16, 0x44, 0x66, 0x55, 0x44, 0x00, 0x00], 'UUIDs: RFC 4122 byte order');
});

function randomIds(seed: number, n: number): PointId[] {
  const next = rng(seed);
  const hex = () => Math.floor(next() * 16).toString(16);
  return Array.from({ length: n }, (_, i) => (i % 2 === 0
    ? Math.floor(next() * 2 ** 53)
    : `${Array.from({ length: 8 }, hex).join('')}-${Array.from({ length: 4 }, hex).join('')}-4${Array.from({ length: 3 }, hex).join('')}-a${Array.from({ length: 3 }, hex).join('')}-${Array.from({ length: 12 }, hex).join('')}`));
}

t.test('hash modulo total agrees with 64-bit arithmetic', async (t) => {
  const ids = [0, 1, 2 ** 32, 2 ** 53 - 1, ...randomIds(1, 500)];
  let disagreements = 0;
  for (const id of ids) {
    for (const total of [1, 2, 3, 7, 1000, 65537, 4_294_967_295]) if (sliceOf(id, total) !== refSlice(id, total)) disagreements++;
  }
  t.equal(disagreements, 0);
});

t.test('slices are disjoint, cover every id, nest, and spread evenly', async (t) => {
  const ids = randomIds(2, 4000);
  for (const total of [1, 2, 3, 4, 7]) {
    const counts = new Array<number>(total).fill(0);
    for (const id of ids) {
      const owners = [...Array(total).keys()].filter((index) => inSlice(id, total, index));
      if (owners.length !== 1) t.fail(`${id} is in ${owners.length} slices of ${total}`);
      counts[owners[0]]++;
    }
    const expected = ids.length / total;
    t.ok(counts.every((c) => Math.abs(c - expected) < expected * 0.15), `total ${total}: counts ${counts.join(', ')}`);
  }
  const inQuarter = ids.filter((id) => inSlice(id, 4, 0));
  const inHalf = ids.filter((id) => inSlice(id, 2, 0));
  t.ok(inQuarter.every((id) => inSlice(id, 2, 0)), 'slice 0 of 4 lies within slice 0 of 2');
  t.ok(inHalf.length > inQuarter.length, 'strictly');
});

t.test('slice conditions in filters', async (t) => {
  const ids = randomIds(3, 200);
  const source = sourceOf(ids.map((id) => ({ id })));
  const parts = [0, 1, 2].map((index) => matchingIds(source, { must: [{ slice: { total: 3, index } }] }));
  t.equal(parts.flat().length, ids.length, 'three slices together hold every point once');
  t.same(new Set(parts.flat()), new Set(ids));
  t.same(matchingIds(source, { must: [{ slice: { total: 1, index: 0 } }] }), ids, 'one slice holds everything');
  // Inside nested conditions there is no point id, so a slice never holds there.
  const nested = sourceOf([{ id: 1, payload: { a: [{ b: 1 }] } }]);
  t.same(matchingIds(nested, { must: [{ nested: { key: 'a', filter: { must: [{ slice: { total: 1, index: 0 } }] } } }] }), []);
});
