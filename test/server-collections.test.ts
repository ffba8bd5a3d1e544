// Collections and aliases through the real server, as a user of @qdrant/js-client-rest sees them
// (plus raw HTTP where the client hides the status): GET /, create with every kind of config,
// CollectionInfo with Qdrant 1.19's fields and defaults, list, exists, update, delete, and
// aliases (per collection, renamed, deleted, atomic lists, reachable by every points endpoint).

import t, { type Test } from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { ONE_PEER_CLUSTER, startServer } from './helpers/server.js';
import { assertError, call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { uniqueName, vectorOf } from './helpers/api-data.js';
import { DEFAULT_HNSW, DEFAULT_OPTIMIZER, DEFAULT_WAL, defaultCollectionConfig } from './helpers/qdrant-defaults.js';

const WORKERS = 2;
/** Quiver's default on one node: one shard per shard worker; Qdrant's in a cluster: one per peer. */
const DEFAULT_SHARDS = ONE_PEER_CLUSTER ? 1 : WORKERS;
const server = await startServer({ workers: WORKERS });
stopAtEnd(t, server);
const client = new QdrantClient({ url: server.url, checkCompatibility: false });


type Info = Record<string, unknown> & { config: Record<string, unknown>; segments_count: number };

async function rawInfo(name: string): Promise<Info> {
  const response = await call(server.url, 'GET', `/collections/${name}`);
  if (response.status !== 200) throw new Error(`GET /collections/${name}: ${response.status} ${JSON.stringify(response.body)}`);
  return (response.body as { result: Info }).result;
}

/** segments_count is an implementation detail (Quiver: one per shard); checked, then left out of comparisons. */
function withoutSegments(t: Test, info: Info): Omit<Info, 'segments_count'> {
  const { segments_count, ...rest } = info;
  t.ok(Number.isInteger(segments_count) && segments_count >= 1, `segments_count ${segments_count} is a positive integer`);
  return rest;
}

t.test('GET / describes the service', async (t) => {
  const info = await client.versionInfo();
  t.equal(info.title, 'qdrant - vector search engine');
  t.match(info.version, /^1\.19\.\d+$/, 'the Qdrant release whose API is served');
  t.type(info.commit, 'string');
  t.ok((info.commit ?? '').length > 0, 'commit is not empty');
  const raw = await call(server.url, 'GET', '/');
  t.equal(raw.status, 200);
  t.same(Object.keys(raw.body as object).sort(), ['commit', 'title', 'version'], 'no envelope, exactly these fields');
});

t.test('a collection with one unnamed vector reports every CollectionInfo field with the defaults', async (t) => {
  const name = uniqueName('plain');
  t.equal(await client.createCollection(name, { vectors: { size: 4, distance: 'Cosine' } }), true);
  const info = await rawInfo(name);
  t.strictSame(withoutSegments(t, info), {
    status: 'green',
    optimizer_status: 'ok',
    indexed_vectors_count: 0,
    points_count: 0,
    config: defaultCollectionConfig({ size: 4, distance: 'Cosine' }, DEFAULT_SHARDS),
    payload_schema: {},
    update_queue: { length: 0 },
  });

  // points_count follows the data; below indexing_threshold no vector is in a graph, as in Qdrant's plain segments.
  const points = [1, 2, 3, 4, 5].map((id) => ({ id, vector: vectorOf(id, 4) }));
  await client.upsert(name, { wait: true, points });
  await client.delete(name, { wait: true, points: [5] });
  const after = await client.getCollection(name);
  t.equal(after.points_count, 4, 'points_count after 5 upserts and 1 delete');
  t.equal(after.indexed_vectors_count, 0, 'nothing is indexed below indexing_threshold');
});

t.test('create with named vectors and every config section', async (t) => {
  const name = uniqueName('configured');
  await client.createCollection(name, {
    vectors: {
      image: { size: 3, distance: 'Dot', hnsw_config: { m: 8 }, on_disk: true },
      text: { size: 5, distance: 'Euclid', quantization_config: { scalar: { type: 'int8', quantile: 0.95 } } },
    },
    shard_number: 3,
    on_disk_payload: false,
    hnsw_config: { m: 24, ef_construct: 64, full_scan_threshold: 2000 },
    optimizers_config: { default_segment_number: 2, indexing_threshold: 20000, deleted_threshold: 0.3 },
    wal_config: { wal_capacity_mb: 16, wal_segments_ahead: 1 },
    quantization_config: { scalar: { type: 'int8', quantile: 0.99, always_ram: true } },
  });
  const info = await rawInfo(name);
  const config = info.config as Record<string, unknown>;
  t.strictSame(config.params, {
    vectors: {
      image: { size: 3, distance: 'Dot', hnsw_config: { m: 8 }, on_disk: true },
      text: { size: 5, distance: 'Euclid', quantization_config: { scalar: { type: 'int8', quantile: 0.95 } } },
    },
    shard_number: 3,
    replication_factor: 1,
    write_consistency_factor: 1,
    on_disk_payload: false,
  });
  t.strictSame(config.hnsw_config, { ...DEFAULT_HNSW, m: 24, ef_construct: 64, full_scan_threshold: 2000 });
  t.strictSame(config.optimizer_config, { ...DEFAULT_OPTIMIZER, default_segment_number: 2, indexing_threshold: 20000, deleted_threshold: 0.3 });
  t.strictSame(config.wal_config, { ...DEFAULT_WAL, wal_capacity_mb: 16, wal_segments_ahead: 1 });
  t.strictSame(config.quantization_config, { scalar: { type: 'int8', quantile: 0.99, always_ram: true } });

  // A named-vector collection stores each point's vectors by name, on 3 shards.
  const ids = Array.from({ length: 30 }, (_, i) => i + 1);
  await client.upsert(name, { wait: true, points: ids.map((id) => ({ id, vector: { image: vectorOf(id, 3), text: vectorOf(id, 5) } })) });
  const stats = await client.getCollection(name);
  t.equal(stats.points_count, 30);
  t.equal(stats.indexed_vectors_count, 0, 'below indexing_threshold no vector is indexed');
});

t.test('list, exists, delete', async (t) => {
  const a = uniqueName('listed');
  const b = uniqueName('listed');
  await client.createCollection(a, { vectors: { size: 2, distance: 'Dot' } });
  await client.createCollection(b, { vectors: { size: 2, distance: 'Dot' } });
  const names = (await client.getCollections()).collections.map((c) => c.name);
  t.ok(names.includes(a) && names.includes(b), 'both listed');
  const listed = resultOf<{ collections: { name: string }[] }>(t, await call(server.url, 'GET', '/collections'));
  t.ok(listed.collections.every((c) => Object.keys(c).length === 1 && typeof c.name === 'string'), 'each entry is {name}');

  t.same(await client.collectionExists(a), { exists: true });
  t.same(await client.collectionExists('never_created'), { exists: false });

  t.equal(await client.deleteCollection(a), true);
  t.same(await client.collectionExists(a), { exists: false });
  t.notOk((await client.getCollections()).collections.some((c) => c.name === a), 'no longer listed');
  assertError(t, await call(server.url, 'GET', `/collections/${a}`), 404, `Not found: Collection \`${a}\` doesn't exist!`);
  const again = await call(server.url, 'DELETE', `/collections/${a}`);
  t.equal(resultOf<boolean>(t, again), false, 'deleting a missing collection answers false');
  t.same(await client.collectionExists(b), { exists: true }, 'the other collection is untouched');
});

t.test('creating an existing collection is a 409 and changes nothing', async (t) => {
  const name = uniqueName('twice');
  await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' } });
  await client.upsert(name, { wait: true, points: [{ id: 1, vector: [1, 2] }] });
  const response = await call(server.url, 'PUT', `/collections/${name}`, { vectors: { size: 7, distance: 'Euclid' } });
  assertError(t, response, 409, `Wrong input: Collection \`${name}\` already exists!`);
  const info = await client.getCollection(name);
  t.same(info.config.params.vectors, { size: 2, distance: 'Dot' }, 'config kept');
  t.equal(info.points_count, 1, 'points kept');
});

t.test('PATCH updates optimizer, params and hnsw config', async (t) => {
  const name = uniqueName('patched');
  await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' } });
  t.equal(
    await client.updateCollection(name, {
      optimizers_config: { indexing_threshold: 5000, default_segment_number: 4 },
      params: { on_disk_payload: false, replication_factor: 2 },
      hnsw_config: { m: 32, ef_construct: 200 },
    }),
    true,
  );
  const config = (await rawInfo(name)).config;
  t.strictSame(config.optimizer_config, { ...DEFAULT_OPTIMIZER, indexing_threshold: 5000, default_segment_number: 4 });
  const params = config.params as Record<string, unknown>;
  t.equal(params.on_disk_payload, false);
  t.equal(params.replication_factor, 2);
  t.strictSame(config.hnsw_config, { ...DEFAULT_HNSW, m: 32, ef_construct: 200 });

  // A second patch changes only what it names.
  await client.updateCollection(name, { optimizers_config: { flush_interval_sec: 9 } });
  const later = (await rawInfo(name)).config;
  t.strictSame(later.optimizer_config, { ...DEFAULT_OPTIMIZER, indexing_threshold: 5000, default_segment_number: 4, flush_interval_sec: 9 });
  t.strictSame(later.hnsw_config, { ...DEFAULT_HNSW, m: 32, ef_construct: 200 }, 'hnsw untouched');

  assertError(t, await call(server.url, 'PATCH', '/collections/not_there', { optimizers_config: { indexing_threshold: 1 } }), 404, "Not found: Collection `not_there` doesn't exist!");
});

t.test('PATCH updates vector params and quantization', async (t) => {
  const name = uniqueName('patched');
  await client.createCollection(name, {
    vectors: { size: 3, distance: 'Cosine' },
    quantization_config: { scalar: { type: 'int8', quantile: 0.99 } },
  });
  // The unnamed vector is addressed by the empty name.
  await client.updateCollection(name, { vectors: { '': { on_disk: true, hnsw_config: { m: 6 } } }, quantization_config: 'Disabled' });
  const config = (await rawInfo(name)).config;
  t.strictSame((config.params as Record<string, unknown>).vectors, { size: 3, distance: 'Cosine', hnsw_config: { m: 6 }, on_disk: true });
  t.equal(config.quantization_config, null, 'quantization disabled');
  assertError(
    t,
    await call(server.url, 'PATCH', `/collections/${name}`, { vectors: { other: { on_disk: true } } }),
    400,
    'Wrong input: Vector params for other are not specified in config',
  );
  t.strictSame(((await rawInfo(name)).config.params as Record<string, unknown>).vectors, { size: 3, distance: 'Cosine', hnsw_config: { m: 6 }, on_disk: true }, 'a rejected patch changes nothing');
});

t.test('aliases: create, list, rename, delete', async (t) => {
  const name = uniqueName('aliased');
  const other = uniqueName('aliased');
  await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' } });
  await client.createCollection(other, { vectors: { size: 2, distance: 'Dot' } });
  const [first, second, third] = [uniqueName('alias'), uniqueName('alias'), uniqueName('alias')];
  t.equal(
    await client.updateCollectionAliases({
      actions: [
        { create_alias: { collection_name: name, alias_name: first } },
        { create_alias: { collection_name: name, alias_name: second } },
        { create_alias: { collection_name: other, alias_name: third } },
      ],
    }),
    true,
  );
  const byName = (list: { alias_name: string; collection_name: string }[]) => [...list].sort((x, y) => x.alias_name.localeCompare(y.alias_name));
  const all = (await client.getAliases()).aliases;
  for (const alias of [
    { alias_name: first, collection_name: name },
    { alias_name: second, collection_name: name },
    { alias_name: third, collection_name: other },
  ]) {
    t.ok(all.some((a) => a.alias_name === alias.alias_name && a.collection_name === alias.collection_name), `global list has ${alias.alias_name}`);
  }
  t.same(byName((await client.getCollectionAliases(name)).aliases), byName([
    { alias_name: first, collection_name: name },
    { alias_name: second, collection_name: name },
  ]), 'per-collection list');
  t.same((await client.getCollectionAliases(other)).aliases, [{ alias_name: third, collection_name: other }]);

  // exists and info follow an alias; the alias list of an alias does not
  t.same(await client.collectionExists(first), { exists: true });
  t.same((await client.getCollectionAliases(first)).aliases, [], 'aliases are listed by the collection name only');
  t.equal((await client.getCollection(first)).config.params.shard_number, DEFAULT_SHARDS);

  // rename keeps the target
  const renamed = uniqueName('alias');
  await client.updateCollectionAliases({ actions: [{ rename_alias: { old_alias_name: first, new_alias_name: renamed } }] });
  t.same(await client.collectionExists(first), { exists: false }, 'old alias gone');
  t.same(await client.collectionExists(renamed), { exists: true }, 'new alias resolves');
  t.same(byName((await client.getCollectionAliases(name)).aliases).map((a) => a.alias_name), [renamed, second].sort());

  // delete one alias; deleting an alias that does not exist is not an error
  await client.updateCollectionAliases({ actions: [{ delete_alias: { alias_name: second } }, { delete_alias: { alias_name: 'never_was' } }] });
  t.same((await client.getCollectionAliases(name)).aliases, [{ alias_name: renamed, collection_name: name }]);

  // deleting the collection removes its aliases
  await client.deleteCollection(name);
  t.notOk((await client.getAliases()).aliases.some((a) => a.collection_name === name), 'no alias left for the deleted collection');
  t.same(await client.collectionExists(renamed), { exists: false });
  // Qdrant lists the aliases pointing at exactly the name given, without checking it exists.
  t.same(resultOf(t, await call(server.url, 'GET', `/collections/${name}/aliases`)), { aliases: [] }, 'a deleted collection has no aliases');
  t.same(resultOf(t, await call(server.url, 'GET', '/collections/never_created/aliases')), { aliases: [] }, 'nor has an unknown name');
});

t.test('alias errors, and a failing action leaves every alias unchanged', async (t) => {
  const name = uniqueName('atomic');
  await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' } });
  const kept = uniqueName('alias');
  await client.updateCollectionAliases({ actions: [{ create_alias: { collection_name: name, alias_name: kept } }] });
  // Qdrant lists aliases in no particular order.
  const allAliases = async () => (await client.getAliases()).aliases.map((a) => `${a.alias_name}->${a.collection_name}`).sort();
  const before = await allAliases();

  const fresh = uniqueName('alias');
  const cases: [string, unknown[], number, string][] = [
    ['unknown collection', [{ create_alias: { collection_name: 'no_such_collection', alias_name: fresh } }], 404, "Not found: Collection `no_such_collection` doesn't exist!"],
    ['alias named like a collection', [{ create_alias: { collection_name: name, alias_name: name } }], 409, `Wrong input: Collection \`${name}\` already exists!`],
    ['rename of a missing alias', [{ rename_alias: { old_alias_name: 'no_such_alias', new_alias_name: fresh } }], 404, 'Not found: Alias no_such_alias does not exists!'],
  ];
  for (const [what, failing, status, message] of cases) {
    const actions = [
      { create_alias: { collection_name: name, alias_name: fresh } },
      { delete_alias: { alias_name: kept } },
      ...failing,
    ];
    assertError(t, await call(server.url, 'POST', '/collections/aliases', { actions }), status, message, what);
    t.same(await allAliases(), before, `${what}: the earlier actions of the list were not applied`);
  }
  t.same(await client.collectionExists(fresh), { exists: false });

  // A collection cannot take the name of an alias.
  assertError(
    t,
    await call(server.url, 'PUT', `/collections/${kept}`, { vectors: { size: 2, distance: 'Dot' } }),
    400,
    `Wrong input: Can't create collection with name ${kept}. Alias with the same name already exists`,
  );
});

t.test('a collection is reachable by alias on every points endpoint', async (t) => {
  const name = uniqueName('target');
  const alias = uniqueName('via');
  await client.createCollection(name, { vectors: { v: { size: 2, distance: 'Euclid' }, w: { size: 2, distance: 'Euclid' } }, shard_number: 2 });
  await client.updateCollectionAliases({ actions: [{ create_alias: { collection_name: name, alias_name: alias } }] });
  const ok = async <T>(method: string, path: string, body?: unknown): Promise<T> => resultOf<T>(t, await call(server.url, method, `/collections/${alias}${path}`, body));

  await ok('PUT', '/points?wait=true', { points: [1, 2, 3].map((id) => ({ id, vector: { v: [id, 0], w: [0, id] }, payload: { n: id } })) });
  await ok('PUT', '/index?wait=true', { field_name: 'n', field_schema: 'integer' });
  t.equal((await ok<{ id: number }>('GET', '/points/2')).id, 2, 'GET point');
  t.same((await ok<{ id: number }[]>('POST', '/points', { ids: [3, 1] })).map((p) => p.id), [3, 1], 'retrieve');
  t.same((await ok<{ points: { id: number }[] }>('POST', '/points/scroll', {})).points.map((p) => p.id), [1, 2, 3], 'scroll');
  t.equal((await ok<{ count: number }>('POST', '/points/count', { filter: { must: [{ key: 'n', range: { gte: 2 } }] } })).count, 2, 'count');
  await ok('PUT', '/points/vectors?wait=true', { points: [{ id: 1, vector: { w: [5, 5] } }] });
  await ok('POST', '/points/vectors/delete?wait=true', { points: [2], vector: ['w'] });
  await ok('POST', '/points/payload?wait=true', { points: [1], payload: { tag: 'a' } });
  await ok('PUT', '/points/payload?wait=true', { points: [2], payload: { n: 20 } });
  await ok('POST', '/points/payload/delete?wait=true', { points: [1], keys: ['tag'] });
  await ok('POST', '/points/payload/clear?wait=true', { points: [3] });
  await ok('POST', '/points/batch?wait=true', { operations: [{ set_payload: { points: [3], payload: { n: 30 } } }] });
  await ok('POST', '/points/delete?wait=true', { points: [1] });
  await ok('DELETE', '/index/n?wait=true');

  // Every change went to the collection behind the alias.
  const points = await client.retrieve(name, { ids: [1, 2, 3], with_payload: true, with_vector: true });
  t.same(points.map((p) => [p.id, p.payload, p.vector]), [
    [2, { n: 20 }, { v: [2, 0] }],
    [3, { n: 30 }, { v: [3, 0], w: [0, 3] }],
  ]);
  t.same((await client.getCollection(name)).payload_schema, {}, 'index created and dropped through the alias');
});
