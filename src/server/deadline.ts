// Node-level operations answered within a time limit. Like Qdrant's consensus operations, the
// work may still complete after the caller was told it timed out.

import { ServiceError, Timeout } from '../errors.js';
import { within } from '../timeout.js';

/**
 * Collection, alias and shard-key operations with a commit `timeout` (seconds): past it the
 * request fails with the service error Qdrant reports when a consensus operation did not commit
 * in time.
 */
export function withCommitTimeout<T>(work: Promise<T>, seconds: number | undefined): Promise<T> {
  return within(work, seconds, () => new ServiceError(`Waiting for consensus operation commit failed. Timeout set at: ${seconds} seconds`));
}

/** A read-only operation (telemetry) that did not finish within its `timeout`, worded as Qdrant's timeout error. */
export function withOperationTimeout<T>(work: Promise<T>, seconds: number | undefined, operation: string): Promise<T> {
  return within(work, seconds, () => new Timeout(`Operation '${operation}' timed out after ${seconds}s`));
}
