// `quiver bench multivector`: Quiver's engine over synthetic multivectors (lists of vectors per
// point, MaxSim) in this process, one thread: build time, memory, and recall@k and QPS of the
// HNSW over an ef sweep against the engine's exact MaxSim scan of the same index, which also
// gives the ground truth (no other library here scores multivectors to compare with).

import { VectorIndex, type Distance } from '../engine/index.js';
import { engineModule } from '../runtime/wasm-module.js';
import { loadCold } from './cold-index.js';
import { listOf, syntheticMultivectors, type MultivectorSet } from './multivector-data.js';
import type { Progress } from './progress.js';
import type { Series } from './result.js';
import { quantile, type SweepPoint } from './sweep.js';

export interface MultivectorBenchOptions {
  points: number;
  dim: number;
  /** Vectors per point, drawn from minK..maxK. */
  minK: number;
  maxK: number;
  queries: number;
  /** Vectors per query. */
  queryK: number;
  topics: number;
  seed: number;
  distance: Distance;
  k: number;
  m: number;
  efConstruct: number;
  efs: number[];
  repeats: number;
  /** Queries the exact scan answers for its own timing (it is slow); all queries get ground truth. */
  exactQueries: number;
  /** Also build an int8-quantized index and sweep it (rescoring `oversampling` x k candidates). */
  int8: boolean;
  oversampling: number;
  /**
   * Also sweep each index with its lists `cold` (Qdrant's `on_disk: true`): loaded from its image
   * with the lists read on demand from a page file, as a shard loads it, the int8 codes in memory.
   */
  cold: boolean;
}

export interface MultivectorBench {
  base: MultivectorSet;
  queries: MultivectorSet;
  series: Series[];
}

interface Timed {
  found: Uint32Array[];
  seconds: number;
  latencies: number[];
}

function timedPass(index: VectorIndex, queries: MultivectorSet, n: number, k: number, ef: number, exact: boolean, oversampling = 1): Timed {
  const found: Uint32Array[] = [];
  const latencies: number[] = [];
  const started = performance.now();
  for (let q = 0; q < n; q++) {
    const t = performance.now();
    found.push(index.search(listOf(queries, q), { limit: k, ef, exact, quantization: { rescore: true, oversampling } }, queries.counts[q]).offsets);
    latencies.push(performance.now() - t);
  }
  return { found, seconds: (performance.now() - started) / 1000, latencies };
}

function recallOf(found: Uint32Array[], truth: Uint32Array[], k: number): number {
  let hits = 0;
  let wanted = 0;
  found.forEach((f, q) => {
    const t = new Set(truth[q]);
    for (const o of f) if (t.has(o)) hits++;
    wanted += Math.min(k, truth[q].length);
  });
  return wanted === 0 ? 1 : hits / wanted;
}

function point(ef: number | null, best: Timed, recall: number): SweepPoint {
  const sorted = [...best.latencies].sort((a, b) => a - b);
  return { ef, recall, qps: best.latencies.length / best.seconds, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99), queries: best.latencies.length };
}

