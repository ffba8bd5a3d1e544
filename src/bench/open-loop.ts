// Open-loop load: requests go out on a fixed timetable (request i is due at i / rate seconds),
// whatever the server's answers do, and each latency is counted from the request's due time, not
// from when it was actually sent. A closed loop (N clients each waiting for its answer) slows
// down with the server and so never sees the queue a stall builds: coordinated omission. Here a
// stall shows, because the requests due during it wait and their waiting counts.
//
// The generator keeps at most `maxInFlight` requests outstanding (its connections); a request
// falling due while all are busy is dropped and counted, as k6's constant-arrival-rate executor
// does, rather than queued without bound.

import { quantile } from './sweep.js';

/**
 * A request sent more than this after its due time is late: the generator itself fell behind its
 * timetable (a busy event loop). Node's timers tick in whole milliseconds, so a millisecond or two
 * of lateness is the clock's grain, not the generator's; either way the latency counts from the due time.
 */
export const LATE_MS = 5;

/** Milliseconds after the start at which request `i` of a `rate`-per-second timetable is due. */
export function dueMs(i: number, rate: number): number {
  return (i * 1000) / rate;
}

/** Requests a `rate`-per-second timetable holds in `seconds`. */
export function scheduledCount(rate: number, seconds: number): number {
  return Math.floor(rate * seconds);
}

export interface OpenLoopSummary {
  /** Requests per second offered. */
  rate: number;
  /** Requests the timetable held. */
  scheduled: number;
  /** Requests answered (dropped ones are not sent). */
  completed: number;
  /** Sent more than LATE_MS after their due time. */
  late: number;
  /** Not sent: all `maxInFlight` requests were outstanding when they fell due. */
  dropped: number;
  /** Latency from due time to answer, over the completed requests (null when none completed). */
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

/** The accounting of one open-loop run; times are milliseconds on one clock, relative to its start. */
export class OpenLoopTally {
  private readonly latencies: number[] = [];
  private late = 0;
  private dropped = 0;

  constructor(readonly rate: number, readonly scheduled: number) {}

  /** Request `i` went out at `sentMs`. */
  sent(i: number, sentMs: number): void {
    if (sentMs - dueMs(i, this.rate) > LATE_MS) this.late++;
  }

  /** Request `i` was answered at `doneMs`: its latency counts from its due time. */
  answered(i: number, doneMs: number): void {
    this.latencies.push(doneMs - dueMs(i, this.rate));
  }

  drop(): void {
    this.dropped++;
  }

  summary(): OpenLoopSummary {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const at = (q: number) => (sorted.length === 0 ? null : quantile(sorted, q));
    return { rate: this.rate, scheduled: this.scheduled, completed: sorted.length, late: this.late, dropped: this.dropped, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.length === 0 ? null : sorted[sorted.length - 1] };
  }
}

export interface OpenLoopPlan {
  rate: number;
  seconds: number;
  maxInFlight: number;
}

/**
 * Runs `send(i)` on the timetable of `plan` and resolves once every sent request is answered.
 * The timer wakes at each next due time; requests that fell due meanwhile (the timer was late)
 * go out at once, keeping their due time.
 */
export async function openLoop(plan: OpenLoopPlan, send: (i: number) => Promise<void>, now: () => number = () => performance.now()): Promise<OpenLoopSummary> {
  const scheduled = scheduledCount(plan.rate, plan.seconds);
  const tally = new OpenLoopTally(plan.rate, scheduled);
  const started = now();
  const pending = new Set<Promise<void>>();
  let failure: unknown = null;
  let next = 0;
  while (next < scheduled && failure === null) {
    const wait = dueMs(next, plan.rate) - (now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait)); // the timetable's next slot
    const elapsed = now() - started;
    for (; next < scheduled && dueMs(next, plan.rate) <= elapsed; next++) {
      if (pending.size >= plan.maxInFlight) {
        tally.drop();
        continue;
      }
      const i = next;
      tally.sent(i, now() - started);
      const request: Promise<void> = send(i).then(
        () => tally.answered(i, now() - started),
        (err: unknown) => { failure ??= err; },
      ).finally(() => pending.delete(request));
      pending.add(request);
    }
  }
  await Promise.all(pending);
  if (failure !== null) throw failure;
  return tally.summary();
}
