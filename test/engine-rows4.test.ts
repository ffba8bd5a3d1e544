// The four-row kernels (assembly/rows4.ts) against JS references: the distance in double
// precision, and the one-row kernels' f32 association replayed lane by lane with Math.fround
// (diffT / dotT, and abandoningT with its 64-lane stop), which the four-row values must equal bit
// for bit, since a search takes the same decisions and reports the same scores only if they do.
// int8 code sums are checked exactly, stop included.

import t from 'tap';
import { DISTANCES, instantiate, metricCode } from '../src/engine/index.js';
import type { Distance } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { rng, uniform } from './helpers/data.js';

const f = Math.fround;
const DIMS = [4, 16, 60, 64, 100, 128, 132, 784, 1536];
const BLOCK = 64;

type Op = (x: number, y: number) => number;
const OPS: Record<Distance, Op> = {
  Euclid: (x, y) => { const d = f(x - y); return f(d * d); },
  Manhattan: (x, y) => Math.abs(f(x - y)),
  Dot: (x, y) => f(x * y),
  Cosine: (x, y) => f(x * y),
};

const hsum = (v: number[]): number => f(f(f(v[0] + v[1]) + v[2]) + v[3]);
const addLanes = (a: number[], b: number[]): number[] => a.map((x, l) => f(x + b[l]));

/** diffT / dotT's sum over q[from..from+n) and r[from..): four 4-lane accumulators, then a 4-lane loop. */
function fullSum(op: Op, q: Float32Array, r: Float32Array, from: number, n: number): number {
  const acc = [0, 1, 2, 3].map(() => [0, 0, 0, 0]);
  const n16 = n & ~15;
  for (let i = 0; i < n16; i += 16) {
    for (let k = 0; k < 4; k++) for (let l = 0; l < 4; l++) acc[k][l] = f(acc[k][l] + op(q[from + i + 4 * k + l], r[from + i + 4 * k + l]));
  }
  for (let i = n16; i + 4 <= n; i += 4) {
    for (let l = 0; l < 4; l++) acc[0][l] = f(acc[0][l] + op(q[from + i + l], r[from + i + l]));
  }
  return hsum(addLanes(addLanes(acc[0], acc[1]), addLanes(acc[2], acc[3])));
}

/** abandoningT's running 4-lane sum after each 64-lane block of one row. */
function blockSums(op: Op, q: Float32Array, r: Float32Array, n: number): number[][] {
  const sums: number[][] = [];
  let s = [0, 0, 0, 0];
  for (let i = 0; i + BLOCK <= n; i += BLOCK) {
    const acc = [0, 1, 2, 3].map(() => [0, 0, 0, 0]);
    for (let j = 0; j < BLOCK; j += 16) {
      for (let k = 0; k < 4; k++) for (let l = 0; l < 4; l++) acc[k][l] = f(acc[k][l] + op(q[i + j + 4 * k + l], r[i + j + 4 * k + l]));
    }
    s = addLanes(s, addLanes(addLanes(acc[0], acc[1]), addLanes(acc[2], acc[3])));
    sums.push(s);
  }
  return sums;
}

/** The four-row bounded kernel's values: partial sums once all four rows pass `bound`, else abandoningT's unstopped value. */
function boundedRows(op: Op, q: Float32Array, rows: Float32Array[], n: number, bound: number): number[] {
  const sums = rows.map((r) => blockSums(op, q, r, n));
  for (let b = 0; b < sums[0].length; b++) {
    const partial = sums.map((s) => hsum(s[b]));
    if (partial.every((p) => p > bound)) return partial;
  }
  const done = sums[0].length * BLOCK;
  return rows.map((r, i) => f((sums[i].length ? hsum(sums[i][done / BLOCK - 1]) : 0) + fullSum(op, q, r, done, n - done)));
}

/** The distance in double precision ("smaller is closer" form). */
function exact(distance: Distance, q: Float32Array, r: Float32Array): number {
  let s = 0;
  for (let i = 0; i < q.length; i++) {
    if (distance === 'Euclid') s += (q[i] - r[i]) ** 2;
    else if (distance === 'Manhattan') s += Math.abs(q[i] - r[i]);
    else s -= q[i] * r[i];
  }
  return s;
}

