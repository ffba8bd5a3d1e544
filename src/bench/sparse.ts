// `quiver bench sparse`: the engine's sparse index on synthetic SPLADE-like data, in this process,
// one thread. Builds the index (time, memory, byte image), then answers the same queries through
// the pruned top-k path and through the exact scan of every allowed document, unfiltered and
// under filters of given shares, and counts how much of the exact top-k the pruned path returns
// (it is exact too, so anything under 1.0 is a bug the benchmark would show). With a narrower
// `--datatype` the index scores its converted posting values: the truth is then the exact scan
// of a float32 index of the same documents, and recall shows what the conversion costs.

import { Bitset, SparseIndex, type SortedSparse, type SparseDatatype, type SparseSearchResult } from '../engine/index.js';
import { sparseModule } from '../runtime/wasm-module.js';
import type { Progress } from './progress.js';
import { SparseGenerator } from './sparse-data.js';
import { quantile } from './sweep.js';
import { seededRandom } from './synthetic.js';

export interface SparseBenchOptions {
  documents: number;
  queries: number;
  vocabulary: number;
  documentNonZeros: number;
  queryNonZeros: number;
  k: number;
  seed: number;
  /** Shares of the documents a filter lets through, one filtered run each (1 = no filter). */
  filters: number[];
  /** Timed passes per row; the fastest counts. */
  repeats: number;
  /** How the index stores posting values (Qdrant's sparse index datatype). */
  datatype: SparseDatatype;
}

export interface SparseRow {
  /** "pruned" (posting lists with max-score pruning) or "exact scan" (every allowed document). */
  path: string;
  /** Share of documents the filter allows; 1 without a filter. */
  filter: number;
  allowed: number;
  /** Share of the exact float32 scan's top-k offsets the row returned (recall@k against it). */
  recall: number;
  /** Queries whose offsets and scores equal the exact float32 scan's, out of `queries`. */
  identical: number;
  queries: number;
  qps: number;
  p50Ms: number;
  p99Ms: number;
}

export interface SparseBenchReport {
  postings: number;
  terms: number;
  buildSeconds: number;
  memoryBytes: number;
  /** Posting lists and stored vectors by capacity. */
  dataBytes: number;
  /** Posting lists alone (what the datatype changes). */
  postingBytes: number;
  imageBytes: number;
  serializeSeconds: number;
  loadSeconds: number;
  rows: SparseRow[];
}

/** One timed pass: results and per-query milliseconds. */
function timedPass(index: SparseIndex, queries: SortedSparse[], run: (index: SparseIndex, q: SortedSparse) => SparseSearchResult): { results: SparseSearchResult[]; ms: number[]; seconds: number } {
  const results: SparseSearchResult[] = [];
  const ms: number[] = [];
  const started = performance.now();
  for (const q of queries) {
    const t0 = performance.now();
    results.push(run(index, q));
    ms.push(performance.now() - t0);
  }
  return { results, ms, seconds: (performance.now() - started) / 1000 };
}

function row(path: string, filter: number, allowed: number, pass: ReturnType<typeof timedPass>, exact: SparseSearchResult[], k: number): SparseRow {
  let hits = 0;
  let identical = 0;
  pass.results.forEach((r, q) => {
    const truth = new Set(exact[q].offsets);
    for (const o of r.offsets.subarray(0, k)) if (truth.has(o)) hits++;
    if (r.offsets.join() === exact[q].offsets.join() && r.scores.join() === exact[q].scores.join()) identical++;
  });
  const expected = exact.reduce((n, r) => n + Math.min(k, r.offsets.length), 0);
  const sorted = [...pass.ms].sort((a, b) => a - b);
  return {
    path, filter, allowed,
    recall: expected === 0 ? 1 : hits / expected,
    identical, queries: pass.results.length,
    qps: pass.results.length / pass.seconds,
    p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99),
  };
}

