// The hardware usage of the task a shard worker runs, found through an async context that
// follows the task across its awaits (store reads, deadlines) and never leaks into work that
// runs beside it, such as the optimizer's.

import { AsyncLocalStorage } from 'node:async_hooks';
import { findUsageWith, type HardwareUsage } from '../shard/hardware.js';

const current = new AsyncLocalStorage<HardwareUsage>();
findUsageWith(() => current.getStore());

/** Runs `work` with its reads counted into `usage`. */
export function measured<T>(usage: HardwareUsage, work: () => T): T {
  return current.run(usage, work);
}
