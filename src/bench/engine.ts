// `npm run bench:engine`: Quiver's engine (f32 and int8) against hnswlib-node on Fashion-MNIST,
// one thread each, same m and ef_construct; recall@10 and QPS over an ef sweep.

import { parseArgs } from 'node:util';
import { loadFashionMnist } from './fashion-mnist.js';
import { groundTruth } from './ground-truth.js';
import { HnswlibRunner, QuiverRunner, type AnnRunner } from './runners.js';
import { bestQpsAt, buildTimed, sweep, type RunnerResult } from './sweep.js';

const { values } = parseArgs({
  options: {
    queries: { type: 'string', default: '10000' },
    ef: { type: 'string', default: '10,20,30,40,60,80,120,200,400' },
    m: { type: 'string', default: '16' },
    'ef-construct': { type: 'string', default: '100' },
    k: { type: 'string', default: '10' },
    oversampling: { type: 'string', default: '2' },
    repeats: { type: 'string', default: '2' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  console.log(`npm run bench:engine -- [--queries N] [--ef 10,20,...] [--m 16] [--ef-construct 100] [--k 10] [--oversampling 2] [--repeats 2]
Fashion-MNIST (apt-get install dataset-fashion-mnist), L2, one thread per engine.`);
  process.exit(0);
}

const k = Number(values.k);
const efs = values.ef.split(',').map(Number);
const params = { m: Number(values.m), efConstruct: Number(values['ef-construct']), distance: 'Euclid' as const };
const log = (line: string) => console.error(line);

const data = await loadFashionMnist();
const dim = data.dim;
const queries = data.queries.subarray(0, Math.min(Number(values.queries), data.queries.length / dim) * dim);
const truthK = 100;
const truth = await groundTruth(data.base, data.queries, dim, truthK, 'Euclid', log);

const quiver = new QuiverRunner('quiver f32', params, false);
const runners: AnnRunner[] = [quiver, new QuiverRunner('quiver int8', params, true, Number(values.oversampling)), new HnswlibRunner(params)];
const buildSeconds: number[] = [];
for (const runner of runners) {
  log(`${runner.name}: building ${data.base.length / dim} x ${dim} (m=${params.m}, ef_construct=${params.efConstruct})`);
  buildSeconds.push(await buildTimed(runner, data.base, dim));
}
log(`sweeping ef ${efs.join(',')} over ${queries.length / dim} queries, best of ${values.repeats}`);
const points = sweep(runners, { queries, dim, truth, truthK, k, efs, repeats: Number(values.repeats) });
const results: RunnerResult[] = runners.map((r, i) => ({ name: r.name, buildSeconds: buildSeconds[i], points: points[i] }));

const scanQueries: Float32Array[] = [];
for (let q = 0; q < 100; q++) scanQueries.push(queries.subarray(q * dim, (q + 1) * dim));
const scan = quiver.exactScanGBs(scanQueries, k);

const pad = (s: string, n: number) => s.padEnd(n);
console.log(`\n${data.name}: ${data.base.length / dim} base, ${queries.length / dim} queries, k=${k}, m=${params.m}, ef_construct=${params.efConstruct}\n`);
console.log(`${pad('engine', 14)}${pad('build s', 10)}${pad('ef', 6)}${pad('recall@' + k, 11)}QPS`);
for (const r of results) {
  for (const p of r.points) {
    console.log(`${pad(r.name, 14)}${pad(r.buildSeconds.toFixed(1), 10)}${pad(String(p.ef), 6)}${pad(p.recall.toFixed(4), 11)}${p.qps.toFixed(0)}`);
  }
}

const peer = results[2];
console.log('');
for (const r of results.slice(0, 2)) {
  console.log(`${r.name} / hnswlib-node build time: ${(r.buildSeconds / peer.buildSeconds).toFixed(2)}x`);
  for (const target of [0.95, 0.99]) {
    const ours = bestQpsAt(r, target);
    const theirs = bestQpsAt(peer, target);
    const ratio = ours && theirs ? (ours.qps / theirs.qps).toFixed(2) + 'x' : 'n/a (target recall not reached)';
    console.log(`${r.name} / hnswlib-node QPS at recall@${k} >= ${target}: ${ratio}${ours && theirs ? ` (${ours.qps.toFixed(0)} at ef ${ours.ef} vs ${theirs.qps.toFixed(0)} at ef ${theirs.ef})` : ''}`);
  }
}
console.log(`exact scan (quiver f32, one thread): ${scan.toFixed(1)} GB/s`);
