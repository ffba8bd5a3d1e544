// The server hot path (issue 16): what a server serves per second around its engine, load by
// load, on one collection of `shards` shards with an integer payload field that 10% of the points
// match, once with a payload index and once without:
// - query / batch / filter / filter-unindexed: closed loops of `connections` clients for
//   `seconds` after a warm-up, single queries, batches of `queryBatch`, queries with a filter;
// - open-loop: single queries offered at `rate` per second on a fixed timetable (open-loop.ts);
// - upsert: `upsertClients` clients upserting `batch` points each, wait=true, into a fresh
//   collection of the same shape;
// - start: a Quiver spawned on empty storage as `npm start` runs it, until GET /readyz answers 200;
// - http-floor: the single-query closed loop against a bare Fastify process that answers every
//   query with the same ten hits (http-floor-server.ts): the most any server on this HTTP stack
//   could serve with this generator on this machine, measured in the same run.
// Every load reports the load generator's own CPU, and the run ends with the same data built in
// this process and searched on one thread: the served queries per second over the engine's.

import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { rowsOf, type Dataset } from './dataset.js';
import type { GroundTruth } from './ground-truth.js';
import { startHttpFloor } from './http-floor.js';
import { openTarget, type HttpTarget } from './http-target.js';
import { httpSweepPoint } from './http-search.js';
import { openLoop } from './open-loop.js';
import type { Progress } from './progress.js';
import { freePort, startQuiver } from './quiver-process.js';
import { RecallJudge } from './recall.js';
import type { HotPath, HotPathLoad, LoadRow } from './result.js';
import { makeRunner } from './runners.js';
import { buildTimed, quantile, sweep } from './sweep.js';
import { createCollection, upload } from './upload.js';

export interface HotPathOptions {
  loads: HotPathLoad[];
  k: number;
  m: number;
  efConstruct: number;
  ef: number;
  shards: number;
  connections: number;
  /** Timed window of each load. */
  seconds: number;
  queryBatch: number;
  /** Points per upsert, and the clients upserting at once. */
  batch: number;
  upsertClients: number;
  /** Open loop: requests offered per second. */
  rate: number;
  /** start: shard workers of the spawned server. */
  workers: number;
}

const COLLECTION = 'quiver_bench_hot';
const UPSERT_COLLECTION = 'quiver_bench_upsert';
/** The filter matches points whose field holds 0: one in FILTER_BUCKETS. */
const FILTER_BUCKETS = 10;
const INDEXED_FIELD = 'bucket';
const PLAIN_FIELD = 'bucket_plain';
/** Untimed closed-loop traffic before each timed window (JIT, connections, caches). */
const WARM_UP_SECONDS = 1;
/** Poll interval of the start-up probe: the resolution of the start-to-ready time. */
const START_POLL_MS = 5;

/** The wall time and this process's CPU time since the call, CPU as a fraction of one core. */
function meter(): () => { seconds: number; cpu: number } {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const seconds = (performance.now() - wall) / 1000;
    const used = process.cpuUsage(cpu);
    return { seconds, cpu: (used.user + used.system) / 1e6 / seconds };
  };
}

interface ClosedLoop {
  requests: number;
  seconds: number;
  cpu: number;
  /** Sorted milliseconds. */
  latencies: number[];
}

