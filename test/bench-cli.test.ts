// The benchmark CLI as a user runs it (`node src/cli/quiver.js bench ...`, what `npx quiver`
// starts): help texts, the table on stdout, progress on stderr, the JSON result file's structure,
// the SVG plot and its PNG when a converter is on PATH, exact baselines at recall 1.0, the cached
// ground truth against a brute force computed here (reused, and recomputed when damaged), user
// vector files in all three formats, Fashion-MNIST, the m / ef_construct / ef sweeps, the server
// and ingest modes against a Quiver the CLI starts and against a running one with an API key, and
// the missing data set error.

import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { access, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { clusteredVectors, seededRandom } from '../src/bench/synthetic.js';
import { defaultFashionMnistDir } from '../src/bench/fashion-mnist.js';
import { HOT_PATH_LOADS, type BenchResult } from '../src/bench/result.js';
import type { Progress } from '../src/bench/progress.js';
import { ENGINES, makeRunner } from '../src/bench/runners.js';
import { buildTimed } from '../src/bench/sweep.js';
import { terminalProgress } from '../src/cli/progress.js';
import { qpsAtRecall } from '../src/cli/targets.js';
import { fillEmbeddings } from '../src/bench/embeddings.js';
import { startServer } from './helpers/server.js';
import { tempDir } from './helpers/temp-dir.js';

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

interface BenchOptions {
  /** Shared between runs to test the ground truth cache; default: a fresh one inside the output folder. */
  cacheDir?: string;
  /** Show progress on stderr (off by default). */
  progress?: boolean;
  env?: Record<string, string>;
}

/** Runs a bench into a fresh output folder; returns its parsed JSON result, the folder's files and the run's output. */
async function bench(args: string[], options: BenchOptions = {}): Promise<{ result: BenchResult; files: string[]; run: Run }> {
  const out = await tempDir('quiver-bench-out-');
  const run = await quiver([...args, '--out', out, '--cache-dir', options.cacheDir ?? join(out, 'cache'), ...(options.progress ? [] : ['--quiet'])], options.env);
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
    [['bench', '--help'], 'Usage: quiver bench <engine|server|ingest|sparse|multivector>'],
    [['bench', 'engine', '--help'], 'Usage: quiver bench engine'],
    [['bench', 'server', '--help'], 'Usage: quiver bench server'],
    [['bench', 'ingest', '--help'], 'Usage: quiver bench ingest'],
    [['bench', 'multivector', '--help'], 'Usage: quiver bench multivector'],
    [['demo', '--help'], 'Usage: quiver demo'],
  ] as const) {
    const run = await quiver([...args]);
    t.equal(run.code, 0, `${args.join(' ')} exits 0`);
    t.ok(run.stdout.startsWith(usage), `${args.join(' ')} prints its usage`);
  }
  const engine = await quiver(['bench', 'engine', '--help']);
  for (const flag of ['--dataset', '--engines', '--m', '--ef-construct', '--ef', '--out']) t.match(engine.stdout, flag, `engine help lists ${flag}`);
  const clock = await quiver(['bench', 'engine', '--clock', 'gpu']);
  t.equal(clock.code, 2, 'an unknown --clock exits 2');
  t.match(clock.stderr, '--clock: unknown value "gpu" (one or more of wall, cpu)', 'and names the clocks');
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

/** The data rows of the table printed on stdout (between the dashed rule and the first blank line). */
function tableRows(stdout: string): { header: string; rows: string[][] } {
  const lines = stdout.split('\n');
  const rule = lines.findIndex((l) => /^-+( +-+)+$/.test(l));
  const end = lines.indexOf('', rule);
  return { header: lines[rule - 1], rows: lines.slice(rule + 1, end).map((l) => l.trim().split(/ {2,}/)) };
}