/** The fastest of `repeats` passes (after one untimed warm-up pass). */
function bestPass(repeats: number, index: SparseIndex, queries: SortedSparse[], run: (index: SparseIndex, q: SortedSparse) => SparseSearchResult): ReturnType<typeof timedPass> {
  timedPass(index, queries.slice(0, Math.min(20, queries.length)), run);
  let best = timedPass(index, queries, run);
  for (let i = 1; i < repeats; i++) {
    const next = timedPass(index, queries, run);
    if (next.seconds < best.seconds) best = next;
  }
  return best;
}

export async function sparseBench(options: SparseBenchOptions, progress: Progress): Promise<SparseBenchReport> {
  const docs = new SparseGenerator({ vocabulary: options.vocabulary, nonZeros: options.documentNonZeros, seed: options.seed });
  const qgen = new SparseGenerator({ vocabulary: options.vocabulary, nonZeros: options.queryNonZeros, seed: options.seed + 1 });
  const queries = Array.from({ length: options.queries }, () => qgen.vector());

  const gen = progress.start(`generating ${options.documents} documents (~${options.documentNonZeros} non-zeros of ${options.vocabulary} terms)`, options.documents);
  const data: SortedSparse[] = [];
  let postings = 0;
  for (let i = 0; i < options.documents; i++) {
    const d = docs.vector();
    postings += d.indices.length;
    data.push(d);
    gen.tick();
  }
  gen.done();

  // Threshold 0: every filtered search below goes through the posting lists; the exact rows ask for the scan.
  const module = await sparseModule();
  const index = await SparseIndex.create(module, { fullScanThreshold: 0, datatype: options.datatype });
  index.reserve(options.documents);
  const build = progress.start('building the sparse index', options.documents);
  const started = performance.now();
  for (let i = 0; i < data.length; i++) {
    index.upsert(i, data[i]);
    build.tick();
  }
  const buildSeconds = (performance.now() - started) / 1000;
  build.done();

  let t0 = performance.now();
  const image = index.serialize();
  const serializeSeconds = (performance.now() - t0) / 1000;
  t0 = performance.now();
  await SparseIndex.load(module, image, { datatype: options.datatype });
  const loadSeconds = (performance.now() - t0) / 1000;

  // The float32 truth, built aside only when the index converts its values.
  let truthIndex = index;
  if (options.datatype !== 'float32') {
    truthIndex = await SparseIndex.create(module, { fullScanThreshold: 0 });
    truthIndex.reserve(options.documents);
    data.forEach((d, i) => truthIndex.upsert(i, d));
  }

  const rows: SparseRow[] = [];
  const k = options.k;
  for (const share of options.filters) {
    const next = seededRandom(options.seed + Math.round(share * 1e6));
    const filter = share >= 1 ? undefined : Bitset.of(options.documents, [...Array(options.documents).keys()].filter(() => next() < share));
    const allowed = filter ? filter.count() : options.documents;
    const task = progress.start(`${queries.length} queries, ${filter ? `filter ${share * 100}%` : 'no filter'} (${allowed} points): pruned and exact scan`, 2);
    const exact = bestPass(options.repeats, index, queries, (ix, q) => ix.search(q, { limit: k, filter, exact: true }));
    task.tick();
    const pruned = bestPass(options.repeats, index, queries, (ix, q) => ix.search(q, { limit: k, filter }));
    task.done();
    const truth = truthIndex === index ? exact.results : queries.map((q) => truthIndex.search(q, { limit: k, filter, exact: true }));
    rows.push(row('pruned', share, allowed, pruned, truth, k));
    rows.push(row('exact scan', share, allowed, exact, truth, k));
  }
  return { postings, terms: index.termCount, buildSeconds, memoryBytes: index.memoryBytes, dataBytes: index.dataBytes, postingBytes: index.postingBytes, imageBytes: image.byteLength, serializeSeconds, loadSeconds, rows };
}
