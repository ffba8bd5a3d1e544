// Qdrant's optimization progress JSON (GET /collections/{name}/optimizations) and the collection
// status it implies, from the reports of every shard's optimizer.

import type { JsonValue } from '../model.js';
import type { OptimizationReport, ProgressStep, SegmentReport, ShardOptimizations } from '../shard/optimizer/report.js';

export type OptimizationsField = 'queued' | 'completed' | 'idle_segments';

export interface CollectionHealth {
  status: 'green' | 'yellow' | 'grey' | 'red';
  /** The first optimizer error of any shard; null when every optimizer is fine. */
  optimizerError: string | null;
}

/**
 * Red once an optimization failed; yellow while one runs or waits to run; grey when some are
 * needed but optimizations are disabled (max_optimization_threads = 0); green otherwise.
 */
export function collectionHealth(shards: ShardOptimizations[]): CollectionHealth {
  const optimizerError = shards.find((s) => s.error !== null)?.error ?? null;
  if (optimizerError !== null) return { status: 'red', optimizerError };
  if (shards.some((s) => s.running.length > 0 || (s.queued.length > 0 && !s.disabled))) return { status: 'yellow', optimizerError };
  if (shards.some((s) => s.queued.length > 0)) return { status: 'grey', optimizerError };
  return { status: 'green', optimizerError };
}

export function renderOptimizations(shards: ShardOptimizations[], include: ReadonlySet<OptimizationsField>, completedLimit: number): Record<string, JsonValue> {
  const queued = shards.flatMap((s) => s.queued);
  const idle = shards.flatMap((s) => s.idle);
  const out: Record<string, JsonValue> = {
    summary: {
      queued_optimizations: queued.length,
      queued_segments: queued.reduce((n, q) => n + q.segments.length, 0),
      queued_points: queued.reduce((n, q) => n + q.segments.reduce((m, s) => m + s.points, 0), 0),
      idle_segments: idle.length,
    },
    running: shards.flatMap((s) => s.running).map(renderOptimization),
  };
  if (include.has('queued')) out.queued = queued.map((q) => ({ optimizer: q.optimizer, segments: q.segments.map(renderSegment) }));
  if (include.has('completed')) {
    const completed = shards.flatMap((s) => s.completed).sort((a, b) => (b.progress.finishedAt ?? 0) - (a.progress.finishedAt ?? 0));
    out.completed = completed.slice(0, completedLimit).map(renderOptimization);
  }
  if (include.has('idle_segments')) out.idle_segments = idle.map(renderSegment);
  return out;
}

function renderSegment(segment: SegmentReport): Record<string, JsonValue> {
  return { uuid: segment.uuid, points_count: segment.points };
}

function renderOptimization(o: OptimizationReport): Record<string, JsonValue> {
  return { uuid: o.uuid, optimizer: o.optimizer, status: o.status, segments: o.segments.map(renderSegment), progress: renderProgress(o.progress) };
}

function renderProgress(step: ProgressStep): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = { name: step.name };
  if (step.startedAt !== null) out.started_at = new Date(step.startedAt).toISOString();
  if (step.finishedAt !== null) {
    out.finished_at = new Date(step.finishedAt).toISOString();
    if (step.startedAt !== null) out.duration_sec = (step.finishedAt - step.startedAt) / 1000;
  }
  if (step.done !== null) out.done = step.done;
  if (step.total !== null) out.total = step.total;
  if (step.children.length > 0) out.children = step.children.map(renderProgress);
  return out;
}
