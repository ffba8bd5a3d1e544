// A `snapshot` transfer's part on the wire: the source serves it on its p2p port behind the API
// key (src/cluster/transfer-parts.ts), the receiving worker downloads it with the headers the
// source gave (src/shard/part-download.ts) and checks its size; names outside the parts' own
// form are not served, and a start empties what a previous process left.

import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { TransferParts } from '../src/cluster/transfer-parts.js';
import { buildP2pApp } from '../src/peer/p2p-server.js';
import { discard, downloadPart } from '../src/shard/part-download.js';

const KEY = 'transfer-key';

t.test('served behind the API key, downloaded with it, size checked', async (t) => {
  const storage = await mkdtemp(join(tmpdir(), 'quiver-parts-'));
  t.teardown(() => rm(storage, { recursive: true, force: true }));
  await writeFile(join(storage, 'keep'), 'x');
  const leftover = join(storage, 'cluster', 'transfer-parts', 'old.part');
  const parts = await TransferParts.open(storage);
  t.same(await readdir(parts.dir), [], 'an empty folder');
  await writeFile(leftover, 'left by a crash');
  t.same(await readdir((await TransferParts.open(storage)).dir), [], 'a start removes what a previous process left');

  const app = buildP2pApp({
    host: { localReplica: () => null, forward: () => Promise.reject(new Error('no leader here')), awaitRevision: async () => true },
    apiKey: KEY,
    revisionWaitMs: 1000,
    plugins: [parts.route()],
  });
  t.teardown(() => app.close());
  const address = await app.listen({ host: '127.0.0.1', port: 0 });

  const part = parts.create();
  const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
  await writeFile(part.path, bytes);
  const url = TransferParts.url(`${address}/`, part.path.split('/').pop()!);
  t.equal(url, `${address}/p2p/transfer-parts/${part.name}`);

  const shardPath = join(storage, 'shard-0');
  const slice = await downloadPart({ url, headers: { 'api-key': KEY }, size: bytes.length }, shardPath);
  t.same(await readFile(slice.path), bytes, 'the same bytes, beside the shard');
  t.same([slice.offset, slice.size], [0, bytes.length]);
  await discard(slice.path);

  await t.rejects(downloadPart({ url, headers: {}, size: bytes.length }, shardPath), { message: `Service internal error: downloading the shard part ${url}: HTTP 401` }, 'no key: refused');
  await t.rejects(downloadPart({ url, headers: { 'api-key': 'wrong' }, size: bytes.length }, shardPath), { message: `Service internal error: downloading the shard part ${url}: HTTP 401` }, 'a wrong key: refused');
  await t.rejects(downloadPart({ url, headers: { 'api-key': KEY }, size: bytes.length + 1 }, shardPath), { message: `Service internal error: downloading the shard part ${url}: ${bytes.length} bytes instead of ${bytes.length + 1}` }, 'cut short: refused');
  const missing = TransferParts.url(address, parts.create().name);
  await t.rejects(downloadPart({ url: missing, headers: { 'api-key': KEY }, size: 1 }, shardPath), { message: `Service internal error: downloading the shard part ${missing}: HTTP 404` }, 'a part not there');
  const outside = await app.inject({ method: 'GET', url: '/p2p/transfer-parts/..%2Fkeep', headers: { 'api-key': KEY } });
  t.equal(outside.statusCode, 404, 'only names of parts are served');
  t.same((await readdir(storage)).sort(), ['cluster', 'keep'], 'no download left beside the shard');
  await parts.remove(part.path);
  t.same(await readdir(parts.dir), []);
});
