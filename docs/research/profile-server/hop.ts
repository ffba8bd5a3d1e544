// Throwaway: the cost of one hop to a worker thread and back, as the server makes it per shard
// per request, in isolation: a message shaped like a search task (a 128-number array in an object
// tree) through (a) Piscina as the supervisor configures it (atomics disabled, one task at a
// time) and (b) a bare MessagePort; and the same with the vector as a Float32Array. N round
// trips, one at a time and 16 in flight (Piscina: queued behind one thread, as the supervisor
// does), reporting wall and main-thread CPU microseconds per round trip.
// Usage: node --import tsx docs/research/profile-server/hop.ts [N]

import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';

const N = Number(process.argv[2] ?? 20000);
const echo = new URL('./hop-worker.mjs', import.meta.url).href;
const vector = Array.from({ length: 128 }, (_, i) => Math.sin(i));
const task = (v: unknown) => ({
  task: { type: 'search', searches: [{ query: { kind: 'nearest', vector: { kind: 'dense', values: v } }, using: '', filter: null, params: { hnsw_ef: 64, exact: false }, withPayload: { all: false }, withVector: false, scoreThreshold: null, top: 10 }] },
  deadline: { at: Date.now() + 60000, budgetMs: 60000 },
});
const reply = Array.from({ length: 10 }, (_, i) => ({ id: i * 7, score: 0.9 - i / 100, version: 3 }));

async function measure(label: string, roundTrip: () => Promise<unknown>, inFlight: number): Promise<void> {
  for (let i = 0; i < 2000; i++) await roundTrip(); // warm-up
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => { while (next++ < N) await roundTrip(); }));
  const wall = ((performance.now() - started) * 1000) / N;
  const used = process.cpuUsage(cpu);
  console.log(`${label.padEnd(58)} ${wall.toFixed(1).padStart(7)} us wall  ${((used.user + used.system) / N).toFixed(1).padStart(7)} us process CPU per round trip`);
}

const pool = new Piscina({ filename: echo, minThreads: 1, maxThreads: 1, concurrentTasksPerWorker: 1, idleTimeout: Infinity, atomics: 'disabled', workerData: { reply } });
const arrayTask = task(vector);
const typedTask = task(Float32Array.from(vector));
for (const inFlight of [1, 16]) {
  await measure(`piscina, vector as number[], ${inFlight} in flight`, () => pool.run(arrayTask), inFlight);
  await measure(`piscina, vector as Float32Array, ${inFlight} in flight`, () => pool.run(typedTask), inFlight);
}
await pool.destroy();

const worker = new Worker(new URL('./hop-worker.mjs', import.meta.url), { workerData: { reply, port: true } });
let waiting: ((v: unknown) => void)[] = [];
worker.on('message', (m) => waiting.shift()!(m));
const raw = (m: unknown) => new Promise((resolve) => { waiting.push(resolve); worker.postMessage(m); });
for (const inFlight of [1, 16]) {
  await measure(`bare postMessage, vector as number[], ${inFlight} in flight`, () => raw(arrayTask), inFlight);
  await measure(`bare postMessage, vector as Float32Array, ${inFlight} in flight`, () => raw(typedTask), inFlight);
}
await worker.terminate();
waiting = [];
