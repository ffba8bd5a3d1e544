// Each engine at the recall targets of issue 15 (recall@k 0.90 / 0.95 / 0.99): its QPS there,
// read off its ef sweep, and the ratio to hnswlib-node's QPS at the same recall in the same run,
// with build time and index size per vector next to them.
//
// A sweep measures a few efs, and two engines rarely land on the same recall, so comparing the
// fastest points that reach a target compares a 0.9934 with a 0.9926. Instead the QPS at the
// target is interpolated on the series' Pareto frontier (what the plot draws) between the last
// point below the target and the first at or above it, linearly in recall and log QPS (QPS falls
// roughly exponentially as recall rises). When the sweep's first frontier point already reaches
// the target, its QPS is taken as is (no extrapolation: the engine may be faster at the target).

import { RECALL_TARGETS } from '../bench/recall.js';
import type { BenchResult, Series } from '../bench/result.js';
import type { SweepPoint } from '../bench/sweep.js';
import { paretoFrontier, seriesLabel } from './plot.js';
import { renderTable, type Column } from './table.js';

/** The hnswlib-node series' name, the peer every ratio is taken against. */
export const PEER = 'hnswlib-node';

export interface AtTarget {
  qps: number;
  /** The efs of the frontier points the QPS comes from: one when a measured point gives it, two when interpolated. */
  efs: (number | null)[];
}

/** QPS of `points` at recall `target` (see the head of this module), or null when no point reaches it. */
export function qpsAtRecall(points: readonly SweepPoint[], target: number): AtTarget | null {
  const front = paretoFrontier(points);
  const hi = front.findIndex((p) => p.recall >= target);
  if (hi < 0) return null;
  const above = front[hi];
  if (hi === 0 || above.recall === target) return { qps: above.qps, efs: [above.ef] };
  const below = front[hi - 1];
  const t = (target - below.recall) / (above.recall - below.recall);
  return { qps: Math.exp(Math.log(below.qps) + t * (Math.log(above.qps) - Math.log(below.qps))), efs: [below.ef, above.ef] };
}

/**
 * Index bytes per base vector, and relative to a float32 vector (dim x 4 bytes); `ram` is the
 * memory the built index holds per vector (Quiver's linear memory: with cold originals, what
 * stays resident), relative to a float32 vector too.
 */
function perVector(s: Series, result: BenchResult): { total: number; withoutVectors: number; ofF32: number; ram: number | null; ramOfF32: number | null } | null {
  if (!s.indexBytes) return null;
  const n = result.dataset.base;
  const f32 = result.dataset.dim * 4;
  const total = s.indexBytes.total / n;
  const ram = s.memoryBytes === null ? null : s.memoryBytes / n;
  return { total, withoutVectors: (s.indexBytes.total - s.indexBytes.vectors) / n, ofF32: total / f32, ram, ramOfF32: ram === null ? null : ram / f32 };
}

export interface TargetRow {
  series: Series;
  label: string;
  /** Per RECALL_TARGETS entry: the series' QPS there and its ratio to the peer's (null when either misses it). */
  targets: { at: AtTarget | null; ratio: number | null }[];
  buildRatio: number | null;
}

/** One row per graph series (exact scans have no sweep), each against the peer with the same m and ef_construct. */
export function targetRows(result: BenchResult): TargetRow[] {
  return result.series.filter((s) => s.m !== null).map((s) => {
    const peer = result.series.find((o) => o.engine === PEER && o.m === s.m && o.efConstruct === s.efConstruct) ?? null;
    return {
      series: s,
      label: seriesLabel(s, result.series),
      buildRatio: peer ? s.buildSeconds / peer.buildSeconds : null,
      targets: RECALL_TARGETS.map((target) => {
        const at = qpsAtRecall(s.points, target);
        const theirs = peer ? qpsAtRecall(peer.points, target) : null;
        return { at, ratio: at && theirs ? at.qps / theirs.qps : null };
      }),
    };
  });
}

export function targetsTable(result: BenchResult): string {
  const right = (title: string): Column => ({ title, align: 'right' });
  const columns: Column[] = [
    { title: 'engine', align: 'left' }, right('build s'), right(`build x ${PEER}`), right('B/vector'), right('x f32'), right('codes+graph B/vector'), right('RAM B/vector'), right('RAM x f32'),
    ...RECALL_TARGETS.flatMap((target) => [right(`QPS @${target.toFixed(2)}`), right('ef'), right(`x ${PEER}`)]),
  ];
  const rows = targetRows(result).map((row) => {
    const size = perVector(row.series, result);
    return [
      row.label, row.series.buildSeconds.toFixed(1), row.buildRatio === null ? '-' : `${row.buildRatio.toFixed(2)}x`,
      size ? size.total.toFixed(0) : '-', size ? size.ofF32.toFixed(3) : '-', size ? size.withoutVectors.toFixed(0) : '-',
      size?.ram != null ? size.ram.toFixed(0) : '-', size?.ramOfF32 != null ? size.ramOfF32.toFixed(3) : '-',
      ...row.targets.flatMap(({ at, ratio }) => [at ? at.qps.toFixed(0) : '-', at ? at.efs.join('-') : '-', ratio === null ? '-' : `${ratio.toFixed(2)}x`]),
    ];
  });
  return renderTable(columns, rows);
}
