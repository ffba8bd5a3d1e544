// The background optimizer of one shard. It runs in the shard's worker thread between tasks: each
// step is one slice of at most SLICE_MS scheduled with setImmediate, so reads and writes queued
// behind it wait for one slice at most, never for a whole build. Searches stay exact throughout:
// a vector not linked yet is scanned exactly (see assembly/hnsw.ts), a linked one is found through
// the graph. An indexing optimization first trains the quantization codebook when it is due
// (product k-means, TurboQuant calibration: assembly/training.ts), a step at a time, as Qdrant
// trains a segment's quantization when it builds it; until the fit is installed the index keeps
// the codebook it has. One optimization runs at a time per shard; each ends by persisting the graphs.

import { v4 as randomUUID } from 'uuid';
import type { VectorIndex } from '../../engine/index.js';
import { plannedOptimization, type IndexCounts, type OptimizerName, type OptimizerSpec } from './plan.js';
import { finish, step, type OptimizationReport, type ProgressStep, type SegmentReport, type ShardOptimizations } from './report.js';

/** Longest stretch of linking before the worker serves its queued tasks. */
const SLICE_MS = 20;
/** Vectors linked per engine call inside a slice (the clock is read between calls). */
const LINK_CHUNK = 8;
/** Completed optimizations kept per shard. */
const LOG_SIZE = 64;

export interface OptimizerHost {
  /** The shard's vector indexes by name; the same objects for the shard's whole life. */
  readonly vectorIndexes: ReadonlyMap<string, VectorIndex>;
  /** Writes every graph to the shard's store. */
  persistGraphs(): Promise<void>;
}

interface Running {
  vector: string;
  report: OptimizationReport;
  /** The purge of deleted vectors (vacuum only), done in the first slice. */
  purge: ProgressStep | null;
  /** Training the quantization codebook, when one was due. */
  train: ProgressStep | null;
  link: ProgressStep | null;
  persisting: Promise<void> | null;
}

export class ShardOptimizer {
  private readonly segments = new Map<string, string>();
  private readonly log: OptimizationReport[] = [];
  private running: Running | null = null;
  private error: string | null = null;
  private scheduled = false;
  private stopped = false;

  constructor(private readonly host: OptimizerHost, private spec: OptimizerSpec) {}

  configure(spec: OptimizerSpec): void {
    this.spec = spec;
    this.wake();
  }

  /** Starts work if there is some (after a write, a configuration change, an optimization). */
  wake(): void {
    if (this.scheduled || this.stopped || this.error !== null || this.running?.persisting) return;
    if (this.spec.maxOptimizationThreads === 0) return;
    if (!this.running && !this.nextPlan()) return;
    this.scheduled = true;
    setImmediate(() => this.step());
  }

  /** Stops for good (the shard closes): a running optimization is cancelled, a graph being written finishes first. */
  async stop(): Promise<void> {
    this.stopped = true;
    const running = this.running;
    if (!running) return;
    if (running.persisting) {
      await running.persisting;
      return;
    }
    this.end(running, { cancelled: 'shard closed' });
  }

  report(): ShardOptimizations {
    const queued = [];
    const idle = [];
    let indexedVectors = 0;
    for (const [name, index] of this.host.vectorIndexes) {
      indexedVectors += index.linkedCount;
      if (name === this.running?.vector) continue;
      const optimizer = plannedOptimization(countsOf(index), this.spec);
      if (optimizer) queued.push({ optimizer, segments: [this.segment(name, index)] });
      else idle.push(this.segment(name, index));
    }
    return {
      running: this.running ? [this.running.report] : [],
      queued,
      completed: [...this.log],
      idle,
      indexedVectors,
      error: this.error,
      disabled: this.spec.maxOptimizationThreads === 0,
    };
  }

  private nextPlan(): { vector: string; optimizer: OptimizerName } | null {
    for (const [vector, index] of this.host.vectorIndexes) {
      const optimizer = plannedOptimization(countsOf(index), this.spec);
      if (optimizer) return { vector, optimizer };
    }
    return null;
  }

