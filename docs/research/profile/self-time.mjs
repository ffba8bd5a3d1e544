// Self time per function of a .cpuprofile (node --cpu-prof), as shares of the samples taken
// under a function named ROOT (default `once`, the search call of profile-search.ts), so the
// data set load and index build stay out. Usage: node self-time.mjs FILE.cpuprofile [ROOT] [N]
import { readFileSync } from 'node:fs';
const prof = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const root = process.argv[3] ?? 'once';
const top = Number(process.argv[4] ?? 25);
const parent = new Map();
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const under = (id) => { for (let p = id; p !== undefined; p = parent.get(p)) if (byId.get(p).callFrame.functionName === root) return true; return false; };
const byName = new Map();
let total = 0;
for (const n of prof.nodes) {
  if (!under(n.id)) continue;
  const f = n.callFrame;
  const name = `${f.functionName || '(anonymous)'} ${f.url ? f.url.replace(/^.*\//, '') : ''}`.trim();
  byName.set(name, (byName.get(name) ?? 0) + n.hitCount);
  total += n.hitCount;
}
for (const [name, hits] of [...byName].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${(100 * hits / total).toFixed(1).padStart(5)}%  ${hits.toString().padStart(6)}  ${name}`);
}
console.log(`samples under ${root}: ${total}`);
