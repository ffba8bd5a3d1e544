// Crashes in the middle of collection lifecycle operations leave no storage behind: at start the
// server removes every folder under collections/ that no collection record names (after shards
// settle an interrupted snapshot swap) and the snapshot temporaries, and every collection it
// reports exists and works. First with planted leftovers of each kind, then with kill -9 during
// a stream of creates, deletes, upserts and snapshot recoveries.

import t, { type Test } from 'tap';
import { cp, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { v4 as randomUUID } from 'uuid';
import { call, resultOf, stopAtEnd, type RawResponse } from './helpers/api-http.js';
import { startServer, type RunningServer } from './helpers/server.js';
import { compareFolders, storedState } from './helpers/storage-folders.js';

const DIM = 16;

function vector(id: number): number[] {
  return Array.from({ length: DIM }, (_, j) => Math.sin(id * 0.31 + j));
}

const points = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, vector: vector(from + i), payload: { n: from + i } }));

async function upload(base: string, path: string, bytes: Uint8Array): Promise<RawResponse> {
  const form = new FormData();
  form.append('snapshot', new Blob([Buffer.from(bytes)]), 'seed.snapshot');
  const response = await fetch(base + path, { method: 'POST', body: form });
  return { status: response.status, body: await response.json().catch(() => null) };
}

/** Every collection the server lists answers its info, takes an upsert and finds it by search. */
async function everyCollectionWorks(t: Test, base: string): Promise<string[]> {
  const { collections } = resultOf<{ collections: { name: string }[] }>(t, await call(base, 'GET', '/collections'));
  for (const { name } of collections) {
    resultOf(t, await call(base, 'GET', `/collections/${name}`));
    const { shard_keys: keys } = resultOf<{ shard_keys: { key: string }[] | null }>(t, await call(base, 'GET', `/collections/${name}/shards`));
    const id = 777_777;
    resultOf(t, await call(base, 'PUT', `/collections/${name}/points?wait=true`, { points: [{ id, vector: vector(id) }], ...(keys ? { shard_key: keys[0].key } : {}) }));
    const found = resultOf<{ id: number }[]>(t, await call(base, 'POST', `/collections/${name}/points`, { ids: [id] }));
    t.same(found.map((p) => p.id), [id], `${name} takes an upsert after the restart`);
    const hits = resultOf<{ id: number; score: number }[]>(t, await call(base, 'POST', `/collections/${name}/points/search`, { vector: vector(id), limit: 1, params: { exact: true } }));
    t.ok(hits.length === 1 && hits[0].score > 0.9999, `${name} searches after the restart`);
  }
  return collections.map((c) => c.name);
}

async function storageMatchesRecords(t: Test, server: RunningServer): Promise<void> {
  t.equal(await server.stop(), 0, 'the server stops cleanly');
  const { records } = await storedState(server.storage);
  const { orphans, missing } = await compareFolders(server.storage, records);
  t.same(orphans, [], 'no folder under collections/ that no record names');
  t.same(missing, [], 'every shard folder a record names exists');
}