t.test('engine mode on a synthetic set: m x ef_construct x ef sweep, table, JSON and plot', async (t) => {
  const { result, files, run } = await bench(['bench', 'engine', '--dataset', 'synthetic', '--size', '2000', '--dim', '24', '--distance', 'Cosine', '--queries', '40', '--seed', '3', '--m', '8,16', '--ef-construct', '40,100', '--ef', '10,64', '--repeats', '1']);
  t.equal(result.mode, 'engine');
  t.equal(result.concurrency, null, 'engine mode has no request concurrency');
  t.same(result.dataset, { name: 'synthetic-2000x24-cosine', dim: 24, distance: 'Cosine', base: 2000, queries: 40 });
  t.equal(result.k, 10);
  const graph = ['quiver f32', 'quiver int8', 'quiver binary', 'hnswlib-node', 'usearch'];
  checkStructure(t, result, [...graph, 'quiver exact (SIMD)', 'flat (exact, JS)', ...graph, ...graph, ...graph]);
  const built = (m: number, efc: number) => graph.map(() => [m, efc]);
  t.same(result.series.map((s) => [s.m, s.efConstruct]), [
    ...built(8, 40), [null, null], [null, null], ...built(8, 100), ...built(16, 40), ...built(16, 100),
  ], 'every graph engine is built once per m x ef_construct pair; exact ones once');
  for (const s of result.series.filter((s) => s.m !== null)) t.same(s.points.map((p) => p.ef), [10, 64], `${s.engine} m=${s.m} efc=${s.efConstruct}: the ef sweep`);
  for (const s of result.series.filter((s) => s.m === null)) t.same(s.points.map((p) => p.recall), [1], `${s.engine}: exact baseline has recall 1.0`);
  // One sign bit per dimension of 24-d clustered data ranks candidates poorly (see README, binary
  // quantization measured), so binary is held to less than the graph engines over full vectors.
  t.ok(result.series.filter((s) => s.m !== null && s.engine !== 'quiver binary').every((s) => s.points[1].recall >= 0.9), 'graph engines reach recall 0.9 at ef 64');
  t.ok(result.series.filter((s) => s.engine === 'quiver binary').every((s) => s.points[1].recall >= 0.3), `quiver binary finds some of the neighbours at ef 64 (${result.series.filter((s) => s.engine === 'quiver binary').map((s) => s.points[1].recall).join(', ')})`);
  t.ok(result.series.filter((s) => s.engine !== 'hnswlib-node' && s.engine !== 'usearch').every((s) => s.memoryBytes! > 0), 'memory measured for every engine (hnswlib-node, usearch: RSS growth, may round to 0 on a set this small)');
  for (const s of result.series) {
    t.equal(s.indexBytes!.vectors, 2000 * 24 * 4, `${s.engine}: its full-precision vectors are accounted`);
    t.ok(s.engine === 'flat (exact, JS)' ? s.indexBytes!.total === s.indexBytes!.vectors : s.indexBytes!.total > s.indexBytes!.vectors, `${s.engine}: index bytes hold the vectors and, but for the flat scan, more (${s.indexBytes!.total})`);
  }
  const all = clusteredVectors(2040, 24, 32, seededRandom(3));
  await checkGroundTruth(t, result, rows(all.subarray(0, 2000 * 24), 24), rows(all.subarray(2000 * 24), 24), 'Cosine');

  // The terminal table: one row per (series, ef), the same numbers as the JSON file.
  const table = tableRows(run.stdout);
  t.same(table.header.trim().split(/ {2,}/), ['engine', 'm', 'ef_c', 'ef', 'recall@10', 'QPS', 'p50 ms', 'p99 ms', 'build s', 'memory MB', 'B/point'], 'table columns');
  const expected = result.series.flatMap((s) => s.points.map((p) => [
    s.engine, s.m === null ? '-' : String(s.m), s.efConstruct === null ? '-' : String(s.efConstruct), p.ef === null ? '-' : String(p.ef),
    p.recall.toFixed(4), p.qps.toFixed(0), p.p50Ms.toFixed(3), p.p99Ms.toFixed(3), s.buildSeconds.toFixed(1), (s.memoryBytes! / 2 ** 20).toFixed(1), (s.memoryBytes! / 2000).toFixed(0),
  ]));
  t.same(table.rows, expected, 'table rows equal the JSON result');
  t.match(run.stdout, /^engine mode on this process: synthetic-2000x24-cosine, 2000 x 24 Cosine, 40 queries, k=10$/m, 'heading names the mode and data set');
  // The targets table: a row per graph series, in the numbers of the JSON file.
  const targets = tableRows(run.stdout.slice(run.stdout.indexOf('recall@10 targets')));
  t.same(targets.rows.map((r) => r[0]), result.series.filter((s) => s.m !== null).map((s) => `${s.engine} (m=${s.m}, efc=${s.efConstruct})`), 'targets: a row per graph series');
  const int8 = result.series.findIndex((s) => s.engine === 'quiver int8' && s.m === 16 && s.efConstruct === 100);
  const peer = result.series.find((s) => s.engine === 'hnswlib-node' && s.m === 16 && s.efConstruct === 100)!;
  const row = targets.rows[result.series.filter((s, i) => s.m !== null && i < int8).length];
  const s = result.series[int8];
  t.same(row.slice(1, 6), [s.buildSeconds.toFixed(1), `${(s.buildSeconds / peer.buildSeconds).toFixed(2)}x`, (s.indexBytes!.total / 2000).toFixed(0), (s.indexBytes!.total / 2000 / (24 * 4)).toFixed(3), ((s.indexBytes!.total - s.indexBytes!.vectors) / 2000).toFixed(0)], 'targets: build time, its ratio, bytes per vector, over f32, besides the vectors');
  const at09 = qpsAtRecall(s.points, 0.9)!;
  const peer09 = qpsAtRecall(peer.points, 0.9)!;
  t.same(row.slice(6, 8), [(s.memoryBytes! / 2000).toFixed(0), (s.memoryBytes! / 2000 / (24 * 4)).toFixed(3)], 'targets: the engine\'s memory per vector, over f32');
  t.same(row.slice(8, 11), [at09.qps.toFixed(0), at09.efs.join('-'), `${(at09.qps / peer09.qps).toFixed(2)}x`], 'targets: QPS at recall 0.90 and its ratio to hnswlib-node');
  t.match(run.stdout, /^quiver exact \(SIMD\): scans \d+\.\d GB\/s of f32 vectors \(one thread\)$/m, 'exact scan bandwidth');
  t.match(run.stdout, `results: ${files.find((f) => f.endsWith('.json'))}`, 'names the JSON result file');

  const svg = await readFile(files.find((f) => f.endsWith('.svg'))!, 'utf8');
  t.match(svg, /^<svg /, 'writes an SVG plot');
  for (const name of ['quiver f32 (m=8, efc=40)', 'hnswlib-node (m=16, efc=100)', 'flat (exact, JS)', 'Recall@10', 'Queries per second']) t.match(svg, name, `plot shows ${name}`);
  const legend = [...svg.matchAll(/<text x="\d+" y="\d+">([^<]+)<\/text>/g)].map((m) => m[1]);
  t.same(legend, result.series.map((s) => (s.m === null ? s.engine : `${s.engine} (m=${s.m}, efc=${s.efConstruct})`)), 'a legend entry per series');
});

