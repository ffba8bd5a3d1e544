// Qdrant's memory placement through the real server: originals placed `cold` (`on_disk: true` or
// `memory: cold`), quantized codes placed `cold` (their `memory`, or following the originals
// when `always_ram` is not true) and HNSW graphs placed `cold` (`hnsw_config.on_disk` or
// `memory`) are read on demand from page files (src/shard/page-files.ts);
// `cached` / `pinned` data and `always_ram: true` codes stay in memory. The same points in a
// collection with every row in memory answer every search identically; a PATCH to `on_disk:
// false` and a restart after kill -9 keep the answers; the page files are the server's own open,
// unlinked files, one per paged region of each shard, and none is ever left in the storage
// folder. The servers keep 16 KiB of pages per index, so every request reads pages back.

import t from 'tap';
import { readdirSync, readlinkSync } from 'node:fs';
import { QdrantClient } from '@qdrant/js-client-rest';
import { startServer, type RunningServer } from './helpers/server.js';
import { rng } from './helpers/data.js';
import { uniformVectors, waitIndexed } from './helpers/quantized-collection.js';

const DIM = 32;
const N = 1500;
const next = rng(57);
const points = uniformVectors(next, N, DIM).map((vector, i) => ({ id: i + 1, vector, payload: { even: i % 2 === 0 } }));
const queries = uniformVectors(next, 6, DIM);
const GRAPH_NOW = { indexing_threshold: 10 };

/** The page files the server holds open (unlinked: the link reads "... (deleted)"). */
function pageFiles(server: RunningServer): number {
  const dir = `/proc/${server.process.pid}/fd`;
  let n = 0;
  for (const fd of readdirSync(dir)) {
    try {
      if (readlinkSync(`${dir}/${fd}`).includes('quiver-pages-')) n++;
    } catch {
      // an fd closed while listed
    }
  }
  return n;
}

/** Page files found under `dir` (none should ever be: they are unlinked as soon as opened). */
function leftPageFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.includes('quiver-pages-'));
}

/** A server (on `storage`, else fresh) keeping a budget of a few pages per index, so every request reads pages back and lets others go; its client. */
async function pagedServer(storage?: string): Promise<{ server: RunningServer; client: QdrantClient }> {
  const server = await startServer({ workers: 1, env: { QUIVER_COLD_PAGE_BUDGET_BYTES: String(16 * 1024) }, ...(storage === undefined ? {} : { storage }) });
  return { server, client: new QdrantClient({ url: server.url, checkCompatibility: false }) };
}

async function answers(client: QdrantClient, collection: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const query of queries) {
    out.push(await client.query(collection, { query, limit: 10 }));
    out.push(await client.query(collection, { query, limit: 10, params: { exact: true } }));
    out.push(await client.query(collection, { query, limit: 5, params: { hnsw_ef: 40, quantization: { rescore: true, oversampling: 2 } } }));
    out.push(await client.query(collection, { query, limit: 5, filter: { must: [{ key: 'even', match: { value: true } }] } }));
  }
  out.push(await client.retrieve(collection, { ids: [1, 700, N], with_vector: true }));
  return out;
}

const COLLECTIONS = {
  memory: { vectors: { size: DIM, distance: 'Cosine' }, quantization_config: { scalar: { type: 'int8' } } },
  // Every region paged: codes follow the cold originals, the graph on disk.
  cold: { vectors: { size: DIM, distance: 'Cosine', on_disk: true }, quantization_config: { scalar: { type: 'int8' } }, hnsw_config: { on_disk: true } },
  // Qdrant's memory-lean setup: originals read on demand, codes in memory; the graph cold too.
  lean: { vectors: { size: DIM, distance: 'Cosine', memory: 'cold' }, quantization_config: { scalar: { type: 'int8', always_ram: true } }, hnsw_config: { memory: 'cold' } },
  // Codes alone paged.
  codes: { vectors: { size: DIM, distance: 'Cosine' }, quantization_config: { scalar: { type: 'int8', memory: 'cold' } } },
} as const;
const PAGED_REGIONS = 3 + 2 + 1;

