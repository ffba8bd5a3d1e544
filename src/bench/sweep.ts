// Build indexes and measure recall@k and single-thread queries per second over an ef sweep.
// Runners are timed in alternation, each ef `repeats` times, keeping the best time, so a slow
// moment of the machine does not land on one runner only (as ann-benchmarks keeps best-of-N).

import type { AnnRunner } from './runners.js';

export interface SweepPoint {
  ef: number;
  recall: number;
  qps: number;
}

export interface RunnerResult {
  name: string;
  buildSeconds: number;
  points: SweepPoint[];
}

export function rows(data: Float32Array, dim: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let i = 0; i < data.length / dim; i++) out.push(data.subarray(i * dim, (i + 1) * dim));
  return out;
}

export async function buildTimed(runner: AnnRunner, base: Float32Array, dim: number): Promise<number> {
  const points = rows(base, dim).map((v) => runner.prepare(v));
  const started = performance.now();
  await runner.build(points, dim);
  return (performance.now() - started) / 1000;
}

function recallOf(found: ArrayLike<number>[], truth: Uint32Array, truthK: number, k: number): number {
  let hits = 0;
  for (let q = 0; q < found.length; q++) {
    const want = new Set(truth.subarray(q * truthK, q * truthK + k));
    for (let i = 0; i < found[q].length; i++) if (want.has(found[q][i])) hits++;
  }
  return hits / (found.length * k);
}

export interface SweepSpec {
  queries: Float32Array;
  dim: number;
  truth: Uint32Array;
  truthK: number;
  k: number;
  efs: number[];
  repeats: number;
}

/** Sweeps already-built runners; returns one point list per runner, in runner order. */
export function sweep(runners: AnnRunner[], spec: SweepSpec): SweepPoint[][] {
  const prepared = runners.map((r) => rows(spec.queries, spec.dim).map((q) => r.prepare(q)));
  const out: SweepPoint[][] = runners.map(() => []);
  for (const ef of spec.efs) {
    const best = runners.map(() => Infinity);
    const found: ArrayLike<number>[][] = runners.map(() => []);
    for (let rep = 0; rep < spec.repeats; rep++) {
      runners.forEach((runner, r) => {
        const qs = prepared[r];
        const t = performance.now();
        for (let q = 0; q < qs.length; q++) found[r][q] = runner.search(qs[q], spec.k, ef);
        best[r] = Math.min(best[r], (performance.now() - t) / 1000);
      });
    }
    runners.forEach((_, r) => {
      out[r].push({ ef, recall: recallOf(found[r], spec.truth, spec.truthK, spec.k), qps: prepared[r].length / best[r] });
    });
  }
  return out;
}

/** Highest QPS among sweep points reaching `minRecall`, or null if none does. */
export function bestQpsAt(result: RunnerResult, minRecall: number): SweepPoint | null {
  let best: SweepPoint | null = null;
  for (const p of result.points) if (p.recall >= minRecall && (!best || p.qps > best.qps)) best = p;
  return best;
}
