// Point records holding multivectors: each list round-trips with its dimension and rows beside
// dense and sparse vectors, and a record written before multivectors existed still reads.

import t from 'tap';
import { decodePoint, encodePoint } from '../src/shard/point-codec.js';
import type { PointRecord } from '../src/shard/write-ops.js';

t.test('a multivector round-trips beside dense and sparse vectors', async (t) => {
  const record: PointRecord = {
    id: 7,
    payload: { a: 1 },
    version: 3,
    vectors: {
      d: new Float32Array([1, 2, 3]),
      s: { indices: new Uint32Array([2, 9]), values: new Float32Array([0.5, -1]) },
      m: { dim: 2, data: new Float32Array([1, 2, 3, 4, 5, 6]) },
      n: { dim: 3, data: new Float32Array([-1, 0, 1]) },
    },
  };
  t.same(decodePoint(encodePoint(record)), record);
});

t.test('a record of the format before multivectors (no `multi` in its header) reads as before', async (t) => {
  const header = new TextEncoder().encode(JSON.stringify({ id: 1, version: 2, payload: null, vectors: [['', 2]] }));
  const start = (4 + header.length + 3) & ~3;
  const bytes = new Uint8Array(start + 8);
  new DataView(bytes.buffer).setUint32(0, header.length, true);
  bytes.set(header, 4);
  new Float32Array(bytes.buffer, start, 2).set([0.25, -4]);
  t.same(decodePoint(bytes), { id: 1, version: 2, payload: null, vectors: { '': new Float32Array([0.25, -4]) } });
});