t.test('four-row f32 kernels equal the one-row kernels bit for bit and the exact distance', async (t) => {
  const wasm = await instantiate(await engineModule());
  const max = DIMS[DIMS.length - 1];
  const qp = wasm.alloc(max * 4);
  const rp = [0, 1, 2, 3].map(() => wasm.alloc(max * 4));
  const ptrs = wasm.alloc(16);
  const out = wasm.alloc(16);
  let checked = 0;
  for (const dim of DIMS) {
    const q = uniform(dim, dim, -1, 1);
    // Rows at increasing distances from the query, so a bound can fall between them.
    const rows = [0, 1, 2, 3].map((i) => uniform(dim, 10 * dim + i, -1, 1).map((x, j) => f(q[j] + (0.2 + 0.3 * i) * (x - q[j]))));
    const mem = () => new Float32Array(wasm.memory.buffer);
    mem().set(q, qp >>> 2);
    rows.forEach((r, i) => mem().set(r, rp[i] >>> 2));
    new Uint32Array(wasm.memory.buffer).set(rp, ptrs >>> 2);
    const got = () => Array.from(mem().subarray(out >>> 2, (out >>> 2) + 4));
    for (const distance of DISTANCES) {
      const op = OPS[distance];
      const sign = distance === 'Euclid' || distance === 'Manhattan' ? 1 : -1;
      wasm.kernelF32Rows4(metricCode(distance), qp, ptrs, dim, 0, 0, out);
      const full = got();
      t.same(full, rows.map((r) => sign * fullSum(op, q, r, 0, dim)), `${distance} ${dim}-d unbounded: diffT/dotT's values`);
      t.same(full, rows.map((_, i) => wasm.kernelF32(metricCode(distance), qp, rp[i], dim)), `${distance} ${dim}-d unbounded: the engine's one-row kernel's values`);
      rows.forEach((r, i) => {
        const e = exact(distance, q, r);
        if (Math.abs(full[i] - e) > 1e-5 * Math.max(1, Math.abs(e))) t.fail(`${distance} ${dim}-d row ${i}: ${full[i]} vs exact ${e}`);
      });
      if (sign < 0) continue;
      const unbounded = rows.map((r) => boundedRows(op, q, [r, r, r, r], dim, Infinity)[0]);
      // Bounds: none, between the rows, and below all (every row stops at the first block).
      for (const bound of [Infinity, (unbounded[1] + unbounded[2]) / 2, 0]) {
        wasm.kernelF32Rows4(metricCode(distance), qp, ptrs, dim, bound, 1, out);
        const values = got();
        t.same(values, boundedRows(op, q, rows, dim, bound), `${distance} ${dim}-d bound ${bound}: the four-row abandoning values`);
        values.forEach((v, i) => {
          // What a search needs: a row below the bound gets abandoningT's exact value, a row above it a value above it.
          if (unbounded[i] < bound ? v !== unbounded[i] : !(v > bound)) t.fail(`${distance} ${dim}-d row ${i}: ${v} with bound ${bound}`);
        });
        checked++;
      }
    }
  }
  t.ok(checked > 0, `${checked} bounded cases checked`);
});

t.test('four-row int8 kernels give the exact integer sums, stopping once all four pass the bound', async (t) => {
  const wasm = await instantiate(await engineModule());
  const next = rng(11);
  const n = 800; // 12 blocks of 64 codes and 32 more
  const qp = wasm.alloc(n);
  const rp = [0, 1, 2, 3].map(() => wasm.alloc(n));
  const ptrs = wasm.alloc(16);
  const out = wasm.alloc(16);
  const q = Int8Array.from({ length: n }, () => Math.floor(next() * 128));
  const rows = [0, 1, 2, 3].map((i) => Int8Array.from(q, (x) => Math.min(127, Math.max(0, x + Math.round((next() - 0.5) * 20 * (i + 1))))));
  new Int8Array(wasm.memory.buffer).set(q, qp);
  rows.forEach((r, i) => new Int8Array(wasm.memory.buffer).set(r, rp[i]));
  new Uint32Array(wasm.memory.buffer).set(rp, ptrs >>> 2);
  const got = () => Array.from(new Int32Array(wasm.memory.buffer, out, 4));
  const sum = (r: Int8Array, len: number, term: (x: number, y: number) => number) => {
    let s = 0;
    for (let i = 0; i < len; i++) s += term(q[i], r[i]);
    return s;
  };
  const sq = (x: number, y: number) => (x - y) ** 2;
  wasm.kernelI8Rows4(0, qp, ptrs, n, 0, out);
  t.same(got(), rows.map((r) => sum(r, n, (x, y) => x * y)), 'dot');
  wasm.kernelI8Rows4(2, qp, ptrs, n, 0, out);
  t.same(got(), rows.map((r) => sum(r, n, (x, y) => Math.abs(x - y))), 'L1');
  const full = rows.map((r) => sum(r, n, sq));
  t.same(full, rows.map((_, i) => wasm.kernelI8(1, qp, rp[i], n)), 'the reference equals the one-row L2 kernel');
  for (const bound of [2 ** 31 - 1, Math.floor((full[1] + full[2]) / 2), 0]) {
    wasm.kernelI8Rows4(1, qp, ptrs, n, bound, out);
    let expected = full;
    for (let end = BLOCK; end <= n; end += BLOCK) {
      const partial = rows.map((r) => sum(r, end, sq));
      if (partial.every((p) => p > bound)) { expected = partial; break; }
    }
    t.same(got(), expected, `L2 with bound ${bound}`);
  }
});
