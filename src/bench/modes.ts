// The three benchmark modes over one data set and its ground truth:
// - engine: every engine in this process, one thread each, over the m x ef_construct x ef grid;
// - server: a Qdrant-compatible server over HTTP, one collection per m x ef_construct, an ef sweep;
// - ingest: upsert throughput and time to a searchable index, per batch size.

import { CommandError } from '../errors.js';
import type { Dataset } from './dataset.js';
import type { GroundTruth } from './ground-truth.js';
import type { HttpTarget } from './http-target.js';
import { httpSweepPoint, type QueryParams } from './http-search.js';
import type { Progress } from './progress.js';
import { RecallJudge } from './recall.js';
import type { IngestRow, Series } from './result.js';
import { datatypesOf, isExact, makeRunner, storesVectors, type EngineName, type Originals } from './runners.js';
import type { Compression, Datatype, TurboBits } from '../engine/index.js';
import { buildTimed, sweep, type Clock } from './sweep.js';
import { createCollection, upload } from './upload.js';

export interface SweepOptions {
  k: number;
  engines: EngineName[];
  ms: number[];
  efConstructs: number[];
  efs: number[];
  /** int8 rescoring: candidates per result scored again with f32. */
  oversampling: number;
}

export interface EngineOptions extends SweepOptions {
  repeats: number;
  exactQueries: number;
  /** Element types Quiver's engines store vectors in: each Quiver engine runs once per datatype. */
  datatypes: Datatype[];
  clock: Clock;
  /** quiver-pq: product quantization's compression ratios, each its own series. */
  pqCompressions: Compression[];
  /** Bit widths quiver-turbo runs with, once each. */
  turboBits: TurboBits[];
  /** Where Quiver's engines keep the stored vectors, each run in turn. */
  originals: Originals[];
}

export interface HttpOptions extends SweepOptions {
  concurrency: number;
  batchSizes: number[];
  /** Ingest: the `wait` values to upload with, one run per batch size each. */
  waits: boolean[];
}

function grid(options: SweepOptions): { m: number; efConstruct: number }[] {
  return options.ms.flatMap((m) => options.efConstructs.map((efConstruct) => ({ m, efConstruct })));
}

export async function engineMode(data: Dataset, truth: GroundTruth, options: EngineOptions, progress: Progress): Promise<Series[]> {
  const judge = new RecallJudge(data, truth, options.k);
  const series: Series[] = [];
  const configs = grid(options);
  for (const [i, { m, efConstruct }] of configs.entries()) {
    // Exact baselines have no graph parameters: they are measured once, with the first configuration.
    const engines = options.engines.filter((e) => !isExact(e) || i === 0);
    const runners = engines.flatMap((engine) => datatypesOf(engine, options.datatypes)
      .flatMap((datatype) => (engine === 'quiver-pq' ? options.pqCompressions : [undefined])
        .flatMap((compression) => (engine === 'quiver-turbo' ? options.turboBits : [undefined])
          .flatMap((bits) => (storesVectors(engine) ? options.originals : ['memory' as const])
            .map((originals) => makeRunner(engine, { m, efConstruct, distance: data.distance }, options.oversampling, datatype, compression, bits, originals))))));
    const built = [];
    try {
      for (const runner of runners) built.push(await buildTimed(runner, data.base, data.dim, progress, options.clock));
      const points = await sweep(built.map((b) => b.runner), { queries: data.queries, dim: data.dim, k: options.k, efs: options.efs, repeats: options.repeats, exactQueries: options.exactQueries, judge, clock: options.clock }, progress);
      built.forEach((b, j) => series.push({
        engine: b.runner.name,
        m: b.runner.tunable ? m : null,
        efConstruct: b.runner.tunable ? efConstruct : null,
        buildSeconds: b.buildSeconds,
        memoryBytes: b.memoryBytes,
        indexBytes: b.indexBytes,
        ...(b.runner.datatype ? { datatype: b.runner.datatype } : {}),
        points: points[j],
      }));
    } finally {
      for (const runner of runners) await runner.close?.();
    }
  }
  return series;
}