/** The first of the CLI's SVG-to-PNG converters installed on PATH, or null. */
async function installedConverter(): Promise<string | null> {
  for (const name of ['rsvg-convert', 'magick', 'convert']) {
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      if (await access(join(dir, name)).then(() => true, () => false)) return join(dir, name);
    }
  }
  return null;
}

t.test('quiver-pq, asked for by name: one series per --pq-compression ratio, rescored candidates', async (t) => {
  const { result } = await bench(['bench', 'engine', '--dataset', 'synthetic', '--size', '1500', '--dim', '32', '--distance', 'Euclid', '--queries', '30', '--seed', '4',
    '--engines', 'quiver-f32,quiver-pq', '--pq-compression', 'x4,x16', '--oversampling', '8', '--ef', '64', '--repeats', '1']);
  t.same(result.series.map((s) => s.engine), ['quiver f32', 'quiver pq x4', 'quiver pq x16'], 'one quiver-pq series per ratio, named by it');
  // 8 candidates per result rescored with the stored vectors: both ratios find the true
  // neighbours on this small set (measured 1.0).
  const recallOf = (engine: string) => result.series.find((s) => s.engine === engine)!.points[0].recall;
  t.ok(recallOf('quiver pq x4') >= 0.9, `quiver pq x4: recall@10 ${recallOf('quiver pq x4')} at ef 64 (>= 0.9)`);
  t.ok(recallOf('quiver pq x16') >= 0.9, `quiver pq x16: recall@10 ${recallOf('quiver pq x16')} at ef 64 (>= 0.9)`);
  const refused = await quiver(['bench', 'engine', '--dataset', 'synthetic', '--size', '100', '--engines', 'quiver-pq', '--pq-compression', 'x2']);
  t.equal(refused.code, 2, 'an unknown ratio is a usage error');
  t.match(refused.stderr, '--pq-compression: unknown value "x2"', 'naming the option');
});

