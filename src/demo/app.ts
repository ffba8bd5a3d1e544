// The demo page: loads the image subset, hands it to the engine's Web Worker, draws the gallery,
// and on a click asks the worker for the nearest neighbours under the chosen distance, label
// filter and limit (a Qdrant filter, evaluated by the worker with the server's filter code).

import type { WireFilter } from '../api/filter.js';
import type { Distance } from '../engine/index.js';
import { FASHION_MNIST_LABELS } from './labels.js';
import type { PointHits } from './point-set.js';
import type { FromWorker, ToWorker } from './protocol.js';
import { decodeSubset, type ImageSubset } from './subset-format.js';

const PAGE = 240;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const distanceSelect = $<HTMLSelectElement>('distance');
const labelSelect = $<HTMLSelectElement>('label');
const limitSelect = $<HTMLSelectElement>('limit');
const exactBox = $<HTMLInputElement>('exact');
const status = $('status');
const statusText = $('status-text');
const bar = $<HTMLProgressElement>('build-progress');
const gallery = $('gallery');
const results = $('results');

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const send = (message: ToWorker, transfer: Transferable[] = []) => worker.postMessage(message, transfer);

let images: ImageSubset;
let shown = 0;
let seq = 0;
let selected: number | null = null;

function setStatus(state: 'loading' | 'building' | 'ready' | 'error', text: string, distance?: Distance): void {
  status.dataset.state = state;
  status.dataset.distance = distance ?? '';
  statusText.textContent = text;
}

/** A canvas showing image `id`, dark on light (the data set stores light on dark). */
function thumbnail(id: number): HTMLCanvasElement {
  const canvas = document.createElement('canvas');
  canvas.width = images.cols;
  canvas.height = images.rows;
  canvas.className = 'thumb';
  canvas.dataset.id = String(id);
  canvas.title = `#${id} ${FASHION_MNIST_LABELS[images.labels[id]]}`;
  const size = images.rows * images.cols;
  const picture = new ImageData(images.cols, images.rows);
  for (let p = 0; p < size; p++) {
    const v = 255 - images.pixels[id * size + p];
    picture.data.set([v, v, v, 255], p * 4);
  }
  canvas.getContext('2d')!.putImageData(picture, 0, 0);
  return canvas;
}

function showMore(): void {
  const end = Math.min(images.count, shown + PAGE);
  for (let id = shown; id < end; id++) gallery.append(thumbnail(id));
  shown = end;
  $('gallery-count').textContent = `${shown} of ${images.count} shown, all ${images.count} indexed`;
  $('more').hidden = shown >= images.count;
  markGallery();
}

/** Dims the images the label filter excludes and marks the selected one. */
function markGallery(): void {
  const label = labelSelect.value === '' ? null : Number(labelSelect.value);
  for (const canvas of gallery.querySelectorAll<HTMLCanvasElement>('canvas.thumb')) {
    const id = Number(canvas.dataset.id);
    canvas.classList.toggle('dimmed', label !== null && images.labels[id] !== label);
    canvas.classList.toggle('selected', id === selected);
  }
}

function currentFilter(id: number): WireFilter {
  // The clicked image itself is left out, as Qdrant's recommend leaves its examples out.
  const filter: WireFilter = { must_not: [{ has_id: [id] }] };
  if (labelSelect.value !== '') filter.must = [{ key: 'label', match: { value: Number(labelSelect.value) } }];
  return filter;
}

function search(id: number): void {
  selected = id;
  markGallery();
  const distance = distanceSelect.value as Distance;
  send({ type: 'search', seq: ++seq, distance, id, request: { limit: Number(limitSelect.value), filter: currentFilter(id), exact: exactBox.checked } });
}

