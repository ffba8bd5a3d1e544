// What a shard's optimizer reports (plain data, so it crosses the worker boundary): running,
// queued and completed optimizations, idle segments. A "segment" here is one named vector's index
// in one shard; its uuid changes each time an optimization rebuilds it, as Qdrant's segments do.

import type { OptimizerName } from './plan.js';

export interface SegmentReport {
  uuid: string;
  /** Live points in the segment. */
  points: number;
}

/** One step of an optimization and its sub-steps; times are epoch milliseconds. */
export interface ProgressStep {
  name: string;
  startedAt: number | null;
  finishedAt: number | null;
  done: number | null;
  total: number | null;
  children: ProgressStep[];
}

export type OptimizationStatus = 'optimizing' | 'done' | { cancelled: string } | { error: string };

export interface OptimizationReport {
  uuid: string;
  optimizer: OptimizerName;
  status: OptimizationStatus;
  segments: SegmentReport[];
  progress: ProgressStep;
}

export interface QueuedReport {
  optimizer: OptimizerName;
  segments: SegmentReport[];
}

export interface ShardOptimizations {
  running: OptimizationReport[];
  queued: QueuedReport[];
  /** Most recent first. */
  completed: OptimizationReport[];
  idle: SegmentReport[];
  /** Vectors linked into graphs, over every named vector. */
  indexedVectors: number;
  /** Set once an optimization failed; the optimizer stops until the shard is reopened. */
  error: string | null;
  /** Optimizations are disabled (max_optimization_threads = 0), so queued ones wait. */
  disabled: boolean;
}

export function step(name: string, total: number | null = null): ProgressStep {
  return { name, startedAt: Date.now(), finishedAt: null, done: total === null ? null : 0, total, children: [] };
}

export function finish(progress: ProgressStep): void {
  progress.finishedAt ??= Date.now();
  for (const child of progress.children) child.finishedAt ??= progress.finishedAt;
}
