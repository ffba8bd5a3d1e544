// Throwaway profiling driver for docs/research/engine-profile.md (not part of the product).
// Builds (or loads from --dir) a Fashion-MNIST index, then runs the first --queries test queries
// --passes times at one ef through a chosen engine build, so `node --cpu-prof` sees a long,
// steady search loop. Prints recall@10, QPS by CPU time, the `cpu` cost per query and, when
// the module exports them (the instrumented build of instrument.patch), per-query counters.
//
//   node --import tsx docs/research/profile/profile-search.ts --engine f32 --ef 40 \
//        --wasm /tmp/ep/quiver.named.wasm --dir /tmp/ep [--mode wrapper|raw]

import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { VectorIndex } from '../../../src/engine/index.js';
import { loadFashionMnist, defaultFashionMnistDir } from '../../../src/bench/fashion-mnist.js';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'f32' },
    ef: { type: 'string', default: '40' },
    queries: { type: 'string', default: '1000' },
    passes: { type: 'string', default: '5' },
    wasm: { type: 'string', default: 'build/quiver.wasm' },
    dir: { type: 'string', default: '/tmp/ep' },
    mode: { type: 'string', default: 'wrapper' },
  },
});
const engine = values.engine!;
const ef = Number(values.ef);
const nq = Number(values.queries);
const passes = Number(values.passes);
const K = 10;

const data = await loadFashionMnist(defaultFashionMnistDir());
const dim = data.dim;
const nBase = data.base.length / dim;
const module = await WebAssembly.compile(await readFile(values.wasm!));
const image = `${values.dir}/fmnist-${engine}.img`;

let index: VectorIndex;
if (existsSync(image)) {
  index = await VectorIndex.load(module, new Uint8Array(await readFile(image)));
} else {
  const t0 = process.cpuUsage();
  index = await VectorIndex.create(module, { dim, distance: 'Euclid', m: 16, efConstruct: 100, quantization: engine === 'int8' ? { quantile: 1 } : null });
  index.reserve(nBase);
  for (let i = 0; i < nBase; i++) index.upsert(i, data.base.subarray(i * dim, (i + 1) * dim));
  const t = process.cpuUsage(t0);
  console.log(`built ${nBase} in ${((t.user + t.system) / 1e6).toFixed(1)} s CPU`);
  await writeFile(image, index.serialize());
}

const queries = Array.from({ length: nq }, (_, i) => data.queries.subarray(i * dim, (i + 1) * dim));

// Exact top-10 by the engine's SIMD scan, cached.
const gtFile = `${values.dir}/fmnist-gt-${nq}.bin`;
let gt: Uint32Array;
if (existsSync(gtFile)) gt = new Uint32Array((await readFile(gtFile)).buffer.slice(0));
else {
  gt = new Uint32Array(nq * K);
  queries.forEach((q, i) => gt.set(index.search(q, { limit: K, exact: true }).offsets, i * K));
  await writeFile(gtFile, gt);
}

type Counters = { resetCounters?: () => void; counter?: (i: number) => number };
const wasm = (index as unknown as { wasm: Record<string, (...a: number[]) => number> & Counters & { memory: WebAssembly.Memory } }).wasm;
const opts = { limit: K, ef, quantization: { rescore: true, oversampling: 2 } };
const useCodes = engine === 'int8' ? 1 : 0;

function once(q: Float32Array): ArrayLike<number> {
  if (values.mode === 'wrapper') return index.search(q, opts).offsets;
  // raw: the wasm call alone (query copied in, ids read in place), no result slicing or score mapping
  new Float32Array(wasm.memory.buffer).set(q, wasm.queryPtr() >>> 2);
  const n = wasm.search(K, Math.max(ef, K), 0, 0, useCodes, 1, K * 2);
  return new Uint32Array(wasm.memory.buffer, wasm.outIdsPtr(), n);
}

// recall (and warm-up)
let hits = 0;
let cost = 0;
wasm.resetCounters?.();
for (let i = 0; i < nq; i++) {
  const got = Array.from(once(queries[i]));
  cost += wasm.searchCost();
  const truth = new Set(gt.subarray(i * K, (i + 1) * K));
  for (const id of got) if (truth.has(id)) hits++;
}
const names = ['distance evals', 'bounded evals', 'hops (expanded)', 'neighbours scanned', 'candidate pushes', 'greedy evals'];
const counts = wasm.counter ? names.map((n, i) => `${n} ${(wasm.counter!(i) / nq).toFixed(1)}`).join(', ') : '';

const t0 = process.cpuUsage();
for (let p = 0; p < passes; p++) for (let i = 0; i < nq; i++) once(queries[i]);
const t = process.cpuUsage(t0);
const secs = (t.user + t.system) / 1e6;
console.log(JSON.stringify({
  engine, ef, mode: values.mode, wasm: values.wasm, recall: hits / (nq * K),
  qps: Math.round((passes * nq) / secs), usPerQuery: +((secs / (passes * nq)) * 1e6).toFixed(1),
  costBytesPerQuery: Math.round(cost / nq), f32EvalsPerQuery: +(cost / nq / (dim * 4)).toFixed(1),
}));
if (counts) console.log(counts);
if ((wasm as any).lanesRead) console.log(`lanes read per bounded-kernel eval (f32 or code): ${((wasm as any).lanesRead() / (wasm.counter!(1))).toFixed(0)} of ${dim}`);
