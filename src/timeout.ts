// Answering within a time limit, shared by read deadlines (src/replica/request-scope.ts)
// and commit timeouts (src/server/deadline.ts). The work is not cancelled here: whoever runs it
// may stop it on its own (shard tasks check their deadline); its late outcome is observed, never
// an unhandled rejection, and dropped.

import type { QuiverError } from './errors.js';

/**
 * The longest delay a Node timer holds (about 24.8 days); a longer one fires after 1 ms, which
 * would turn a generous `timeout` (any u64 of seconds is valid) into an immediate one.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Resolves as `work` does, or rejects with `onTimeout()` once `seconds` pass first; no limit
 * without `seconds`, nor with one longer than a timer can wait (no request runs for weeks).
 */
export function within<T>(work: Promise<T>, seconds: number | undefined, onTimeout: () => QuiverError): Promise<T> {
  if (seconds === undefined || seconds * 1000 > MAX_TIMER_MS) return work;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), seconds * 1000);
  });
  work.catch(() => undefined);
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
