// The HTTP side of the server and ingest benchmarks: a Qdrant-compatible URL reached through an
// undici connection pool, or a Quiver server this process starts on a free loopback port.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { CommandError } from '../errors.js';
import { startQuiver } from './quiver-process.js';

export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE';

export interface HttpTarget {
  readonly url: string;
  /** Qdrant's `result` of a JSON answer; any status but 200 is a CommandError. */
  call<T = unknown>(method: HttpMethod, path: string, body?: unknown): Promise<T>;
  /**
   * The same with the body already serialised and the answer left unparsed: what a load
   * generator sends over and over, so its own JSON work stays out of the measurement.
   */
  request(method: HttpMethod, path: string, json?: string): Promise<string>;
  close(): Promise<void>;
}

/** `url` null starts a local Quiver server with `workers` shard workers for the duration. */
export async function openTarget(url: string | null, connections: number, workers: number, apiKey?: string): Promise<HttpTarget> {
  const local = url ? null : await startLocalQuiver(workers);
  const base = url ?? local!.url;
  const pool = new Pool(base, { connections, pipelining: 1 });
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(apiKey ? { 'api-key': apiKey } : {}) };
  const request = async (method: HttpMethod, path: string, json?: string): Promise<string> => {
    let res;
    try {
      res = await pool.request({ method, path, headers, body: json });
    } catch (err) {
      throw new CommandError(`${method} ${base}${path}: ${(err as Error).message}`);
    }
    const text = await res.body.text();
    if (res.statusCode !== 200) {
      const hint = res.statusCode === 401 || res.statusCode === 403 ? (apiKey ? ' (the --api-key was refused)' : ' (the server wants a key: pass --api-key)') : '';
      throw new CommandError(`${method} ${base}${path}: HTTP ${res.statusCode} ${text.slice(0, 500)}${hint}`);
    }
    return text;
  };
  return {
    url: base,
    request,
    async call<T>(method: HttpMethod, path: string, body?: unknown): Promise<T> {
      const text = await request(method, path, body === undefined ? undefined : JSON.stringify(body));
      return (JSON.parse(text) as { result: T }).result;
    },
    async close() {
      await pool.close();
      if (local) await local.stop();
    },
  };
}

async function startLocalQuiver(workers: number): Promise<{ url: string; stop(): Promise<void> }> {
  const storage = await mkdtemp(join(tmpdir(), 'quiver-bench-'));
  const removeStorage = () => rm(storage, { recursive: true, force: true });
  const server = await startQuiver({ storage, workers, echo: process.stderr, entry: 'build' }).catch(async (err: unknown) => {
    await removeStorage();
    throw err;
  });
  return {
    url: server.url,
    async stop() {
      await server.stop();
      await removeStorage();
    },
  };
}
