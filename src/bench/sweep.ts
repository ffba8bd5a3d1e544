// Build indexes, then measure recall@k, single-thread queries per second and per-query latency
// over an ef sweep. Runners are timed in alternation, each ef `repeats` times, keeping the
// fastest pass, so a slow moment of the machine does not land on one runner only (as
// ann-benchmarks keeps the best of N runs). A pass is timed by the wall clock, or with
// `clock: 'cpu'` by the process's CPU time: on a machine shared with other work, the time this
// process waits for a core is not the engine's, and CPU time leaves it out.

import { rowsOf } from './dataset.js';
import type { Progress } from './progress.js';
import type { RecallJudge } from './recall.js';
import type { AnnRunner, IndexBytes } from './runners.js';

export interface SweepPoint {
  /** Null for exact runners. */
  ef: number | null;
  recall: number;
  qps: number;
  p50Ms: number;
  p99Ms: number;
  queries: number;
}

export interface Built {
  runner: AnnRunner;
  buildSeconds: number;
  memoryBytes: number;
  indexBytes: IndexBytes;
}

/** Seconds since the call on `clock`. */
function stopwatch(clock: Clock): () => number {
  if (clock === 'cpu') {
    const started = process.cpuUsage();
    return () => {
      const used = process.cpuUsage(started);
      return (used.user + used.system) / 1e6;
    };
  }
  const started = performance.now();
  return () => (performance.now() - started) / 1000;
}

export async function buildTimed(runner: AnnRunner, base: Float32Array, dim: number, progress: Progress, clock: Clock = 'wall'): Promise<Built> {
  const points = rowsOf(base, dim).map((v) => runner.prepare(v));
  const task = progress.start(`${runner.name}: building ${points.length} x ${dim}`, points.length);
  const rssBefore = process.memoryUsage().rss;
  const elapsed = stopwatch(clock);
  await runner.build(points, dim, task);
  const buildSeconds = elapsed();
  task.done();
  const memoryBytes = runner.memoryBytes() ?? Math.max(0, process.memoryUsage().rss - rssBefore);
  return { runner, buildSeconds, memoryBytes, indexBytes: await runner.indexBytes() };
}

/** What a pass's QPS is counted in: elapsed time, or this process's CPU time (user + system). */
export type Clock = 'wall' | 'cpu';
export const CLOCKS: readonly Clock[] = ['wall', 'cpu'];

export interface SweepSpec {
  queries: Float32Array;
  dim: number;
  k: number;
  efs: number[];
  repeats: number;
  /** Exact runners answer only this many queries (a brute force over a large set is slow). */
  exactQueries: number;
  judge: RecallJudge;
  clock: Clock;
}

/** Index i of a sorted latency list at quantile q. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Sweeps already-built runners; returns one point list per runner, in runner order. */
export async function sweep(runners: AnnRunner[], spec: SweepSpec, progress: Progress): Promise<SweepPoint[][]> {
  const all = rowsOf(spec.queries, spec.dim);
  const prepared = runners.map((r) => (r.tunable ? all : all.slice(0, spec.exactQueries)).map((q) => r.prepare(q)));
  const out: SweepPoint[][] = runners.map(() => []);
  const plan = spec.efs.map((ef, i) => ({ ef, runners: runners.map((r, j) => j).filter((j) => runners[j].tunable || i === 0) }));
  const total = plan.reduce((sum, step) => sum + step.runners.reduce((s, j) => s + prepared[j].length, 0), 0) * spec.repeats;
  const task = progress.start(`searching: ef ${spec.efs.join(',')}, best of ${spec.repeats}`, total);
  for (const step of plan) {
    const best = runners.map(() => ({ seconds: Infinity, latencies: [] as number[] }));
    const found: ArrayLike<number>[][] = runners.map(() => []);
    for (const r of step.runners) await runners[r].useEf?.(step.ef);
    for (let rep = 0; rep < spec.repeats; rep++) {
      for (const r of step.runners) {
        const qs = prepared[r];
        const latencies = new Array<number>(qs.length);
        const elapsed = stopwatch(spec.clock);
        for (let q = 0; q < qs.length; q++) {
          const t = performance.now();
          found[r][q] = runners[r].search(qs[q], spec.k, step.ef);
          latencies[q] = performance.now() - t;
        }
        const seconds = elapsed();
        if (seconds < best[r].seconds) best[r] = { seconds, latencies };
        task.tick(qs.length);
      }
    }
    for (const r of step.runners) {
      const sorted = best[r].latencies.sort((a, b) => a - b);
      out[r].push({
        ef: runners[r].tunable ? step.ef : null,
        recall: spec.judge.recall(found[r]),
        qps: prepared[r].length / best[r].seconds,
        p50Ms: quantile(sorted, 0.5),
        p99Ms: quantile(sorted, 0.99),
        queries: prepared[r].length,
      });
    }
  }
  task.done();
  return out;
}