t.test('cold originals, codes and graphs answer as in memory, across PATCHes and a restart', async (t) => {
  let { server, client } = await pagedServer();
  t.teardown(() => server.stop());
  for (const [name, config] of Object.entries(COLLECTIONS)) {
    await client.createCollection(name, { ...config, optimizers_config: GRAPH_NOW } as Parameters<QdrantClient['createCollection']>[1]);
    for (let i = 0; i < N; i += 500) await client.upsert(name, { wait: true, points: points.slice(i, i + 500) });
    await waitIndexed(client, name, N);
  }
  t.equal(pageFiles(server), PAGED_REGIONS, 'one open page file per paged region');
  const truth = await answers(client, 'memory');
  for (const name of ['cold', 'lean', 'codes']) t.same(await answers(client, name), truth, `${name}: every answer as with all in memory`);
  const info = await client.getCollection('lean');
  t.equal(info.config.params.vectors && 'memory' in info.config.params.vectors ? info.config.params.vectors.memory : undefined, 'cold', 'the placement is reported as given');

  await client.updateCollection('cold', { vectors: { '': { on_disk: false } } });
  t.equal(pageFiles(server), PAGED_REGIONS - 2, 'after PATCH on_disk: false, the cold collection holds its graph\'s page file alone');
  t.same(await answers(client, 'cold'), truth, 'and answers the same');
  await client.updateCollection('cold', { hnsw_config: { on_disk: false } });
  await waitIndexed(client, 'cold', N);
  t.equal(pageFiles(server), PAGED_REGIONS - 3, 'after PATCH hnsw_config on_disk: false, none');
  t.same(await answers(client, 'cold'), truth, 'and answers the same again');

  // kill -9: the page files were unlinked when opened, so none is left in the storage folder.
  await server.stop('SIGKILL');
  t.same(leftPageFiles(server.storage), [], 'a killed server leaves no page file behind');
  ({ server, client } = await pagedServer(server.storage));
  for (const name of Object.keys(COLLECTIONS)) await waitIndexed(client, name, N);
  t.equal(pageFiles(server), PAGED_REGIONS - 3, 'a restart opens the page files again');
  for (const name of ['cold', 'lean', 'codes']) t.same(await answers(client, name), truth, `${name}: the same answers after a restart`);
});

// Multivector lists are paged a list at a time (their codes by row): the same through the server.
const LISTS = 400;
const listPoints = points.slice(0, LISTS).map((p, i) => ({
  id: p.id,
  vector: Array.from({ length: 1 + (i % 5) }, (_, r) => points[(i * 3 + r) % N].vector),
  payload: p.payload,
}));
const listQueries = queries.map((q, i) => [q, queries[(i + 1) % queries.length]]);
const MULTI = { size: DIM, distance: 'Dot', multivector_config: { comparator: 'max_sim' } } as const;
const MULTI_COLLECTIONS = {
  memory: { vectors: MULTI, quantization_config: { scalar: { type: 'int8' } } },
  cold: { vectors: { ...MULTI, on_disk: true }, quantization_config: { scalar: { type: 'int8' } }, hnsw_config: { on_disk: true } },
  lean: { vectors: { ...MULTI, on_disk: true }, quantization_config: { scalar: { type: 'int8', always_ram: true } } },
} as const;

async function listAnswers(client: QdrantClient, collection: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const query of listQueries) {
    out.push(await client.query(collection, { query, limit: 10 }));
    out.push(await client.query(collection, { query, limit: 10, params: { exact: true } }));
    out.push(await client.query(collection, { query, limit: 5, params: { quantization: { rescore: true, oversampling: 2 } } }));
  }
  out.push(await client.retrieve(collection, { ids: [1, 2, 200, LISTS], with_vector: true }));
  return out;
}

t.test('cold multivector lists, codes and graphs answer as in memory, across rewrites and a restart', async (t) => {
  let { server, client } = await pagedServer();
  t.teardown(() => server.stop());
  for (const [name, config] of Object.entries(MULTI_COLLECTIONS)) {
    // The graph and the codebook are built once every write is in (PATCH below), so they are
    // built from the same lists in each collection whenever the optimizer runs.
    await client.createCollection(name, { ...config, optimizers_config: { indexing_threshold: 1_000_000 } } as Parameters<QdrantClient['createCollection']>[1]);
    await client.upsert(name, { wait: true, points: listPoints });
    // Lists stored again longer (moved in the page file) and shorter (in place), some deleted.
    await client.upsert(name, { wait: true, points: listPoints.filter((_, i) => i % 7 === 0).map((p) => ({ ...p, vector: [...p.vector, ...p.vector] })) });
    await client.upsert(name, { wait: true, points: listPoints.filter((_, i) => i % 11 === 1).map((p) => ({ ...p, vector: p.vector.slice(0, 1) })) });
    await client.delete(name, { wait: true, points: listPoints.filter((_, i) => i % 13 === 5).map((p) => p.id) });
    await client.updateCollection(name, { optimizers_config: GRAPH_NOW });
    await waitIndexed(client, name, LISTS - Math.ceil((LISTS - 5) / 13));
  }
  t.equal(pageFiles(server), 3 + 1, 'one open page file per paged region (lists, codes, graph)');
  const truth = await listAnswers(client, 'memory');
  for (const name of ['cold', 'lean']) t.same(await listAnswers(client, name), truth, `${name}: every answer as with all in memory`);

  await server.stop('SIGKILL');
  t.same(leftPageFiles(server.storage), [], 'a killed server leaves no page file behind');
  ({ server, client } = await pagedServer(server.storage));
  for (const name of Object.keys(MULTI_COLLECTIONS)) await waitIndexed(client, name, LISTS - Math.ceil((LISTS - 5) / 13));
  t.equal(pageFiles(server), 3 + 1, 'a restart opens the page files again');
  for (const name of ['cold', 'lean']) t.same(await listAnswers(client, name), truth, `${name}: the same answers after a restart`);
});
