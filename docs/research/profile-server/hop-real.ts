// Throwaway: the real hop, through ShardWorkers (supervisor, transport, shard worker, the search
// itself) rather than an echo: one worker thread owning one shard of N x 128 random Cosine points,
// a search task (limit 10, ef 64, no payload, no vectors) sent ROUNDS times with 1 and 16 in
// flight, reporting wall and CPU per task for the main thread's process and the worker's share
// (from /proc). Run it on two checkouts in the same sitting to compare transports.
// Usage: node --import tsx docs/research/profile-server/hop-real.ts [ROUNDS] [POINTS] [filter]

import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ShardWorkers } from '../../../src/worker/pool.js';
import type { ShardSpec } from '../../../src/shard/shard.js';
import type { SearchSpec } from '../../../src/shard/search.js';
import type { Deadline } from '../../../src/shard/deadline.js';

const ROUNDS = Number(process.argv[2] ?? 20000);
const POINTS = Number(process.argv[3] ?? 5000);
// `filter`: the bench's filter-unindexed condition (10% of the points, a key without an index).
const FILTER = process.argv[4] === 'filter';
const DIM = 128;

let seed = 7;
const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
const vector = (): number[] => Array.from({ length: DIM }, random);

/** CPU seconds (user + system) of each thread of this process, by thread id. */
async function threadCpu(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const tid of await readdir('/proc/self/task')) {
    const stat = (await readFile(`/proc/self/task/${tid}/stat`, 'utf8')).split(') ')[1].split(' ');
    out.set(tid, (Number(stat[11]) + Number(stat[12])) / 100);
  }
  return out;
}

const dir = await mkdtemp(join(tmpdir(), 'quiver-hop-real-'));
const workers = new ShardWorkers(1);
const shard = 'hop/0';
const spec: ShardSpec = { path: join(dir, '0'), vectors: [{ name: '', size: DIM, distance: 'Cosine', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null }], sparseVectors: [], indexes: [], wal: { capacityBytes: 32 << 20, retainClosed: 1 } };
await workers.run(0, { type: 'open', shard, spec });
for (let from = 0, op = 1; from < POINTS; from += 500, op++) {
  const points = Array.from({ length: Math.min(500, POINTS - from) }, (_, i) => ({ id: from + i + 1, vectors: { '': Float32Array.from(vector()) }, payload: { n: from + i, bucket_plain: (from + i + 1) % 10 } }));
  await workers.run(0, { type: 'apply', shard, ops: [{ kind: 'upsert', points, mode: 'upsert', updateFilter: null }], opId: op, clock: { peer: 0, clockId: 0, tick: op }, wait: true, dryRun: false });
}
const queries = Array.from({ length: 256 }, vector);
const search = (i: number): SearchSpec => ({
  using: '', query: { kind: 'nearest', vector: queries[i % queries.length] }, filter: FILTER ? { must: [{ kind: 'field', key: 'bucket_plain', path: [{ key: 'bucket_plain' }], match: { kind: 'value', value: 0 } }] } : null, top: 10,
  params: { hnswEf: 64, exact: false, quantization: null, indexedOnly: false, idfCorpus: null },
  scoreThreshold: null, withPayload: { all: false }, withVector: false,
});
const deadline = (): Deadline => ({ at: Date.now() + 60_000, seconds: 60, operation: 'Search' });
const task = (i: number) => workers.run(0, { type: 'search', shard, searches: [search(i)] }, deadline(), 'hop');

async function measure(inFlight: number): Promise<void> {
  for (let i = 0; i < 2000; i++) await task(i); // warm-up (and the optimizer's linking)
  const before = await threadCpu();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => { while (next < ROUNDS) await task(next++); }));
  const wall = ((performance.now() - started) * 1000) / ROUNDS;
  const used = process.cpuUsage(cpu);
  const after = await threadCpu();
  const main = ((after.get(String(process.pid)) ?? 0) - (before.get(String(process.pid)) ?? 0)) * 1e6 / ROUNDS;
  const busiest = Math.max(...[...after].filter(([tid]) => tid !== String(process.pid)).map(([tid, s]) => s - (before.get(tid) ?? 0))) * 1e6 / ROUNDS;
  console.log(`${inFlight} in flight: ${wall.toFixed(1)} us wall, ${((used.user + used.system) / ROUNDS).toFixed(1)} us process CPU, main thread ${main.toFixed(1)} us, busiest other thread (the worker) ${busiest.toFixed(1)} us per search task`);
}

console.log(`load average ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`);
await measure(1);
await measure(16);
console.log(`load average ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`);
await workers.close();
await rm(dir, { recursive: true, force: true });
