// Throwaway driver for docs/research/engine-profile.md: hnswlib-node on Fashion-MNIST (M 16,
// ef_construction 100, seed 100 as the bench runner), its recall@10 and QPS (CPU time) per ef, and
// the work per query counted by replaying hnswlib's own search (searchKnn: greedy upper levels,
// then searchBaseLayerST with max(ef, k)) in JavaScript over its saved index file. hnswlib-node
// does not expose metric_distance_computations, and that counter counts every neighbour of an
// expanded node, visited or not; the replay counts the distances actually computed.
//
//   node --import tsx docs/research/profile/hnswlib-evals.ts --dir /tmp/ep --ef 20,40,80

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadFashionMnist, defaultFashionMnistDir } from '../../../src/bench/fashion-mnist.js';

const { values } = parseArgs({ options: { dir: { type: 'string', default: '/tmp/ep' }, ef: { type: 'string', default: '20,40,80' }, queries: { type: 'string', default: '1000' }, passes: { type: 'string', default: '3' } } });
const K = 10;
const nq = Number(values.queries);
const data = await loadFashionMnist(defaultFashionMnistDir());
const dim = data.dim;
const nBase = data.base.length / dim;
const file = `${values.dir}/hnswlib.bin`;
const hnswlib = ((await import('hnswlib-node')) as any).default;
const index = new hnswlib.HierarchicalNSW('l2', dim);
if (existsSync(file)) index.readIndexSync(file);
else {
  index.initIndex(nBase, 16, 100, 100);
  for (let i = 0; i < nBase; i++) index.addPoint(Array.from(data.base.subarray(i * dim, (i + 1) * dim)), i);
  index.writeIndexSync(file);
}
const gt = new Uint32Array((await readFile(`${values.dir}/fmnist-gt-${nq}.bin`)).buffer.slice(0));
const queries = Array.from({ length: nq }, (_, i) => Array.from(data.queries.subarray(i * dim, (i + 1) * dim)));

// --- the saved index (hnswalg.h saveIndex) ---
const buf = await readFile(file);
const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
const u64 = (o: number) => Number(dv.getBigUint64(o, true));
const count = u64(16), perElem = u64(24), offData = u64(40);
const maxLevel = dv.getInt32(48, true), entry = dv.getUint32(52, true), maxM = u64(56);
const level0 = 96;
const linkBytes = maxM * 4 + 4;
const upper: number[] = new Array(count);
let at = level0 + count * perElem;
for (let i = 0; i < count; i++) {
  const size = dv.getUint32(at, true);
  at += 4;
  upper[i] = size ? at : -1;
  at += size;
}
const vec = (id: number) => new Float32Array(buf.buffer.slice(buf.byteOffset + level0 + id * perElem + offData, buf.byteOffset + level0 + id * perElem + offData + dim * 4));
const vecs = Array.from({ length: count }, (_, i) => vec(i));
const links = (id: number, level: number): Uint32Array => {
  const p = level === 0 ? level0 + id * perElem : upper[id] + (level - 1) * linkBytes;
  const n = dv.getUint16(p, true);
  return new Uint32Array(Array.from({ length: n }, (_, j) => dv.getUint32(p + 4 + 4 * j, true)));
};

function l2(q: Float32Array, v: Float32Array): number {
  let s = 0;
  for (let i = 0; i < dim; i++) { const d = q[i] - v[i]; s += d * d; }
  return s;
}

/** hnswlib's searchKnn, counting distances, expansions (hops) and greedy distances. */
function replay(q: Float32Array, ef: number) {
  let evals = 0, hops = 0, greedy = 0;
  let cur = entry;
  let curDist = l2(q, vecs[cur]); evals++;
  for (let level = maxLevel; level > 0; level--) {
    let changed = true;
    while (changed) {
      changed = false;
      for (const c of links(cur, level)) {
        const d = l2(q, vecs[c]); evals++; greedy++;
        if (d < curDist) { curDist = d; cur = c; changed = true; }
      }
    }
  }
  const visited = new Set<number>([cur]);
  const cand: [number, number][] = [[curDist, cur]]; // kept sorted ascending (small sizes)
  const top: [number, number][] = [[curDist, cur]];
  let lower = curDist;
  const width = Math.max(ef, K);
  while (cand.length) {
    const [cd, c] = cand[0];
    if (cd > lower && top.length === width) break;
    cand.shift();
    hops++;
    for (const nb of links(c, 0)) {
      if (visited.has(nb)) continue;
      visited.add(nb);
      const d = l2(q, vecs[nb]); evals++;
      if (top.length < width || lower > d) {
        cand.splice(cand.findIndex((e) => e[0] > d) >>> 0, 0, [d, nb]);
        top.splice(top.findIndex((e) => e[0] > d) >>> 0, 0, [d, nb]);
        if (top.length > width) top.pop();
        lower = top[top.length - 1][0];
      }
    }
  }
  return { evals, hops, greedy, ids: top.slice(0, K).map((e) => e[1]) };
}

const qf = queries.map((q) => Float32Array.from(q));
for (const ef of values.ef!.split(',').map(Number)) {
  index.setEf(ef);
  let hits = 0, same = 0, evals = 0, hops = 0, greedy = 0;
  for (let i = 0; i < nq; i++) {
    const got = index.searchKnn(queries[i], K).neighbors as number[];
    const truth = new Set(gt.subarray(i * K, (i + 1) * K));
    for (const id of got) if (truth.has(id)) hits++;
    const r = replay(qf[i], ef);
    evals += r.evals; hops += r.hops; greedy += r.greedy;
    const mine = new Set(r.ids);
    for (const id of got) if (mine.has(id)) same++;
  }
  const t0 = process.cpuUsage();
  for (let p = 0; p < Number(values.passes); p++) for (let i = 0; i < nq; i++) index.searchKnn(queries[i], K);
  const t = process.cpuUsage(t0);
  const secs = (t.user + t.system) / 1e6;
  console.log(JSON.stringify({ engine: 'hnswlib', ef, recall: hits / (nq * K), qps: Math.round((Number(values.passes) * nq) / secs), usPerQuery: +(secs / (Number(values.passes) * nq) * 1e6).toFixed(1), evalsPerQuery: evals / nq, hopsPerQuery: hops / nq, greedyEvalsPerQuery: greedy / nq, replayAgreement: same / (nq * K) }));
}
