// Safe defaults at start: without an API key the server listens on loopback only and says so;
// another address without a key needs --allow-unauthenticated-bind, and with a key it needs nothing.

import t from 'tap';
import { spawn } from 'node:child_process';
import { isLoopback } from '../src/config/config.js';
import { call, stopAtEnd } from './helpers/api-http.js';
import { outputMatch, startServer, tempStorage } from './helpers/server.js';

/**
 * An address the server does not count as loopback, though it is one (IPv4-mapped 127.0.0.1), so
 * that the tests listen on loopback only.
 */
const OTHER_ADDRESS = '::ffff:127.0.0.1';
const NO_KEY_WARNING = /no API key configured: listening on (\S+) only; every request is served without authentication/;

t.test('the address under test is not loopback to the server', async (t) => {
  t.notOk(isLoopback(OTHER_ADDRESS));
  t.notOk(isLoopback('0.0.0.0'));
});

t.test('no key and a non-loopback address: refuses to start', async (t) => {
  const storage = await tempStorage();
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('../src/main.ts', import.meta.url).pathname, '--host', '0.0.0.0', '--port', '0', '--storage-path', storage], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.equal(code, 2, 'exits with an error');
  t.match(output, /Refusing to listen on 0\.0\.0\.0 without an API key: set QDRANT__SERVICE__API_KEY, or pass --allow-unauthenticated-bind/);
});

t.test('no key: listens on 127.0.0.1 and says so', async (t) => {
  const server = await startServer({ workers: 1 });
  stopAtEnd(t, server);
  t.equal((await call(server.url, 'GET', '/collections')).status, 200, 'served without a key');
  t.equal((await outputMatch(server, NO_KEY_WARNING))?.[1], '127.0.0.1', 'the start-up log names the loopback address');
});

t.test('no key, another address and --allow-unauthenticated-bind: starts, open, and says so', async (t) => {
  const server = await startServer({ workers: 1, args: ['--host', OTHER_ADDRESS, '--allow-unauthenticated-bind'] });
  stopAtEnd(t, server);
  t.equal((await call(server.url, 'GET', '/collections')).status, 200, 'served without a key');
  t.equal((await outputMatch(server, NO_KEY_WARNING))?.[1], OTHER_ADDRESS, 'the start-up log warns that requests are unauthenticated');
});

t.test('a key and another address: starts without the flag, and requires the key', async (t) => {
  const server = await startServer({ workers: 1, args: ['--host', OTHER_ADDRESS], env: { QDRANT__SERVICE__API_KEY: 'startup-key' } });
  stopAtEnd(t, server);
  t.equal((await call(server.url, 'GET', '/collections')).status, 401, 'refused without the key');
  t.equal((await call(server.url, 'GET', '/collections', undefined, { 'api-key': 'startup-key' })).status, 200, 'served with it');
  t.notMatch(server.output(), NO_KEY_WARNING, 'no unauthenticated warning');
});

t.test('a read-only key alone also counts as a key', async (t) => {
  const server = await startServer({ workers: 1, args: ['--host', OTHER_ADDRESS], env: { QDRANT__SERVICE__READ_ONLY_API_KEY: 'reader' } });
  stopAtEnd(t, server);
  t.equal((await call(server.url, 'GET', '/collections')).status, 401, 'refused without the key');
  t.equal((await call(server.url, 'GET', '/collections', undefined, { 'api-key': 'reader' })).status, 200, 'served with it');
});
