// Recovering a collection snapshot from a URL whose server misbehaves: one that accepts the
// connection and never answers, one that sends headers and then stalls the body, and a port
// nobody listens on. Each recovery ends within its configured bound
// (`storage.snapshot_download.*`) with Qdrant's error body, leaves no partial download behind
// and changes nothing; while a recovery is stuck, the collection keeps answering searches and
// upserts.

import t, { type Test } from 'tap';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { assertError, call, resultOf, stopAtEnd, type RawResponse } from './helpers/api-http.js';
import { freePort, startServer } from './helpers/server.js';

/** Short bounds, so a stuck recovery fails within seconds; long enough to search and upsert meanwhile. */
const BOUND_SEC = 4;

t.test('storage.snapshot_download: defaults, environment, refusal of a bad value', async (t) => {
  const defaults = loadConfig([], {});
  t.same(defaults.storage.snapshot_download, { connect_timeout_sec: 10, response_timeout_sec: 60, read_timeout_sec: 60 });
  const fromEnv = loadConfig([], { QDRANT__STORAGE__SNAPSHOT_DOWNLOAD__READ_TIMEOUT_SEC: '2.5', QDRANT__STORAGE__SNAPSHOT_DOWNLOAD__CONNECT_TIMEOUT_SEC: '3' });
  t.same(fromEnv.storage.snapshot_download, { connect_timeout_sec: 3, response_timeout_sec: 60, read_timeout_sec: 2.5 });
  t.throws(() => loadConfig([], { QDRANT__STORAGE__SNAPSHOT_DOWNLOAD__RESPONSE_TIMEOUT_SEC: '0' }), /invalid storage\.snapshot_download\.response_timeout_sec: 0/);
  t.throws(() => loadConfig([], { QDRANT__STORAGE__SNAPSHOT_DOWNLOAD__READ_TIMEOUT_SEC: 'soon' }), /invalid storage\.snapshot_download\.read_timeout_sec/);
});

/** Resolves when `count` has reached `n` or rejects after `ms`: waits on a condition, with a bound. */
function waitFor(what: string, condition: () => boolean, ms = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      if (condition()) return resolve();
      if (Date.now() - started > ms) return reject(new Error(`timed out waiting for ${what}`));
      setImmediate(check);
    };
    check();
  });
}

