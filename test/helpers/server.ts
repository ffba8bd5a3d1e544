// Starts real Quiver servers (`src/main.ts` in a child process) on loopback ports for tests.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';

const MAIN = new URL('../../src/main.ts', import.meta.url).pathname;

export interface RunningServer {
  url: string;
  port: number;
  storage: string;
  process: ChildProcess;
  /** Everything the server printed so far. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export async function tempStorage(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'quiver-test-'));
}

export interface StartOptions {
  storage?: string;
  port?: number;
  env?: Record<string, string>;
  workers?: number;
  /** For a server started with TLS (through `env`): the PEM of the CA that signed its certificate, trusted by the readiness probe. */
  ca?: string;
  /** More command-line flags (e.g. --storage-snapshot FILE). */
  args?: string[];
}

/** Spawns a server and resolves once it answers GET / (or rejects if it exits first). */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const storage = options.storage ?? (await tempStorage());
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--port', String(port), '--storage-path', storage, '--snapshots-path', join(storage, 'snapshots'), '--workers', String(options.workers ?? 2), ...(options.args ?? [])], {
    env: { ...process.env, QDRANT__LOG_LEVEL: 'WARN', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `${options.ca ? 'https' : 'http'}://127.0.0.1:${port}`;
  const dispatcher = options.ca ? new Agent({ connect: { ca: options.ca } }) : undefined;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const outcome = await Promise.race([
      // Any HTTP answer means up: with a key configured, a request may be refused.
      undiciFetch(url, { dispatcher }).then((r) => r.arrayBuffer()).then(() => true, () => false),
      exited.then(() => 'exited' as const),
    ]);
    if (outcome === true) break;
    if (outcome === 'exited') throw new Error(`server exited during start:\n${log}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not answer within 60 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50)); // poll interval between readiness probes, not a race fix
  }
  return {
    url,
    port,
    storage,
    process: child,
    output: () => log,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}
