// The shard workers: one supervised thread per worker (src/worker/supervisor.ts), so that a task
// can be sent to the thread that owns its shard and a failed thread is replaced with its shards.

import { fromWire } from '../errors.js';
import type { Deadline } from '../shard/deadline.js';
import { HardwareLedger } from './hardware-ledger.js';
import { DEFAULT_WORKER_LIMITS, WorkerSupervisor, type WorkerLimits } from './supervisor.js';
import type { ShardTask, TaskResults } from './tasks.js';

export interface ShardWorkerOptions {
  limits: WorkerLimits;
  /** Test-only fault injection (src/worker/faults.ts). */
  faults: boolean;
}

/** Told which worker failed and why, as its replacement starts. */
export type FaultListener = (worker: number, reason: string) => void;

export class ShardWorkers {
  private readonly supervisors: WorkerSupervisor[];
  private readonly listeners: FaultListener[] = [];
  /** What the tasks used, per collection and per request. */
  readonly hardware = new HardwareLedger();

  constructor(readonly count: number, options: ShardWorkerOptions = { limits: DEFAULT_WORKER_LIMITS, faults: false }) {
    this.supervisors = Array.from({ length: count }, (_, i) => new WorkerSupervisor(i, {
      limits: options.limits,
      settings: { faults: options.faults },
      onFault: (reason) => {
        for (const listener of this.listeners) listener(i, reason);
      },
    }));
  }

  onFault(listener: FaultListener): void {
    this.listeners.push(listener);
  }

  /**
   * Runs `task` in its worker; with a deadline, the worker refuses it or stops it once it passes.
   * A task whose worker fails under it is answered with a ServiceError (500). What the task used
   * is recorded for `collection` (see HardwareLedger).
   */
  async run<T extends ShardTask>(worker: number, task: T, deadline: Deadline | null = null, collection?: string): Promise<TaskResults[T['type']]> {
    const reply = await this.supervisors[worker].run({ task, deadline });
    if (collection !== undefined) this.hardware.record(collection, reply);
    if ('error' in reply) throw fromWire(reply.error);
    return reply.ok as TaskResults[T['type']];
  }

  /** Ends every worker thread (tasks still running are cut short; each thread closes its stores as it exits). */
  async close(): Promise<void> {
    await Promise.all(this.supervisors.map((s) => s.close()));
  }
}
