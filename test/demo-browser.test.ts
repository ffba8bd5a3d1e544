// The browser demo in Debian's Chromium (headless, through playwright-core): `quiver demo`
// serves the built page on loopback; the page indexes the Fashion-MNIST subset in a Web Worker
// with progress shown; a click on an image shows neighbours that must equal the exact nearest
// neighbours computed here in Node, under the label filter and distance chosen in the page; the
// built folder also works from a sub-path of another static server.

import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { chromium, type Page } from 'playwright-core';
import { DEMO_DIR } from '../src/demo/build.js';
import { serveStatic } from '../src/demo/serve.js';
import { decodeSubset, imageVector, type ImageSubset } from '../src/demo/subset-format.js';
import { freePort } from './helpers/server.js';
import { tempDir } from './helpers/temp-dir.js';

const CLI = new URL('../src/cli/quiver.js', import.meta.url).pathname;
const SUBSET = new URL('../build/demo/fashion-mnist-subset.bin', import.meta.url);
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

type Distance = 'Euclid' | 'Cosine' | 'Dot' | 'Manhattan';

/** Qdrant's score of `v` for `query`: L2 / L1 distance (smaller is closer), cosine similarity or dot product (larger is closer). */
function score(distance: Distance, query: Float32Array, v: Float32Array): number {
  let dot = 0, nq = 0, nv = 0, l2 = 0, l1 = 0;
  for (let j = 0; j < v.length; j++) {
    dot += v[j] * query[j];
    nq += query[j] * query[j];
    nv += v[j] * v[j];
    l2 += (v[j] - query[j]) ** 2;
    l1 += Math.abs(v[j] - query[j]);
  }
  return { Euclid: Math.sqrt(l2), Manhattan: l1, Cosine: dot / Math.sqrt(nq * nv), Dot: dot }[distance];
}

/** The exact k nearest images to image `id` (itself left out) among those with `label`, by brute force in f64. */
function exactNeighbours(images: ImageSubset, id: number, distance: Distance, label: number | null, k: number): { ids: number[]; scores: number[] } {
  const query = imageVector(images, id);
  const scored: { i: number; s: number }[] = [];
  for (let i = 0; i < images.count; i++) {
    if (i === id || (label !== null && images.labels[i] !== label)) continue;
    scored.push({ i, s: score(distance, query, imageVector(images, i)) });
  }
  const smallerFirst = distance === 'Euclid' || distance === 'Manhattan';
  scored.sort((a, b) => (smallerFirst ? a.s - b.s : b.s - a.s) || a.i - b.i);
  return { ids: scored.slice(0, k).map((x) => x.i), scores: scored.slice(0, k).map((x) => x.s) };
}

async function shownNeighbours(page: Page, id: number, distance: Distance, label: number | null, exact: boolean): Promise<{ ids: number[]; scores: number[] }> {
  await page.selectOption('#distance', distance);
  await page.selectOption('#label', label === null ? '' : String(label));
  await page.setChecked('#exact', exact);
  await page.waitForSelector(`#status[data-state="ready"][data-distance="${distance}"]`, { timeout: 60_000 });
  await page.click(`#gallery canvas[data-id="${id}"]`);
  await page.waitForSelector(`#results[data-query="${id}"][data-distance="${distance}"][data-filter="${label ?? ''}"][data-exact="${exact}"]`, { timeout: 30_000 });
  const hits = await page.$$eval('#hits .hit', (items) => items.map((item) => ({
    id: Number((item as HTMLElement).dataset.id),
    score: Number((item as HTMLElement).dataset.score),
    shown: item.querySelector('.score')!.textContent,
  })));
  // What a reader sees: the score to four decimals next to each neighbour.
  if (hits.some((h) => h.shown !== h.score.toFixed(4))) throw new Error(`shown scores differ from the hits': ${JSON.stringify(hits)}`);
  return { ids: hits.map((h) => h.id), scores: hits.map((h) => h.score) };
}

