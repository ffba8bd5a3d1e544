// A Quiver server in a child process on a loopback port: what `quiver bench server|ingest` starts
// when given no --url (the build, as `npm start` runs it), and what the tests run against (the
// sources, through tsx, so a test always runs the code as it is).

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { CommandError } from '../errors.js';
import { freePort, freePorts } from '../free-port.js';

export { freePort, freePorts };

const MAIN = new URL('../main.ts', import.meta.url).pathname;
/** What `npm start` runs: the server bundle in build/server, built first when stale. */
const START = new URL('../cli/start.js', import.meta.url).pathname;
const READY_WITHIN_MS = 60_000;
const READY_POLL_MS = 50;

export interface QuiverProcessOptions {
  storage: string;
  /** Default: a free loopback port. */
  port?: number;
  workers: number;
  /** Environment on top of this process's (QDRANT__... settings). */
  env?: Record<string, string>;
  /** For a server started with TLS (through `env`): the PEM of the CA that signed its certificate, trusted by the readiness probe. */
  ca?: string;
  /** More command-line flags (e.g. --storage-snapshot FILE). */
  args?: string[];
  /** Also copy the server's output here as it comes (it is always kept for output()). */
  echo?: NodeJS.WritableStream;
  /**
   * Ready once this path answers 200 (the start-up benchmark waits for /readyz); by default once
   * GET / answers at all.
   */
  readyPath?: string;
  /** Milliseconds between readiness probes (default 50): what a start-up timing is resolved to. */
  pollMs?: number;
  /** 'source' (default): src/main.ts through tsx; 'build': what `npm start` runs (src/cli/start.js). */
  entry?: 'source' | 'build';
}

export interface QuiverProcess {
  url: string;
  port: number;
  storage: string;
  process: ChildProcess;
  /** Everything the server printed so far. */
  output(): string;
  /** Signals the server (SIGTERM unless told) and resolves with its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Spawns a server and resolves once it is ready (see readyPath; CommandError if it exits first or is not ready within 60 s). */
export async function startQuiver(options: QuiverProcessOptions): Promise<QuiverProcess> {
  const { storage, workers } = options;
  const port = options.port ?? (await freePort());
  const entry = options.entry === 'build' ? [START] : ['--import', 'tsx', MAIN];
  const child = spawn(process.execPath, [...entry, '--port', String(port), '--storage-path', storage, '--snapshots-path', join(storage, 'snapshots'), '--workers', String(workers), ...(options.args ?? [])], {
    env: { ...process.env, QDRANT__LOG_LEVEL: 'WARN', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const collect = (d: Buffer) => {
    log += d.toString();
    options.echo?.write(d);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `${options.ca ? 'https' : 'http'}://127.0.0.1:${port}`;
  const dispatcher = options.ca ? new Agent({ connect: { ca: options.ca } }) : undefined;
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    const outcome = await Promise.race([
      // Without a readyPath any HTTP answer means up: with a key configured, a request may be refused.
      fetch(url + (options.readyPath ?? ''), { dispatcher }).then(async (r) => {
        await r.arrayBuffer();
        return options.readyPath === undefined || r.status === 200;
      }).catch(() => false),
      exited.then(() => 'exited' as const),
    ]);
    if (outcome === true) break;
    if (outcome === 'exited') throw new CommandError(`the Quiver server exited during start (status ${child.exitCode}):\n${log}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new CommandError(`the Quiver server did not answer within ${READY_WITHIN_MS / 1000} s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? READY_POLL_MS)); // poll interval between readiness probes, not a race fix
  }
  return {
    url,
    port,
    storage,
    process: child,
    output: () => log,
    stop: async (signal = 'SIGTERM') => {
      // Already gone (exited, or killed by a signal): its pid may belong to another process by now.
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}
