// Test-only fault injection, used by a shard worker only when the server started with
// QUIVER_TEST_FAULTS=1 (never in production; Piscina loads workers as CommonJS through tsx, which
// rules out importing this module conditionally). A task whose content carries the text
// "quiver-fault:<kind>" (in a payload value, a filter's match value...) makes the worker fail that
// way before the task does anything (or, for `die-later`, just after it answered, as a background
// job such as a shard optimizer would), so tests can check that the node survives each failure.

import type { ShardTask } from './tasks.js';

export type FaultKind = 'crash' | 'trap' | 'hang' | 'oom' | 'die-later';

const MARKER = /quiver-fault:(crash|trap|hang|oom|die-later)/;

/** A module whose one export `t` executes `unreachable`: a genuine WebAssembly trap. */
const TRAP_MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type section: () -> ()
  0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
  0x07, 0x05, 0x01, 0x01, 0x74, 0x00, 0x00, // export section: "t" = function 0
  0x0a, 0x05, 0x01, 0x03, 0x00, 0x00, 0x0b, // code section: no locals, unreachable, end
]);

function fail(kind: FaultKind): Promise<void> {
  switch (kind) {
    case 'die-later':
      // The task goes on and answers; the thread dies right after, with no task running.
      setImmediate(() => {
        throw new Error('injected crash between tasks');
      });
      return Promise.resolve();
    case 'crash':
      // An exception nothing catches: the thread dies with the task still running.
      return new Promise(() => setImmediate(() => {
        throw new Error('injected worker crash');
      }));
    case 'trap': {
      const instance = new WebAssembly.Instance(new WebAssembly.Module(TRAP_MODULE));
      (instance.exports.t as () => void)();
      throw new Error('the trap module returned');
    }
    case 'hang':
      // Busy, as a runaway loop would be: the thread never yields, so only termination stops it.
      for (;;);
    case 'oom': {
      const hoard: number[][] = [];
      for (;;) hoard.push(new Array<number>(1 << 20).fill(hoard.length));
    }
  }
}

/** Fails as the task asks, if it carries a fault marker; otherwise returns at once. */
export async function injectFault(task: ShardTask): Promise<void> {
  // Ids past 2^53 are bigints, which JSON.stringify refuses; their digits hold no marker anyway.
  const kind = MARKER.exec(JSON.stringify(task, (_, value: unknown) => (typeof value === 'bigint' ? String(value) : value)))?.[1] as FaultKind | undefined;
  if (kind) await fail(kind);
}