/** `clients` loops sending `body(i)` for request i, each waiting for its answer, for `seconds`. */
async function closedLoop(http: HttpTarget, path: string, body: (i: number) => string, clients: number, seconds: number): Promise<ClosedLoop> {
  const latencies: number[] = [];
  let next = 0;
  const until = performance.now() + seconds * 1000;
  const measure = meter();
  const client = async () => {
    while (performance.now() < until) {
      const started = performance.now();
      await http.request('POST', path, body(next++));
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const { seconds: elapsed, cpu } = measure();
  return { requests: latencies.length, seconds: elapsed, cpu, latencies: latencies.sort((a, b) => a - b) };
}

function closedRow(load: HotPathLoad, run: ClosedLoop, perRequest: number, unit: 'queries' | 'points'): LoadRow {
  const requestsPerSecond = run.requests / run.seconds;
  return {
    load, requests: run.requests, seconds: run.seconds, requestsPerSecond, unit, perSecond: requestsPerSecond * perRequest,
    p50Ms: quantile(run.latencies, 0.5), p99Ms: quantile(run.latencies, 0.99), generatorCpu: run.cpu,
  };
}

/** Serialised request bodies, one per query of the data set, built before any timing. */
function queryBodies(data: Dataset, k: number, ef: number, filterField: string | null): string[] {
  const filter = filterField ? { filter: { must: [{ key: filterField, match: { value: 0 } }] } } : {};
  return rowsOf(data.queries, data.dim).map((q) => JSON.stringify({ query: Array.from(q), limit: k, params: { hnsw_ef: ef }, ...filter }));
}

/** Batches of `size` consecutive queries, wrapping around the query set. */
function batchBodies(data: Dataset, k: number, ef: number, size: number): string[] {
  const queries = rowsOf(data.queries, data.dim);
  return Array.from({ length: Math.ceil(queries.length / size) }, (_, b) => JSON.stringify({
    searches: Array.from({ length: size }, (_, j) => ({ query: Array.from(queries[(b * size + j) % queries.length]), limit: k, params: { hnsw_ef: ef } })),
  }));
}

export async function hotPathMode(http: HttpTarget, data: Dataset, truth: GroundTruth, options: HotPathOptions, progress: Progress): Promise<HotPath> {
  const judge = new RecallJudge(data, truth, options.k);
  const n = data.base.length / data.dim;
  const spec = { m: options.m, efConstruct: options.efConstruct, int8: false, shards: options.shards };
  await createCollection(http, data, { name: COLLECTION, ...spec });
  await http.call('PUT', `/collections/${COLLECTION}/index?wait=true`, { field_name: INDEXED_FIELD, field_schema: 'integer' });
  await upload(http, data, COLLECTION, options.batch, options.connections, false, progress, (id) => ({ [INDEXED_FIELD]: id % FILTER_BUCKETS, [PLAIN_FIELD]: id % FILTER_BUCKETS }));

  const nq = data.queries.length / data.dim;
  const warm = progress.start(`single queries over HTTP: a warm-up pass over ${nq} queries (recall check)`, nq);
  const recall = (await httpSweepPoint(http, COLLECTION, data, options.k, { hnsw_ef: options.ef }, options.connections, judge, warm)).recall;
  warm.done();

  const path = `/collections/${COLLECTION}/points/query`;
  // The closed-loop loads: where they post, their bodies (built when the load runs), queries per request.
  const closed: Partial<Record<HotPathLoad, () => { path: string; bodies: string[]; perRequest: number }>> = {
    query: () => ({ path, bodies: queryBodies(data, options.k, options.ef, null), perRequest: 1 }),
    batch: () => ({ path: `${path}/batch`, bodies: batchBodies(data, options.k, options.ef, options.queryBatch), perRequest: options.queryBatch }),
    filter: () => ({ path, bodies: queryBodies(data, options.k, options.ef, INDEXED_FIELD), perRequest: 1 }),
    'filter-unindexed': () => ({ path, bodies: queryBodies(data, options.k, options.ef, PLAIN_FIELD), perRequest: 1 }),
  };
  const loadAverage = loadavg();
  const rows: LoadRow[] = [];
  for (const load of options.loads) {
    const task = progress.start(`${load}: ${loadLabel(load, options)}`, 1);
    const shape = closed[load]?.();
    if (shape) {
      const body = (i: number) => shape.bodies[i % shape.bodies.length];
      await closedLoop(http, shape.path, body, options.connections, WARM_UP_SECONDS);
      rows.push(closedRow(load, await closedLoop(http, shape.path, body, options.connections, options.seconds), shape.perRequest, 'queries'));
    } else if (load === 'http-floor') {
      rows.push(await floorRow(queryBodies(data, options.k, options.ef, null), options.connections, options.seconds));
    } else if (load === 'open-loop') {
      const bodies = queryBodies(data, options.k, options.ef, null);
      const measure = meter();
      const summary = await openLoop({ rate: options.rate, seconds: options.seconds, maxInFlight: options.connections }, (i) => http.request('POST', path, bodies[i % bodies.length]).then(() => undefined));
      const { seconds, cpu } = measure();
      rows.push({ load, requests: summary.completed, seconds, requestsPerSecond: summary.completed / seconds, unit: 'queries', perSecond: summary.completed / seconds, p50Ms: summary.p50Ms, p99Ms: summary.p99Ms, generatorCpu: cpu, openLoop: summary });
    } else if (load === 'upsert') {
      await createCollection(http, data, { name: UPSERT_COLLECTION, ...spec });
      const measure = meter();
      const timing = await upload(http, data, UPSERT_COLLECTION, options.batch, options.upsertClients, true, progress);
      // upload() goes on polling until the collection is searchable; the CPU of those few polls
      // is counted, but over the upload's time, when the generator's work was done.
      const { seconds, cpu } = measure();
      const requests = Math.ceil(n / options.batch);
      rows.push({ load, requests, seconds: timing.uploadSeconds, requestsPerSecond: requests / timing.uploadSeconds, unit: 'points', perSecond: n / timing.uploadSeconds, p50Ms: null, p99Ms: null, generatorCpu: (cpu * seconds) / timing.uploadSeconds });
      await http.call('DELETE', `/collections/${UPSERT_COLLECTION}`);
    } else {
      rows.push({ load, requests: 0, seconds: 0, requestsPerSecond: 0, unit: null, perSecond: null, p50Ms: null, p99Ms: null, generatorCpu: null, readyMs: await startToReady(options.workers) });
    }
    task.done();
  }
  await http.call('DELETE', `/collections/${COLLECTION}`);

  const engine = await engineBaseline(data, judge, options, progress);
  const query = rows.find((r) => r.load === 'query');
  const floor = rows.find((r) => r.load === 'http-floor');
  return {
    m: options.m, efConstruct: options.efConstruct, ef: options.ef, shards: options.shards, connections: options.connections, recall, loadAverage, rows, engine,
    servedToEngine: query ? query.requestsPerSecond / engine.qps : null,
    servedToFloor: query && floor ? query.requestsPerSecond / floor.requestsPerSecond : null,
    singleQueryCeiling: floor ? singleQueryCeiling(floor, engine.cpuQps, options.shards) : null,
  };
}

/**
 * The most single queries per second this machine could serve with the generator on it: its
 * cores over what one request costs at least, the generator's and the floor server's CPU per
 * request (measured at the floor's rate, where both are cheapest per request) plus one search per
 * shard at the engine's in-process CPU cost over the whole data set (a shard holds a part of it,
 * so its graph is a little cheaper to search: this is an estimate, not a bound).
 */
function singleQueryCeiling(floor: LoadRow, engineCpuQps: number, shards: number): number {
  const generator = floor.generatorCpu! / floor.requestsPerSecond;
  const server = floor.serverCpuPerRequestUs! / 1e6;
  return availableParallelism() / (generator + server + shards / engineCpuQps);
}

/** The single-query closed loop against the HTTP floor server, started for it and stopped after. */
async function floorRow(bodies: string[], clients: number, seconds: number): Promise<LoadRow> {
  const floor = await startHttpFloor();
  try {
    const http = await openTarget(floor.url, clients, 0);
    try {
      const path = '/collections/floor/points/query';
      const body = (i: number) => bodies[i % bodies.length];
      await closedLoop(http, path, body, clients, WARM_UP_SECONDS);
      const cpuBefore = await floor.cpuSeconds();
      const run = await closedLoop(http, path, body, clients, seconds);
      const serverCpu = (await floor.cpuSeconds()) - cpuBefore;
      return { ...closedRow('http-floor', run, 1, 'queries'), serverCpuPerRequestUs: (serverCpu / run.requests) * 1e6 };
    } finally {
      await http.close();
    }
  } finally {
    await floor.stop();
  }
}

function loadLabel(load: HotPathLoad, options: HotPathOptions): string {
  switch (load) {
    case 'open-loop': return `single queries offered at ${options.rate}/s for ${options.seconds} s`;
    case 'upsert': return `${options.upsertClients} clients x ${options.batch} points, wait=true`;
    case 'start': return 'a Quiver on empty storage until /readyz answers';
    case 'http-floor': return `a bare Fastify answering ten canned hits, ${options.connections} connections for ${options.seconds} s`;
    default: return `${options.connections} connections for ${options.seconds} s after a ${WARM_UP_SECONDS} s warm-up`;
  }
}

/** Milliseconds from spawning a Quiver on empty storage until GET /readyz answers 200. */
async function startToReady(workers: number): Promise<number> {
  const storage = await mkdtemp(join(tmpdir(), 'quiver-bench-start-'));
  try {
    const port = await freePort();
    const started = performance.now();
    const server = await startQuiver({ storage, port, workers, readyPath: '/readyz', pollMs: START_POLL_MS, entry: 'build' });
    const readyMs = performance.now() - started;
    await server.stop();
    return readyMs;
  } finally {
    await rm(storage, { recursive: true, force: true });
  }
}

/**
 * The same vectors and graph parameters in this process: one thread's queries per second at the
 * same ef (best of two passes), by the wall clock (what the ratio to the served rate takes, both
 * suffering the machine's other load alike) and by this process's CPU time (the engine's own cost).
 */
async function engineBaseline(data: Dataset, judge: RecallJudge, options: HotPathOptions, progress: Progress): Promise<HotPath['engine']> {
  const runner = makeRunner('quiver-f32', { m: options.m, efConstruct: options.efConstruct, distance: data.distance }, 1);
  try {
    await buildTimed(runner, data.base, data.dim, progress);
    const spec = { queries: data.queries, dim: data.dim, k: options.k, efs: [options.ef], repeats: 2, exactQueries: 0, judge };
    const [[wall]] = await sweep([runner], { ...spec, clock: 'wall' }, progress);
    const [[cpu]] = await sweep([runner], { ...spec, clock: 'cpu' }, progress);
    return { name: runner.name, qps: wall.qps, cpuQps: cpu.qps, recall: wall.recall };
  } finally {
    await runner.close?.();
  }
}
