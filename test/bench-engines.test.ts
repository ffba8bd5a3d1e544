// The pieces of `quiver bench engine` behind issue 15's comparison: the embedding-like data set
// (deterministic, normalised, centred, cached on disk), the recall targets table (QPS interpolated
// on a sweep, ratios to hnswlib-node) on fixed fake sweeps, and usearch as a peer engine, its
// recall against a brute force computed here for each distance it has.

import t from 'tap';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { tempDir } from './helpers/temp-dir.js';
import { embeddingCacheFile, fillEmbeddings, loadEmbeddings, type EmbeddingSpec } from '../src/bench/embeddings.js';
import type { Progress } from '../src/bench/progress.js';
import type { BenchResult, Series } from '../src/bench/result.js';
import { makeRunner } from '../src/bench/runners.js';
import type { SweepPoint } from '../src/bench/sweep.js';
import { clusteredVectors, seededRandom } from '../src/bench/synthetic.js';
import { qpsAtRecall, targetRows, targetsTable } from '../src/cli/targets.js';
import { CommandError } from '../src/errors.js';

const SPEC: EmbeddingSpec = { rows: 300, dim: 96, clusters: 8, seed: 11 };

function generate(spec: EmbeddingSpec): Float32Array {
  const out = new Float32Array(spec.rows * spec.dim);
  fillEmbeddings(spec, out);
  return out;
}

t.test('embedding set: deterministic, normalised, centred with mixed signs, prefix-stable', async (t) => {
  const a = generate(SPEC);
  t.same(Buffer.from(a.buffer), Buffer.from(generate(SPEC).buffer), 'the same seed gives the same bytes');
  t.notSame(Buffer.from(a.buffer), Buffer.from(generate({ ...SPEC, seed: 12 }).buffer), 'another seed another set');
  const longer = generate({ ...SPEC, rows: 350 });
  t.same(Buffer.from(longer.buffer, 0, a.byteLength), Buffer.from(a.buffer), 'row i does not depend on how many rows are drawn');
  let worst = 0;
  for (let r = 0; r < SPEC.rows; r++) {
    let s = 0;
    for (let j = 0; j < SPEC.dim; j++) s += a[r * SPEC.dim + j] ** 2;
    worst = Math.max(worst, Math.abs(Math.sqrt(s) - 1));
  }
  t.ok(worst < 1e-5, `every row has norm 1 (largest error ${worst})`);
  // Centred: no dimension keeps one sign across the set, so a sign bit per dimension (binary
  // quantization) tells vectors apart; across dimensions about half the components are positive.
  let positive = 0;
  let oneSigned = 0;
  for (let j = 0; j < SPEC.dim; j++) {
    let p = 0;
    for (let r = 0; r < SPEC.rows; r++) if (a[r * SPEC.dim + j] > 0) p++;
    positive += p;
    if (p === 0 || p === SPEC.rows) oneSigned++;
  }
  t.equal(oneSigned, 0, 'every dimension has both signs');
  const share = positive / (SPEC.rows * SPEC.dim);
  t.ok(share > 0.4 && share < 0.6, `about half the components are positive (${share.toFixed(3)})`);
  // Clustered: a row's nearest other row is far closer than a typical pair (topics).
  const dot = (x: number, y: number) => {
    let s = 0;
    for (let j = 0; j < SPEC.dim; j++) s += a[x * SPEC.dim + j] * a[y * SPEC.dim + j];
    return s;
  };
  let nearest = 0;
  let mean = 0;
  for (let x = 0; x < 50; x++) {
    let best = -1;
    for (let y = 0; y < SPEC.rows; y++) if (y !== x) {
      const s = dot(x, y);
      best = Math.max(best, s);
      mean += s / (SPEC.rows - 1) / 50;
    }
    nearest += best / 50;
  }
  t.ok(nearest > mean + 0.3, `nearest neighbours (cosine ${nearest.toFixed(2)}) stand out from the mean pair (${mean.toFixed(2)})`);
});

function recorder(): { progress: Progress; events: string[] } {
  const events: string[] = [];
  return {
    events,
    progress: {
      start: (label) => {
        events.push(label);
        return { tick: () => {}, done: () => {} };
      },
      note: (line) => void events.push(line),
    },
  };
}

t.test('embedding set: cached by its parameters, reused, regenerated when the file is damaged', async (t) => {
  const dir = await tempDir('quiver-embeddings-');
  const first = recorder();
  const generated = await loadEmbeddings(SPEC, dir, first.progress);
  const file = embeddingCacheFile(SPEC, dir);
  t.match(first.events[0], 'embeddings: generating 300 x 96', 'the first call generates');
  t.equal((await stat(file)).size, SPEC.rows * SPEC.dim * 4, 'and caches the raw float32 rows');
  t.same(Buffer.from(generated.buffer), Buffer.from(generate(SPEC).buffer), 'what fillEmbeddings gives');
  const second = recorder();
  const reused = await loadEmbeddings(SPEC, dir, second.progress);
  t.same(second.events, [`embeddings: reusing ${file}`], 'a second call reads the cache');
  t.same(Buffer.from(reused.buffer), Buffer.from(generated.buffer), 'the same bytes');
  t.not(embeddingCacheFile({ ...SPEC, seed: 12 }, dir), file, 'other parameters, another file');
  await writeFile(file, (await readFile(file)).subarray(0, 100));
  const third = recorder();
  const repaired = await loadEmbeddings(SPEC, dir, third.progress);
  t.match(third.events[0], 'embeddings: generating', 'a truncated file is generated again');
  t.same(Buffer.from(repaired.buffer), Buffer.from(generated.buffer), 'with the same bytes');
});

