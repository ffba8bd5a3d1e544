// Each layer calls only down: every relative import in src/ is checked against the layer order
// (DESIGN.md, "Layers and who may touch what"), so an import that runs up a layer fails here.

import t from 'tap';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/**
 * Layers, lowest first; a module may import its own layer's modules and those of lower layers.
 * Layers on one line sit beside each other and may not import one another.
 */
const LAYERS: string[][] = [
  ['errors.ts', 'model.ts', 'own-fields.ts', 'version.ts', 'write-queue.ts', 'engine', 'runtime'],
  // Text analysis and JSON handling sit just above the bottom row rather than in it: they use
  // errors.ts's classes and own-fields.ts.
  ['text', 'json'],
  ['messages.ts', 'timeout.ts', 'key-compare.ts', 'free-port.ts'],
  ['storage'],
  ['shard'],
  ['worker', 'quota'],
  ['replica'],
  // Peer-to-peer transport: a shard replica on another peer and the routes that serve one.
  ['peer'],
  ['collection', 'config'],
  // The cluster's control plane (etcd) and the peer's membership: above the collections it holds.
  ['cluster'],
  ['api', 'snapshot'],
  ['telemetry'],
  ['server'],
  ['main.ts'],
  ['tools'],
];

/** The command-line tools (benchmarks, demo, CLI) are one unit built on the server's modules. */
const TOOLS = new Set(['bench', 'demo', 'cli']);

function unitOf(path: string): string {
  const top = path.split('/')[0];
  return TOOLS.has(top) ? 'tools' : top;
}

function rankOf(unit: string): number {
  const rank = LAYERS.findIndex((layer) => layer.includes(unit));
  if (rank < 0) throw new Error(`src/${unit} is in no layer: add it to LAYERS`);
  return rank;
}

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(join(SRC, dir), { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => {
    const path = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  }));
  return nested.flat();
}

/** Relative imports of a module (static, re-exports and dynamic), as paths under src/. */
function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.[^']+)'/g)].map((m) => m[1]);
  return specifiers.map((s) => relative(SRC, normalize(join(SRC, dirname(file), s))).replace(/\.js$/, '.ts'));
}

t.test('every import in src/ points to its own layer or one below', async (t) => {
  const files = await sources('');
  t.ok(files.length > 100, 'source modules found');
  const upward: string[] = [];
  let checked = 0;
  for (const file of files) {
    const from = unitOf(file);
    for (const target of importsOf(file, await readFile(join(SRC, file), 'utf8'))) {
      const to = unitOf(target);
      checked++;
      if (to === from) continue;
      if (rankOf(to) >= rankOf(from)) upward.push(`${file} -> ${target}`);
    }
  }
  t.ok(checked > 300, 'imports found');
  t.same(upward, [], 'no import runs up a layer or across to a layer beside');
});

t.test('inside the server, only the app (its composition root) reaches into the routes', async (t) => {
  const files = (await sources('server')).filter((f) => !f.startsWith('server/routes/') && f !== 'server/app.ts');
  for (const file of files) {
    const intoRoutes = importsOf(file, await readFile(join(SRC, file), 'utf8')).filter((target) => target.startsWith('server/routes/'));
    t.same(intoRoutes, [], `${file} imports no route module`);
  }
});