t.test('the plot as PNG exactly when a converter is on PATH', async (t) => {
  const args = ['bench', 'engine', '--dataset', 'synthetic', '--size', '500', '--dim', '8', '--queries', '10', '--engines', 'quiver-f32,flat', '--ef', '16', '--repeats', '1'];
  const none = await tempDir('quiver-path-');
  const without = await bench(args, { env: { PATH: none } });
  t.same(without.files.map((f) => f.slice(-4)).sort(), ['.svg', 'json'], 'no converter: JSON and SVG, nothing else');
  t.notMatch(without.run.stdout, '.png', 'and no PNG announced');
  const converter = await installedConverter();
  // The PNG half is part of the test, not optional: without a converter it fails and says why.
  if (!converter) {
    t.fail('no rsvg-convert or ImageMagick installed: apt-get install librsvg2-bin (.ci/run does)');
    return;
  }
  const converterDir = await tempDir('quiver-path-');
  await symlink(converter, join(converterDir, converter.split('/').pop()!));
  const withPng = await bench(args, { env: { PATH: converterDir } });
  const png = withPng.files.find((f) => f.endsWith('.png'));
  t.ok(png, `${converter}: a PNG next to the SVG`);
  const bytes = await readFile(png!);
  t.equal(bytes.toString('latin1', 0, 8), '\x89PNG\r\n\x1a\n', 'it is a PNG');
  t.same([bytes.readUInt32BE(16), bytes.readUInt32BE(20)], [820, 560], 'of the SVG\'s size');
  t.match(withPng.run.stdout, png!, 'and the CLI names it');
});

t.test('ground truth is computed once, cached, and recomputed when the cache is damaged', async (t) => {
  const cacheDir = await tempDir('quiver-gt-cache-');
  const args = ['bench', 'engine', '--dataset', 'synthetic', '--size', '800', '--dim', '16', '--queries', '25', '--seed', '5', '--distance', 'Euclid', '--engines', 'flat', '--repeats', '1'];
  const first = await bench(args, { cacheDir, progress: true });
  const file = first.result.groundTruth.file;
  t.match(first.run.stderr, 'ground truth: exact top 10 of 25 queries', 'the first run computes it');
  t.equal(file.startsWith(cacheDir), true, 'into the cache folder');
  const written = (await stat(file)).mtimeMs;
  const second = await bench(args, { cacheDir, progress: true });
  t.equal(second.result.groundTruth.file, file, 'a second run finds the same cache file');
  t.match(second.run.stderr, `ground truth: reusing ${file}`, 'and says it reuses it');
  t.notMatch(second.run.stderr, 'ground truth: exact top', 'without computing it again');
  t.equal((await stat(file)).mtimeMs, written, 'the file is not rewritten');
  const other = await bench(args.map((a) => (a === '5' ? '6' : a)), { cacheDir });
  t.not(other.result.groundTruth.file, file, 'other data (another seed) gets its own cache file');

  await writeFile(file, (await readFile(file)).subarray(0, 40));
  const repaired = await bench(args, { cacheDir, progress: true });
  t.match(repaired.run.stderr, 'ground truth: exact top 10 of 25 queries', 'a truncated cache file is recomputed');
  const all = clusteredVectors(825, 16, 32, seededRandom(5));
  await checkGroundTruth(t, repaired.result, rows(all.subarray(0, 800 * 16), 16), rows(all.subarray(800 * 16), 16), 'Euclid');
});

