// One shard worker thread kept alive. The supervisor runs the thread's tasks one at a time (updates
// queued one behind another go together, as one batch: see UpdateBatch) and
// remembers which shards the thread owns (from the open, reopen, restore, close and drop tasks
// that succeeded). When the thread dies (an uncaught error, its memory limit), traps in
// WebAssembly (its shards' engine memory can no longer be trusted) or overruns its watchdog (a read
// past its deadline plus a grace period, any task past a hard bound), the task it was running
// fails with a 500, the thread is terminated and replaced, and the owned shards are opened again
// from storage in the new thread before the tasks waiting behind run there. Storage holds every
// acknowledged write (each is one synced batch), so nothing acknowledged is lost.

import { Piscina } from 'piscina';
import { fromWire, ServiceError } from '../errors.js';
import type { ShardSpec } from '../shard/shard.js';
import type { Deadline } from '../shard/deadline.js';
import { isUpdateTask, type ShardTask, type TaskMessage, type TaskReply, type UpdateBatch, type UpdateBatchReply, type WorkerSettings } from './tasks.js';

// The worker's module beside this one: shard-worker.ts from source, shard-worker.js in the
// server bundle (build/server, where this code is part of main.js).
const WORKER_FILE = new URL(`./shard-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href;

/**
 * Replacement threads started in a row with no task answered in between (each reopening every
 * owned shard) before the waiting tasks are failed; the next task tries again. A thread that
 * cannot even start is so not respawned forever.
 */
const RESTART_ATTEMPTS = 3;

/** Most updates sent in one batch: enough to share a synced write widely, few enough to answer the first soon. */
const MAX_BATCH = 64;

/** Quiver's own settings (`worker_limits` in the configuration). */
export interface WorkerLimits {
  /** Heap limit of each worker thread in MiB (V8's old generation); null leaves V8's default. */
  memory_mb: number | null;
  /** Longest any task may run before its worker is replaced. */
  task_timeout_sec: number;
  /** How long a read may run past its request's deadline before its worker is replaced. */
  deadline_grace_sec: number;
}

export const DEFAULT_WORKER_LIMITS: WorkerLimits = { memory_mb: null, task_timeout_sec: 600, deadline_grace_sec: 5 };

export interface SupervisorOptions {
  limits: WorkerLimits;
  settings: WorkerSettings;
  /** Told of each failure, before the replacement starts. */
  onFault: (reason: string) => void;
}

/** A reply that is not a fault: the supervisor turns faults into errors. */
export type SettledReply = Exclude<TaskReply<unknown>, { fault: string }>;

interface Thread {
  pool: Piscina;
  /** Settles once the thread has exited, and so has closed the stores it had open. */
  exited: Promise<void>;
  /** Set by the first call to end(): Piscina's destroy() must not run twice on a pool at once. */
  ended: Promise<void> | null;
}

/** Terminates the thread (and any replacement Piscina started on its own), once it has exited. */
function end(thread: Thread): Promise<void> {
  thread.ended ??= thread.pool.destroy().then(() => thread.exited);
  return thread.ended;
}

interface Waiting {
  message: TaskMessage;
  resolve(reply: SettledReply): void;
  reject(err: Error): void;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class WorkerSupervisor {
  private thread: Thread;
  /** Shard key -> the spec it was last opened with. */
  private readonly owned = new Map<string, ShardSpec>();
  private readonly waiting: Waiting[] = [];
  private draining = false;
  /** Why the current thread can no longer be used; null while it is healthy. */
  private failure: string | null = null;
  /** Replacement threads started since a thread last answered a task. */
  private restarts = 0;
  private closed = false;

  constructor(readonly index: number, private readonly options: SupervisorOptions) {
    this.thread = this.spawn();
  }

  /** Queues a task; it runs after those queued before it, on a healthy thread. */
  run(message: TaskMessage): Promise<SettledReply> {
    if (this.closed) return Promise.reject(new ServiceError('the node is shutting down'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ message, resolve, reject });
      void this.drain();
    });
  }

  /** Ends the thread (a task still running is cut short); later tasks are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.waiting.splice(0)) entry.reject(new ServiceError('the node is shutting down'));
    await end(this.thread);
  }

  private spawn(): Thread {
    const { limits, settings } = this.options;
    const pool = new Piscina({
      filename: WORKER_FILE,
      minThreads: 1,
      maxThreads: 1,
      concurrentTasksPerWorker: 1,
      idleTimeout: Infinity,
      // An idle worker must keep its event loop running: shard optimizers work between tasks.
      atomics: 'disabled',
      workerData: settings,
      ...(limits.memory_mb === null ? {} : { resourceLimits: { maxOldGenerationSizeMb: limits.memory_mb } }),
    });
    const [worker] = pool.threads;
    const thread: Thread = { pool, exited: new Promise((resolve) => worker.once('exit', () => resolve())), ended: null };
    // A thread that dies between tasks (its shard optimizer failed) is noticed here, not by a
    // task; 'error' (an uncaught error, the memory limit) comes before 'exit' and says more.
    worker.once('error', (err) => this.fail(thread, messageOf(err)));
    worker.once('exit', (code) => this.fail(thread, `worker exited with code ${code}`));
    pool.on('error', (err) => this.fail(thread, messageOf(err)));
    return thread;
  }

  /** Marks `thread` failed (once) and terminates it; the drain loop replaces it. */
  private fail(thread: Thread, reason: string): void {
    if (thread !== this.thread || this.failure !== null || this.closed) return;
    this.failure = reason;
    this.options.onFault(reason);
    void end(thread);
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (!this.closed) {
        if (this.failure !== null && !(await this.restart())) break;
        const next = this.waiting.shift();
        if (!next) break;
        if (!isUpdateTask(next.message.task)) {
          await this.execute(next);
          continue;
        }
        const batch = [next];
        while (batch.length < MAX_BATCH && this.waiting.length > 0 && isUpdateTask(this.waiting[0].message.task)) batch.push(this.waiting.shift()!);
        await this.executeUpdates(batch);
      }
    } finally {
      this.draining = false;
    }
  }

  private async execute({ message, resolve, reject }: Waiting): Promise<void> {
    try {
      const reply = await this.call(message, message.deadline);
      this.restarts = 0;
      if ('ok' in reply) this.track(message.task);
      resolve(reply);
    } catch (err) {
      reject(err as Error);
    }
  }

  /** Runs updates as one batch; each is answered with its own reply (updates change no ownership). */
  private async executeUpdates(batch: Waiting[]): Promise<void> {
    const message: UpdateBatch = { updates: batch.map((w) => w.message.task).filter(isUpdateTask) };
    try {
      const { replies } = await this.call<UpdateBatchReply>(message, null);
      this.restarts = 0;
      batch.forEach((w, i) => w.resolve(replies[i]));
    } catch (err) {
      for (const w of batch) w.reject(err as Error);
    }
  }

  /** Keeps the list of owned shards as tasks that open or close them succeed. */
  private track(task: ShardTask): void {
    if (task.type === 'open' || task.type === 'reopen' || task.type === 'restore') this.owned.set(task.shard, task.spec);
    else if (task.type === 'close' || task.type === 'drop') this.owned.delete(task.shard);
  }

  /** Runs one message on the current thread under the watchdog; a fault fails the thread and the message. */
  private async call<R extends object = TaskReply<unknown>>(message: TaskMessage | UpdateBatch, deadline: Deadline | null): Promise<Exclude<R, { fault: string }>> {
    const thread = this.thread;
    const { limits } = this.options;
    const hardMs = limits.task_timeout_sec * 1000;
    const graceMs = deadline ? Math.max(0, deadline.at - Date.now()) + limits.deadline_grace_sec * 1000 : Infinity;
    let overrun: string | null = null;
    const watchdog = setTimeout(() => {
      overrun = graceMs < hardMs
        ? `a read ran more than ${limits.deadline_grace_sec}s past its deadline`
        : `a task ran longer than ${limits.task_timeout_sec}s`;
      this.fail(thread, overrun);
    }, Math.min(hardMs, graceMs));
    let reply: R | { fault: string };
    try {
      reply = await thread.pool.run(message);
    } catch (err) {
      // The pool rejects only when the thread is gone: the worker answers every task it finishes.
      reply = { fault: overrun ?? messageOf(err) };
    } finally {
      clearTimeout(watchdog);
    }
    if ('fault' in reply) {
      this.fail(thread, reply.fault);
      throw new ServiceError(`shard worker ${this.index} failed: ${reply.fault}`);
    }
    return reply as Exclude<R, { fault: string }>;
  }

  /**
   * Replaces the failed thread and opens every owned shard from storage in the new one. True once
   * that worked; false once RESTART_ATTEMPTS threads failed in a row, with every waiting task
   * failed.
   */
  private async restart(): Promise<boolean> {
    let reason = this.failure!;
    while (this.restarts < RESTART_ATTEMPTS && !this.closed) {
      this.restarts++;
      // Only an exited thread has released its stores, which the new one is about to open.
      await end(this.thread);
      if (this.closed) break;
      this.thread = this.spawn();
      this.failure = null;
      try {
        for (const [shard, spec] of this.owned) {
          const reply = await this.call({ task: { type: 'open', shard, spec }, deadline: null }, null);
          if ('error' in reply) throw fromWire(reply.error);
        }
        return true;
      } catch (err) {
        reason = messageOf(err);
        this.failure ??= reason;
      }
    }
    this.restarts = 0;
    const error = new ServiceError(`shard worker ${this.index} could not be restarted: ${reason}`);
    for (const entry of this.waiting.splice(0)) entry.reject(error);
    return false;
  }
}
