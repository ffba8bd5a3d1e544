// Every distance kernel against a plain JS reference, for every dimension 1..1536, and the full
// insert+search path's scores for Qdrant's four distances.

import t from 'tap';
import { DISTANCES, instantiate, metricCode, VectorIndex } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { rng, uniform } from './helpers/data.js';
import { dot, score } from './helpers/reference.js';

const MAX_DIM = 1536;

t.test('f32 kernels match the JS reference for dims 1..1536', async (t) => {
  const wasm = await instantiate(await engineModule());
  const a = wasm.alloc(MAX_DIM * 4);
  const b = wasm.alloc(MAX_DIM * 4);
  const va = uniform(MAX_DIM, 1, -2, 2);
  const vb = uniform(MAX_DIM, 2, -2, 2);
  new Float32Array(wasm.memory.buffer).set(va, a >>> 2);
  new Float32Array(wasm.memory.buffer).set(vb, b >>> 2);
  let worst = 0;
  let failures = 0;
  for (let n = 1; n <= MAX_DIM; n++) {
    const x = va.subarray(0, n);
    const y = vb.subarray(0, n);
    let l2 = 0;
    let l1 = 0;
    let magnitude = 0; // sum of |terms|: the scale f32 rounding error is proportional to
    for (let i = 0; i < n; i++) {
      l2 += (x[i] - y[i]) ** 2;
      l1 += Math.abs(x[i] - y[i]);
      magnitude += Math.abs(x[i] * y[i]);
    }
    const expected = { Cosine: -dot(x, y), Dot: -dot(x, y), Euclid: l2, Manhattan: l1 };
    const scale = { Cosine: magnitude, Dot: magnitude, Euclid: l2, Manhattan: l1 };
    for (const d of DISTANCES) {
      const got = wasm.kernelF32(metricCode(d), a, b, n);
      const err = Math.abs(got - expected[d]) / Math.max(1e-30, scale[d]);
      worst = Math.max(worst, err);
      if (err > 1e-5) failures++;
    }
  }
  t.equal(failures, 0, `no error above 1e-5 of the terms' magnitude (worst ${worst.toExponential(2)})`);
});

t.test('int8 kernels are exact integer arithmetic', async (t) => {
  const wasm = await instantiate(await engineModule());
  const next = rng(7);
  const n = 1536;
  const a = wasm.alloc(n);
  const b = wasm.alloc(n);
  const ca = Int8Array.from({ length: n }, () => Math.floor(next() * 255) - 127);
  const cb = Int8Array.from({ length: n }, () => Math.floor(next() * 255) - 127);
  new Int8Array(wasm.memory.buffer).set(ca, a);
  new Int8Array(wasm.memory.buffer).set(cb, b);
  for (let len = 16; len <= n; len += 16) {
    let d = 0;
    let l2 = 0;
    let l1 = 0;
    for (let i = 0; i < len; i++) {
      d += ca[i] * cb[i];
      l2 += (ca[i] - cb[i]) ** 2;
      l1 += Math.abs(ca[i] - cb[i]);
    }
    if (wasm.kernelI8(0, a, b, len) !== d || wasm.kernelI8(1, a, b, len) !== l2 || wasm.kernelI8(2, a, b, len) !== l1) {
      t.fail(`int8 kernels differ at length ${len}`);
      return;
    }
  }
  t.pass('dot, squared L2 and L1 equal for every length 16..1536');
});

t.test('search scores follow Qdrant conventions for each distance', async (t) => {
  const dims = [1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 63, 64, 65, 100, 127, 129, 255, 257, 384, 511, 768, 784, 1023, 1536];
  for (const distance of DISTANCES) {
    let worst = 0;
    for (const dim of dims) {
      const index = await VectorIndex.create(await engineModule(), { dim, distance });
      const points = Array.from({ length: 20 }, (_, i) => uniform(dim, 100 + i + dim, -1, 1));
      points.forEach((p, i) => index.upsert(i, p));
      const query = uniform(dim, 999 + dim, -1, 1);
      const res = index.search(query, { limit: 20, exact: true });
      t.equal(res.offsets.length, 20);
      for (let i = 0; i < res.offsets.length; i++) {
        const expected = score(distance, query, points[res.offsets[i]]);
        worst = Math.max(worst, Math.abs(res.scores[i] - expected) / Math.max(1, Math.abs(expected)));
      }
      const ordered = Array.from(res.scores).every((s, i, all) => i === 0 || (distance === 'Cosine' || distance === 'Dot' ? all[i - 1] >= s : all[i - 1] <= s));
      if (!ordered) t.fail(`${distance} dim ${dim}: scores not ordered closest first`);
    }
    t.ok(worst < 1e-5, `${distance}: scores within 1e-5 of the reference (worst ${worst.toExponential(2)})`);
  }
});

t.test('Cosine vectors are stored normalised', async (t) => {
  const index = await VectorIndex.create(await engineModule(), { dim: 3, distance: 'Cosine' });
  index.upsert(0, [3, 0, 4]);
  t.same(Array.from(index.vector(0)).map((x) => +x.toFixed(6)), [0.6, 0, 0.8]);
  const dotIndex = await VectorIndex.create(await engineModule(), { dim: 3, distance: 'Dot' });
  dotIndex.upsert(0, [3, 0, 4]);
  t.same(Array.from(dotIndex.vector(0)), [3, 0, 4]);
});

t.test('wrong dimension is refused', async (t) => {
  const index = await VectorIndex.create(await engineModule(), { dim: 4, distance: 'Dot' });
  t.throws(() => index.upsert(0, [1, 2, 3]), /expected dim: 4, got 3/);
  t.throws(() => index.search([1, 2, 3, 4, 5], { limit: 1 }), /expected dim: 4, got 5/);
});
