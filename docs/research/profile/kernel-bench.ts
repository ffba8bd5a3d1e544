// Throwaway driver of kernels.ts (docs/research/engine-profile.md): ns per 784-d distance, rows
// hot in cache (16 rows reused) or cold (uniform over the 60000 Fashion-MNIST rows, as a graph
// search's neighbours are), one row at a time vs four interleaved, f32 and u8 codes.
//   node --import tsx docs/research/profile/kernel-bench.ts /tmp/ep/kernels.wasm
import { readFile } from 'node:fs/promises';
import { loadFashionMnist, defaultFashionMnistDir } from '../../../src/bench/fashion-mnist.js';

const data = await loadFashionMnist(defaultFashionMnistDir());
const dim = data.dim, rows = data.base.length / dim;
const inst = await WebAssembly.instantiate(await WebAssembly.compile(await readFile(process.argv[2])), { env: { abort: () => { throw new Error('abort'); }, seed: () => 1 } });
const w = inst.exports as unknown as { memory: WebAssembly.Memory; alloc(n: number): number; run(mode: number, q: number, base: number, row: number, ids: number, count: number, n: number): number };
const f32Base = w.alloc(rows * dim * 4), u8Base = w.alloc(rows * dim), q = w.alloc(dim * 4), qc = w.alloc(dim);
const evals = 300_000;
const ids = w.alloc(evals * 4);
new Float32Array(w.memory.buffer, f32Base, rows * dim).set(data.base);
new Uint8Array(w.memory.buffer, u8Base, rows * dim).set(data.basePixels.map((x) => x >> 1));
new Float32Array(w.memory.buffer, q, dim).set(data.queries.subarray(0, dim));
new Uint8Array(w.memory.buffer, qc, dim).set(data.queries.subarray(0, dim).map((x) => x >> 1));
const idv = new Uint32Array(w.memory.buffer, ids, evals);
const label = ['f32 one row', 'f32 four rows interleaved', 'u8 codes: engine l2I8 (extend, sub, dot)', 'u8 codes: mask/shift dot (0..127 codes)', 'f32 one row, next-but-one row touched', 'u8 codes: engine l2I8, four rows interleaved'];
for (const pattern of ['hot', 'cold']) {
  for (let i = 0; i < evals; i++) idv[i] = pattern === 'hot' ? i & 15 : Math.floor(Math.random() * rows);
  for (let mode = 0; mode < 6; mode++) {
    const f = mode < 2 || mode == 4;
    w.run(mode, f ? q : qc, f ? f32Base : u8Base, f ? dim * 4 : dim, ids, 20000, dim); // warm-up / tier-up
    const t0 = process.cpuUsage();
    for (let r = 0; r < 3; r++) w.run(mode, f ? q : qc, f ? f32Base : u8Base, f ? dim * 4 : dim, ids, evals, dim);
    const t = process.cpuUsage(t0);
    console.log(`${pattern.padEnd(5)} ${label[mode].padEnd(44)} ${(((t.user + t.system) * 1000) / (3 * evals)).toFixed(0)} ns/distance`);
  }
}
