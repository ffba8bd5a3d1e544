// node --import tsx docs/research/profile-server/cpu-per-request.mjs <checkout folder> <source|build>
// Starts a server from that checkout, loads 10000 x 128 points in 2 shards, then sends single
// queries and batches of 16 over 16 keep-alive connections; prints the server's CPU (all threads,
// /proc) per request. CPU time, not wall time: what the machine's other load moves least.
import { readFileSync } from 'node:fs';
const [dir, entry] = process.argv.slice(2);
const { startQuiver } = await import(`${dir}/src/bench/quiver-process.ts`);
const { mkdtempSync, rmSync } = await import('node:fs');
const { Agent, request } = await import('undici');
const storage = mkdtempSync(`${(await import('node:os')).tmpdir()}/quiver-cpu-`);
const server = await startQuiver({ storage, workers: 2, ...(entry === 'build' ? { entry: 'build' } : {}) });
const agent = new Agent({ connections: 16, pipelining: 1 });
const call = async (method, path, body) => { const r = await request(server.url + path, { method, body: body && JSON.stringify(body), headers: { 'content-type': 'application/json' }, dispatcher: agent }); const t = await r.body.text(); if (r.statusCode !== 200) throw new Error(t); return t; };
let seed = 1; const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
const vec = () => Array.from({ length: 128 }, rnd);
await call('PUT', '/collections/c', { vectors: { size: 128, distance: 'Cosine' }, shard_number: 2 });
for (let b = 0; b < 40; b++) await call('PUT', '/collections/c/points?wait=true', { points: Array.from({ length: 250 }, (_, i) => ({ id: b * 250 + i, vector: vec() })) });
const cpu = () => { const f = readFileSync(`/proc/${server.process.pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const bodies = Array.from({ length: 200 }, () => JSON.stringify({ query: vec(), limit: 10, params: { hnsw_ef: 64 } }));
async function loop(n, path, body) { let i = 0; await Promise.all(Array.from({ length: 16 }, async () => { while (i < n) { const k = i++; await call('POST', path, JSON.parse(body(k))); } })); }
const single = (k) => bodies[k % 200];
const batch = (k) => JSON.stringify({ searches: Array.from({ length: 16 }, (_, j) => JSON.parse(bodies[(k * 16 + j) % 200])) });
await loop(500, '/collections/c/points/query', single); // warm-up
await loop(50, '/collections/c/points/query/batch', batch);
for (const [name, n, path, body] of [['query', 3000, '/collections/c/points/query', single], ['batch', 300, '/collections/c/points/query/batch', batch]]) {
  const c0 = cpu(); const t0 = performance.now();
  await loop(n, path, body);
  const ms = cpu() - c0;
  console.log(`${dir.split('/').pop()} ${entry} ${name}: ${(ms / n * 1000).toFixed(0)} us server CPU per request, ${(n / ((performance.now() - t0) / 1000)).toFixed(0)} req/s`);
}
await server.stop(); await agent.close(); rmSync(storage, { recursive: true, force: true });
