// Deadlines of read requests (Qdrant's `timeout` query parameter), as the shard side sees them.
// The main thread answers with the timeout error when a deadline passes; the shard's long loops
// check the same deadline, so the work stops too rather than running on for nobody. A worker runs
// one task at a time, which is why the deadline of the running task can live in this module.

import { Timeout } from '../errors.js';

/**
 * A deadline on this node's clock: plain data, so it crosses to the worker threads with the task
 * (threads of one process share the clock).
 */
export interface Deadline {
  /** Epoch milliseconds. */
  at: number;
  seconds: number;
  /** The operation named in the error, as Qdrant names it. */
  operation: string;
}

/**
 * A deadline as it travels to a shard replica: the time left when it was sent, not an instant,
 * so it means the same to a receiver whose clock differs from the sender's.
 */
export interface DeadlineBudget {
  remainingMs: number;
  seconds: number;
  operation: string;
}

/** What is left of `deadline` now (nothing, once it passed). */
export function budgetOf(deadline: Deadline): DeadlineBudget {
  return { remainingMs: Math.max(0, deadline.at - Date.now()), seconds: deadline.seconds, operation: deadline.operation };
}

/** Pins a received budget to this node's clock, at receipt. */
export function deadlineOf(budget: DeadlineBudget): Deadline {
  return { at: Date.now() + budget.remainingMs, seconds: budget.seconds, operation: budget.operation };
}

export function timeoutError(deadline: Deadline): Timeout {
  return new Timeout(`Timeout error: Operation '${deadline.operation}' timed out after ${deadline.seconds}s`);
}

let current: Deadline | null = null;
let countdown = 0;
/** Iterations of a fine-grained loop between two readings of the clock. */
const STRIDE = 1024;

/** Runs `work` under `deadline`; refuses to start at all if it already passed. */
export async function underDeadline<T>(deadline: Deadline | null, work: () => Promise<T>): Promise<T> {
  current = deadline;
  countdown = 0;
  try {
    checkDeadline();
    return await work();
  } finally {
    current = null;
  }
}

/** For loops whose every iteration is costly: reads the clock each time. A budget of nothing left has passed on receipt. */
export function checkDeadline(): void {
  if (current !== null && Date.now() >= current.at) throw timeoutError(current);
}

/** For tight loops: reads the clock once every STRIDE calls. */
export function pollDeadline(): void {
  if (current === null || ++countdown < STRIDE) return;
  countdown = 0;
  checkDeadline();
}
