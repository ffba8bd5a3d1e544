// Throwaway driver (not part of the product or the tests): the server's CPU per request of two
// builds, runs alternated on the same storage, so that the machine's other load (which moves
// wall-clock rates by 2x) falls on both alike. Loads 50000 x 128 Cosine points into 2 shards once
// (with the first checkout's build), then for each round and each checkout starts that checkout's
// build/server/main.js on the storage, warms up 2 s, and runs 16 keep-alive clients for SECONDS of
// LOAD: `query` (single /points/query, hnsw_ef 64, limit 10), `batch` (/points/query/batch of 16)
// or `unindexed` (single queries with the bench's filter on a payload field without an index).
// PROF_DIR=dir adds --cpu-prof (each thread's profile written there as the server stops).
// Per-thread CPU from /proc: main thread, the shard workers, the rest (V8, libuv), per request.
// Usage: node --import tsx docs/research/profile-server/ab-cpu.ts SECONDS ROUNDS LOAD CHECKOUT_A CHECKOUT_B
// (each checkout with `npm run asbuild:release && npm run build:server` done).

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { threadTicks } from './thread-ticks.js';
import { loadDataset } from '../../../src/bench/dataset.js';
import { openTarget } from '../../../src/bench/http-target.js';
import { freePort } from '../../../src/bench/quiver-process.js';
import { createCollection, upload } from '../../../src/bench/upload.js';

const [secondsArg, roundsArg, load, ...checkouts] = process.argv.slice(2);
const seconds = Number(secondsArg);
const rounds = Number(roundsArg);
const quiet = { start: () => ({ tick() {}, done() {} }), note() {} };
const data = await loadDataset({ source: 'synthetic', size: 50000, dim: 128, seed: 7, fashionMnistDir: '', cacheDir: '/tmp' }, quiet);
const storage = await mkdtemp(join(tmpdir(), 'quiver-ab-'));

async function start(checkout: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const main = join(resolve(checkout), 'build/server/main.js');
  const prof = process.env.PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROF_DIR}`] : [];
  const child = spawn(process.execPath, [...prof, main, '--port', String(port), '--storage-path', storage, '--snapshots-path', join(storage, 's'), '--workers', '2'], { env: { ...process.env, QDRANT__LOG_LEVEL: 'WARN' }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 1200; i++) {
    if (await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, pid: child.pid!, stop: () => new Promise<void>((r) => { child.once('exit', () => r()); child.kill('SIGTERM'); }) };
}

{
  const server = await start(checkouts[0]);
  const http = await openTarget(server.url, 16, 2);
  await createCollection(http, data, { name: 'p', m: 16, efConstruct: 100, int8: false, shards: 2 });
  // the bench's filter-unindexed row: a plain (not indexed) payload field, 10% of the points match
  await upload(http, data, 'p', 256, 16, true, quiet, (id) => ({ bucket_plain: id % 10 }));
  // the graphs linked before the runs, so no optimizer works during them
  for (let i = 0; i < 1200; i++) {
    const info = await fetch(`${server.url}/collections/p`).then((r) => r.json() as Promise<{ result: { status: string } }>);
    if (info.result.status === 'green') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  await http.close();
  await server.stop();
}

const filter = load === 'unindexed' ? { filter: { must: [{ key: 'bucket_plain', match: { value: 0 } }] } } : {};
const query = (q: number) => ({ query: Array.from(data.queries.subarray((q % 1000) * 128, ((q % 1000) + 1) * 128)), limit: 10, params: { hnsw_ef: 64 }, ...filter });
const bodies = Array.from({ length: 1000 }, (_, q) => JSON.stringify(load === 'batch' ? { searches: Array.from({ length: 16 }, (_, j) => query(q * 16 + j)) } : query(q)));
const path = load === 'batch' ? '/collections/p/points/query/batch' : '/collections/p/points/query';

async function measure(checkout: string): Promise<string> {
  const server = await start(checkout);
  const pool = new Pool(server.url, { connections: 16 });
  const run = async (ms: number) => {
    let n = 0;
    const until = performance.now() + ms;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (performance.now() < until) {
        const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: bodies[n++ % 1000] });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
      }
    }));
    return n;
  };
  await run(2000);
  const load1 = loadavg()[0];
  const mainSys = async () => Number((await readFile(`/proc/${server.pid}/task/${server.pid}/stat`, 'utf8')).split(') ')[1].split(' ')[12]);
  const sys0 = await mainSys();
  const before = await threadTicks(server.pid);
  const t0 = performance.now();
  const requests = await run(seconds * 1000);
  const wall = (performance.now() - t0) / 1000;
  const after = await threadTicks(server.pid);
  const sys = (await mainSys()) - sys0;
  await pool.close();
  await server.stop();
  // us of CPU per request: ticks are 10 ms
  const per = (ticks: number) => (ticks * 10_000 / requests).toFixed(0);
  let mainTicks = 0;
  const workers: number[] = [];
  let rest = 0;
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    const [tid] = k.split(' ');
    if (Number(tid) === server.pid) mainTicks = d;
    else if (d / 100 / wall > 0.05 && k.endsWith(' node')) workers.push(d);
    else rest += d;
  }
  const total = mainTicks + workers.reduce((a, b) => a + b, 0) + rest;
  return `${checkout.padEnd(34)} load ${load1.toFixed(2).padStart(5)}  ${(requests / wall).toFixed(0).padStart(5)} req/s  CPU us/request: main ${per(mainTicks).padStart(5)} (system ${per(sys).padStart(4)})  workers ${workers.map(per).join(' / ').padStart(11)}  rest ${per(rest).padStart(4)}  total ${per(total).padStart(5)}`;
}

for (let r = 0; r < rounds; r++) {
  for (const checkout of r % 2 === 0 ? checkouts : [...checkouts].reverse()) console.log(await measure(checkout));
}
await rm(storage, { recursive: true, force: true });
