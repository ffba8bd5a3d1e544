// Server mode's hot-path table (issue 16's rows) and the lines under it: the recall check, and the
// served queries per second against the same data's in-process engine.

import type { HotPath, LoadRow } from '../bench/result.js';
import { renderTable, type Column } from './table.js';

const fixed = (value: number | null, digits: number) => (value === null ? '-' : value.toFixed(digits));

/** What the row's last column says: the open loop's accounting, or the start-up time. */
function note(row: LoadRow): string {
  if (row.openLoop) {
    const o = row.openLoop;
    return `offered ${o.rate}/s: ${o.completed} of ${o.scheduled} answered, ${o.late} late, ${o.dropped} dropped, max ${fixed(o.maxMs, 1)} ms`;
  }
  if (row.readyMs !== undefined) return `ready after ${row.readyMs.toFixed(0)} ms`;
  if (row.load === 'http-floor') return `bare Fastify, ten canned hits (no validation, no engine): its CPU ${fixed(row.serverCpuPerRequestUs ?? null, 0)} us per request`;
  return '';
}

export function hotPathTable(hot: HotPath): string {
  const right = (title: string): Column => ({ title, align: 'right' });
  const columns: Column[] = [
    { title: 'load', align: 'left' }, right('requests'), right('req/s'), right('per s'), { title: 'of', align: 'left' },
    right('p50 ms'), right('p99 ms'), right('generator CPU'), { title: 'note', align: 'left' },
  ];
  return renderTable(columns, hot.rows.map((row) => [
    row.load, row.readyMs === undefined ? String(row.requests) : '-', row.readyMs === undefined ? row.requestsPerSecond.toFixed(0) : '-',
    fixed(row.perSecond, 0), row.unit ?? '-', fixed(row.p50Ms, 2), fixed(row.p99Ms, 2),
    row.generatorCpu === null ? '-' : `${(row.generatorCpu * 100).toFixed(0)}%`, note(row),
  ]));
}

export function hotPathLines(hot: HotPath, k: number): string[] {
  const lines = [
    `one collection of ${hot.shards} shards, m=${hot.m}, ef_construct=${hot.efConstruct}, hnsw_ef=${hot.ef}, ${hot.connections} keep-alive connections; generator CPU is this process's (100% = one core)`,
    `machine load average as the loads began: ${hot.loadAverage.map((l) => l.toFixed(2)).join(', ')} (1, 5, 15 min)`,
    `recall@${k} of single queries over HTTP: ${hot.recall.toFixed(4)}`,
    `${hot.engine.name} in this process, one thread, same data and graph parameters: ${hot.engine.qps.toFixed(0)} queries/s (${hot.engine.cpuQps.toFixed(0)} per CPU second), recall@${k} ${hot.engine.recall.toFixed(4)}`,
  ];
  if (hot.servedToEngine !== null) lines.push(`served single queries/s over in-process queries/s: ${(hot.servedToEngine * 100).toFixed(1)}%`);
  if (hot.singleQueryCeiling !== null) lines.push(`single queries/s this machine could serve at most here (cores / (generator + floor server CPU per request + ${hot.shards} in-process searches)): ${hot.singleQueryCeiling.toFixed(0)}`);
  if (hot.servedToFloor !== null) lines.push(`served single queries/s over the HTTP floor's (bare Fastify, canned answer, same generator): ${(hot.servedToFloor * 100).toFixed(1)}%`);
  return lines;
}
