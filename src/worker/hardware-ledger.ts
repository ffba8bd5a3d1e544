// The hardware usage the shard workers report, kept on the main thread twice: per collection since
// the node started (telemetry's `hardware.collection_data`, the metrics' `collection_hardware_*`),
// and per request (the response's `usage.hardware`), a request's being the one open in the async
// context its shard tasks were sent from.

import { AsyncLocalStorage } from 'node:async_hooks';
import { addUsage, emptyUsage, type HardwareUsage } from '../shard/hardware.js';
import type { UsageReport } from './tasks.js';

export class HardwareLedger {
  private readonly byCollection = new Map<string, HardwareUsage>();
  private readonly request = new AsyncLocalStorage<HardwareUsage>();

  /** Runs `work` with what its shard tasks use counted into `usage`. */
  within<T>(usage: HardwareUsage, work: () => T): T {
    return this.request.run(usage, work);
  }

  /** A task's report: its own usage goes to the request and the collection, deferred usage to the collection only. */
  record(collection: string, report: UsageReport): void {
    if (!report.usage && !report.deferred) return;
    let total = this.byCollection.get(collection);
    if (!total) this.byCollection.set(collection, (total = emptyUsage()));
    if (report.deferred) addUsage(total, report.deferred);
    if (!report.usage) return;
    addUsage(total, report.usage);
    const request = this.request.getStore();
    if (request) addUsage(request, report.usage);
  }

  /** Totals per collection name. */
  totals(): ReadonlyMap<string, HardwareUsage> {
    return this.byCollection;
  }
}
