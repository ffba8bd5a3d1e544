// `npm run bench:server`: HTTP load against a running Quiver (or any Qdrant-compatible URL) from
// this process, through an undici connection pool: searches with and without a filter, batch
// searches and upserts, each for a fixed time at a fixed concurrency; requests/s and p50/p99.
// Without --url it starts a Quiver server in a child process on a free loopback port.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { clusteredVectors, seededRandom } from './synthetic.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    points: { type: 'string', default: '20000' },
    dim: { type: 'string', default: '128' },
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '16' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log('npm run bench:server -- [--url http://127.0.0.1:6333] [--points 20000] [--dim 128] [--seconds 10] [--concurrency 16]');
  process.exit(0);
}

const N = Number(values.points);
const DIM = Number(values.dim);
const SECONDS = Number(values.seconds);
const CONCURRENCY = Number(values.concurrency);
const COLLECTION = 'bench_server';

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function startLocal(): Promise<{ url: string; child: ChildProcess; storage: string }> {
  const storage = await mkdtemp(join(tmpdir(), 'quiver-bench-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('../main.ts', import.meta.url).pathname, '--port', String(port), '--storage-path', storage], {
    env: { ...process.env, QDRANT__LOG_LEVEL: 'WARN' },
    stdio: 'inherit',
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (await fetch(url).then((r) => r.ok, () => false)) break;
    if (child.exitCode !== null) throw new Error('server exited during start');
    await new Promise((r) => setTimeout(r, 100)); // readiness poll interval
  }
  return { url, child, storage };
}

const local = values.url ? null : await startLocal();
const base = values.url ?? local!.url;
const pool = new Pool(base, { connections: CONCURRENCY, pipelining: 1 });

async function call(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
  const res = await pool.request({ method, path, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text);
}

const next = seededRandom(7);
const data = clusteredVectors(N + 1000, DIM, 32, next);
const vector = (i: number) => Array.from(data.subarray(i * DIM, (i + 1) * DIM));

await call('DELETE', `/collections/${COLLECTION}`).catch(() => undefined);
await call('PUT', `/collections/${COLLECTION}`, { vectors: { size: DIM, distance: 'Cosine' } });
await call('PUT', `/collections/${COLLECTION}/index?wait=true`, { field_name: 'group', field_schema: 'integer' });
const loadStart = performance.now();
for (let start = 0; start < N; start += 500) {
  const points = Array.from({ length: Math.min(500, N - start) }, (_, j) => ({ id: start + j, vector: vector(start + j), payload: { group: (start + j) % 100 } }));
  await call('PUT', `/collections/${COLLECTION}/points?wait=true`, { points });
}
const loadSeconds = (performance.now() - loadStart) / 1000;

interface Result {
  name: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
}

/** Runs `make` from CONCURRENCY loops for SECONDS; latency of every request in ms. */
async function load(name: string, make: (i: number) => [string, string, unknown]): Promise<Result> {
  const latencies: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  let counter = 0;
  const worker = async () => {
    while (performance.now() < until) {
      const [method, path, body] = make(counter++);
      const t = performance.now();
      await call(method as 'POST', path, body);
      latencies.push(performance.now() - t);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { name, requests: latencies.length, rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99) };
}

const query = (i: number) => vector(N + (i % 1000));
const results = [
  await load('search (top 10)', (i) => ['POST', `/collections/${COLLECTION}/points/query`, { query: query(i), limit: 10 }]),
  await load('search + filter (1%)', (i) => ['POST', `/collections/${COLLECTION}/points/query`, { query: query(i), limit: 10, filter: { must: [{ key: 'group', match: { value: i % 100 } }] } }]),
  await load('search + filter (10%)', (i) => ['POST', `/collections/${COLLECTION}/points/query`, { query: query(i), limit: 10, filter: { must: [{ key: 'group', range: { lt: 10 } }] } }]),
  await load('batch of 8 searches', (i) => ['POST', `/collections/${COLLECTION}/points/query/batch`, { searches: Array.from({ length: 8 }, (_, j) => ({ query: query(i * 8 + j), limit: 10 })) }]),
  await load('upsert 100 points', (i) => ['PUT', `/collections/${COLLECTION}/points?wait=true`, { points: Array.from({ length: 100 }, (_, j) => ({ id: N + ((i * 100 + j) % 100000), vector: query(i + j), payload: { group: j } })) }]),
];

console.log(`\n${base}: ${N} x ${DIM} Cosine points, ${CONCURRENCY} concurrent requests, ${SECONDS} s per load`);
console.log(`initial load: ${N} points in ${loadSeconds.toFixed(1)} s (${(N / loadSeconds).toFixed(0)} points/s, batches of 500, wait=true)\n`);
console.log(`${'load'.padEnd(24)}${'requests'.padEnd(10)}${'req/s'.padEnd(10)}${'p50 ms'.padEnd(10)}p99 ms`);
for (const r of results) console.log(`${r.name.padEnd(24)}${String(r.requests).padEnd(10)}${r.rps.toFixed(0).padEnd(10)}${r.p50.toFixed(1).padEnd(10)}${r.p99.toFixed(1)}`);

await pool.close();
if (local) {
  local.child.kill('SIGTERM');
  await new Promise((r) => local.child.once('exit', r));
  await rm(local.storage, { recursive: true, force: true });
}