  private segment(name: string, index: VectorIndex): SegmentReport {
    let uuid = this.segments.get(name);
    if (!uuid) this.segments.set(name, (uuid = randomUUID()));
    return { uuid, points: index.size };
  }

  private step(): void {
    this.scheduled = false;
    if (this.stopped) return;
    try {
      this.running ??= this.start();
      if (!this.running) return;
      if (this.slice(this.running)) this.persist(this.running);
      else this.wake();
    } catch (err) {
      this.fail(err);
    }
  }

  private start(): Running | null {
    const plan = this.nextPlan();
    if (!plan) return null;
    const index = this.host.vectorIndexes.get(plan.vector)!;
    const progress = step(plan.optimizer);
    const purge = plan.optimizer === 'vacuum' ? step('purge_deleted', index.deletedCount) : null;
    if (purge) progress.children.push(purge);
    return {
      vector: plan.vector,
      report: { uuid: randomUUID(), optimizer: plan.optimizer, status: 'optimizing', segments: [this.segment(plan.vector, index)], progress },
      purge,
      train: null,
      link: null,
      persisting: null,
    };
  }

  /** One slice of work; true once every vector of the index is linked. */
  private slice(run: Running): boolean {
    const index = this.host.vectorIndexes.get(run.vector)!;
    if (run.purge && run.purge.finishedAt === null) {
      index.vacuum();
      run.purge.done = run.purge.total;
      finish(run.purge);
    }
    const deadline = performance.now() + SLICE_MS;
    if (!run.link && !this.trained(run, index, deadline)) return false;
    if (!run.link) {
      run.link = step('link_vectors', index.pendingCount);
      run.report.progress.children.push(run.link);
      run.report.progress.total = run.link.total;
      run.report.progress.done = 0;
    }
    let linked = 0;
    while (index.pendingCount > 0 && performance.now() < deadline) linked += index.linkPending(LINK_CHUNK);
    // Vectors written meanwhile join this optimization, so its total grows with them.
    run.link.done! += linked;
    run.link.total = run.link.done! + index.pendingCount;
    run.report.progress.done = run.link.done;
    run.report.progress.total = run.link.total;
    if (index.pendingCount > 0) return false;
    index.refitQuantization();
    return true;
  }

  /** Trains the codebook until `deadline`; true once nothing is left to train. */
  private trained(run: Running, index: VectorIndex, deadline: number): boolean {
    let more = index.trainQuantizationStep();
    if (!more && !run.train) return true;
    if (!run.train) {
      run.train = step('train_quantization');
      run.report.progress.children.push(run.train);
    }
    while (more && performance.now() < deadline) more = index.trainQuantizationStep();
    if (more) return false;
    finish(run.train);
    return true;
  }

  private persist(run: Running): void {
    finish(run.link!);
    const persistStep = step('persist_graph');
    run.report.progress.children.push(persistStep);
    run.persisting = this.host.persistGraphs().then(
      () => {
        finish(persistStep);
        this.segments.set(run.vector, run.report.uuid);
        this.end(run, 'done');
        this.wake();
      },
      (err: unknown) => (this.stopped ? this.end(run, { cancelled: 'shard closed' }) : this.fail(err)),
    );
  }

  private fail(err: unknown): void {
    this.error = err instanceof Error ? err.message : String(err);
    if (this.running) this.end(this.running, { error: this.error });
  }

  private end(run: Running, status: OptimizationReport['status']): void {
    run.report.status = status;
    finish(run.report.progress);
    this.log.unshift(run.report);
    this.log.length = Math.min(this.log.length, LOG_SIZE);
    this.running = null;
  }
}

function countsOf(index: VectorIndex): IndexCounts {
  return { vectorBytes: index.componentBytes, live: index.size, pending: index.pendingCount, deleted: index.deletedCount, hasGraph: index.hasGraph };
}
