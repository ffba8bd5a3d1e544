// How a replica set tells the errors of its replicas apart, and prints one inside its own.

import { isQuiverError } from '../errors.js';

/**
 * Whether `error` may not recur on another replica or a later try (Qdrant's
 * `CollectionError::is_transient`): an internal error, a timeout, or a replica that could not be
 * reached at all. A refusal of the request itself (bad input, a missing point, strict mode, a
 * rate limit) is the same from every replica.
 */
export function isTransient(error: unknown): boolean {
  return !isQuiverError(error) || error.statusCode >= 500 || error.statusCode === 408;
}

/** Whether `error` says an operation's point does not exist (Qdrant's `is_missing_point`). */
export function isMissingPoint(error: unknown): boolean {
  // By kind, not class: an error that crossed from a worker or a peer is rebuilt without it.
  return isQuiverError(error) && error.kind === 'NotFound' && error.message.includes('No point with id');
}

/** An error as Qdrant prints one inside another: its own message, kind prefix included. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
