// Starts and stops the HTTP floor server (http-floor-server.ts) on a free loopback port.

import { spawn } from 'node:child_process';
import { CommandError } from '../errors.js';
import { freePort } from './quiver-process.js';

const SERVER = new URL('./http-floor-server.ts', import.meta.url).pathname;
/** Bound on the floor server's start (a Node start with tsx and Fastify takes well under a second). */
const UP_WITHIN_MS = 15_000;
const POLL_MS = 20;

export interface HttpFloor {
  url: string;
  /** The floor server's CPU time so far, user + system, in seconds. */
  cpuSeconds(): Promise<number>;
  stop(): Promise<void>;
}

export async function startHttpFloor(): Promise<HttpFloor> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + UP_WITHIN_MS;
  for (;;) {
    const up = await Promise.race([
      fetch(url).then(async (r) => { await r.arrayBuffer(); return true; }, () => false),
      exited.then(() => 'exited' as const),
    ]);
    if (up === true) return { url, stop, cpuSeconds: async () => ((await (await fetch(`${url}/cpu`)).json()) as { micros: number }).micros / 1e6 };
    if (up === 'exited') throw new CommandError(`the HTTP floor server exited during start (status ${child.exitCode}):\n${log}`);
    if (Date.now() > deadline) {
      await stop();
      throw new CommandError(`the HTTP floor server did not answer within ${UP_WITHIN_MS} ms:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
