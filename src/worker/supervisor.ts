// One shard worker thread kept alive. Piscina owns the thread; the supervisor talks to it through
// a MessagePort of its own (handed over in Piscina's one task, see Connect), which the worker
// drains several messages per wake-up. Tasks queued in the same turn of the event loop (requests
// whose bytes came in together) are posted together, as one message: one clone, one wake-up of
// the worker and one 'message' event on each side instead of one per task; the worker still runs
// and answers each on its own, in order. The supervisor sends the thread's tasks one at a time
// (updates queued one behind another go together, as one batch: see UpdateBatch), except that
// reads queued one behind another are sent without waiting for each other's answers (up to
// MAX_READS_SENT): the worker still runs them one at a time, in order. A task that is not a read
// waits until every earlier answer is in, and later tasks wait for it, so writes and reads keep
// the order they were queued in. The supervisor remembers which shards the thread owns (from the
// open, reopen, restore, close and drop tasks that succeeded). When the thread dies (an uncaught
// error, its memory limit), traps in WebAssembly (its shards' engine memory can no longer be
// trusted) or overruns its watchdog (a read past its deadline plus a grace period, any task past a
// hard bound), the task it was running fails with a 500, the thread is terminated and replaced,
// and the owned shards are opened again from storage in the new thread before the tasks waiting
// behind run there (reads already sent but not begun go back to the front of the queue). Storage
// holds every acknowledged write (each is one synced batch), so nothing acknowledged is lost.

import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { fromWire, ServiceError } from '../errors.js';
import type { ShardSpec } from '../shard/shard.js';
import type { Deadline } from '../shard/deadline.js';
import { isReadTask, isUpdateTask, type Answer, type Connect, type Posted, type Sent, type ShardTask, type TaskMessage, type TaskReply, type UpdateBatch, type UpdateBatchReply, type WorkerSettings } from './tasks.js';
import { packTask, unpackReply } from './task-wire.js';

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

/**
 * Most reads in the worker at once: enough that a busy worker finds several per wake-up, few
 * enough that a read is not long behind others once sent.
 */
const MAX_READS_SENT = 16;

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
  /** The supervisor's end of the port every message goes through. */
  port: MessagePort;
  /** Sequence number of the message the worker began last (it writes it as it begins each). */
  begun: Int32Array;
  /** Messages sent and not answered yet, in the order sent. */
  flights: Flight[];
  /** Messages sent and not posted yet (see post()), with the buffers they hand over. */
  outbox: Sent[];
  transfer: ArrayBuffer[];
  /** Settles once the thread has exited, and so has closed the stores it had open. */
  exited: Promise<void>;
  /** Set by the first call to end(): Piscina's destroy() must not run twice on a pool at once. */
  ended: Promise<void> | null;
}

/** Terminates the thread (and any replacement Piscina started on its own), once it has exited. */
function end(thread: Thread): Promise<void> {
  thread.ended ??= thread.pool.destroy().then(() => thread.exited);
  thread.port.close();
  return thread.ended;
}

/** What became of a message: the worker's reply, or the thread failed before answering it. */
type Outcome = { reply: Answer } | { lost: string };

interface Flight {
  seq: number;
  deadline: Deadline | null;
  /** Turns the reply from its wire form (task-wire.ts) back. */
  unpack(reply: Answer): Answer;
  done(outcome: Outcome): void;
  /** A read: when its thread fails before beginning it, it is queued again instead of failed. */
  retry?: Waiting;
}

