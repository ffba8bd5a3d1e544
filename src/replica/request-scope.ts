// What the request being served asks of the replicas, carried through its async work on the main
// thread (AsyncLocalStorage), so every shard task it sends inherits it without threading a
// parameter through each collection method: the deadline and read `consistency` of a read, the
// `ordering` of a write. On a single node a shard has one replica, which satisfies every
// consistency and is always the leader, so only the deadline changes an answer there.

import { AsyncLocalStorage } from 'node:async_hooks';
import { timeoutError, type Deadline } from '../shard/deadline.js';
import { within } from '../timeout.js';
import type { WriteOrdering } from './write-ordering.js';

/** Qdrant's `consistency` of a read: how many replicas must answer alike (read-consistency.ts). */
export type ReadConsistency = number | 'majority' | 'quorum' | 'all';

/** Qdrant's default read consistency (`ReadConsistency::Factor(1)`): one replica's answer. */
export const DEFAULT_READ_CONSISTENCY: ReadConsistency = 1;

/** Qdrant's default write ordering. */
export const DEFAULT_WRITE_ORDERING: WriteOrdering = 'weak';

interface RequestScope {
  deadline: Deadline | null;
  consistency: ReadConsistency;
  ordering: WriteOrdering;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** A read request's query parameters that reach its replicas. */
export interface ReadScope {
  /** Seconds; no deadline when undefined. */
  timeout?: number;
  consistency?: ReadConsistency;
}

/**
 * Runs a read with its `consistency`, and a deadline `timeout` seconds from now (none when
 * undefined): the result is Qdrant's timeout error once the deadline passes, even while shard
 * tasks are still stopping.
 */
export function withReadScope<T>({ timeout, consistency }: ReadScope, operation: string, work: () => Promise<T>): Promise<T> {
  const deadline: Deadline | null = timeout === undefined ? null : { at: Date.now() + timeout * 1000, seconds: timeout, operation };
  const store: RequestScope = { deadline, consistency: consistency ?? DEFAULT_READ_CONSISTENCY, ordering: DEFAULT_WRITE_ORDERING };
  return scope.run(store, () => (deadline ? within(work(), timeout, () => timeoutError(deadline)) : work()));
}

/** Runs a write with its `ordering` (Qdrant's default when undefined); a write has no deadline. */
export function withWriteScope<T>(ordering: WriteOrdering | undefined, work: () => Promise<T>): Promise<T> {
  return scope.run({ deadline: null, consistency: DEFAULT_READ_CONSISTENCY, ordering: ordering ?? DEFAULT_WRITE_ORDERING }, work);
}

/** The deadline of the request this code runs for, if it has one. */
export function activeDeadline(): Deadline | null {
  return scope.getStore()?.deadline ?? null;
}

/** The read consistency of the request this code runs for (Qdrant's default outside one). */
export function activeConsistency(): ReadConsistency {
  return scope.getStore()?.consistency ?? DEFAULT_READ_CONSISTENCY;
}

/** The write ordering of the request this code runs for (Qdrant's default outside one). */
export function activeOrdering(): WriteOrdering {
  return scope.getStore()?.ordering ?? DEFAULT_WRITE_ORDERING;
}