t.test('a recovery from a stuck or refused URL is bounded, answered in Qdrant\'s format, and never blocks the collection', async (t) => {
  const bound = String(BOUND_SEC);
  const server = await startServer({
    workers: 1,
    env: {
      QDRANT__STORAGE__SNAPSHOT_DOWNLOAD__CONNECT_TIMEOUT_SEC: bound,
      QDRANT__STORAGE__SNAPSHOT_DOWNLOAD__RESPONSE_TIMEOUT_SEC: bound,
      QDRANT__STORAGE__SNAPSHOT_DOWNLOAD__READ_TIMEOUT_SEC: bound,
    },
  });
  stopAtEnd(t, server);
  const base = server.url;
  resultOf(t, await call(base, 'PUT', '/collections/live', { vectors: { size: 2, distance: 'Dot' } }));
  resultOf(t, await call(base, 'PUT', '/collections/live/points?wait=true', { points: [{ id: 1, vector: [1, 0], payload: { n: 1 } }, { id: 2, vector: [0, 1], payload: { n: 2 } }] }));
  const tempDir = join(server.storage, 'snapshots', '.tmp');
  const downloads = async () => (await readdir(tempDir).catch(() => [] as string[])).filter((n) => n.startsWith('download-'));

  // Accepts connections and reads the request, never answers.
  const silentSockets: Socket[] = [];
  let silentRequests = 0;
  const silent = createTcpServer((socket) => {
    silentSockets.push(socket);
    socket.on('data', () => silentRequests++);
  });
  // Sends headers announcing a body and a first part of it, then nothing.
  const stalled: ServerResponse[] = [];
  const stalling = createHttpServer((_request, response) => {
    stalled.push(response);
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(1 << 20) });
    response.write(Buffer.alloc(4096, 7));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of silentSockets) s.destroy();
    for (const r of stalled) r.destroy();
    silent.close();
    stalling.close();
  });
  const portOf = (s: { address(): unknown }) => (s.address() as { port: number }).port;

  /**
   * Starts a recovery from `url`; once `stuck()` says the misbehaving server holds it, checks the
   * collection answers a search and an upsert (and that the recovery is still waiting), then
   * answers the recovery's response and how long it took.
   */
  async function recoverWhileServing(t: Test, url: string, stuck: () => boolean, id: number): Promise<{ response: RawResponse; seconds: number }> {
    const started = performance.now();
    let settled = false;
    const recovery = call(base, 'PUT', '/collections/live/snapshots/recover', { location: url }).finally(() => (settled = true));
    await waitFor('the recovery to reach the stuck server', () => stuck() || settled);
    t.notOk(settled, 'the recovery is waiting on the stuck server');
    const hits = resultOf<{ id: number }[]>(t, await call(base, 'POST', '/collections/live/points/search', { vector: [1, 0], limit: 1 }));
    t.equal(hits[0]?.id, 1, 'a search is answered meanwhile');
    const write = resultOf<{ status: string }>(t, await call(base, 'PUT', '/collections/live/points?wait=true', { points: [{ id, vector: [0.5, 0.5] }] }));
    t.equal(write.status, 'completed', 'an upsert is answered meanwhile');
    t.notOk(settled, 'the recovery was still waiting while both were answered');
    const response = await recovery;
    return { response, seconds: (performance.now() - started) / 1000 };
  }

  async function unchanged(t: Test, ids: number[]): Promise<void> {
    const count = resultOf<{ count: number }>(t, await call(base, 'POST', '/collections/live/points/count', { exact: true }));
    t.equal(count.count, ids.length, 'the collection kept every point');
    const points = resultOf<{ id: number }[]>(t, await call(base, 'POST', '/collections/live/points', { ids }));
    t.same(points.map((p) => p.id).sort(), [...ids].sort(), 'including the one written during the recovery');
    t.same(await downloads(), [], 'no partial download left in the snapshots temp folder');
  }

  await t.test('accepts and never answers: 500 once the response timeout passes', async (t) => {
    const url = `http://127.0.0.1:${portOf(silent)}/never.snapshot`;
    const { response, seconds } = await recoverWhileServing(t, url, () => silentRequests > 0, 10);
    assertError(t, response, 500, `Service internal error: Http request error: error sending request for url (${url}): no response within ${BOUND_SEC} s`);
    t.ok(seconds >= BOUND_SEC - 0.5 && seconds < BOUND_SEC + 10, `ended after ${seconds.toFixed(1)} s, near the ${BOUND_SEC} s bound`);
    await waitFor('the stuck connection to be closed by the server', () => silentSockets.every((s) => s.destroyed || s.readableEnded));
    t.pass('the connection to the stuck server was closed');
    await unchanged(t, [1, 2, 10]);
  });

  await t.test('headers, then a stalled body: 500 once the read timeout passes', async (t) => {
    const url = `http://127.0.0.1:${portOf(stalling)}/stalls.snapshot`;
    const { response, seconds } = await recoverWhileServing(t, url, () => stalled.length > 0, 11);
    assertError(t, response, 500, 'Service internal error: Failed to unpack tar archive: stream read timeout: no data received within timeout period');
    t.ok(seconds >= BOUND_SEC - 0.5 && seconds < BOUND_SEC + 10, `ended after ${seconds.toFixed(1)} s, near the ${BOUND_SEC} s bound`);
    await unchanged(t, [1, 2, 10, 11]);
  });

  await t.test('connection refused: 500 at once', async (t) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/refused.snapshot`;
    const started = performance.now();
    const response = await call(base, 'PUT', '/collections/live/snapshots/recover', { location: url });
    assertError(t, response, 500, `Service internal error: Http request error: error sending request for url (${url}): connect ECONNREFUSED 127.0.0.1:${port}`);
    t.ok(performance.now() - started < BOUND_SEC * 1000, 'without waiting for any bound');
    await unchanged(t, [1, 2, 10, 11]);
  });

  await t.test('a recovery of a collection that does not exist yet creates nothing when the download fails', async (t) => {
    const url = `http://127.0.0.1:${portOf(silent)}/never.snapshot`;
    assertError(t, await call(base, 'PUT', '/collections/newborn/snapshots/recover', { location: url }), 500, /^Service internal error: Http request error: /);
    assertError(t, await call(base, 'GET', '/collections/newborn'), 404, "Not found: Collection `newborn` doesn't exist!");
  });
});
