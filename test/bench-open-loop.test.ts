// The open-loop scheduler of `quiver bench server` (src/bench/open-loop.ts): the timetable's
// arithmetic, latency counted from each request's due time (so a stall is not omitted), late and
// dropped requests. The clock is injected, so nothing here depends on how fast the machine is.

import t from 'tap';
import { dueMs, LATE_MS, openLoop, OpenLoopTally, scheduledCount } from '../src/bench/open-loop.js';

t.test('the timetable: request i is due at i / rate seconds', async (t) => {
  t.equal(dueMs(0, 1000), 0);
  t.equal(dueMs(1, 1000), 1);
  t.equal(dueMs(250, 1000), 250);
  t.equal(dueMs(3, 400), 7.5);
  t.equal(scheduledCount(1000, 10), 10000);
  t.equal(scheduledCount(300, 0.5), 150);
  t.equal(scheduledCount(3, 0.5), 1, 'whole requests only');
});

t.test('the tally: latency from the due time, late sends, drops, quantiles', async (t) => {
  const tally = new OpenLoopTally(100, 5); // due at 0, 10, 20, 30, 40 ms
  tally.sent(0, 0);
  tally.answered(0, 3); // 3 ms
  tally.sent(1, 10 + LATE_MS); // exactly LATE_MS behind: not late
  tally.answered(1, 14); // 4 ms
  tally.sent(2, 20 + LATE_MS + 1); // late: sent at 26, answered at 27 -> 7 ms from its due time, not 1
  tally.answered(2, 27);
  tally.drop(); // request 3
  tally.sent(4, 40);
  tally.answered(4, 140); // a 100 ms stall
  t.same(tally.summary(), { rate: 100, scheduled: 5, completed: 4, late: 1, dropped: 1, p50Ms: 7, p99Ms: 100, maxMs: 100 });
  t.same(new OpenLoopTally(10, 0).summary(), { rate: 10, scheduled: 0, completed: 0, late: 0, dropped: 0, p50Ms: null, p99Ms: null, maxMs: null }, 'nothing answered: no quantiles');
});

t.test('openLoop: requests due while every slot is busy are dropped; latency counts from the due time', async (t) => {
  let clock = 0;
  const held: (() => void)[] = [];
  const sent: number[] = [];
  const run = openLoop({ rate: 100, seconds: 1, maxInFlight: 2 }, (i) => {
    sent.push(i);
    return new Promise<void>((resolve) => held.push(resolve));
  }, () => clock);
  // Request 0 went out at once; the scheduler now sleeps until request 1 is due (10 ms). The clock
  // jumps past the whole timetable: on waking every remaining request is due at once.
  t.same(sent, [0], 'the first request goes out at the start');
  clock = 10_000;
  // A timer set after the scheduler's own 10 ms sleep fires after it: by then the timetable is done.
  await new Promise((r) => setTimeout(r, 20));
  t.same(sent, [0, 1], 'one more fills the two slots; the other 98 find them busy');
  clock = 10_005;
  held.forEach((resolve) => resolve());
  const summary = await run;
  t.same(summary, { rate: 100, scheduled: 100, completed: 2, late: 1, dropped: 98, p50Ms: 10_005, p99Ms: 10_005, maxMs: 10_005 });
  // Latencies 10_005 (request 0, due at 0) and 9_995 (request 1, due at 10): the quantiles take the upper of two.
});

t.test('openLoop: with slots for every request, each is sent once, in order, and answered', async (t) => {
  const sent: number[] = [];
  // As many slots as requests: a burst of requests that fell due while the timer was late cannot overflow them.
  const summary = await openLoop({ rate: 500, seconds: 0.1, maxInFlight: 50 }, async (i) => {
    sent.push(i);
  });
  t.same(sent, Array.from({ length: 50 }, (_, i) => i));
  t.equal(summary.scheduled, 50);
  t.equal(summary.completed, 50);
  t.equal(summary.dropped, 0);
  t.ok(summary.p50Ms !== null && summary.p50Ms >= 0 && summary.p99Ms! >= summary.p50Ms, 'latencies from due times are not negative');
});

t.test('openLoop: a failed request fails the run once the others are answered', async (t) => {
  await t.rejects(openLoop({ rate: 1000, seconds: 0.01, maxInFlight: 10 }, async (i) => {
    if (i === 3) throw new Error('HTTP 500');
  }), { message: 'HTTP 500' });
});
