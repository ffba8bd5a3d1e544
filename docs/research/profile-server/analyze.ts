// Throwaway: reads the .cpuprofile files drive.ts left and window.json, keeps the samples inside
// the timed window (CLOCK_MONOTONIC microseconds, the clock V8's profiler stamps with), and prints
// per thread: busy share, self time by function, and inclusive time of chosen frames, each also
// as microseconds per request. With `--startup` it takes the samples from spawn to ready instead.
// Usage: node --import tsx docs/research/profile-server/analyze.ts DIR [--startup] [--top N] [--frames a,b,c]

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface Frame { functionName: string; url: string; lineNumber: number }
interface Node { id: number; callFrame: Frame; children?: number[] }
interface Profile { nodes: Node[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

const dir = process.argv[2];
const startup = process.argv.includes('--startup');
const topAt = process.argv.indexOf('--top');
const top = topAt > 0 ? Number(process.argv[topAt + 1]) : 25;
const framesAt = process.argv.indexOf('--frames');
const wanted = framesAt > 0 ? process.argv[framesAt + 1].split(',') : [];
const incAt = process.argv.indexOf('--inclusive-top');
const inclusiveTop = incAt > 0 ? Number(process.argv[incAt + 1]) : 0;
// Each busy sample goes to the category of its innermost frame that matches one (--categories).
const CATEGORIES: [string, RegExp][] = [
  ['GC', /^\(garbage collector\)/],
  ['engine search (wasm)', /^wasm-function/],
  ['Ajv validation', /^validate\d+ |validator\.ts|ajv/],
  ['request JSON parse + nesting scan', /json-body\.ts|exact-integers|json-syntax|^parse :0|RegExp: \["/],
  ['query conversion (f32 checks, params)', /f32-number|search-convert|point-convert|params\.ts|query\.ts|examples\.ts/],
  ['hop to the worker (Piscina, postMessage, supervisor)', /^postMessage|piscina|^\w+ index\.js|supervisor\.ts|pool\.ts|messageport|event_target|worker\.js|shard-worker\.ts|task-usage/],
  ['telemetry, hardware, deadlines', /request-telemetry|request-stats|histogram\.js|prom-client|request-hardware|hardware\.ts|hardware-ledger|deadline|metric\.ts|async_hooks/],
  ['logging', /pino|logger/],
  ['collection layer (planning, replica, merge)', /query-plan|query-planner|strict-reads|shard-reader|replica-set|local-replica|collection\.ts|routing\.ts|search\.ts|reads\.ts/],
  ['engine glue (vector-index.ts)', /vector-index\.ts|engine\//],
  ['point records (decode, payload selection)', /shard\.ts|point-codec|selectors\.ts|stored-id/],
  ['response serialisation + socket write', /print\.ts|reply\.js|^writev|_http_outgoing|writable|stream_base|node:net|writeHead|_http_server:3/],
  ['Fastify routing and hooks', /fastify\.js|route\.js|hooks\.js|handle-request|content-type-parser|request\.js|wrap-thenable|context\.js|access\.ts|path-names|query-params|auth/],
  ['HTTP request parsing (node)', /_http_server|_http_incoming|_http_common|parserOn|readable/],
  ['(program)', /^\(program\)/],
];
const categorise = process.argv.includes('--categories');
const w = JSON.parse(await readFile(join(dir, 'window.json'), 'utf8'));
const [from, to] = startup ? [w.spawnedUs, w.readyUs] : [w.startUs, w.endUs];
const per = startup ? 1 : w.requests;
const unit = startup ? 'ms total' : 'us/request';
const scale = (us: number) => (startup ? us / 1000 : us / per);

const short = (f: Frame) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules\/)?/, '').replace(/^file:\/\//, '')}:${f.lineNumber + 1}`;

for (const file of (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile')).sort()) {
  const p = JSON.parse(await readFile(join(dir, file), 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const allInclusive = new Map<string, number>();
  const byCategory = new Map<string, number>();
  let t = p.startTime;
  let total = 0;
  let idle = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    if (t < from || t > to) continue;
    const dt = p.timeDeltas[i + 1] ?? 0; // the sample stands for the time until the next one
    total += dt;
    const leaf = byId.get(p.samples[i])!;
    if (leaf.callFrame.functionName === '(idle)') { idle += dt; continue; }
    const key = short(leaf.callFrame);
    self.set(key, (self.get(key) ?? 0) + dt);
    if (categorise) {
      let category = 'other (event loop, microtasks, node internals)';
      search: for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
        const k = short(byId.get(id)!.callFrame);
        for (const [name, pattern] of CATEGORIES) if (pattern.test(k)) { category = name; break search; }
      }
      byCategory.set(category, (byCategory.get(category) ?? 0) + dt);
    }
    const seen = new Set<string>();
    const seenAll = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame;
      const k = short(f);
      if (!seenAll.has(k)) {
        seenAll.add(k);
        allInclusive.set(k, (allInclusive.get(k) ?? 0) + dt);
      }
      for (const name of wanted) {
        if (!seen.has(name) && short(f).includes(name)) {
          seen.add(name);
          inclusive.set(name, (inclusive.get(name) ?? 0) + dt);
        }
      }
    }
  }
  if (total === 0) continue;
  const busy = total - idle;
  console.log(`\n== ${file}: window ${(total / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s = ${scale(busy).toFixed(1)} ${unit}`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${scale(v).toFixed(1).padStart(8)} ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`);
  if (categorise) {
    console.log('  -- by category (innermost matching frame)');
    for (const [k, v] of [...byCategory].sort((a, b) => b[1] - a[1])) console.log(`  ${scale(v).toFixed(1).padStart(8)} ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`);
  }
  if (inclusiveTop > 0) {
    console.log('  -- inclusive, largest');
    for (const [k, v] of [...allInclusive].sort((a, b) => b[1] - a[1]).slice(0, inclusiveTop)) console.log(`  ${scale(v).toFixed(1).padStart(8)} ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`);
  }
  if (wanted.length) {
    console.log('  -- inclusive');
    for (const name of wanted) console.log(`  ${scale(inclusive.get(name) ?? 0).toFixed(1).padStart(8)} ${((100 * (inclusive.get(name) ?? 0)) / busy).toFixed(1).padStart(5)}%  ${name}`);
  }
}
