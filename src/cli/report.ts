// What a benchmark run leaves behind: the table on stdout (engine mode: and the recall targets
// table, see targets.ts), the JSON result file, and the recall-vs-QPS plot as SVG (and PNG).

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchResult, Series } from '../bench/result.js';
import { recallQpsSvg } from './plot.js';
import { svgToPng } from './png.js';
import { renderTable, type Column } from './table.js';
import { componentBytes } from '../engine/index.js';

const mb = (bytes: number | null) => (bytes === null ? '-' : (bytes / 2 ** 20).toFixed(1));

export function resultTable(result: BenchResult): string {
  if (result.mode === 'ingest') {
    const columns: Column[] = [
      { title: 'wait', align: 'left' }, { title: 'batch', align: 'right' }, { title: 'concurrency', align: 'right' }, { title: 'points', align: 'right' },
      { title: 'upload s', align: 'right' }, { title: 'points/s', align: 'right' }, { title: 'searchable s', align: 'right' }, { title: `recall@${result.k}`, align: 'right' },
    ];
    return renderTable(columns, result.ingest.map((r) => [
      String(r.wait), String(r.batchSize), String(r.concurrency), String(r.points), r.uploadSeconds.toFixed(2), r.pointsPerSecond.toFixed(0), r.searchableSeconds.toFixed(2), r.recall.toFixed(4),
    ]));
  }
  const columns: Column[] = [
    { title: 'engine', align: 'left' }, { title: 'm', align: 'right' }, { title: 'ef_c', align: 'right' }, { title: 'ef', align: 'right' },
    { title: `recall@${result.k}`, align: 'right' }, { title: 'QPS', align: 'right' }, { title: 'p50 ms', align: 'right' }, { title: 'p99 ms', align: 'right' },
    { title: result.mode === 'engine' || result.mode === 'multivector' ? 'build s' : 'load s', align: 'right' }, { title: 'memory MB', align: 'right' },
    { title: 'B/point', align: 'right' },
  ];
  // Memory per point: the index's whole memory (vectors, graph, codes) over the base set.
  const perPoint = (bytes: number | null) => (bytes === null ? '-' : (bytes / result.dataset.base).toFixed(0));
  const rows = result.series.flatMap((s) => s.points.map((p) => [
    s.engine, s.m === null ? '-' : String(s.m), s.efConstruct === null ? '-' : String(s.efConstruct), p.ef === null ? '-' : String(p.ef),
    p.recall.toFixed(4), p.qps.toFixed(0), p.p50Ms.toFixed(3), p.p99Ms.toFixed(3), s.buildSeconds.toFixed(1), mb(s.memoryBytes), perPoint(s.memoryBytes),
  ]));
  return renderTable(columns, rows);
}

/** Throughput lines under the table: the exact scans' bandwidth, multivector graphs against their exact scan. */
export function comparisons(result: BenchResult): string[] {
  const lines: string[] = [];
  if (result.mode === 'multivector' && result.multivector) {
    const bytesPerQuery = result.multivector.vectors * result.dataset.dim * 4;
    for (const s of result.series.filter((o) => o.m === null)) lines.push(`${s.engine}: scans ${((s.points[0].qps * bytesPerQuery) / 1e9).toFixed(1)} GB/s of f32 vectors, ${((s.points[0].qps * bytesPerQuery * result.multivector.queryK) / (result.dataset.dim * 4) / 1e9).toFixed(2)} G vector pairs/s (one thread)`);
    const exact = result.series.find((o) => o.m === null);
    for (const graph of result.series.filter((o) => o.m !== null)) {
      if (exact) for (const p of graph.points) lines.push(`${graph.engine} ef ${p.ef}: ${(p.qps / exact.points[0].qps).toFixed(1)}x the exact scan's QPS at recall@${result.k} ${p.recall.toFixed(4)}`);
    }
  }
  if (result.mode === 'engine') {
    for (const s of result.series.filter((o) => o.m === null)) {
      const datatype = s.datatype ?? 'float32';
      const bytesPerQuery = result.dataset.base * componentBytes(datatype, result.dataset.dim);
      lines.push(`${s.engine}: scans ${((s.points[0].qps * bytesPerQuery) / 1e9).toFixed(1)} GB/s of ${datatype === 'float32' ? 'f32' : datatype} vectors (one thread)`);
    }
  }
  return lines;
}

export function heading(result: BenchResult): string {
  const d = result.dataset;
  if (result.multivector) {
    const mv = result.multivector;
    const per = mv.minK === mv.maxK ? `${mv.maxK}` : `${mv.minK}..${mv.maxK}`;
    return `${result.mode} mode on ${result.target}: ${d.name}, ${d.base} points x ${per} vectors (${mv.vectors} in all) x ${d.dim} ${d.distance} MaxSim, ${d.queries} queries of ${mv.queryK} vectors, k=${result.k}`;
  }
  const clock = result.clock === 'cpu' ? ', QPS by CPU time' : '';
  return `${result.mode} mode on ${result.target}: ${d.name}, ${d.base} x ${d.dim} ${d.distance}, ${d.queries} queries, k=${result.k}${clock}`;
}

export interface WrittenFiles {
  json: string;
  svg: string | null;
  png: string | null;
}

export async function writeResult(result: BenchResult, dir: string): Promise<WrittenFiles> {
  await mkdir(dir, { recursive: true });
  const stem = join(dir, `${result.mode}-${result.dataset.name}-${result.startedAt.replace(/[:.]/g, '-')}`);
  await writeFile(`${stem}.json`, JSON.stringify(result, null, 2) + '\n');
  if (result.series.length === 0) return { json: `${stem}.json`, svg: null, png: null };
  const d = result.dataset;
  await writeFile(`${stem}.svg`, recallQpsSvg(`${d.name} (${d.base} x ${d.dim}, ${result.mode} mode)`, result.k, result.series));
  const converter = await svgToPng(`${stem}.svg`, `${stem}.png`);
  return { json: `${stem}.json`, svg: `${stem}.svg`, png: converter ? `${stem}.png` : null };
}