const point = (ef: number, recall: number, qps: number): SweepPoint => ({ ef, recall, qps, p50Ms: 1, p99Ms: 2, queries: 100 });

t.test('targets: QPS interpolated in log QPS on the Pareto frontier', async (t) => {
  const sweep = [point(10, 0.85, 1000), point(20, 0.92, 800), point(30, 0.9, 300), point(40, 0.96, 400), point(80, 0.995, 200)];
  const close = (actual: number | undefined, expected: number, what: string) => t.ok(actual !== undefined && Math.abs(actual - expected) < 1e-6 * expected, `${what}: ${actual} = ${expected}`);
  close(qpsAtRecall(sweep, 0.9)?.qps, 1000 * 0.8 ** (0.05 / 0.07), '0.90 between ef 10 and 20 (ef 30 is off the frontier)');
  t.same(qpsAtRecall(sweep, 0.9)?.efs, [10, 20], 'names both efs');
  close(qpsAtRecall(sweep, 0.95)?.qps, 800 * 0.5 ** (0.03 / 0.04), '0.95 between ef 20 and 40');
  close(qpsAtRecall(sweep, 0.99)?.qps, 400 * 0.5 ** (0.03 / 0.035), '0.99 between ef 40 and 80');
  t.same(qpsAtRecall(sweep, 0.8), { qps: 1000, efs: [10] }, 'reached by the first point: its QPS, not extrapolated');
  t.same(qpsAtRecall(sweep, 0.96), { qps: 400, efs: [40] }, 'a point exactly at the target: its QPS');
  t.equal(qpsAtRecall(sweep, 0.999), null, 'never reached: null');
});

function series(engine: string, m: number, points: SweepPoint[], buildSeconds: number, indexBytes: { total: number; vectors: number }, memoryBytes: number | null = null): Series {
  return { engine, m, efConstruct: 100, buildSeconds, memoryBytes, indexBytes, points };
}

t.test('targets: ratios to hnswlib-node with the same m and ef_construct, bytes per vector', async (t) => {
  const peer = [point(10, 0.9, 1000), point(40, 0.95, 500)];
  const result: BenchResult = {
    mode: 'engine', command: 'test', startedAt: '2026-11-27T00:00:00Z', machine: { node: 'v20', platform: 'linux', arch: 'x64', cpus: 2, cpuModel: 'x' },
    target: 'this process', concurrency: null, dataset: { name: 'fake', dim: 100, distance: 'Cosine', base: 1000, queries: 100 }, k: 10,
    groundTruth: { file: 'x', k: 10 }, ingest: [],
    series: [
      series('quiver binary', 16, [point(10, 0.9, 3000), point(20, 0.95, 2000)], 5, { total: 50_000, vectors: 40_000 }, 30_000),
      series('hnswlib-node', 16, peer, 10, { total: 540_000, vectors: 400_000 }),
      series('quiver f32', 32, [point(10, 0.99, 900)], 20, { total: 500_000, vectors: 400_000 }),
      series('hnswlib-node', 32, [point(10, 0.95, 450)], 25, { total: 600_000, vectors: 400_000 }),
    ],
  };
  const rows = targetRows(result);
  t.same(rows.map((r) => r.label), ['quiver binary (m=16, efc=100)', 'hnswlib-node (m=16, efc=100)', 'quiver f32 (m=32, efc=100)', 'hnswlib-node (m=32, efc=100)'], 'a row per graph series');
  t.same(rows[0].targets.map((x) => x.ratio), [3, 4, null], 'binary / hnswlib at m=16: 3000/1000, 2000/500, unreached');
  t.same(rows[1].targets.map((x) => x.ratio), [1, 1, null], 'the peer against itself');
  t.same(rows[2].targets.map((x) => x.ratio), [2, 2, null], 'paired with the m=32 peer: 900/450 (the peer misses 0.99)');
  t.same(rows.map((r) => r.buildRatio), [0.5, 1, 0.8, 1], 'build time ratios');
  const text = targetsTable(result).split('\n');
  t.same(text[0].trim().split(/ {2,}/), ['engine', 'build s', 'build x hnswlib-node', 'B/vector', 'x f32', 'codes+graph B/vector', 'RAM B/vector', 'RAM x f32', 'QPS @0.90', 'ef', 'x hnswlib-node', 'QPS @0.95', 'ef', 'x hnswlib-node', 'QPS @0.99', 'ef', 'x hnswlib-node'], 'columns');
  t.same(text[2].trim().split(/ {2,}/), ['quiver binary (m=16, efc=100)', '5.0', '0.50x', '50', '0.125', '10', '30', '0.075', '3000', '10', '3.00x', '2000', '20', '4.00x', '-', '-', '-'], 'binary: 50 B/vector is 1/8 of 400 B of f32, 10 B besides its vectors');
  t.same(text[3].trim().split(/ {2,}/).slice(3, 8), ['540', '1.350', '140', '-', '-'], 'hnswlib-node: its saved index per vector, 140 B of graph and labels, its memory not told');
});

