// Starts real Quiver servers (`src/main.ts` in a child process) on loopback ports for tests.
// The spawning and readiness wait are the benchmark CLI's own (src/bench/quiver-process.ts).

import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startQuiver, type QuiverProcess, type QuiverProcessOptions } from '../../src/bench/quiver-process.js';

export { freePort } from '../../src/bench/quiver-process.js';

export type RunningServer = QuiverProcess;

export async function tempStorage(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'quiver-test-'));
}

export type StartOptions = Partial<Omit<QuiverProcessOptions, 'echo'>>;

/** Spawns a server (2 shard workers and a fresh temp storage unless told) and resolves once it answers GET / (or rejects if it exits first). */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  return startQuiver({ ...options, storage: options.storage ?? (await tempStorage()), workers: options.workers ?? 2 });
}

/**
 * The first match of `pattern` in the server's output, waiting for it up to `ms`: a line logged
 * after the server started answering may still be in the pipe when a request returns.
 */
export async function outputMatch(server: RunningServer, pattern: RegExp, ms = 5000): Promise<RegExpExecArray | null> {
  const until = Date.now() + ms;
  for (;;) {
    const match = pattern.exec(server.output());
    if (match || Date.now() > until) return match;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