t.test('demo page in Chromium shows the exact nearest neighbours', async (t) => {
  const port = await freePort();
  const server = spawn(process.execPath, [CLI, 'demo', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  server.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  t.teardown(async () => {
    server.kill('SIGTERM');
    await exited;
  });
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 60_000;
  while (!(await fetch(url).then((r) => r.ok, () => false))) {
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`demo server did not start: ${log}`);
    await new Promise((r) => setTimeout(r, 100)); // readiness poll interval
  }
  t.match(log, `Quiver demo on ${url}`, 'quiver demo announces its loopback URL');

  const images = decodeSubset(gunzipSync(await readFile(SUBSET)));
  t.equal(images.count, 5000, 'the shipped subset holds 5000 images');
  t.same([images.rows, images.cols], [28, 28]);

  const profile = await mkdtemp(join(tmpdir(), 'quiver-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS });
  t.teardown(async () => {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  // Record every status text, to see the build progress the page showed.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { statusSeen: string[] }).statusSeen = seen;
    new MutationObserver(() => {
      const text = document.getElementById('status-text')?.textContent;
      if (text && seen[seen.length - 1] !== text) seen.push(text);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(url);
  await page.waitForSelector('#status[data-state="ready"][data-distance="Euclid"]', { timeout: 60_000 });
  const seen = await page.evaluate(() => (window as unknown as { statusSeen: string[] }).statusSeen);
  t.ok(seen.some((s) => /^Indexing for Euclid: \d+ \/ 5000 images$/.test(s)), 'index build progress was shown');
  t.match(seen[seen.length - 1], /^Index ready: 5000 images, Euclid/, 'then the index is ready');
  t.ok((await page.$$('#gallery canvas.thumb')).length >= 200, 'the gallery shows the images');
  for (const id of [0, 123]) {
    const drawn = await page.$eval(`#gallery canvas[data-id="${id}"]`, (canvas) => {
      const c = canvas as HTMLCanvasElement;
      return Array.from(c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data.filter((_, i) => i % 4 === 0));
    });
    t.same(drawn, Array.from(images.pixels.subarray(id * 784, (id + 1) * 784), (p) => 255 - p), `thumbnail #${id} shows the image's pixels (dark on light)`);
  }

  const sneaker = Array.from(images.labels.subarray(0, 240)).indexOf(7, 100);
  const cases: { id: number; distance: Distance; label: number | null; exact: boolean; why: string }[] = [
    { id: sneaker, distance: 'Cosine', label: 7, exact: false, why: 'Cosine, label = Sneaker (filtered set below full_scan_threshold)' },
    { id: 17, distance: 'Euclid', label: 3, exact: false, why: 'Euclid, label = Dress' },
    { id: 42, distance: 'Euclid', label: null, exact: true, why: 'Euclid, no label filter, exact search' },
    { id: 5, distance: 'Manhattan', label: 1, exact: false, why: 'Manhattan, label = Trouser' },
    { id: 30, distance: 'Dot', label: 8, exact: false, why: 'Dot, label = Bag' },
  ];
  for (const c of cases) {
    const shown = await shownNeighbours(page, c.id, c.distance, c.label, c.exact);
    const want = exactNeighbours(images, c.id, c.distance, c.label, 10);
    t.same(shown.ids, want.ids, `${c.why}: neighbours of #${c.id} equal the exact ones`);
    t.ok(shown.scores.every((s, i) => Math.abs(s - want.scores[i]) <= 1e-4 * Math.max(1, Math.abs(want.scores[i]))), `${c.why}: scores equal the exact scores`);
    if (c.label !== null) t.ok(shown.ids.every((id) => images.labels[id] === c.label), `${c.why}: every hit has the label`);
  }
  // Without a filter narrow enough for an exact scan, the page searches the HNSW graph (ef 100).
  const graph = await shownNeighbours(page, 42, 'Cosine', null, false);
  const exact = exactNeighbours(images, 42, 'Cosine', null, 10);
  t.ok(graph.ids.filter((id) => exact.ids.includes(id)).length >= 9, 'graph search without a label filter: at least 9 of the 10 exact neighbours');
  const timing = await page.textContent('#timing');
  t.match(timing, /^10 hits in \d+\.\d\d ms/, 'search timing is shown');

  // The built folder on another path of a plain static server: every URL in it is relative.
  const root = await tempDir('quiver-static-');
  await mkdir(join(root, 'nested'));
  await symlink(DEMO_DIR, join(root, 'nested', 'quiver-demo'));
  const host = await serveStatic(root, '127.0.0.1', 0);
  t.teardown(() => new Promise<void>((resolve) => host.close(() => resolve())));
  const elsewhere = await context.newPage();
  elsewhere.on('pageerror', (err) => errors.push(err.message));
  await elsewhere.goto(`http://127.0.0.1:${(host.address() as { port: number }).port}/nested/quiver-demo/`);
  const moved = await shownNeighbours(elsewhere, 17, 'Euclid', 3, false);
  t.same(moved.ids, exactNeighbours(images, 17, 'Euclid', 3, 10).ids, 'served from a sub-path of another server, the page still finds the exact neighbours');
  t.same(errors, [], 'no page errors');
});