export async function multivectorMode(options: MultivectorBenchOptions, progress: Progress): Promise<MultivectorBench> {
  const shape = { dim: options.dim, topics: options.topics, topicSeed: options.seed };
  const base = syntheticMultivectors({ ...shape, points: options.points, minK: options.minK, maxK: options.maxK, seed: options.seed + 1 });
  const queries = syntheticMultivectors({ ...shape, points: options.queries, minK: options.queryK, maxK: options.queryK, seed: options.seed + 2 });
  const { index, buildSeconds } = await buildIndex(options, base, false, progress);
  const memoryBytes = index.memoryBytes;

  // An untimed graph pass first, so the JIT and the engine's scratch regions are warm for every ef.
  timedPass(index, queries, options.queries, options.k, options.efs[0], false);
  const truthTask = progress.start(`ground truth: exact MaxSim scan of ${options.queries} queries`, 1);
  const truth = timedPass(index, queries, options.queries, options.k, 0, true);
  truthTask.done();
  // The exact scan is timed on its own, best of `repeats`, over the first exactQueries queries.
  const exactN = Math.min(options.exactQueries, options.queries);
  let exactBest: Timed | null = null;
  for (let r = 0; r < options.repeats; r++) {
    const pass = timedPass(index, queries, exactN, options.k, 0, true);
    if (!exactBest || pass.seconds < exactBest.seconds) exactBest = pass;
  }
  const series: Series[] = [
    { engine: 'quiver multivector', m: options.m, efConstruct: options.efConstruct, buildSeconds, memoryBytes, points: efSweep(index, queries, truth, options, 1, progress) },
    { engine: 'quiver multivector exact', m: null, efConstruct: null, buildSeconds: 0, memoryBytes, points: [point(null, exactBest!, recallOf(exactBest!.found, truth.found.slice(0, exactN), options.k))] },
  ];
  const built = [{ name: 'quiver multivector', index, buildSeconds, oversampling: 1 }];
  if (options.int8) {
    const int8 = await buildIndex(options, base, true, progress);
    timedPass(int8.index, queries, options.queries, options.k, options.efs[0], false, options.oversampling);
    series.splice(1, 0, {
      engine: 'quiver multivector int8', m: options.m, efConstruct: options.efConstruct, buildSeconds: int8.buildSeconds, memoryBytes: int8.index.memoryBytes,
      points: efSweep(int8.index, queries, truth, options, options.oversampling, progress),
    });
    built.push({ name: 'quiver multivector int8', ...int8, oversampling: options.oversampling });
  }
  if (options.cold) {
    for (const b of built) {
      const { index: cold, pages } = await loadCold(b.index, false);
      try {
        timedPass(cold, queries, options.queries, options.k, options.efs[0], false, b.oversampling);
        series.splice(series.length - 1, 0, {
          engine: `${b.name} cold`, m: options.m, efConstruct: options.efConstruct, buildSeconds: b.buildSeconds, memoryBytes: cold.memoryBytes,
          points: efSweep(cold, queries, truth, options, b.oversampling, progress),
        });
      } finally {
        pages.close();
      }
    }
  }
  return { base, queries, series };
}

async function buildIndex(options: MultivectorBenchOptions, base: MultivectorSet, int8: boolean, progress: Progress): Promise<{ index: VectorIndex; buildSeconds: number }> {
  const index = await VectorIndex.create(await engineModule(), {
    dim: options.dim, distance: options.distance, m: options.m, efConstruct: options.efConstruct, multivector: { comparator: 'max_sim' },
    quantization: int8 ? { quantile: 1 } : null,
  });
  index.reserve(options.points, base.counts.reduce((a, b) => a + b, 0));
  const build = progress.start(`quiver multivector${int8 ? ' int8' : ''}: building ${options.points} points x ${options.minK}..${options.maxK} vectors x ${options.dim}`, options.points);
  const started = performance.now();
  for (let i = 0; i < options.points; i++) {
    index.upsert(i, listOf(base, i), base.counts[i]);
    build.tick();
  }
  const buildSeconds = (performance.now() - started) / 1000;
  build.done();
  return { index, buildSeconds };
}

/** recall@k and QPS per ef, best of `repeats` passes over every query. */
function efSweep(index: VectorIndex, queries: MultivectorSet, truth: Timed, options: MultivectorBenchOptions, oversampling: number, progress: Progress): SweepPoint[] {
  const task = progress.start(`searching: ef ${options.efs.join(',')}, best of ${options.repeats}`, options.efs.length * options.repeats);
  const points: SweepPoint[] = [];
  for (const ef of options.efs) {
    let best: Timed | null = null;
    for (let r = 0; r < options.repeats; r++) {
      const pass = timedPass(index, queries, options.queries, options.k, ef, false, oversampling);
      if (!best || pass.seconds < best.seconds) best = pass;
      task.tick();
    }
    points.push(point(ef, best!, recallOf(best!.found, truth.found, options.k)));
  }
  task.done();
  return points;
}
