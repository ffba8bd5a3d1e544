// Snapshots against the real server: collection, shard and full-storage snapshots are created,
// listed, downloaded (bytes match the SHA-256 Qdrant reports) and deleted; recovery from a
// loopback HTTP server (with its api-key header), a file:// location and a multipart upload gives
// back exactly the points and search results of the snapshot; a wrong checksum, a truncated
// archive and a foreign collection's snapshot are refused with the old data still served
// byte-identically; recovered data survives a restart; --storage-snapshot recovers everything.

import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { shardOf } from '../src/shard/routing.js';
import { assertError, call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { ONE_PEER_CLUSTER, SINGLE_NODE_ENV, startServer, type RunningServer } from './helpers/server.js';

const DIM = 8;
const SHARDS = 2;
const SNAPSHOT_NAME = /^src-\d+-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.snapshot$/;

interface Description {
  name: string;
  creation_time: string | null;
  size: number;
  checksum: string | null;
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

function vectorOf(i: number, dim = DIM): number[] {
  return Array.from({ length: dim }, (_, j) => Math.round(Math.sin(i * 0.7 + j * 1.3) * 1000) / 100);
}

const IDS: (number | string)[] = [...Array.from({ length: 150 }, (_, i) => i + 1), ...Array.from({ length: 10 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)];

const QUERIES = [0.5, 3.3, 17.1, 42.9].map((q) => vectorOf(q));

/** Everything a client can read of a collection: its points (ids, vectors, payloads), searches, counts, index schema. */
async function stateOf(t: Test, base: string, name: string): Promise<string> {
  const points = resultOf<{ points: unknown[] }>(t, await call(base, 'POST', `/collections/${name}/points/scroll`, { limit: 1000, with_payload: true, with_vector: true })).points;
  const searches = [];
  for (const vector of QUERIES) searches.push(resultOf(t, await call(base, 'POST', `/collections/${name}/points/search`, { vector, limit: 10, with_payload: true })));
  const filtered = resultOf(t, await call(base, 'POST', `/collections/${name}/points/count`, { filter: { must: [{ key: 'group', range: { gte: 2 } }] }, exact: true }));
  const info = resultOf<{ points_count: number; payload_schema: unknown; config: { params: unknown } }>(t, await call(base, 'GET', `/collections/${name}`));
  return JSON.stringify({ points, searches, filtered, points_count: info.points_count, payload_schema: info.payload_schema, params: info.config.params });
}

async function download(base: string, path: string): Promise<Uint8Array> {
  const response = await fetch(base + path);
  if (!response.ok) throw new Error(`download ${path}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function upload(base: string, path: string, bytes: Uint8Array): Promise<{ status: number; body: unknown }> {
  const form = new FormData();
  form.append('snapshot', new Blob([Buffer.from(bytes)]), 'snapshot.tar');
  const response = await fetch(base + path, { method: 'POST', body: form });
  return { status: response.status, body: await response.json() };
}

/** A loopback HTTP server serving fixed files, recording the api-key header of each request. */
async function fileServer(t: Test, files: Map<string, Uint8Array>): Promise<{ url: string; keys: (string | undefined)[] }> {
  const keys: (string | undefined)[] = [];
  const server = createServer((request, response) => {
    keys.push((request.headers as IncomingHttpHeaders)['api-key'] as string | undefined);
    const body = files.get(request.url ?? '');
    if (!body) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, keys };
}

async function seed(t: Test, base: string): Promise<void> {
  resultOf(t, await call(base, 'PUT', '/collections/src', { vectors: { size: DIM, distance: 'Euclid' }, shard_number: SHARDS }));
  resultOf(t, await call(base, 'PUT', '/collections/src/index?wait=true', { field_name: 'group', field_schema: 'integer' }));
  const points = IDS.map((id, i) => ({ id, vector: vectorOf(i), payload: { group: i % 5, name: `p${i}`, tags: [i % 2 === 0 ? 'even' : 'odd'] } }));
  resultOf(t, await call(base, 'PUT', '/collections/src/points?wait=true', { points: points.slice(0, 80) }));
  resultOf(t, await call(base, 'PUT', '/collections/src/points?wait=true', { points: points.slice(80) }));
  // A second operation on some points, so versions differ between points.
  resultOf(t, await call(base, 'POST', '/collections/src/points/payload?wait=true', { payload: { touched: true }, points: [3, 4, 5] }));
  resultOf(t, await call(base, 'POST', '/collections/aliases', { actions: [{ create_alias: { collection_name: 'src', alias_name: 'src-alias' } }] }));
  resultOf(t, await call(base, 'PUT', '/collections/other', { vectors: { size: 4, distance: 'Cosine' }, shard_number: SHARDS }));
  resultOf(t, await call(base, 'PUT', '/collections/other/points?wait=true', { points: [1, 2, 3, 4, 5, 6].map((id) => ({ id, vector: vectorOf(id, 4) })) }));
}

/** Changes src so that a recovery visibly undoes it. */
async function mutate(t: Test, base: string, tag: string): Promise<void> {
  resultOf(t, await call(base, 'PUT', '/collections/src/points?wait=true', { points: [{ id: 9999, vector: vectorOf(9999), payload: { group: 4, tag } }] }));
  resultOf(t, await call(base, 'POST', '/collections/src/points/delete?wait=true', { points: [1, 2, IDS[150]] }));
  resultOf(t, await call(base, 'POST', '/collections/src/points/payload?wait=true', { payload: { tag }, filter: { must: [{ key: 'group', match: { value: 1 } }] } }));
}

t.test('snapshots', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const base = server.url;
  const snapshotsDir = join(server.storage, 'snapshots');
  await seed(t, base);
  const original = await stateOf(t, base, 'src');

  // Collection snapshot: create, list, download.
  const created = resultOf<Description>(t, await call(base, 'POST', '/collections/src/snapshots?wait=true'));
  t.match(created.name, SNAPSHOT_NAME, 'named {collection}-{peer id}-{date}.snapshot');
  t.match(created.checksum, /^[0-9a-f]{64}$/, 'SHA-256 checksum');
  t.match(created.creation_time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/, 'creation time');
  const listed = resultOf<Description[]>(t, await call(base, 'GET', '/collections/src/snapshots'));
  t.same(listed, [created], 'listed with the same description');
  const archive = await download(base, `/collections/src/snapshots/${created.name}`);
  t.equal(archive.length, created.size, 'download has the listed size');
  t.equal(sha256(archive), created.checksum, 'download hashes to the listed checksum');
  t.equal(await readFile(join(snapshotsDir, 'src', `${created.name}.checksum`), 'utf8'), created.checksum, 'checksum file beside the snapshot');
  t.same(resultOf(t, await call(base, 'GET', '/collections/src-alias/snapshots')), [created], 'listing through an alias');
  assertError(t, await call(base, 'GET', '/collections/nope/snapshots'), 404, "Not found: Collection `nope` doesn't exist!", 'listing of a missing collection');
  assertError(t, await call(base, 'GET', '/collections/src/snapshots/missing.snapshot'), 404, 'Not found: Snapshot missing.snapshot not found', 'missing snapshot');
  assertError(t, await call(base, 'GET', '/collections/src/snapshots/..%2F..%2Fmeta%2FCURRENT'), 404, /^Not found: Snapshot /, 'path traversal');

  const served = await fileServer(t, new Map([['/src.snapshot', archive], ['/truncated.snapshot', archive.subarray(0, Math.floor(archive.length / 2))]]));

  await t.test('recover from an http URL sends the api key and restores every point, vector, payload and search result', async (t) => {
    await mutate(t, base, 'changed');
    t.not(await stateOf(t, base, 'src'), original, 'the collection changed since the snapshot');
    const result = resultOf(t, await call(base, 'PUT', '/collections/src/snapshots/recover', { location: `${served.url}/src.snapshot`, checksum: created.checksum, api_key: 'secret-key', priority: 'snapshot' }));
    t.equal(result, true);
    t.equal(served.keys.at(-1), 'secret-key', 'api-key header sent to the snapshot server');
    t.equal(await stateOf(t, base, 'src'), original, 'state equals the snapshot');
    t.same(resultOf(t, await call(base, 'GET', '/collections/src-alias/exists')), { exists: true }, 'alias kept');
    const write = resultOf<{ operation_id: number }>(t, await call(base, 'PUT', '/collections/src/points?wait=true', { points: [{ id: 7777, vector: vectorOf(7777) }] }));
    t.ok(write.operation_id > 3, `operation ids continue after the recovered ones (${write.operation_id})`);
    resultOf(t, await call(base, 'POST', '/collections/src/points/delete?wait=true', { points: [7777] }));
  });

  await t.test('a wrong checksum or a truncated archive changes nothing', async (t) => {
    await mutate(t, base, 'kept');
    const before = await stateOf(t, base, 'src');
    const wrong = '3'.repeat(64);
    assertError(t, await call(base, 'PUT', '/collections/src/snapshots/recover', { location: `${served.url}/src.snapshot`, checksum: wrong }), 400, `Checksum mismatch: expected ${wrong}, actual ${created.checksum}`, 'wrong checksum');
    t.equal(await stateOf(t, base, 'src'), before, 'old data served byte-identically after the checksum mismatch');
    assertError(t, await call(base, 'PUT', '/collections/src/snapshots/recover', { location: `${served.url}/truncated.snapshot` }), 400, /^Bad request: Invalid snapshot archive: /, 'truncated archive');
    t.equal(await stateOf(t, base, 'src'), before, 'old data served byte-identically after the truncated archive');
    assertError(t, await call(base, 'PUT', '/collections/src/snapshots/recover', { location: `${served.url}/absent.snapshot` }), 400, `Wrong input: Failed to download tar from ${served.url}/absent.snapshot: status - 404 Not Found`, 'download failure (Qdrant 1.19 download_tar.rs)');
    const truncatedUpload = await upload(base, '/collections/src/snapshots/upload', archive.subarray(0, archive.length - 700));
    assertError(t, truncatedUpload, 400, /^Bad request: Invalid snapshot archive: /, 'truncated upload');
    assertError(t, await upload(base, `/collections/fresh/snapshots/upload?checksum=${wrong}`, archive), 400, `Checksum mismatch: expected ${wrong}, actual ${created.checksum}`, 'upload with a wrong checksum');
    assertError(t, await call(base, 'GET', '/collections/fresh'), 404, "Not found: Collection `fresh` doesn't exist!", 'no collection created by the refused upload');
    t.equal(await stateOf(t, base, 'src'), before, 'still the same');
  });

  await t.test('recover from a file:// location inside the snapshots directory, and by upload, into new collections', async (t) => {
    const location = `file://${join(snapshotsDir, 'src', created.name)}`;
    // Every priority restores the snapshot's data on one node: no_sync here, replica by upload, snapshot above.
    t.equal(resultOf(t, await call(base, 'PUT', '/collections/copy/snapshots/recover', { location, priority: 'no_sync' })), true);
    t.equal(await stateOf(t, base, 'copy'), original, 'file recovery creates a collection equal to the snapshot');
    const uploaded = await upload(base, `/collections/uploaded/snapshots/upload?priority=replica&checksum=${created.checksum}`, archive);
    t.equal(resultOf(t, uploaded), true);
    t.equal(await stateOf(t, base, 'uploaded'), original, 'upload creates a collection equal to the snapshot');
    assertError(t, await call(base, 'PUT', '/collections/copy/snapshots/recover', { location: 'file:///etc/passwd' }), 403, 'Forbidden: Snapshot file path must be inside the snapshots directory', 'file outside the snapshots directory');
    assertError(t, await call(base, 'PUT', '/collections/copy/snapshots/recover', { location: 'file://whatever.snapshot' }), 400, 'Bad request: Invalid snapshot URI, file path must be absolute or on localhost', 'file URL with a host');
    assertError(t, await call(base, 'PUT', '/collections/copy/snapshots/recover', { location: 'file:///whatever.snapshot' }), 400, 'Bad request: Snapshot file "/whatever.snapshot" does not exist', 'missing file');
    assertError(t, await call(base, 'PUT', '/collections/copy/snapshots/recover', { location: 'ftp://host/x.snapshot' }), 400, 'Bad request: URL ftp://host/x.snapshot with scheme ftp is not supported', 'unsupported scheme');
    assertError(t, await call(base, 'PUT', '/collections/copy/snapshots/recover', { location: `${served.url}/src.snapshot`, priority: 'first' }), 400, /^Format error in JSON body: unknown variant `first`, expected one of `no_sync`, `snapshot`, `replica`/, 'bad priority');
    const notMultipart = await call(base, 'POST', '/collections/copy/snapshots/upload', {});
    t.equal(notMultipart.status, 400, 'upload without a multipart body is refused');
    t.equal(await stateOf(t, base, 'copy'), original, 'refused recoveries left the copy alone');
  });

  await t.test('shard snapshots: create, list, download, recover one shard, refuse foreign ones', async (t) => {
    t.equal(resultOf(t, await call(base, 'PUT', '/collections/src/snapshots/recover', { location: `${served.url}/src.snapshot` })), true);
    const shard = resultOf<Description>(t, await call(base, 'POST', '/collections/src/shards/1/snapshots'));
    t.match(shard.name, /^src-shard-1-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.snapshot$/, 'named {collection}-shard-{id}-{date}.snapshot');
    t.same(resultOf(t, await call(base, 'GET', '/collections/src/shards/1/snapshots')), [shard], 'listed');
    t.same(resultOf(t, await call(base, 'GET', '/collections/src/shards/0/snapshots')), [], 'not listed under another shard');
    const shardArchive = await download(base, `/collections/src/shards/1/snapshots/${shard.name}`);
    t.equal(sha256(shardArchive), shard.checksum, 'download hashes to the checksum');
    t.ok((await readFile(join(snapshotsDir, 'src', 'shards', '1', shard.name))).equals(shardArchive), 'stored under <snapshots>/<collection>/shards/<id>/');

    const otherShard = resultOf<Description>(t, await call(base, 'POST', '/collections/other/shards/0/snapshots'));
    const otherArchive = await download(base, `/collections/other/shards/0/snapshots/${otherShard.name}`);
    const streamed = await download(base, '/collections/src/shards/0/snapshot');
    const shard1Ids = IDS.filter((id) => shardOf(id, SHARDS) === 1);
    served.keys.length = 0;
    const files = new Map([['/shard1', shardArchive], ['/other', otherArchive], ['/shard0', streamed], ['/collection', archive]]);
    const shardServer = await fileServer(t, files);

    await mutate(t, base, 'shard-mutation');
    const mutated = resultOf<{ points: { id: number | string; payload: Record<string, unknown> }[] }>(t, await call(base, 'POST', '/collections/src/points/scroll', { limit: 1000, with_payload: true, with_vector: true })).points;
    const before = await stateOf(t, base, 'src');
    assertError(t, await call(base, 'PUT', '/collections/src/shards/0/snapshots/recover', { location: `${shardServer.url}/other` }), 400, /^Wrong input: Snapshot is not compatible with existing collection src: /, 'foreign collection with other vectors');
    assertError(t, await call(base, 'PUT', '/collections/src/shards/0/snapshots/recover', { location: `${shardServer.url}/shard1` }), 400, /^Bad request: Invalid snapshot archive: point .* belongs to shard 1, not shard 0$/, 'another shard\'s snapshot');
    assertError(t, await call(base, 'PUT', '/collections/src/shards/0/snapshots/recover', { location: `${shardServer.url}/collection` }), 400, 'Bad request: Invalid snapshot archive: it is a collection snapshot, not a shard snapshot', 'a collection snapshot');
    assertError(t, await call(base, 'PUT', '/collections/src/shards/0/snapshots/recover', { location: `${shardServer.url}/shard1`, checksum: 'abc' }), 400, `Checksum mismatch: expected abc, actual ${shard.checksum}`, 'wrong checksum');
    assertError(t, await call(base, 'PUT', '/collections/src/shards/7/snapshots/recover', { location: `${shardServer.url}/shard1` }), 404, 'Not found: shard 7 not found', 'missing shard');
    t.equal(await stateOf(t, base, 'src'), before, 'refused shard recoveries changed nothing');

    t.equal(resultOf(t, await call(base, 'PUT', '/collections/src/shards/1/snapshots/recover', { location: `${shardServer.url}/shard1`, checksum: shard.checksum, api_key: 'k1' })), true);
    t.equal(shardServer.keys.at(-1), 'k1', 'api-key header sent');
    const originalPoints = (JSON.parse(original) as { points: { id: number | string }[] }).points;
    const after = resultOf<{ points: { id: number | string }[] }>(t, await call(base, 'POST', '/collections/src/points/scroll', { limit: 1000, with_payload: true, with_vector: true })).points;
    const inShard = (shard: number) => (p: { id: number | string }) => shardOf(p.id, SHARDS) === shard;
    t.same(after.filter(inShard(1)), originalPoints.filter(inShard(1)), 'shard 1 holds exactly its snapshot');
    t.same(after.filter(inShard(0)), mutated.filter(inShard(0)), 'shard 0 kept its newer data');
    t.ok(shard1Ids.length > 0 && after.filter(inShard(1)).length === shard1Ids.length, 'every point of shard 1 is back');

    // The streamed state of shard 0 (taken before the mutation) restores it too, by upload.
    const streamedUpload = await upload(base, '/collections/src/shards/0/snapshots/upload', streamed);
    t.equal(resultOf(t, streamedUpload), true, JSON.stringify(streamedUpload.body));
    t.equal(await stateOf(t, base, 'src'), original, 'both shards recovered: the collection equals the snapshot again');

    t.equal(resultOf(t, await call(base, 'DELETE', `/collections/src/shards/1/snapshots/${shard.name}`)), true);
    t.same(resultOf(t, await call(base, 'GET', '/collections/src/shards/1/snapshots')), [], 'deleted');
    assertError(t, await call(base, 'DELETE', `/collections/src/shards/1/snapshots/${shard.name}`), 404, `Not found: Snapshot ${shard.name} not found`, 'deleted twice');
  });

  await t.test('create without waiting answers 202; delete removes the snapshot and its checksum', async (t) => {
    const response = await fetch(`${base}/collections/other/snapshots?wait=false`, { method: 'POST' });
    t.equal(response.status, 202);
    t.same(Object.keys(await response.json() as object).sort(), ['status', 'time']);
    const deadline = Date.now() + 20_000;
    let listed: Description[] = [];
    while (listed.length === 0 && Date.now() < deadline) listed = resultOf<Description[]>(t, await call(base, 'GET', '/collections/other/snapshots'));
    t.equal(listed.length, 1, 'the snapshot appears');
    t.equal(resultOf(t, await call(base, 'DELETE', `/collections/src/snapshots/${created.name}?wait=true`)), true);
    t.same(resultOf(t, await call(base, 'GET', '/collections/src/snapshots')), [], 'gone from the listing');
    await t.rejects(readFile(join(snapshotsDir, 'src', `${created.name}.checksum`)), 'checksum file removed');
    assertError(t, await call(base, 'DELETE', `/collections/src/snapshots/${created.name}`), 404, `Not found: Snapshot ${created.name} not found`);
  });

  let fullArchive: Uint8Array = new Uint8Array();
  await t.test('full-storage snapshots', async (t) => {
    const full = resultOf<Description>(t, await call(base, 'POST', '/snapshots'));
    t.match(full.name, /^full-snapshot-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.snapshot$/);
    t.same(resultOf(t, await call(base, 'GET', '/snapshots')), [full], 'listed alone (collection folders are not snapshots)');
    fullArchive = await download(base, `/snapshots/${full.name}`);
    t.equal(sha256(fullArchive), full.checksum, 'download hashes to the checksum');
    assertError(t, await call(base, 'GET', '/snapshots/..%2Fmeta'), 404, /^Not found: Snapshot /, 'path traversal');
    t.equal(resultOf(t, await call(base, 'DELETE', `/snapshots/${full.name}`)), true);
    t.same(resultOf(t, await call(base, 'GET', '/snapshots')), [], 'deleted');
  });

  await t.test('recovered collections persist across a restart', async (t) => {
    const expected = { src: await stateOf(t, base, 'src'), copy: await stateOf(t, base, 'copy'), uploaded: await stateOf(t, base, 'uploaded') };
    t.equal(expected.src, original);
    await server.stop();
    const again: RunningServer = await startServer({ storage: server.storage });
    t.teardown(() => again.stop());
    for (const [name, state] of Object.entries(expected)) t.equal(await stateOf(t, again.url, name), state, `${name} after restart`);
    await again.stop();
  });

  await t.test('--storage-snapshot recovers every collection and alias at start-up', async (t) => {
    const file = join(server.storage, 'full.snapshot');
    await writeFile(file, fullArchive);
    const env = { QDRANT__SERVICE__MAX_SNAPSHOT_UPLOAD_MB: '0.001' };
    if (ONE_PEER_CLUSTER) {
      // A cluster peer takes its collections from the cluster, so it refuses a full-storage
      // recovery (as Qdrant's is a single node's); the snapshot a peer took recovers on a single node.
      await t.rejects(startServer({ args: ['--storage-snapshot', file] }), /Cannot start: --storage-snapshot recovers a single node's storage/, 'a cluster peer refuses --storage-snapshot');
    }
    const fresh = await startServer({ args: ['--storage-snapshot', file], env: ONE_PEER_CLUSTER ? { ...env, ...SINGLE_NODE_ENV } : env });
    stopAtEnd(t, fresh);
    const names = resultOf<{ collections: { name: string }[] }>(t, await call(fresh.url, 'GET', '/collections')).collections.map((c) => c.name).sort();
    t.same(names, ['copy', 'other', 'src', 'uploaded']);
    t.equal(await stateOf(t, fresh.url, 'src'), original, 'src equals the original');
    t.equal(await stateOf(t, fresh.url, 'src-alias'), original, 'alias recovered');
    const tooLarge = await upload(fresh.url, '/collections/big/snapshots/upload', archive);
    assertError(t, tooLarge, 413, /^Payload too large: the snapshot upload exceeds the limit of 0.001 MB$/, 'upload over the configured limit');
  });
});
