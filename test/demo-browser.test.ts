// The browser demo in Debian's Chromium (headless, through playwright-core): `quiver demo`
// serves the built page on loopback; the page indexes the Fashion-MNIST subset in a Web Worker
// with progress shown; a click on an image shows neighbours that must equal the exact nearest
// neighbours computed here in Node, under the label filter and distance chosen in the page.

import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { chromium, type Page } from 'playwright-core';
import { decodeSubset, imageVector, type ImageSubset } from '../src/demo/subset-format.js';
import { freePort } from './helpers/server.js';

const CLI = new URL('../src/cli/quiver.js', import.meta.url).pathname;
const SUBSET = new URL('../build/demo/fashion-mnist-subset.bin', import.meta.url);
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

type Distance = 'Euclid' | 'Cosine';

/** The exact k nearest images to image `id` (itself left out) among those with `label`, by brute force in f64. */
function exactNeighbours(images: ImageSubset, id: number, distance: Distance, label: number | null, k: number): { ids: number[]; scores: number[] } {
  const query = imageVector(images, id);
  const scored: { i: number; s: number }[] = [];
  for (let i = 0; i < images.count; i++) {
    if (i === id || (label !== null && images.labels[i] !== label)) continue;
    const v = imageVector(images, i);
    let dot = 0, nq = 0, nv = 0, l2 = 0;
    for (let j = 0; j < v.length; j++) {
      dot += v[j] * query[j];
      nq += query[j] * query[j];
      nv += v[j] * v[j];
      l2 += (v[j] - query[j]) ** 2;
    }
    scored.push({ i, s: distance === 'Euclid' ? Math.sqrt(l2) : dot / Math.sqrt(nq * nv) });
  }
  scored.sort((a, b) => (distance === 'Euclid' ? a.s - b.s : b.s - a.s) || a.i - b.i);
  return { ids: scored.slice(0, k).map((x) => x.i), scores: scored.slice(0, k).map((x) => x.s) };
}

async function shownNeighbours(page: Page, id: number, distance: Distance, label: number | null, exact: boolean): Promise<{ ids: number[]; scores: number[] }> {
  await page.selectOption('#distance', distance);
  await page.selectOption('#label', label === null ? '' : String(label));
  await page.setChecked('#exact', exact);
  await page.waitForSelector(`#status[data-state="ready"][data-distance="${distance}"]`, { timeout: 60_000 });
  await page.click(`#gallery canvas[data-id="${id}"]`);
  await page.waitForSelector(`#results[data-query="${id}"][data-distance="${distance}"][data-filter="${label ?? ''}"][data-exact="${exact}"]`, { timeout: 30_000 });
  return page.$$eval('#hits .hit', (items) => ({
    ids: items.map((item) => Number((item as HTMLElement).dataset.id)),
    scores: items.map((item) => Number((item as HTMLElement).dataset.score)),
  }));
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

  const sneaker = Array.from(images.labels.subarray(0, 240)).indexOf(7, 100);
  const cases: { id: number; distance: Distance; label: number | null; exact: boolean; why: string }[] = [
    { id: sneaker, distance: 'Cosine', label: 7, exact: false, why: 'Cosine, label = Sneaker (filtered set below full_scan_threshold)' },
    { id: 17, distance: 'Euclid', label: 3, exact: false, why: 'Euclid, label = Dress' },
    { id: 42, distance: 'Euclid', label: null, exact: true, why: 'Euclid, no label filter, exact search' },
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
  t.same(errors, [], 'no page errors');
});