t.test('start-up removes planted leftovers of interrupted creates, deletes, recoveries and snapshots', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const base = server.url;
  resultOf(t, await call(base, 'PUT', '/collections/kept', { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 2 }));
  resultOf(t, await call(base, 'PUT', '/collections/kept/points?wait=true', { points: points(1, 200) }));
  resultOf(t, await call(base, 'PUT', '/collections/keyed', { vectors: { size: DIM, distance: 'Cosine' }, sharding_method: 'custom' }));
  resultOf(t, await call(base, 'PUT', '/collections/keyed/shards', { shard_key: 'k' }));
  resultOf(t, await call(base, 'PUT', '/collections/keyed/points?wait=true', { points: points(1, 20), shard_key: 'k' }));
  const snapshot = resultOf<{ name: string }>(t, await call(base, 'POST', '/collections/kept/snapshots'));
  t.equal(await server.stop(), 0);

  const { records } = await storedState(server.storage);
  const kept = records.find((r) => r.name === 'kept')!;
  const keyed = records.find((r) => r.name === 'keyed')!;
  const collections = join(server.storage, 'collections');
  // A create or recovery cut short before its record was stored, a delete cut short after:
  const orphan = randomUUID();
  await cp(join(collections, kept.storageId), join(collections, orphan), { recursive: true });
  // A shard-key creation cut short before the key list was stored:
  await cp(join(collections, keyed.storageId, '1'), join(collections, keyed.storageId, '2'), { recursive: true });
  // A shard recovery cut short: a staged store, and an old store already moved aside and back.
  await cp(join(collections, kept.storageId, '0'), join(collections, kept.storageId, `0.recovering-${randomUUID()}`), { recursive: true });
  await cp(join(collections, kept.storageId, '1'), join(collections, kept.storageId, `1.replaced-${randomUUID()}`), { recursive: true });
  // Snapshot temporaries: a download, a checksum under its temporary name, a checksum of a snapshot never renamed into place.
  const snapshots = join(server.storage, 'snapshots');
  await mkdir(join(snapshots, '.tmp'), { recursive: true });
  await writeFile(join(snapshots, '.tmp', `download-${randomUUID()}`), Buffer.alloc(4096));
  await writeFile(join(snapshots, 'kept', `kept-1-2020-01-01-00-00-00.snapshot.checksum.tmp-${randomUUID()}`), 'x');
  await writeFile(join(snapshots, 'kept', 'kept-1-2020-01-01-00-00-01.snapshot.checksum'), 'y');
  t.same((await compareFolders(server.storage, records)).orphans.length, 4, 'four leftover folders planted');

  const again = await startServer({ storage: server.storage });
  stopAtEnd(t, again);
  t.same((await everyCollectionWorks(t, again.url)).sort(), ['keyed', 'kept'].sort());
  const count = resultOf<{ count: number }>(t, await call(again.url, 'POST', '/collections/kept/points/count', { exact: true }));
  t.equal(count.count, 201, 'kept has its 200 points and the new one');
  const keyedCount = resultOf<{ count: number }>(t, await call(again.url, 'POST', '/collections/keyed/points/count', { exact: true }));
  t.equal(keyedCount.count, 21, 'keyed has its 20 points and the new one');
  const listed = resultOf<{ name: string }[]>(t, await call(again.url, 'GET', '/collections/kept/snapshots'));
  t.same(listed.map((s) => s.name), [snapshot.name], 'the finished snapshot is still listed');
  await storageMatchesRecords(t, again);
  t.same((await readdir(join(snapshots, 'kept'))).sort(), [snapshot.name, `${snapshot.name}.checksum`].sort(), 'only the finished snapshot and its checksum remain');
  t.same(await readdir(join(snapshots, '.tmp')).catch(() => []), [], 'no temporary download remains');
});

t.test('kill -9 during creates, deletes, upserts and recoveries: after the restarts no orphan folder, every collection works', async (t) => {
  let server = await startServer();
  const storage = server.storage;
  t.teardown(() => server.stop('SIGKILL'));
  resultOf(t, await call(server.url, 'PUT', '/collections/seed', { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 3 }));
  resultOf(t, await call(server.url, 'PUT', '/collections/seed/points?wait=true', { points: points(1, 1000) }));
  const snapshot = resultOf<{ name: string }>(t, await call(server.url, 'POST', '/collections/seed/snapshots'));
  const archive = new Uint8Array(await (await fetch(`${server.url}/collections/seed/snapshots/${snapshot.name}`)).arrayBuffer());

  const NAMES = ['one', 'two', 'three', 'four'];
  for (let round = 0; round < 3; round++) {
    const base = server.url;
    let done = 0;
    let killed = false;
    const worker = async (w: number) => {
      for (let i = 0; !killed && i < 10_000; i++) {
        const name = NAMES[(w + i) % NAMES.length];
        const step = (i + w) % 4;
        try {
          if (step === 0) await call(base, 'PUT', `/collections/${name}`, { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 2 });
          else if (step === 1) await call(base, 'PUT', `/collections/${name}/points?wait=true`, { points: points(i * 10, 10) });
          else if (step === 2) await upload(base, `/collections/${name}/snapshots/upload?wait=true`, archive);
          else await call(base, 'DELETE', `/collections/${name}`);
          done++;
        } catch {
          return; // the server is gone
        }
      }
    };
    const workers = Array.from({ length: 4 }, (_, w) => worker(w));
    // Kill with requests in flight, once a round's worth of operations has been answered.
    const target = 12 + round * 7;
    for (let spins = 0; done < target && spins < 5_000_000; spins++) await new Promise((r) => setImmediate(r));
    t.ok(done >= target, `round ${round}: ${done} operations answered before the kill`);
    killed = true;
    await server.stop('SIGKILL');
    await Promise.all(workers);

    const { records } = await storedState(storage);
    const left = await compareFolders(storage, records);
    t.comment(`round ${round}: ${left.orphans.length} orphan folders after the kill`);
    t.same(left.missing, [], `round ${round}: every shard folder a record names exists after the kill`);

    server = await startServer({ storage });
    const names = await everyCollectionWorks(t, server.url);
    t.same(names.sort(), records.map((r) => r.name).sort(), `round ${round}: the collections served are the ones recorded`);
  }
  // Leftovers of every kill were swept by the restart after it, or they would still be here.
  stopAtEnd(t, server);
  await storageMatchesRecords(t, server);
});