t.test('progress on stderr: bars on a terminal, lines on a pipe, nothing when quiet', async (t) => {
  const capture = (isTTY: boolean, quiet: boolean) => {
    let text = '';
    const stream = { isTTY, write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WriteStream;
    const progress: Progress = terminalProgress(stream, quiet);
    const task = progress.start('building', 4);
    task.tick(2);
    task.done();
    progress.note('a note');
    return text;
  };
  const tty = capture(true, false);
  t.match(tty, '\r\x1b[2Kbuilding [..............................]   0% 0/4', 'a terminal gets an empty bar first');
  t.match(tty, /\r\x1b\[2Kbuilding \[#{30}\] 100% 4\/4 \d+\.\d s\n/, 'redrawn in place up to a full bar');
  t.match(tty, 'a note\n');
  t.same(capture(false, false).split('\n').filter(Boolean).map((l) => l.replace(/\d+\.\d s$/, 'T s')), ['building ...', 'building: done in T s', 'a note'], 'a pipe gets a line per start and end');
  t.equal(capture(true, true), '', 'quiet: nothing');

  // Long builds advance their bar point by point: every engine ticks once per vector it indexes.
  const base = clusteredVectors(300, 8, 4, seededRandom(2));
  for (const engine of ENGINES) {
    const ticks: { label: string; total: number; count: number; done: boolean }[] = [];
    const recorder: Progress = {
      start: (label, total) => {
        const entry = { label, total, count: 0, done: false };
        ticks.push(entry);
        return { tick: (n = 1) => void (entry.count += n), done: () => void (entry.done = true) };
      },
      note: () => {},
    };
    const built = await buildTimed(makeRunner(engine, { m: 8, efConstruct: 32, distance: 'Euclid' }, 2), base, 8, recorder);
    t.same(ticks.map(({ total, count, done }) => ({ total, count, done })), [{ total: 300, count: 300, done: true }], `${built.runner.name}: build progress counts all 300 vectors`);
    await built.runner.close?.();
  }

  const run = (await bench(['bench', 'engine', '--dataset', 'synthetic', '--size', '500', '--dim', '8', '--queries', '10', '--engines', 'quiver-f32,hnswlib', '--ef', '16', '--repeats', '1'], { progress: true })).run;
  for (const step of ['ground truth: loading 500 vectors', 'quiver f32: building 500 x 8', 'hnswlib-node: building 500 x 8', 'searching: ef 16, best of 1']) {
    t.match(run.stderr, `${step} ...\n`, `the CLI reports "${step}"`);
    t.match(run.stderr, new RegExp(`${step.replace(/[()]/g, '\\$&')}: done in \\d+\\.\\d s`), `and its end`);
  }
});

/** Fashion-MNIST's images as Debian ships them (gzip IDX: a 16-byte header, then 28x28 bytes each). */
async function idxImages(file: string, count: number): Promise<Float32Array[]> {
  const raw = gunzipSync(await readFile(join(defaultFashionMnistDir(), file)));
  return Array.from({ length: count }, (_, i) => Float32Array.from(raw.subarray(16 + i * 784, 16 + (i + 1) * 784)));
}

t.test('Fashion-MNIST with the ann-benchmarks split', async (t) => {
  const { result } = await bench(['bench', 'engine', '--dataset', 'fashion-mnist', '--queries', '8', '--engines', 'quiver-exact,flat', '--exact-queries', '8', '--repeats', '1']);
  t.same(result.dataset, { name: 'fashion-mnist-784-euclidean', dim: 784, distance: 'Euclid', base: 60000, queries: 8 }, 'the 60000 training images are the base, the test images the queries');
  for (const s of result.series) t.equal(s.points[0].recall, 1, `${s.engine}: recall 1.0`);
  const base = await idxImages('train-images-idx3-ubyte.gz', 60000);
  const queries = await idxImages('t10k-images-idx3-ubyte.gz', 8);
  const ids = new Uint32Array((await readFile(result.groundTruth.file)).buffer.slice(0));
  const l2 = (a: Float32Array, b: Float32Array) => {
    let sum = 0;
    for (let j = 0; j < a.length; j++) sum += (a[j] - b[j]) ** 2;
    return sum;
  };
  // Integer pixels tie often, so the check is on distances: the cached ids' must be the 10 smallest.
  queries.forEach((q, i) => {
    const smallest = base.map((v) => l2(v, q)).sort((a, b) => a - b).slice(0, 10);
    t.same(Array.from(ids.subarray(i * 10, (i + 1) * 10), (id) => l2(base[id], q)), smallest, `query ${i}: ground truth holds the 10 nearest training images`);
  });
});

t.test('engine mode with --datatype: each Quiver engine per datatype, memory per point shrinking', async (t) => {
  // Integer pixels 0..255 (as Fashion-MNIST's): lossless in float16 and uint8, so the exact scan
  // over any datatype finds the true neighbours.
  const dir = await tempDir('quiver-bench-files-');
  // Enough vectors that they, not the engine's first megabyte of linear memory, set its size.
  const dim = 256;
  const next = seededRandom(5);
  const pixels = Array.from({ length: 4030 }, () => Array.from({ length: dim }, () => Math.floor(next() * 256)));
  await writeFile(join(dir, 'pixels.json'), JSON.stringify(pixels));
  const { result, run } = await bench(['bench', 'engine', '--dataset', join(dir, 'pixels.json'), '--queries', '30', '--engines', 'quiver-f32,quiver-exact', '--datatype', 'float32,float16,uint8', '--ef', '64', '--repeats', '1']);
  checkStructure(t, result, ['quiver f32', 'quiver f32 [float16]', 'quiver f32 [uint8]', 'quiver exact (SIMD)', 'quiver exact (SIMD) [float16]', 'quiver exact (SIMD) [uint8]']);
  t.same(result.series.map((s) => s.datatype), ['float32', 'float16', 'uint8', 'float32', 'float16', 'uint8'], 'each series records its datatype');
  for (const s of result.series.filter((o) => o.m === null)) t.equal(s.points[0].recall, 1, `${s.engine}: the exact scan is exact on integer pixels`);
  const [f32, f16, u8] = result.series.filter((o) => o.m === null).map((s) => s.memoryBytes!);
  t.ok(f16 < f32 && u8 < f16, `memory shrinks with the element size: ${f32} > ${f16} > ${u8}`);
  t.match(run.stdout, /^quiver exact \(SIMD\) \[uint8\]: scans \d+\.\d GB\/s of uint8 vectors \(one thread\)$/m, 'scan bandwidth in the datatype');
  const bad = await quiver(['bench', 'engine', '--dataset', join(dir, 'pixels.json'), '--datatype', 'float64']);
  t.equal(bad.code, 2, 'an unknown datatype exits 2');
});

t.test('the embedding-like set: generated once into the cache, then reused, ground truth exact', async (t) => {
  const cacheDir = await tempDir('quiver-emb-cache-');
  const args = ['bench', 'engine', '--dataset', 'embeddings', '--size', '1500', '--dim', '64', '--clusters', '12', '--queries', '20', '--engines', 'quiver-f32,usearch', '--ef', '64', '--repeats', '1'];
  const first = await bench(args, { cacheDir, progress: true });
  t.match(first.run.stderr, 'embeddings: generating 1520 x 64 (12 topics, seed 7)', 'the first run generates base and queries');
  t.same(first.result.dataset, { name: 'embeddings-1500x64-cosine', dim: 64, distance: 'Cosine', base: 1500, queries: 20 }, 'Cosine, the last rows held out as queries');
  const second = await bench([...args, '--clock', 'cpu'], { cacheDir, progress: true });
  t.equal(second.result.clock, 'cpu', 'the result names the clock QPS was counted in');
  t.match(second.run.stdout, /^engine mode on this process: embeddings-1500x64-cosine, 1500 x 64 Cosine, 20 queries, k=10, QPS by CPU time$/m, 'and so does the heading');
  t.match(second.run.stderr, /embeddings: reusing .*embeddings-v1-1520x64-c12-s7\.f32/, 'a second run reuses the cached set');
  t.notMatch(second.run.stderr, 'embeddings: generating', 'without generating it again');
  t.same(second.result.series.map((s) => s.points[0].recall), first.result.series.map((s) => s.points[0].recall), 'the same data: the same recall');
  t.ok(second.result.series.every((s) => s.points[0].recall >= 0.9), `both engines reach recall 0.9 at ef 64 (${second.result.series.map((s) => s.points[0].recall).join(', ')})`);
  const all = new Float32Array(1520 * 64);
  fillEmbeddings({ rows: 1520, dim: 64, clusters: 12, seed: 7 }, all);
  await checkGroundTruth(t, second.result, rows(all.subarray(0, 1500 * 64), 64), rows(all.subarray(1500 * 64), 64), 'Cosine');
});

t.test('user vector files: .fvecs, .npy and .json', async (t) => {
  const dir = await tempDir('quiver-bench-files-');
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

const HTTP_DATA = ['--dataset', 'synthetic', '--size', '1500', '--dim', '16', '--queries', '40'];

t.test('server and ingest modes against a Quiver the CLI starts', async (t) => {
  const common = [...HTTP_DATA, '--workers', '1', '--concurrency', '4'];
  const { result, run } = await bench(['bench', 'server', ...common, '--loads', 'sweep', '--ef', '16,64']);
  t.equal(result.mode, 'server');
  t.match(result.target, /^a Quiver server started on http:\/\/127\.0\.0\.1:\d+$/);
  t.equal(result.concurrency, 4, 'the concurrency is recorded');
  checkStructure(t, result, ['server f32', 'server exact']);
  t.same(result.series[0].points.map((p) => p.ef), [16, 64], 'hnsw_ef sweep');
  t.equal(result.series[1].points[0].recall, 1, 'exact search over HTTP has recall 1.0');
  t.ok(result.series[0].points[1].recall >= 0.9, 'HNSW over HTTP reaches recall 0.9 at ef 64');
  t.same(tableRows(run.stdout).header.trim().split(/ {2,}/), ['engine', 'm', 'ef_c', 'ef', 'recall@10', 'QPS', 'p50 ms', 'p99 ms', 'load s', 'memory MB', 'B/point'], 'server table columns');
  t.same(tableRows(run.stdout).rows.map((r) => [r[0], r[3]]), [['server f32', '16'], ['server f32', '64'], ['server exact', '-']], 'one row per series and ef');

  const ingest = await bench(['bench', 'ingest', ...common, '--batch', '100,500', '--wait', 'false,true']);
  t.equal(ingest.result.mode, 'ingest');
  t.same(ingest.result.ingest.map((r) => [r.wait, r.batchSize, r.concurrency, r.points]), [[false, 100, 4, 1500], [false, 500, 4, 1500], [true, 100, 4, 1500], [true, 500, 4, 1500]], 'one row per wait value and batch size');
  for (const r of ingest.result.ingest) {
    t.ok(r.uploadSeconds > 0 && Math.abs(r.pointsPerSecond - r.points / r.uploadSeconds) < 1e-6 * r.pointsPerSecond, `batch ${r.batchSize}: throughput is points over upload time`);
    t.ok(r.searchableSeconds >= r.uploadSeconds, `batch ${r.batchSize}: searchable no earlier than the last upsert is acknowledged`);
    t.ok(r.recall >= 0.9, `batch ${r.batchSize}: the loaded collection answers with recall >= 0.9`);
  }
  const table = tableRows(ingest.run.stdout);
  t.same(table.header.trim().split(/ {2,}/), ['wait', 'batch', 'concurrency', 'points', 'upload s', 'points/s', 'searchable s', 'recall@10'], 'ingest table columns');
  t.same(table.rows, ingest.result.ingest.map((r) => [String(r.wait), String(r.batchSize), '4', '1500', r.uploadSeconds.toFixed(2), r.pointsPerSecond.toFixed(0), r.searchableSeconds.toFixed(2), r.recall.toFixed(4)]), 'ingest rows equal the JSON result');
});

t.test('server mode\'s hot-path loads against a Quiver the CLI starts: rows, accounting and the engine ratio', async (t) => {
  const { result, run } = await bench(['bench', 'server', ...HTTP_DATA, '--workers', '1', '--concurrency', '4', '--seconds', '1', '--rate', '100', '--batch', '256']);
  t.equal(result.mode, 'server');
  t.same(result.series, [], 'no recall sweep unless --loads names it');
  const hot = result.hotPath!;
  t.same(hot.rows.map((r) => r.load), [...HOT_PATH_LOADS], 'every hot-path load by default, in order');
  t.same([hot.m, hot.efConstruct, hot.ef, hot.shards, hot.connections], [16, 100, 64, 2, 4], 'the collection and load parameters');
  t.ok(hot.recall >= 0.9, 'single queries over HTTP reach recall 0.9');
  t.ok(hot.engine.qps > 0 && hot.engine.cpuQps > 0 && hot.engine.recall >= 0.9, 'the in-process engine on the same data');
  t.equal(hot.loadAverage.length, 3, 'the machine\'s load averages');
  const byLoad = Object.fromEntries(hot.rows.map((r) => [r.load, r]));
  for (const [load, perRequest] of [['http-floor', 1], ['query', 1], ['batch', 16], ['filter', 1], ['filter-unindexed', 1]] as const) {
    const r = byLoad[load];
    t.ok(r.requests > 0 && r.seconds >= 1, `${load}: requests over a window of --seconds`);
    t.ok(Math.abs(r.requestsPerSecond - r.requests / r.seconds) < 1e-9 * r.requestsPerSecond, `${load}: requests per second`);
    t.equal(r.unit, 'queries');
    t.ok(Math.abs(r.perSecond! - r.requestsPerSecond * perRequest) < 1e-9 * r.perSecond!, `${load}: ${perRequest} queries per request`);
    t.ok(r.p50Ms! > 0 && r.p99Ms! >= r.p50Ms!, `${load}: latencies`);
    t.ok(r.generatorCpu! > 0, `${load}: the generator's CPU`);
  }
  const open = byLoad['open-loop'];
  t.equal(open.openLoop!.rate, 100);
  t.equal(open.openLoop!.scheduled, 100, '--rate 100 for 1 s');
  t.equal(open.openLoop!.completed + open.openLoop!.dropped, 100, 'each scheduled request answered or dropped');
  t.equal(open.requests, open.openLoop!.completed);
  t.ok(open.p99Ms! >= open.p50Ms!, 'open-loop latencies');
  const upsert = byLoad.upsert;
  t.same([upsert.unit, upsert.requests], ['points', Math.ceil(1500 / 256)], 'upserts of --batch points');
  t.ok(Math.abs(upsert.perSecond! - 1500 / upsert.seconds) < 1e-9 * upsert.perSecond!, 'upsert: points per second');
  t.ok(byLoad.start.readyMs! > 0, 'start: time until /readyz');
  t.equal(hot.servedToEngine, byLoad.query.requestsPerSecond / hot.engine.qps, 'served over in-process queries per second');
  t.same(tableRows(run.stdout).rows.map((r) => r[0]), [...HOT_PATH_LOADS], 'one table row per load');
  t.match(run.stdout, `served single queries/s over in-process queries/s: ${(hot.servedToEngine! * 100).toFixed(1)}%`);
  t.equal(hot.servedToFloor, byLoad.query.requestsPerSecond / byLoad['http-floor'].requestsPerSecond, 'served over the HTTP floor\'s requests per second');
  const floor = byLoad['http-floor'];
  t.ok(floor.serverCpuPerRequestUs! > 0, 'the floor server\'s CPU per request');
  const perRequest = floor.generatorCpu! / floor.requestsPerSecond + floor.serverCpuPerRequestUs! / 1e6 + 2 / hot.engine.cpuQps;
  t.ok(Math.abs(hot.singleQueryCeiling! - availableParallelism() / perRequest) < 1e-9 * hot.singleQueryCeiling!, 'the ceiling: cores over the least CPU a request costs');
  t.match(run.stdout, `could serve at most here (cores / (generator + floor server CPU per request + 2 in-process searches)): ${hot.singleQueryCeiling!.toFixed(0)}`);
  t.match(run.stdout, `served single queries/s over the HTTP floor's (bare Fastify, canned answer, same generator): ${(hot.servedToFloor! * 100).toFixed(1)}%`);

  const url = await quiver(['bench', 'server', ...HTTP_DATA, '--url', 'http://127.0.0.1:1', '--loads', 'query,start']);
  t.equal(url.code, 2, '--loads start with --url exits 2');
  t.match(url.stderr, '--loads start times a Quiver this bench spawns');
  const efs = await quiver(['bench', 'server', ...HTTP_DATA, '--ef', '16,64']);
  t.equal(efs.code, 2, 'hot-path loads at two efs exit 2');
  t.match(efs.stderr, 'give --m, --ef-construct and --ef one value each, or --loads sweep');
});

t.test('server mode against a running Quiver with an API key (--url, --api-key)', async (t) => {
  const key = 'bench-secret-key';
  const server = await startServer({ workers: 1, env: { QDRANT__SERVICE__API_KEY: key } });
  t.teardown(() => server.stop());
  const common = ['bench', 'server', ...HTTP_DATA, '--url', server.url, '--loads', 'sweep', '--concurrency', '3', '--ef', '32'];

  const refused = await quiver([...common, '--quiet']);
  t.equal(refused.code, 2, 'without the key: exit 2');
  t.match(refused.stderr, 'HTTP 401', 'names the refusal');
  t.match(refused.stderr, 'Must provide an API key', 'with the server\'s message');
  t.match(refused.stderr, 'pass --api-key', 'and the flag to pass');

  const { result } = await bench([...common, '--api-key', key, '--engines', 'quiver-f32,quiver-int8,flat']);
  t.equal(result.target, server.url, 'the target is the given URL');
  t.equal(result.concurrency, 3);
  checkStructure(t, result, ['server f32', 'server exact', 'server int8']);
  t.equal(result.series[1].points[0].recall, 1, 'exact search has recall 1.0');
  t.ok(result.series[2].points[0].recall >= 0.9, 'the scalar-quantized collection, rescored, reaches recall 0.9');
  const listed = await fetch(`${server.url}/collections`, { headers: { 'api-key': key } }).then((r) => r.json()) as { result: { collections: { name: string }[] } };
  t.same(listed.result.collections, [], 'the benchmark collection is deleted afterwards');
});