function renderHits(id: number, hits: PointHits): void {
  const distance = distanceSelect.value;
  results.dataset.query = String(id);
  results.dataset.distance = distance;
  results.dataset.filter = labelSelect.value;
  results.dataset.limit = limitSelect.value;
  results.dataset.exact = String(exactBox.checked);
  $('results-hint').textContent = `Query: image #${id}, ${FASHION_MNIST_LABELS[images.labels[id]]}`;
  const query = $('query');
  query.replaceChildren(thumbnail(id));
  const label = labelSelect.value === '' ? 'any label' : `label = ${FASHION_MNIST_LABELS[Number(labelSelect.value)]}`;
  $('timing').textContent = `${hits.ids.length} hits in ${(hits.filterMs + hits.searchMs).toFixed(2)} ms (filter ${hits.filterMs.toFixed(2)} ms, `
    + `search ${hits.searchMs.toFixed(2)} ms) · ${distance} · ${label}: ${hits.allowed} of ${images.count} allowed`;
  const list = $('hits');
  list.replaceChildren(...hits.ids.map((hit, rank) => {
    const item = document.createElement('li');
    item.className = 'hit';
    item.dataset.id = String(hit);
    item.dataset.score = String(hits.scores[rank]);
    const name = document.createElement('span');
    name.className = 'label';
    name.innerHTML = `${FASHION_MNIST_LABELS[images.labels[hit]]} <small>#${hit}</small>`;
    const score = document.createElement('span');
    score.className = 'score';
    score.textContent = hits.scores[rank].toFixed(4);
    const rankCell = document.createElement('span');
    rankCell.className = 'rank';
    rankCell.textContent = String(rank + 1);
    item.append(rankCell, thumbnail(hit), name, score);
    item.addEventListener('click', () => search(hit));
    return item;
  }));
}

function build(): void {
  const distance = distanceSelect.value as Distance;
  setStatus('building', `Indexing for ${distance}…`, distance);
  bar.max = images.count;
  bar.value = 0;
  send({ type: 'build', distance });
}

worker.onmessage = (event: MessageEvent<FromWorker>) => {
  const message = event.data;
  switch (message.type) {
    case 'progress':
      if (message.distance !== distanceSelect.value) return;
      bar.value = message.done;
      statusText.textContent = `Indexing for ${message.distance}: ${message.done} / ${message.total} images`;
      return;
    case 'built':
      if (message.distance !== distanceSelect.value) return;
      setStatus('ready', `Index ready: ${images.count} images, ${message.distance}, HNSW m=16 ef_construct=100, built in ${(message.ms / 1000).toFixed(2)} s`, message.distance);
      return;
    case 'hits':
      if (message.seq === seq) renderHits(message.id, message.hits);
      return;
    case 'error':
      setStatus('error', `Error: ${message.message}`);
      return;
  }
};

async function start(): Promise<void> {
  const res = await fetch(new URL('./fashion-mnist-subset.bin', import.meta.url));
  if (!res.ok || !res.body) throw new Error(`fashion-mnist-subset.bin: HTTP ${res.status}`);
  images = decodeSubset(new Uint8Array(await new Response(res.body.pipeThrough(new DecompressionStream('gzip'))).arrayBuffer()));
  FASHION_MNIST_LABELS.forEach((name, label) => labelSelect.add(new Option(`${label}: ${name}`, String(label))));
  send({ type: 'load', rows: images.rows, cols: images.cols, labels: images.labels.slice(), pixels: images.pixels.slice() });
  showMore();
  build();
  $('more').addEventListener('click', showMore);
  gallery.addEventListener('click', (event) => {
    const id = (event.target as HTMLElement).dataset.id;
    if (id !== undefined) search(Number(id));
  });
  distanceSelect.addEventListener('change', () => {
    build();
    if (selected !== null) search(selected);
  });
  for (const control of [labelSelect, limitSelect, exactBox]) {
    control.addEventListener('change', () => {
      markGallery();
      if (selected !== null) search(selected);
    });
  }
}

start().catch((err: unknown) => setStatus('error', `Error: ${err instanceof Error ? err.message : String(err)}`));
