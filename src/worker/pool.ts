// The shard workers: one Piscina pool of exactly one thread per worker, so that a task can be
// sent to the thread that owns its shard (a plain pool would hand it to any idle thread).

import { Piscina } from 'piscina';
import { fromWire, ServiceError } from '../errors.js';
import type { Deadline } from '../shard/deadline.js';
import type { ShardTask, TaskMessage, TaskReply, TaskResults } from './tasks.js';

const WORKER_FILE = new URL('./shard-worker.ts', import.meta.url).href;

export class ShardWorkers {
  private readonly pools: Piscina[];

  constructor(readonly count: number) {
    this.pools = Array.from({ length: count }, () => new Piscina({
      filename: WORKER_FILE,
      minThreads: 1,
      maxThreads: 1,
      concurrentTasksPerWorker: 1,
      idleTimeout: Infinity,
      // An idle worker must keep its event loop running: shard optimizers work between tasks.
      atomics: 'disabled',
    }));
  }

  /** Runs `task` in its worker; with a deadline, the worker refuses it or stops it once it passes. */
  async run<T extends ShardTask>(worker: number, task: T, deadline: Deadline | null = null): Promise<TaskResults[T['type']]> {
    let reply: TaskReply<TaskResults[T['type']]>;
    try {
      reply = await this.pools[worker].run({ task, deadline } satisfies TaskMessage);
    } catch (err) {
      throw new ServiceError(err instanceof Error ? err.message : String(err));
    }
    if ('error' in reply) throw fromWire(reply.error);
    return reply.ok;
  }

  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.destroy()));
  }
}
