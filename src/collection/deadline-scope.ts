// The deadline of the read request being served, carried through its async work on the main
// thread (AsyncLocalStorage), so every shard task it sends inherits it without threading a
// parameter through each collection method.

import { AsyncLocalStorage } from 'node:async_hooks';
import { timeoutError, type Deadline } from '../shard/deadline.js';
import { within } from '../timeout.js';

const scope = new AsyncLocalStorage<Deadline>();

/**
 * Runs `work` with a deadline `seconds` from now (none when undefined): the result is Qdrant's
 * timeout error once the deadline passes, even while shard tasks are still stopping.
 */
export function withDeadline<T>(seconds: number | undefined, operation: string, work: () => Promise<T>): Promise<T> {
  if (seconds === undefined) return work();
  const deadline: Deadline = { at: Date.now() + seconds * 1000, seconds, operation };
  return scope.run(deadline, () => within(work(), seconds, () => timeoutError(deadline)));
}

/** The deadline of the request this code runs for, if it has one. */
export function activeDeadline(): Deadline | null {
  return scope.getStore() ?? null;
}
