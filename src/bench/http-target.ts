// The HTTP side of the server and ingest benchmarks: a Qdrant-compatible URL reached through an
// undici connection pool, or a Quiver server this process starts on a free loopback port.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { CommandError } from '../errors.js';

export interface HttpTarget {
  readonly url: string;
  call<T = unknown>(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

/** `url` null starts a local Quiver server with `workers` shard workers for the duration. */
export async function openTarget(url: string | null, connections: number, workers: number, apiKey?: string): Promise<HttpTarget> {
  const local = url ? null : await startLocalQuiver(workers);
  const base = url ?? local!.url;
  const pool = new Pool(base, { connections, pipelining: 1 });
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(apiKey ? { 'api-key': apiKey } : {}) };
  return {
    url: base,
    async call<T>(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
      let res;
      try {
        res = await pool.request({ method, path, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (err) {
        throw new CommandError(`${method} ${base}${path}: ${(err as Error).message}`);
      }
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new CommandError(`${method} ${base}${path}: HTTP ${res.statusCode} ${text.slice(0, 500)}`);
      return (JSON.parse(text) as { result: T }).result;
    },
    async close() {
      await pool.close();
      if (local) await local.stop();
    },
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function startLocalQuiver(workers: number): Promise<{ url: string; stop(): Promise<void> }> {
  const storage = await mkdtemp(join(tmpdir(), 'quiver-bench-'));
  const port = await freePort();
  const main = new URL('../main.ts', import.meta.url).pathname;
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', main, '--port', String(port), '--storage-path', storage, '--snapshots-path', join(storage, 'snapshots'), '--workers', String(workers)], {
    env: { ...process.env, QDRANT__LOG_LEVEL: 'WARN' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (!(await fetch(url).then((r) => r.ok, () => false))) {
    if (child.exitCode !== null) throw new CommandError(`the local Quiver server exited during start (status ${child.exitCode})`);
    if (Date.now() > deadline) throw new CommandError('the local Quiver server did not answer within 60 s');
    await new Promise((r) => setTimeout(r, 100)); // readiness poll interval
  }
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      await rm(storage, { recursive: true, force: true });
    },
  };
}
