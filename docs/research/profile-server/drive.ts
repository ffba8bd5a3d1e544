// Throwaway driver for docs/research/server-profile.md (not part of the product or the tests).
// 1. loads 50000 x 128 Cosine points (2 shards) into a Quiver and lets it persist its graphs;
// 2. restarts that Quiver with `--cpu-prof` (main thread and, inherited through execArgv, each
//    shard worker), times spawn -> /readyz, warms up, then runs 16 keep-alive clients of single
//    /points/query for SECONDS; per-thread CPU from /proc/<pid>/task/*/stat over the window;
// 3. stops it with SIGTERM so every thread writes its .cpuprofile; prints the window as
//    CLOCK_MONOTONIC microseconds for analyze.ts.
// Usage: [QUIVER_ENTRY=build/server/main.js] [LOAD=query|filter|filter-unindexed|batch] node --import tsx docs/research/profile-server/drive.ts OUT_DIR [SECONDS]
// LOAD picks the bench server's load of that name (default query): its bodies and path.

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { threadShares, threadTicks } from './thread-ticks.js';
import { loadDataset } from '../../../src/bench/dataset.js';
import { openTarget } from '../../../src/bench/http-target.js';
import { freePort, startQuiver } from '../../../src/bench/quiver-process.js';
import { createCollection, upload } from '../../../src/bench/upload.js';

const out = resolve(process.argv[2] ?? '/tmp/sp');
const seconds = Number(process.argv[3] ?? 15);
await mkdir(out, { recursive: true });
const quiet = { start: () => ({ tick() {}, done() {} }), note() {} };
const data = await loadDataset({ source: 'synthetic', size: 50000, dim: 128, seed: 7, fashionMnistDir: '', cacheDir: '/tmp' }, quiet);
const storage = await mkdtemp(join(tmpdir(), 'quiver-profile-'));

// 1. load
{
  const server = await startQuiver({ storage, workers: 2 });
  const http = await openTarget(server.url, 16, 2);
  await createCollection(http, data, { name: 'p', m: 16, efConstruct: 100, int8: false, shards: 2 });
  await http.call('PUT', '/collections/p/index?wait=true', { field_name: 'bucket', field_schema: 'integer' });
  await upload(http, data, 'p', 256, 16, false, quiet, (id) => ({ bucket: id % 10, bucket_plain: id % 10 }));
  await http.close();
  await server.stop();
}

// 2. profiled run
const monoUs = () => Number(process.hrtime.bigint() / 1000n);
const port = await freePort();
// QUIVER_ENTRY=build/server/main.js profiles the bundle `npm start` runs instead of the sources.
const built = process.env.QUIVER_ENTRY;
const main = built ? resolve(built) : new URL('../../../src/main.ts', import.meta.url).pathname;
const spawnedUs = monoUs();
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${out}`, ...(built ? [] : ['--import', 'tsx']), main, '--port', String(port), '--storage-path', storage, '--snapshots-path', join(storage, 's'), '--workers', '2'], { env: { ...process.env, QDRANT__LOG_LEVEL: 'WARN' }, stdio: ['ignore', 'inherit', 'inherit'] });
const url = `http://127.0.0.1:${port}`;
let readyUs = 0;
for (let i = 0; i < 6000; i++) {
  const ok = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
  if (ok) { readyUs = monoUs(); break; }
  await new Promise((r) => setTimeout(r, 5));
}
const pool = new Pool(url, { connections: 16 });
const load = process.env.LOAD ?? 'query';
const field = load === 'filter' ? 'bucket' : load === 'filter-unindexed' ? 'bucket_plain' : null;
const one = (q: number) => ({ query: Array.from(data.queries.subarray((q % 1000) * 128, (q % 1000 + 1) * 128)), limit: 10, params: { hnsw_ef: 64 }, ...(field ? { filter: { must: [{ key: field, match: { value: 0 } }] } } : {}) });
const bodies = Array.from({ length: 1000 }, (_, q) => JSON.stringify(load === 'batch' ? { searches: Array.from({ length: 16 }, (_, j) => one(q * 16 + j)) } : one(q)));
const queryPath = load === 'batch' ? '/collections/p/points/query/batch' : '/collections/p/points/query';
async function run(ms: number): Promise<number> {
  let n = 0;
  const until = performance.now() + ms;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (performance.now() < until) {
      const res = await pool.request({ method: 'POST', path: queryPath, headers: { 'content-type': 'application/json' }, body: bodies[n++ % 1000] });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    }
  }));
  return n;
}
await run(2000);
const before = await threadTicks(child.pid!);
const cpu0 = process.cpuUsage();
const startUs = monoUs();
const requests = await run(seconds * 1000);
const endUs = monoUs();
const genCpu = process.cpuUsage(cpu0);
const after = await threadTicks(child.pid!);
const threads = threadShares(before, after, (endUs - startUs) / 1e6);
await pool.close();
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
const window = { spawnedUs, readyUs, startUs, endUs, requests, reqPerSec: requests / ((endUs - startUs) / 1e6), generatorCpu: (genCpu.user + genCpu.system) / (endUs - startUs), threadCpu: threads, storage };
await writeFile(join(out, 'window.json'), JSON.stringify(window, null, 2));
console.log(JSON.stringify(window, null, 2));