/** `n` base rows and `q` query rows of one clustered set (16 clusters, seeded). */
function baseAndQueries(n: number, q: number, dim: number, seed: number): { base: Float32Array[]; queries: Float32Array[] } {
  const all = clusteredVectors(n + q, dim, 16, seededRandom(seed));
  const rows = (from: number, count: number) => Array.from({ length: count }, (_, i) => all.subarray((from + i) * dim, (from + i + 1) * dim));
  return { base: rows(0, n), queries: rows(n, q) };
}

t.test('cold originals (--originals cold, cold+graph): the same answers as in memory, the runners named so', async (t) => {
  const dim = 32;
  const { base, queries } = baseAndQueries(3000, 20, dim, 12);
  const graph = { m: 16, efConstruct: 64, distance: 'Cosine' } as const;
  const task = { tick: () => {}, done: () => {} };
  const runners = (['memory', 'cold', 'cold+graph'] as const).map((originals) => makeRunner('quiver-int8', graph, 2, 'float32', 'x16', 'bits4', originals));
  t.same(runners.map((r) => r.name), ['quiver int8', 'quiver int8 cold', 'quiver int8 cold+graph']);
  for (const runner of runners) await runner.build(base.map((v) => runner.prepare(v)), dim, task);
  for (const ef of [16, 64]) {
    const answers = runners.map((r) => queries.map((q) => Array.from(r.search(r.prepare(q), 10, ef))));
    t.same(answers[1], answers[0], `ef ${ef}: every query answered alike with the originals cold`);
    t.same(answers[2], answers[0], `ef ${ef}: and with the graph's links cold too`);
  }
  for (const runner of runners) await runner.close?.();
});

t.test('usearch: recall against a brute force for each of its metrics, ef reopened per sweep step', async (t) => {
  const n = 2000;
  const dim = 24;
  const { base, queries } = baseAndQueries(n, 30, dim, 9);
  const score = (distance: 'Euclid' | 'Cosine' | 'Dot', a: Float32Array, b: Float32Array) => {
    let dot = 0, na = 0, nb = 0, l2 = 0;
    for (let i = 0; i < dim; i++) {
      dot += a[i] * b[i];
      na += a[i] * a[i];
      nb += b[i] * b[i];
      l2 += (a[i] - b[i]) ** 2;
    }
    return distance === 'Euclid' ? l2 : distance === 'Dot' ? -dot : -dot / Math.sqrt(na * nb);
  };
  const ticks = { n: 0 };
  for (const distance of ['Euclid', 'Cosine', 'Dot'] as const) {
    const runner = makeRunner('usearch', { m: 16, efConstruct: 100, distance }, 1);
    await runner.build(base.map((v) => runner.prepare(v)), dim, { tick: () => void ticks.n++, done: () => {} });
    const bytes = await runner.indexBytes();
    t.equal(bytes.vectors, n * dim * 4, `${distance}: the vectors' share of the index`);
    t.ok(bytes.total > bytes.vectors, `${distance}: the saved index holds vectors and graph (${bytes.total} bytes)`);
    const recalls: number[] = [];
    for (const ef of [10, 128]) {
      await runner.useEf!(ef);
      let hits = 0;
      for (const q of queries) {
        const truth = new Set(base.map((v, i) => ({ i, s: score(distance, q, v) })).sort((x, y) => x.s - y.s).slice(0, 10).map((x) => x.i));
        for (const id of Array.from(runner.search(runner.prepare(q), 10, ef))) if (truth.has(id)) hits++;
      }
      recalls.push(hits / (queries.length * 10));
    }
    t.ok(recalls[1] >= 0.97, `${distance}: recall@10 at ef 128 is ${recalls[1]}`);
    t.ok(recalls[1] >= recalls[0], `${distance}: a wider ef finds no fewer (${recalls.join(' -> ')})`);
    await runner.close!();
  }
  t.equal(ticks.n, 3 * n, 'the build ticks once per vector');
  const refused = (() => {
    try {
      makeRunner('usearch', { m: 16, efConstruct: 100, distance: 'Manhattan' }, 1);
      return null;
    } catch (err) {
      return err;
    }
  })();
  t.ok(refused instanceof CommandError, 'no L1 metric: refused with a CommandError (exit 2)');
  t.match((refused as Error).message, 'usearch has no Manhattan metric');
});
