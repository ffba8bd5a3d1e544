// Throwaway driver for the ingest part of docs/research/server-profile.md (not part of the product
// or the tests): the bench's upsert load (4 clients x 256 points, wait=true, 50000 x 128 Cosine,
// 2 shards) against a Quiver started with `--cpu-prof` (main thread and shard workers), into
// ROUNDS fresh collections one after another. The bodies are serialised before the window, so
// the generator's JSON work stays out of it. Writes window.json for analyze.ts (requests = upserts).
// Usage: node --import tsx docs/research/profile-server/drive-upsert.ts OUT_DIR [ROUNDS] [--no-prof]
// (--no-prof: the same load without the profiler, for quick before/after comparisons)

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { threadShares, threadTicks } from './thread-ticks.js';
import { loadDataset } from '../../../src/bench/dataset.js';
import { freePort } from '../../../src/bench/quiver-process.js';

const out = resolve(process.argv[2] ?? '/tmp/sp-upsert');
const rounds = Number(process.argv[3] ?? 2);
const profile = !process.argv.includes('--no-prof');
const BATCH = 256;
const CLIENTS = 4;
await mkdir(out, { recursive: true });
const quiet = { start: () => ({ tick() {}, done() {} }), note() {} };
const data = await loadDataset({ source: 'synthetic', size: 50000, dim: 128, seed: 7, fashionMnistDir: '', cacheDir: '/tmp' }, quiet);
const n = data.base.length / data.dim;
const bodies: string[] = [];
for (let start = 0; start < n; start += BATCH) {
  const points = [];
  for (let id = start; id < Math.min(n, start + BATCH); id++) points.push({ id, vector: Array.from(data.base.subarray(id * data.dim, (id + 1) * data.dim)) });
  bodies.push(JSON.stringify({ points }));
}
const storage = await mkdtemp(join(tmpdir(), 'quiver-profile-upsert-'));
const monoUs = () => Number(process.hrtime.bigint() / 1000n);
const port = await freePort();
const main = new URL('../../../src/main.ts', import.meta.url).pathname;
const child = spawn(process.execPath, [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${out}`] : []), '--import', 'tsx', main, '--port', String(port), '--storage-path', storage, '--snapshots-path', join(storage, 's'), '--workers', '2'], { env: { ...process.env, QDRANT__LOG_LEVEL: 'WARN' }, stdio: ['ignore', 'inherit', 'inherit'] });
const url = `http://127.0.0.1:${port}`;
for (let i = 0; i < 6000; i++) {
  if (await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false)) break;
  await new Promise((r) => setTimeout(r, 5));
}
const pool = new Pool(url, { connections: CLIENTS });
const headers = { 'content-type': 'application/json' };
async function call(method: 'PUT' | 'DELETE', path: string, body?: string): Promise<void> {
  const res = await pool.request({ method, path, headers, body });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
}
const collection = (r: number) => `u${r}`;
for (let r = 0; r < rounds; r++) {
  await call('PUT', `/collections/${collection(r)}`, JSON.stringify({ vectors: { size: data.dim, distance: data.distance }, hnsw_config: { m: 16, ef_construct: 100 }, shard_number: 2 }));
}
const before = await threadTicks(child.pid!);
const cpu0 = process.cpuUsage();
const startUs = monoUs();
const perRound: number[] = [];
for (let r = 0; r < rounds; r++) {
  const roundStart = monoUs();
  let next = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (next < bodies.length) await call('PUT', `/collections/${collection(r)}/points?wait=true`, bodies[next++]);
  }));
  perRound.push(n / ((monoUs() - roundStart) / 1e6));
}
const endUs = monoUs();
const genCpu = process.cpuUsage(cpu0);
const after = await threadTicks(child.pid!);
const threads = threadShares(before, after, (endUs - startUs) / 1e6);
await pool.close();
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
await rm(storage, { recursive: true, force: true });
const window = { startUs, endUs, requests: rounds * bodies.length, pointsPerSecond: perRound, generatorCpu: (genCpu.user + genCpu.system) / (endUs - startUs), threadCpu: threads };
await writeFile(join(out, 'window.json'), JSON.stringify(window, null, 2));
console.log(JSON.stringify(window, null, 2));