function faultOf(outcome: Outcome): string | null {
  if ('lost' in outcome) return outcome.lost;
  return 'fault' in outcome.reply ? outcome.reply.fault : null;
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
  /** A drain is scheduled for the end of this turn of the event loop (see run()). */
  private drainScheduled = false;
  /** Told when the current thread answers a message or fails: the drain loop waits for that. */
  private onAnswer: (() => void) | null = null;
  /** Last sequence number sent, across threads. */
  private seq = 0;
  private watchdog: NodeJS.Timeout | null = null;
  /** Why the current thread can no longer be used; null while it is healthy. */
  private failure: string | null = null;
  /** Replacement threads started since a thread last answered a task. */
  private restarts = 0;
  private closed = false;

  constructor(readonly index: number, private readonly options: SupervisorOptions) {
    this.thread = this.spawn();
  }

  /**
   * Queues a task; it runs after those queued before it, on a healthy thread. It is sent once the
   * event loop has run the rest of this turn's callbacks (setImmediate: after the I/O polled with
   * this one), so that the tasks of requests read in the same turn go in one message.
   */
  run(message: TaskMessage): Promise<SettledReply> {
    if (this.closed) return Promise.reject(new ServiceError('the node is shutting down'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ message, resolve, reject });
      if (this.drainScheduled) return;
      this.drainScheduled = true;
      setImmediate(() => {
        this.drainScheduled = false;
        void this.drain();
      });
    });
  }

  /** Ends the thread (a task still running is cut short); later tasks are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.waiting.splice(0)) entry.reject(new ServiceError('the node is shutting down'));
    this.stopWatchdog();
    for (const flight of this.thread.flights.splice(0)) flight.done({ lost: 'the node is shutting down' });
    this.wake();
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
    const { port1, port2 } = new MessageChannel();
    const connect: Connect = { port: port2, begun: new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)) };
    // Its failure is the thread's, which the thread's own events below report.
    pool.run(connect, { transferList: [port2] }).catch(() => undefined);
    const thread: Thread = { pool, port: port1, begun: connect.begun, flights: [], outbox: [], transfer: [], exited: new Promise((resolve) => worker.once('exit', () => resolve())), ended: null };
    port1.on('message', (answer: Answer) => this.answered(thread, answer));
    // Only waiting requests keep the process alive, as with Piscina's own port.
    port1.unref();
    // A thread that dies between tasks (its shard optimizer failed) is noticed here, not by a
    // task; 'error' (an uncaught error, the memory limit) comes before 'exit' and says more.
    worker.once('error', (err) => this.fail(thread, messageOf(err)));
    worker.once('exit', (code) => this.fail(thread, `worker exited with code ${code}`));
    pool.on('error', (err) => this.fail(thread, messageOf(err)));
    return thread;
  }

  /**
   * Marks `thread` failed (once) and terminates it; the drain loop replaces it. The message it was
   * running fails with `reason`; reads sent behind it go back to the front of the queue.
   */
  private fail(thread: Thread, reason: string): void {
    if (thread !== this.thread || this.failure !== null || this.closed) return;
    this.collect(thread);
    // One of them was a fault, which failed the thread already.
    if (this.failure !== null) return;
    this.failure = reason;
    this.options.onFault(reason);
    this.stopWatchdog();
    const running = Atomics.load(thread.begun, 0);
    const flights = thread.flights.splice(0);
    // A read the worker began may have been answered with the answer still on its way: running
    // it again is harmless; only the one it was running when it failed is the cause.
    this.waiting.unshift(...flights.flatMap((f) => (f.retry && f.seq !== running ? [f.retry] : [])));
    for (const flight of flights) if (!flight.retry || flight.seq === running) flight.done({ lost: reason });
    void end(thread);
    this.wake();
    void this.drain();
  }

  /**
   * Takes the answers the worker posted that are still on the port: its death or a timer can be
   * noticed before them (each comes through its own channel), and they are good answers.
   */
  private collect(thread: Thread): void {
    for (let queued = receiveMessageOnPort(thread.port); queued; queued = receiveMessageOnPort(thread.port)) {
      this.answered(thread, queued.message as Answer);
    }
  }

  private wake(): void {
    const wake = this.onAnswer;
    this.onAnswer = null;
    wake?.();
  }

  /** Settles once the current thread answers a message or fails. */
  private nextAnswer(): Promise<void> {
    return new Promise((resolve) => (this.onAnswer = resolve));
  }

  /**
   * Sends `message` to `thread` (posted with the others sent before the next post()); `done`
   * learns what became of it.
   */
  private send(thread: Thread, message: TaskMessage | UpdateBatch, deadline: Deadline | null, done: Flight['done'], retry?: Waiting): void {
    const packed = 'task' in message ? packTask(message) : { value: message, transfer: [] };
    const unpack = 'task' in message ? (reply: Answer) => unpackReply(message, reply as TaskReply<unknown>) : (reply: Answer) => reply;
    const sent: Sent = { seq: ++this.seq, message: packed.value };
    thread.flights.push({ seq: sent.seq, deadline, unpack, done, retry });
    thread.outbox.push(sent);
    thread.transfer.push(...packed.transfer);
    if (thread.flights.length === 1) this.startWatchdog(thread);
  }

  /** Posts what was sent to `thread` since the last post, as one message. */
  private post(thread: Thread): void {
    if (thread.outbox.length === 0) return;
    const posted: Posted = thread.outbox;
    const { transfer } = thread;
    thread.outbox = [];
    thread.transfer = [];
    thread.port.postMessage(posted, transfer);
  }

  /** The worker answers in the order sent: `reply` is for the oldest message in flight. */
  private answered(thread: Thread, reply: Answer): void {
    // Answers of a thread already failed are not trusted (a trap) or already given up on.
    if (thread !== this.thread || this.failure !== null) return;
    const flight = thread.flights.shift()!;
    this.stopWatchdog();
    if (thread.flights.length > 0) this.startWatchdog(thread);
    flight.done({ reply: flight.unpack(reply) });
    if ('fault' in reply) this.fail(thread, reply.fault);
    this.wake();
  }

  /**
   * Watches the oldest unanswered message, the one the worker is on (the worker runs them in the
   * order sent): past its deadline plus the grace period (a read), or past the hard bound on any
   * task, the thread is replaced.
   */
  private startWatchdog(thread: Thread): void {
    const watched = thread.flights[0];
    const { limits } = this.options;
    const hardMs = limits.task_timeout_sec * 1000;
    const graceMs = watched.deadline ? Math.max(0, watched.deadline.at - Date.now()) + limits.deadline_grace_sec * 1000 : Infinity;
    this.watchdog = setTimeout(() => {
      this.watchdog = null;
      // Answered just now (the answer not taken yet): the next message is watched from here.
      this.collect(thread);
      if (thread.flights[0] !== watched) return;
      this.fail(thread, graceMs < hardMs
        ? `a read ran more than ${limits.deadline_grace_sec}s past its deadline`
        : `a task ran longer than ${limits.task_timeout_sec}s`);
    }, Math.min(hardMs, graceMs));
  }

  private stopWatchdog(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (!this.closed) {
        if (this.failure !== null && !(await this.restart())) break;
        const next = this.waiting[0];
        if (!next) break;
        const inWorker = this.thread.flights.length;
        if (isReadTask(next.message.task) ? inWorker >= MAX_READS_SENT : inWorker > 0) {
          this.post(this.thread);
          await this.nextAnswer();
          continue;
        }
        this.waiting.shift();
        if (isReadTask(next.message.task)) {
          this.sendRead(next);
          continue;
        }
        if (!isUpdateTask(next.message.task)) {
          await this.execute(next);
          continue;
        }
        const batch = [next];
        while (batch.length < MAX_BATCH && this.waiting.length > 0 && isUpdateTask(this.waiting[0].message.task)) batch.push(this.waiting.shift()!);
        await this.executeUpdates(batch);
      }
    } finally {
      this.post(this.thread);
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

  /** Sends a read without waiting for its answer; reads change no ownership. */
  private sendRead(entry: Waiting): void {
    const thread = this.thread;
    this.send(thread, entry.message, entry.message.deadline, (outcome) => {
      const fault = faultOf(outcome);
      if (fault === null) {
        this.restarts = 0;
        entry.resolve((outcome as { reply: SettledReply }).reply);
        return;
      }
      this.fail(thread, fault);
      entry.reject(new ServiceError(`shard worker ${this.index} failed: ${fault}`));
    }, entry);
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
    const outcome = await new Promise<Outcome>((resolve) => {
      this.send(thread, message, deadline, resolve);
      this.post(thread);
    });
    const fault = faultOf(outcome);
    if (fault !== null) {
      this.fail(thread, fault);
      throw new ServiceError(`shard worker ${this.index} failed: ${fault}`);
    }
    return (outcome as { reply: unknown }).reply as Exclude<R, { fault: string }>;
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
