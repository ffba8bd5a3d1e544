#!/usr/bin/env node
// `npm start`: runs the server as built into build/server (src/cli/build-server.ts: compiled
// JavaScript and precompiled validators, so a start transpiles and compiles nothing). `npm ci`
// builds it (`prepare`); when a file under src/ or the lockfile is newer than the build (a
// checkout or an edit since), it is built again first, so `npm start` never serves stale code.
// Plain JavaScript, so that nothing needs transpiling before the server's own code runs.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../../', import.meta.url);
const BUILT = ['build/server/main.js', 'build/server/shard-worker.js', 'build/validators.js', 'build/validators.code-cache'];

function modified(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Number.NaN;
  }
}

function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : modified(path));
  }
  return newest;
}

const root = fileURLToPath(ROOT);
const built = Math.min(...BUILT.map((f) => modified(root + f)));
const sources = Math.max(newestUnder(root + 'src'), modified(root + 'package-lock.json'));
// NaN (a build file missing) compares false: rebuilt as well.
if (!(built >= sources)) {
  console.error('build/server is missing or older than src/: building it (npm run build:server) ...');
  const build = spawnSync(process.execPath, ['--import', 'tsx', root + 'src/cli/build-server.ts'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
await import(new URL('build/server/main.js', ROOT).href);