const COLLECTION = 'quiver_bench';
/** The engines server mode can stand for with a collection's config and search params. */
const SERVER_ENGINES: readonly EngineName[] = ['quiver-f32', 'quiver-int8', 'flat'];

export async function serverMode(http: HttpTarget, data: Dataset, truth: GroundTruth, options: HttpOptions, progress: Progress): Promise<Series[]> {
  if (options.engines.some((e) => !SERVER_ENGINES.includes(e))) throw new CommandError(`server mode measures a server over HTTP: choose --engines among ${SERVER_ENGINES.join(', ')}`);
  const judge = new RecallJudge(data, truth, options.k);
  const nq = data.queries.length / data.dim;
  const series: Series[] = [];
  const variants = options.engines.includes('quiver-int8') ? [false, true] : [false];
  for (const [i, { m, efConstruct }] of grid(options).entries()) {
    for (const int8 of variants) {
      await createCollection(http, data, { name: COLLECTION, m, efConstruct, int8 });
      const timing = await upload(http, data, COLLECTION, options.batchSizes[0], options.concurrency, false, progress);
      const sweeps: { engine: string; params: QueryParams[] }[] = [];
      if (int8) sweeps.push({ engine: 'server int8', params: options.efs.map((ef) => ({ hnsw_ef: ef, quantization: { rescore: true, oversampling: options.oversampling } })) });
      else {
        if (options.engines.includes('quiver-f32')) sweeps.push({ engine: 'server f32', params: options.efs.map((ef) => ({ hnsw_ef: ef })) });
        if (options.engines.includes('flat') && i === 0) sweeps.push({ engine: 'server exact', params: [{ exact: true }] });
      }
      for (const { engine, params } of sweeps) {
        const task = progress.start(`${engine} (m=${m}, ef_construct=${efConstruct}): ${params.length} x ${nq} queries, ${options.concurrency} at a time, after a warm-up pass`, (params.length + 1) * nq);
        // A first untimed pass warms the server (JIT, connections, caches) so the first ef is not penalised.
        await httpSweepPoint(http, COLLECTION, data, options.k, params[0], options.concurrency, judge, task);
        const points = [];
        for (const p of params) points.push(await httpSweepPoint(http, COLLECTION, data, options.k, p, options.concurrency, judge, task));
        task.done();
        const exact = params[0].exact === true;
        series.push({ engine, m: exact ? null : m, efConstruct: exact ? null : efConstruct, buildSeconds: timing.searchableSeconds, memoryBytes: null, points });
      }
    }
  }
  await http.call('DELETE', `/collections/${COLLECTION}`);
  return series;
}

export async function ingestMode(http: HttpTarget, data: Dataset, truth: GroundTruth, options: HttpOptions, progress: Progress): Promise<IngestRow[]> {
  const judge = new RecallJudge(data, truth, options.k);
  const n = data.base.length / data.dim;
  const nq = data.queries.length / data.dim;
  const rows: IngestRow[] = [];
  for (const wait of options.waits) {
    for (const batchSize of options.batchSizes) {
      await createCollection(http, data, { name: COLLECTION, m: options.ms[0], efConstruct: options.efConstructs[0], int8: false });
      const timing = await upload(http, data, COLLECTION, batchSize, options.concurrency, wait, progress);
      const task = progress.start(`recall check: ${nq} queries`, nq);
      const check = await httpSweepPoint(http, COLLECTION, data, options.k, {}, options.concurrency, judge, task);
      task.done();
      rows.push({ wait, batchSize, concurrency: options.concurrency, points: n, uploadSeconds: timing.uploadSeconds, pointsPerSecond: n / timing.uploadSeconds, searchableSeconds: timing.searchableSeconds, recall: check.recall });
    }
  }
  await http.call('DELETE', `/collections/${COLLECTION}`);
  return rows;
}
