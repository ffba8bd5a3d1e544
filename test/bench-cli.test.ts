// The benchmark CLI as a user runs it (`node src/cli/quiver.js bench ...`, what `npx quiver`
// starts): help texts, the JSON result file's structure, exact baselines at recall 1.0, the
// cached ground truth against a brute force computed here, user vector files in all three
// formats, the server and ingest modes against a Quiver it starts, and the missing data set error.

import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusteredVectors, seededRandom } from '../src/bench/synthetic.js';
import type { BenchResult } from '../src/bench/result.js';

const CLI = new URL('../src/cli/quiver.js', import.meta.url).pathname;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function quiver(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** Runs a bench into a fresh output folder; returns its parsed JSON result and the folder's files. */
async function bench(args: string[]): Promise<{ result: BenchResult; files: string[]; run: Run }> {
  const out = await mkdtemp(join(tmpdir(), 'quiver-bench-out-'));
  const run = await quiver([...args, '--out', out, '--cache-dir', join(out, 'cache'), '--quiet']);
  if (run.code !== 0) throw new Error(`quiver ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  const files = (await readdir(out)).filter((f) => f !== 'cache');
  const json = files.find((f) => f.endsWith('.json'))!;
  return { result: JSON.parse(await readFile(join(out, json), 'utf8')) as BenchResult, files: files.map((f) => join(out, f)), run };
}

/** Reference: the k nearest rows by brute force (Euclid: L2; Cosine: cosine similarity). */
function nearest(base: Float32Array[], query: Float32Array, k: number, distance: 'Euclid' | 'Cosine'): number[] {
  const score = (v: Float32Array) => {
    let dot = 0, nv = 0, nq = 0, l2 = 0;
    for (let i = 0; i < v.length; i++) {
      dot += v[i] * query[i];
      nv += v[i] * v[i];
      nq += query[i] * query[i];
      l2 += (v[i] - query[i]) ** 2;
    }
    return distance === 'Euclid' ? l2 : -dot / Math.sqrt(nv * nq);
  };
  return base.map((v, i) => ({ i, s: score(v) })).sort((a, b) => a.s - b.s || a.i - b.i).slice(0, k).map((x) => x.i);
}

function rows(data: Float32Array, dim: number): Float32Array[] {
  return Array.from({ length: data.length / dim }, (_, i) => data.subarray(i * dim, (i + 1) * dim));
}

async function checkGroundTruth(t: Test, result: BenchResult, base: Float32Array[], queries: Float32Array[], distance: 'Euclid' | 'Cosine'): Promise<void> {
  const ids = new Uint32Array((await readFile(result.groundTruth.file)).buffer.slice(0));
  const k = result.groundTruth.k;
  t.equal(ids.length, queries.length * k, 'ground truth holds k ids per query');
  let same = 0;
  queries.forEach((q, i) => {
    if (nearest(base, q, k, distance).join() === Array.from(ids.subarray(i * k, (i + 1) * k)).join()) same++;
  });
  t.equal(same, queries.length, 'cached ground truth equals the brute-force neighbours of every query');
}

function checkStructure(t: Test, result: BenchResult, engines: string[]): void {
  t.equal(typeof result.command, 'string');
  t.ok(Date.parse(result.startedAt) > 0, 'startedAt is a date');
  t.ok(result.machine.cpus > 0 && result.machine.node.startsWith('v'), 'machine described');
  t.same(result.series.map((s) => s.engine), engines, 'one series per engine, in order');
  for (const s of result.series) {
    t.ok(s.buildSeconds > 0, `${s.engine}: build time`);
    t.ok(s.points.length > 0, `${s.engine}: measured points`);
    for (const p of s.points) {
      t.ok(p.recall >= 0 && p.recall <= 1 && p.qps > 0 && p.p50Ms > 0 && p.p99Ms >= p.p50Ms && p.queries > 0, `${s.engine} ef ${p.ef}: recall, QPS and latencies`);
    }
  }
}

t.test('--help of every command', async (t) => {
  for (const [args, usage] of [
    [['--help'], 'Usage: quiver <command>'],
    [['bench', '--help'], 'Usage: quiver bench <engine|server|ingest>'],
    [['bench', 'engine', '--help'], 'Usage: quiver bench engine'],
    [['bench', 'server', '--help'], 'Usage: quiver bench server'],
    [['bench', 'ingest', '--help'], 'Usage: quiver bench ingest'],
    [['demo', '--help'], 'Usage: quiver demo'],
  ] as const) {
    const run = await quiver([...args]);
    t.equal(run.code, 0, `${args.join(' ')} exits 0`);
    t.ok(run.stdout.startsWith(usage), `${args.join(' ')} prints its usage`);
  }
  const engine = await quiver(['bench', 'engine', '--help']);
  for (const flag of ['--dataset', '--engines', '--m', '--ef-construct', '--ef', '--out']) t.match(engine.stdout, flag, `engine help lists ${flag}`);
  const bad = await quiver(['bench', 'engine', '--nope']);
  t.equal(bad.code, 2, 'an unknown flag exits 2');
  t.match(bad.stderr, /--nope/, 'and names the flag');
});

t.test('missing Fashion-MNIST names the apt command', async (t) => {
  const missing = join(tmpdir(), 'quiver-no-such-dataset');
  for (const [args, env] of [
    [['bench', 'engine', '--fashion-mnist-dir', missing], {}],
    [['bench', 'engine'], { QUIVER_FASHION_MNIST_DIR: missing }],
  ] as const) {
    const run = await quiver([...args], env);
    t.equal(run.code, 2, 'exits 2');
    t.match(run.stderr, `Fashion-MNIST not found: ${missing}/`, 'names the missing path');
    t.match(run.stderr, 'sudo apt-get install dataset-fashion-mnist', 'gives the apt command');
  }
});

t.test('engine mode on a synthetic set', async (t) => {
  const { result, files } = await bench(['bench', 'engine', '--dataset', 'synthetic', '--size', '2000', '--dim', '24', '--distance', 'Cosine', '--queries', '40', '--seed', '3', '--m', '8,16', '--ef', '10,64', '--repeats', '1']);
  t.equal(result.mode, 'engine');
  t.same(result.dataset, { name: 'synthetic-2000x24-cosine', dim: 24, distance: 'Cosine', base: 2000, queries: 40 });
  t.equal(result.k, 10);
  checkStructure(t, result, ['quiver f32', 'quiver int8', 'hnswlib-node', 'quiver exact (SIMD)', 'flat (exact, JS)', 'quiver f32', 'quiver int8', 'hnswlib-node']);
  t.same(result.series.map((s) => s.m), [8, 8, 8, null, null, 16, 16, 16], 'the m sweep builds every graph engine once per m; exact ones once');
  for (const s of result.series.filter((s) => s.m !== null)) t.same(s.points.map((p) => p.ef), [10, 64], `${s.engine}: the ef sweep`);
  for (const s of result.series.filter((s) => s.m === null)) t.same(s.points.map((p) => p.recall), [1], `${s.engine}: exact baseline has recall 1.0`);
  t.ok(result.series.filter((s) => s.m !== null).every((s) => s.points[1].recall >= 0.9), 'graph engines reach recall 0.9 at ef 64');
  const all = clusteredVectors(2040, 24, 32, seededRandom(3));
  await checkGroundTruth(t, result, rows(all.subarray(0, 2000 * 24), 24), rows(all.subarray(2000 * 24), 24), 'Cosine');
  const svg = await readFile(files.find((f) => f.endsWith('.svg'))!, 'utf8');
  t.match(svg, /^<svg /, 'writes an SVG plot');
  for (const name of ['quiver f32 (m=8, efc=100)', 'hnswlib-node (m=16, efc=100)', 'flat (exact, JS)', 'Recall@10', 'Queries per second']) t.match(svg, name, `plot shows ${name}`);
});

t.test('user vector files: .fvecs, .npy and .json', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-bench-files-'));
  const dim = 12;
  const data = clusteredVectors(430, dim, 8, seededRandom(11));
  const fvecs = Buffer.alloc(430 * (4 + 4 * dim));
  for (let r = 0; r < 430; r++) {
    fvecs.writeInt32LE(dim, r * (4 + 4 * dim));
    for (let j = 0; j < dim; j++) fvecs.writeFloatLE(data[r * dim + j], r * (4 + 4 * dim) + 4 + 4 * j);
  }
  await writeFile(join(dir, 'v.fvecs'), fvecs);
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (430, ${dim}), }`;
  header = header.padEnd(118, ' ') + '\n';
  await writeFile(join(dir, 'v.npy'), Buffer.concat([Buffer.from('\x93NUMPY\x01\x00', 'latin1'), Buffer.from([header.length & 0xff, header.length >> 8]), Buffer.from(header, 'latin1'), Buffer.from(data.buffer)]));
  await writeFile(join(dir, 'v.json'), JSON.stringify(rows(data, dim).map((r) => Array.from(r))));
  const base = rows(data.subarray(0, 400 * dim), dim);
  const queries = rows(data.subarray(400 * dim), dim);
  for (const file of ['v.fvecs', 'v.npy', 'v.json']) {
    const { result } = await bench(['bench', 'engine', '--dataset', join(dir, file), '--queries', '30', '--engines', 'quiver-f32,flat', '--ef', '32', '--repeats', '1', '--k', '5']);
    t.same(result.dataset, { name: file, dim, distance: 'Euclid', base: 400, queries: 30 }, `${file}: last 30 rows held out as queries`);
    checkStructure(t, result, ['quiver f32', 'flat (exact, JS)']);
    t.equal(result.series[1].points[0].recall, 1, `${file}: flat baseline recall 1.0`);
    await checkGroundTruth(t, result, base, queries, 'Euclid');
  }
  const bad = await quiver(['bench', 'engine', '--dataset', join(dir, 'nothing.fvecs')]);
  t.equal(bad.code, 2, 'a missing file exits 2');
  t.match(bad.stderr, 'data set file not found');
});

t.test('server and ingest modes against a Quiver the CLI starts', async (t) => {
  const common = ['--dataset', 'synthetic', '--size', '1500', '--dim', '16', '--queries', '40', '--workers', '1', '--concurrency', '4'];
  const { result } = await bench(['bench', 'server', ...common, '--ef', '16,64']);
  t.equal(result.mode, 'server');
  t.match(result.target, /^a Quiver server started on http:\/\/127\.0\.0\.1:\d+$/);
  checkStructure(t, result, ['server f32', 'server exact']);
  t.same(result.series[0].points.map((p) => p.ef), [16, 64], 'hnsw_ef sweep');
  t.equal(result.series[1].points[0].recall, 1, 'exact search over HTTP has recall 1.0');
  t.ok(result.series[0].points[1].recall >= 0.9, 'HNSW over HTTP reaches recall 0.9 at ef 64');
  const ingest = (await bench(['bench', 'ingest', ...common, '--batch', '100,500'])).result;
  t.equal(ingest.mode, 'ingest');
  t.same(ingest.ingest.map((r) => [r.batchSize, r.points]), [[100, 1500], [500, 1500]], 'one row per batch size');
  for (const r of ingest.ingest) {
    t.ok(r.pointsPerSecond > 0 && r.searchableSeconds >= r.uploadSeconds, `batch ${r.batchSize}: throughput and time to searchable`);
    t.ok(r.recall >= 0.9, `batch ${r.batchSize}: the loaded collection answers with recall >= 0.9`);
  }
});
