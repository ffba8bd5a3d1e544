// Throwaway probe for the README's p99 note (not part of the product or the tests): preloaded
// into a server (`node --import ./docs/research/profile-server/stall-probe.mjs build/server/main.js`;
// Piscina's workers inherit the flag, so it runs in the main thread and in every shard worker),
// it appends a line to $STALL_LOG (default /tmp/stalls.log) each time a 2 ms timer fires over
// 8 ms late: thread id, wall time in ms, the lag, and from /proc/thread-self/schedstat the thread's
// own CPU time and its time waiting in the kernel's run queue over that interval (ms). A lag made
// of run-queue wait is the machine's cores being busy elsewhere, not this thread's work.
import { threadId } from 'node:worker_threads';
import { appendFileSync, readFileSync } from 'node:fs';
const out = process.env.STALL_LOG ?? '/tmp/stalls.log';
const sched = () => readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
let last = performance.now();
let lastS = sched();
const timer = setInterval(() => {
  const now = performance.now();
  const s = sched();
  const lag = now - last - 2;
  if (lag > 8) appendFileSync(out, `${threadId} ${Date.now()} ${lag.toFixed(1)} ${((s[0] - lastS[0]) / 1e6).toFixed(1)} ${((s[1] - lastS[1]) / 1e6).toFixed(1)}\n`);
  last = now;
  lastS = s;
}, 2);
timer.unref();
