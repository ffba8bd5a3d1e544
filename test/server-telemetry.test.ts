// Telemetry, metrics, cluster, health and issues endpoints of the real server: the counts and
// sizes reported per shard equal a reference computed here from the points upserted (routed to
// shards with the server's own hash), /metrics is valid Prometheus text with the expected
// families and values, request counters follow the requests made, and the peer id survives a
// restart.

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { shardOf } from '../src/shard/routing.js';
import { call, resultOf, assertError, stopAtEnd, type RawResponse } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { metrics, sampleValue } from './helpers/metrics-text.js';
import { ONE_PEER_CLUSTER, peerUriOf, startServer, type RunningServer } from './helpers/server.js';

const SHARDS = 3;
const DIM = { a: 3, b: 2 };
const COUNT = 40;

interface RefPoint {
  id: number;
  vector: Record<string, number[]>;
  payload: Record<string, unknown>;
}

/** Points 1..40: every one has `a`, every third also `b`; payloads of varying size. */
const points: RefPoint[] = Array.from({ length: COUNT }, (_, i) => {
  const id = i + 1;
  const vector: Record<string, number[]> = { a: [id, 1, 2] };
  if (id % 3 === 0) vector.b = [id, -id];
  return { id, vector, payload: { n: id, tag: 'x'.repeat(id % 7), list: Array.from({ length: id % 4 }, (_, k) => k) } };
});

interface ShardRef {
  num_points: number;
  num_vectors: number;
  num_vectors_by_name: Record<string, number>;
  vectors_size_bytes: number;
  payloads_size_bytes: number;
}

/** Expected figures of each shard, from the points the test upserts. */
function expectedShards(): ShardRef[] {
  return Array.from({ length: SHARDS }, (_, shard) => {
    const mine = points.filter((p) => shardOf(p.id, SHARDS) === shard);
    const byName = { a: mine.length, b: mine.filter((p) => p.vector.b).length };
    return {
      num_points: mine.length,
      num_vectors: byName.a + byName.b,
      num_vectors_by_name: byName,
      vectors_size_bytes: (byName.a * DIM.a + byName.b * DIM.b) * 4,
      payloads_size_bytes: mine.reduce((n, p) => n + Buffer.byteLength(JSON.stringify(p.payload)), 0),
    };
  });
}

async function setUp(server: RunningServer, name: string): Promise<void> {
  const created = await call(server.url, 'PUT', `/collections/${name}`, {
    vectors: { a: { size: DIM.a, distance: 'Dot' }, b: { size: DIM.b, distance: 'Euclid' } },
    shard_number: SHARDS,
  });
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  const upserted = await call(server.url, 'PUT', `/collections/${name}/points?wait=true`, { points });
  if (upserted.status !== 200) throw new Error(JSON.stringify(upserted.body));
}

const server = await startServer({ workers: 2 });
stopAtEnd(t, server);
await setUp(server, 'tele');
await call(server.url, 'PUT', '/collections/other', { vectors: { size: 2, distance: 'Cosine' }, shard_number: 1 });

t.test('cluster telemetry: one Active replica per shard with its exact counts and sizes', async (t) => {
  const result = resultOf<{
    collections: Record<string, { id: string; shards: { id: number; replicas: Record<string, unknown>[] }[] }>;
    cluster: { enabled: boolean; number_of_peers: number; peers: Record<string, { uri: string; responsive: boolean; details: { version: string } }> };
  }>(t, await call(server.url, 'GET', '/cluster/telemetry?details_level=3&timeout=5'));
  t.same(Object.keys(result.collections).sort(), ['other', 'tele']);
  const tele = result.collections.tele;
  t.equal(tele.id, 'tele');
  t.same(tele.shards.map((s) => s.id), [0, 1, 2], 'shards in id order');
  const expected = expectedShards();
  t.equal(expected.reduce((n, s) => n + s.num_points, 0), COUNT, 'reference covers every point');
  t.ok(expected.every((s) => s.num_points > 0), 'the points spread over every shard');
  const peers = Object.keys(result.cluster.peers);
  t.equal(peers.length, 1, 'one peer');
  for (const shard of tele.shards) {
    t.equal(shard.replicas.length, 1, `shard ${shard.id}: one replica`);
    const replica = shard.replicas[0];
    t.equal(String(replica.peer_id), peers[0], 'replica on this peer');
    t.equal(replica.state, 'Active');
    t.equal(replica.status, 'green');
    t.equal(replica.total_optimized_points, 0);
    t.same(
      { num_points: replica.num_points, num_vectors: replica.num_vectors, num_vectors_by_name: replica.num_vectors_by_name, vectors_size_bytes: replica.vectors_size_bytes, payloads_size_bytes: replica.payloads_size_bytes },
      expected[shard.id],
      `shard ${shard.id}: counts and sizes`,
    );
  }
  t.equal(result.cluster.enabled, ONE_PEER_CLUSTER);
  t.equal(result.cluster.number_of_peers, 1);
  const peer = result.cluster.peers[peers[0]];
  t.equal(peer.uri, peerUriOf(server));
  t.equal(peer.responsive, true);
  t.equal(peer.details.version, '1.19.0');
  assertError(t, await call(server.url, 'GET', '/cluster/telemetry?timeout=0'), 400, 'Deserialize error in query parameters: invalid value: integer `0`, expected a nonzero u64');
});

t.test('telemetry: details_level sets the depth; shard figures match cluster telemetry', async (t) => {
  type Telemetry = {
    id: string;
    app: { name: string; version: string; startup: string; system?: { cores: number } };
    collections: { number_of_collections: number; collections?: Record<string, unknown>[] };
    cluster: { enabled: boolean };
    requests: { rest: { responses: Record<string, Record<string, { count: number; avg_duration_micros: number; min_duration_micros: number; max_duration_micros: number }>> } };
    memory?: { resident_bytes: number };
    quota: { config: { enabled: boolean }; exceeded: { resident_memory: null; disk_usage: null } };
  };
  const level0 = resultOf<Telemetry>(t, await call(server.url, 'GET', '/telemetry'));
  t.equal(level0.app.name, 'qdrant');
  t.equal(level0.app.version, '1.19.0');
  t.ok(!Number.isNaN(Date.parse(level0.app.startup)), 'startup is a date');
  t.equal(level0.collections.number_of_collections, 2);
  t.notOk('collections' in level0.collections, 'level 0 lists no collections');
  t.notOk('memory' in level0, 'level 0 has no memory figures');
  t.same(level0.quota, { config: { enabled: false }, exceeded: { resident_memory: null, disk_usage: null } }, 'quota disabled, nothing enforced');
  const upserts = level0.requests.rest.responses['PUT /collections/{collection_name}/points'];
  t.equal(upserts['200'].count, 1, 'the one upsert was counted');
  t.ok(upserts['200'].min_duration_micros <= upserts['200'].avg_duration_micros && upserts['200'].avg_duration_micros <= upserts['200'].max_duration_micros, 'min <= avg <= max');

  const level1 = resultOf<Telemetry>(t, await call(server.url, 'GET', '/telemetry?details_level=1'));
  t.equal(level1.id, level0.id, 'same process id');
  t.ok(level1.memory!.resident_bytes > 0, 'memory reported from level 1');
  t.ok(level1.app.system!.cores >= 1, 'running environment reported from level 1');
  const aggregated = level1.collections.collections as { vectors: number; optimizers_status: string }[];
  t.same(aggregated.map((c) => c.vectors).sort((a, b) => a - b), [0, COUNT + Math.floor(COUNT / 3)], 'aggregated vector counts');

  const level2 = resultOf<Telemetry>(t, await call(server.url, 'GET', '/telemetry?details_level=2'));
  const config = { grpc_timeout_ms: 60_000, consensus: { tick_period_ms: 100, bootstrap_timeout_sec: 15 } };
  if (ONE_PEER_CLUSTER) {
    t.match(level1.cluster, { enabled: true, status: { number_of_peers: 1, role: 'Leader' } }, 'a cluster peer shows its consensus status');
    t.same((level2.cluster as { config?: unknown }).config, config, 'from level 2 the cluster settings (the defaults here)');
  } else {
    t.same(level1.cluster, { enabled: false }, 'a single node has no consensus status');
    t.same(level2.cluster, { enabled: false, config },
      'from level 2 the cluster settings, as Qdrant reports them outside distributed mode too (the defaults here)');
  }
  const full = (level2.collections.collections as { id: string; shards: { id: number; local: Record<string, unknown>; replicate_states: Record<string, string> }[] }[]).find((c) => c.id === 'tele')!;
  const expected = expectedShards();
  for (const shard of full.shards) {
    const { num_points, num_vectors, num_vectors_by_name, vectors_size_bytes, payloads_size_bytes } = shard.local;
    t.same({ num_points, num_vectors, num_vectors_by_name, vectors_size_bytes, payloads_size_bytes }, expected[shard.id], `local shard ${shard.id}`);
    t.same(Object.values(shard.replicate_states), ['Active']);
  }

  const anonymous = resultOf<Telemetry>(t, await call(server.url, 'GET', '/telemetry?details_level=2&anonymize=true'));
  const ids = (anonymous.collections.collections as { id: string }[]).map((c) => c.id);
  t.notOk(ids.includes('tele') || ids.includes('other'), 'anonymized collection names');
  assertError(t, await call(server.url, 'GET', '/telemetry?details_level=-1'), 400, 'Deserialize error in query parameters: invalid digit found in string');
});

/** Qdrant 1.19's TelemetryData members, in its order. */
const TELEMETRY_FIELDS = ['id', 'app', 'collections', 'cluster', 'requests', 'memory', 'hardware', 'search_pool', 'quota'];
/** Qdrant 1.19's AppBuildTelemetry, AppFeaturesTelemetry and RunningEnvironmentTelemetry members. */
const APP_FIELDS = ['name', 'version', 'features', 'runtime_features', 'low_memory_mode', 'hnsw_global_config', 'system', 'jwt_rbac', 'hide_jwt_dashboard', 'audit', 'startup'];
const APP_FEATURES_FIELDS = ['debug', 'service_debug_feature', 'recovery_mode', 'gpu', 'rocksdb', 'staging'];
const SYSTEM_FIELDS = ['distribution', 'distribution_version', 'is_docker', 'cores', 'cpu_cores_used', 'ram_size', 'disk_size', 'cpu_flags', 'cpu_endian', 'gpu_devices'];
/** SearchThreadPoolTelemetry, CollectionSnapshotTelemetry, ShardUpdateQueueInfo, HardwareUsage members. */
const SEARCH_POOL_FIELDS = ['mode', 'high_cpu_threads', 'high_io_threads'];
const SNAPSHOT_TELEMETRY_FIELDS = ['id', 'running_snapshots', 'running_snapshot_recovery', 'total_snapshot_creations'];
const SHARD_UPDATE_QUEUE_FIELDS = ['length', 'op_num', 'deferred_points'];
const HARDWARE_USAGE_FIELDS = ['cpu', 'payload_io_read', 'payload_io_write', 'payload_index_io_read', 'payload_index_io_write', 'vector_io_read', 'vector_io_write'];

const subsetOf = (keys: string[], fields: string[]): boolean => keys.every((k) => fields.includes(k));

t.test('telemetry sections as Qdrant 1.19 lists them, with this node\'s values', async (t) => {
  type Level1 = {
    app: { features: Record<string, boolean>; system: Record<string, unknown> };
    collections: { snapshots: unknown[] };
    hardware: { collection_data: Record<string, Record<string, number>> };
    search_pool: { mode: string; high_cpu_threads: number; high_io_threads: number };
  };
  const level1 = resultOf<Level1>(t, await call(server.url, 'GET', '/telemetry?details_level=1'));
  t.same(Object.keys(level1), TELEMETRY_FIELDS, 'every TelemetryData section, in order');
  t.ok(subsetOf(Object.keys(level1.app), APP_FIELDS), 'AppBuildTelemetry fields');
  t.same(Object.keys(level1.app.features), APP_FEATURES_FIELDS, 'AppFeaturesTelemetry fields');
  t.same(level1.app.features, { debug: false, service_debug_feature: false, recovery_mode: false, gpu: false, rocksdb: false, staging: false }, 'a release build storing in LevelDB');
  t.ok(subsetOf(Object.keys(level1.app.system), SYSTEM_FIELDS), 'RunningEnvironmentTelemetry fields');
  t.same(Object.keys(level1.search_pool), SEARCH_POOL_FIELDS, 'SearchThreadPoolTelemetry fields');
  t.same(level1.search_pool, { mode: 'high_cpu', high_cpu_threads: 2, high_io_threads: Number(process.env.UV_THREADPOOL_SIZE) || 4 }, 'the two shard workers, libuv\'s pool');
  t.same(level1.collections.snapshots, [], 'level 1 lists no snapshot activity');
  // The upsert of setUp is the only measured work so far: its vectors and payloads written.
  t.same(Object.keys(level1.hardware.collection_data.tele), HARDWARE_USAGE_FIELDS, 'HardwareUsage fields');
  t.same(level1.hardware.collection_data.tele, {
    cpu: 0, payload_io_read: 0, payload_index_io_read: 0, payload_index_io_write: 0, vector_io_read: 0,
    payload_io_write: points.reduce((n, p) => n + Buffer.byteLength(JSON.stringify(p.payload)), 0),
    vector_io_write: points.reduce((n, p) => n + Object.values(p.vector).reduce((m, v) => m + v.length * 4, 0), 0),
  }, 'hardware counted without hardware reporting');

  // CPU time is sampled every second: two samples give the cores used between them.
  let cores: unknown = null;
  for (let i = 0; i < 50 && cores === null; i++) {
    cores = resultOf<Level1>(t, await call(server.url, 'GET', '/telemetry?details_level=1')).app.system.cpu_cores_used;
    if (cores === null) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.type(cores, 'number', 'cpu_cores_used once two samples exist');
  t.ok((cores as number) >= 0, 'cpu_cores_used is not negative');

  resultOf(t, await call(server.url, 'POST', '/collections/other/snapshots?wait=true'));
  type Level2 = { collections: { snapshots: Record<string, unknown>[]; collections: { id: string; shards: { local: { update_queue: Record<string, number>; optimizations: { status: unknown } } }[] }[] } };
  const level2 = resultOf<Level2>(t, await call(server.url, 'GET', '/telemetry?details_level=2'));
  for (const entry of level2.collections.snapshots) t.same(Object.keys(entry), SNAPSHOT_TELEMETRY_FIELDS, 'CollectionSnapshotTelemetry fields');
  t.same(level2.collections.snapshots.find((s) => s.id === 'other'), { id: 'other', running_snapshots: 0, running_snapshot_recovery: 0, total_snapshot_creations: 1 }, 'the snapshot made');
  t.same(level2.collections.snapshots.find((s) => s.id === 'tele'), { id: 'tele', running_snapshots: 0, running_snapshot_recovery: 0, total_snapshot_creations: 0 });
  const clusterShards = resultOf<{ collections: Record<string, { shards: { id: number }[] }> }>(t, await call(server.url, 'GET', '/cluster/telemetry')).collections.tele.shards;
  t.equal(clusterShards.length, SHARDS);
  for (const shard of level2.collections.collections.find((c) => c.id === 'tele')!.shards) {
    t.ok(subsetOf(Object.keys(shard.local.update_queue), SHARD_UPDATE_QUEUE_FIELDS), 'ShardUpdateQueueInfo fields');
    t.equal(shard.local.update_queue.length, 0, 'no update in flight');
    t.equal(shard.local.update_queue.op_num, 1, 'the one upsert applied');
    t.equal(shard.local.optimizations.status, 'ok');
  }
});

/** Qdrant 1.19's CollectionInfo members, and those it requires. */
const COLLECTION_INFO_FIELDS = ['status', 'optimizer_status', 'warnings', 'indexed_vectors_count', 'points_count', 'segments_count', 'config', 'payload_schema', 'update_queue'];
const COLLECTION_INFO_REQUIRED = ['config', 'optimizer_status', 'payload_schema', 'segments_count', 'status'];

t.test('collection info: CollectionInfo fields, configuration warnings, update queue', async (t) => {
  const info = resultOf<Record<string, unknown>>(t, await call(server.url, 'GET', '/collections/tele'));
  t.same(Object.keys(info), COLLECTION_INFO_FIELDS.filter((f) => f !== 'warnings'), 'CollectionInfo fields in order; no warnings to give');
  t.ok(COLLECTION_INFO_REQUIRED.every((f) => f in info), 'required fields');
  t.same(info.update_queue, { length: 0 }, 'UpdateQueueInfo: nothing queued, no deferred points');
  t.notOk('usage' in ((await call(server.url, 'GET', '/collections/tele')).body as object), 'no usage without hardware reporting');
  const search = await call(server.url, 'POST', '/collections/tele/points/search', { vector: { name: 'a', vector: [1, 2, 3] }, limit: 1 });
  t.equal(search.status, 200);
  t.notOk('usage' in (search.body as object), 'no usage in a search answer without hardware reporting');

  const requires = (name: string) => `The \`hnsw_config.inline_storage\` option for vector '${name}' requires quantization to be enabled. This option will be ignored.`;
  const multivector = (name: string) => `The \`hnsw_config.inline_storage\` option for vector '${name}' is not compatible with multivectors. This option will be ignored.`;
  resultOf(t, await call(server.url, 'PUT', '/collections/warned', {
    vectors: {
      plain: { size: 2, distance: 'Dot', hnsw_config: { inline_storage: true } },
      lists: { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' } },
      quantized: { size: 2, distance: 'Dot', quantization_config: { scalar: { type: 'int8' } } },
      off: { size: 2, distance: 'Dot', hnsw_config: { inline_storage: false } },
    },
    hnsw_config: { inline_storage: true },
    shard_number: 1,
  }));
  const warned = resultOf<{ warnings: { message: string }[] }>(t, await call(server.url, 'GET', '/collections/warned'));
  t.same(warned.warnings, [{ message: multivector('lists') }, { message: requires('plain') }], 'the collection\'s inline_storage applies where a vector sets none; a quantized vector and one turning it off get none');
  resultOf(t, await call(server.url, 'PATCH', '/collections/warned', { quantization_config: { scalar: { type: 'int8' } } }));
  const quantized = resultOf<{ warnings: { message: string }[] }>(t, await call(server.url, 'GET', '/collections/warned'));
  t.same(quantized.warnings, [{ message: multivector('lists') }], 'collection quantization answers the warning');
  resultOf(t, await call(server.url, 'DELETE', '/collections/warned'));
});

t.test('GET /: the commit of the checkout the server runs from', async (t) => {
  const root = await call(server.url, 'GET', '/');
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: new URL('..', import.meta.url), encoding: 'utf8' }).trim();
  t.same(root.body, { title: 'qdrant - vector search engine', version: '1.19.0', commit: head });
});

t.test('metrics: valid exposition, collection figures, request counters', async (t) => {
  const before = await metrics(t, server);
  t.equal(sampleValue(before, 'app_info', { name: 'qdrant', version: '1.19.0' }), 1);
  t.equal(before.get('app_info')!.type, 'gauge');
  t.equal(sampleValue(before, 'collections_total'), 2, 'collections_total is the number created');
  const vectors = COUNT + Math.floor(COUNT / 3);
  t.equal(sampleValue(before, 'collections_vector_total'), vectors);
  t.equal(sampleValue(before, 'collection_points', { id: 'tele' }), COUNT);
  t.equal(sampleValue(before, 'collection_points', { id: 'other' }), 0);
  t.equal(sampleValue(before, 'collection_vectors', { collection: 'tele', vector: 'b' }), Math.floor(COUNT / 3));
  t.ok((sampleValue(before, 'memory_resident_bytes') ?? 0) > 0, 'resident memory');
  t.notOk(before.has('quota_exceeded'), 'no quota series while quotas are disabled');
  const labels = { method: 'PUT', endpoint: '/collections/{collection_name}/points', status: '200' };
  const upsertsBefore = sampleValue(before, 'rest_responses_total', labels)!;
  t.equal(before.get('rest_responses_total')!.type, 'counter');

  const more = 3;
  for (let i = 0; i < more; i++) await call(server.url, 'PUT', '/collections/tele/points?wait=true', { points: [points[i]] });
  await call(server.url, 'PUT', '/collections/tele/points', { points: [{ id: 1, vector: { a: [1] } }] }); // wrong dimension: 400
  const after = await metrics(t, server);
  t.equal(sampleValue(after, 'rest_responses_total', labels), upsertsBefore + more, 'the counter grew by the upserts made');
  t.equal(sampleValue(after, 'rest_responses_total', { ...labels, status: '400' }), 1, 'the failed upsert is counted under its status');
  t.equal(sampleValue(after, 'rest_responses_duration_seconds_count', labels), upsertsBefore + more, 'histogram count');
  const buckets = after.get('rest_responses_duration_seconds')!.samples.filter((s) => s.name.endsWith('_bucket') && s.labels.status === '200' && s.labels.endpoint === labels.endpoint);
  t.ok(buckets.every((b, i) => i === 0 || b.value >= buckets[i - 1].value), 'buckets are cumulative');
  t.equal(buckets.at(-1)!.labels.le, '+Inf');
  t.equal(buckets.at(-1)!.value, upsertsBefore + more);
  t.equal(sampleValue(after, 'rest_responses_total', { method: 'GET', endpoint: '/telemetry' }), undefined, 'only Qdrant\'s reported endpoints');

  for (const [family, type] of [['collection_running_optimizations', 'gauge'], ['snapshot_creation_running', 'gauge'], ['snapshot_recovery_running', 'gauge'], ['collection_shard_transfer_incoming', 'gauge'], ['collection_shard_transfer_outgoing', 'gauge'], ['collection_update_queue_length', 'gauge'], ['collection_update_queue_deferred_points', 'gauge']]) {
    t.equal(after.get(family)?.type, type, `${family} is a ${type}`);
    t.equal(sampleValue(after, family, { id: 'tele' }), 0, `${family} of an idle collection`);
  }
  t.equal(after.get('snapshot_created_total')?.type, 'counter');
  t.equal(sampleValue(after, 'snapshot_created_total', { id: 'other' }), 1, 'the snapshot made of other');
  t.equal(sampleValue(after, 'snapshot_created_total', { id: 'tele' }), 0);
  t.equal(sampleValue(after, 'rest_responses_fail_total', labels), 0, 'responses are filed under their status, none as failed');
  t.notOk([...after.keys()].some((f) => f.startsWith('collection_hardware_metric_')), 'no hardware counters without hardware reporting');

  // The server process's figures, read here from its own /proc entries.
  const limits = readFileSync(`/proc/${server.process.pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max open files'))!.slice('Max open files'.length).trim().split(/\s+/);
  const [soft, hard] = limits.slice(0, 2).map((v) => (v === 'unlimited' ? 0 : Number(v)));
  t.equal(sampleValue(after, 'process_max_fds'), soft === 0 ? hard : hard === 0 ? soft : Math.min(soft, hard), 'process_max_fds');
  t.equal(sampleValue(after, 'system_max_mmaps'), Number(readFileSync('/proc/sys/vm/max_map_count', 'utf8')), 'system_max_mmaps');
  t.ok(sampleValue(after, 'process_threads')! >= 3, 'the main thread and two shard workers at least');
  t.ok(sampleValue(after, 'process_open_fds')! > 0 && sampleValue(after, 'process_open_mmaps')! > 0);
  for (const counter of ['process_minor_page_faults_total', 'process_major_page_faults_total']) {
    t.equal(after.get(counter)?.type, 'counter');
    t.ok(sampleValue(after, counter)! >= sampleValue(before, counter)!, `${counter} does not decrease`);
  }

  const anonymous = await metrics(t, server, '?anonymize=true');
  t.equal(sampleValue(anonymous, 'collection_points', { id: 'tele' }), undefined, 'collection names hidden');
  t.equal(anonymous.get('collection_points')!.samples.length, 2);
});

t.test('cluster status and health probes', async (t) => {
  const cluster = resultOf<{ status: string; peer_id?: number; peers?: Record<string, { uri: string }> }>(t, await call(server.url, 'GET', '/cluster'));
  if (ONE_PEER_CLUSTER) t.same([cluster.status, cluster.peers], ['enabled', { [String(cluster.peer_id)]: { uri: peerUriOf(server) } }], 'one peer, itself');
  else t.same(cluster, { status: 'disabled' });
  for (const [path, body] of [['/healthz', 'healthz check passed'], ['/livez', 'healthz check passed'], ['/readyz', 'all shards are ready']]) {
    const response = await fetch(server.url + path);
    t.equal(response.status, 200, `${path} 200`);
    t.match(response.headers.get('content-type'), /^text\/plain/, `${path} plain text`);
    t.equal(await response.text(), body, `${path} body`);
  }
});

t.test('issues: too many nearly empty collections, then cleared', async (t) => {
  t.same(resultOf(t, await call(server.url, 'GET', '/issues')), { issues: [] }, 'no issue with two collections');
  for (let i = 0; i < 30; i++) {
    const created = await call(server.url, 'PUT', `/collections/empty${i}`, { vectors: { size: 2, distance: 'Dot' }, shard_number: 1 });
    t.equal(created.status, 200);
  }
  const { issues } = resultOf<{ issues: { id: string; description: string; solution: { refactor: string }; timestamp: string }[] }>(t, await call(server.url, 'GET', '/issues'));
  t.equal(issues.length, 1, '32 collections averaging 1.25 points are too many');
  t.equal(issues[0].id, 'TOO_MANY_COLLECTIONS/');
  t.match(issues[0].description, /too many collections/);
  t.equal(issues[0].solution.refactor, 'Restructure your usage of Qdrant into a fixed number of collections');
  t.ok(!Number.isNaN(Date.parse(issues[0].timestamp)));
  t.equal(resultOf(t, await call(server.url, 'DELETE', '/issues')), true);
  t.same(resultOf(t, await call(server.url, 'GET', '/issues')), { issues: [] }, 'cleared until the collections change');
  for (let i = 0; i < 30; i++) await call(server.url, 'DELETE', `/collections/empty${i}`);
  t.same(resultOf(t, await call(server.url, 'GET', '/issues')), { issues: [] });
});

t.test('timeout: telemetry, cluster telemetry and metrics answer 408 while the shards are busy', async (t) => {
  const dim = 32;
  const random = rng(11);
  const vector = () => Array.from({ length: dim }, random);
  resultOf(t, await call(server.url, 'PUT', '/collections/busy', { vectors: { size: dim, distance: 'Euclid' }, shard_number: 2 }));
  for (let start = 0; start < 10000; start += 2000) {
    const batch = Array.from({ length: 2000 }, (_, j) => ({ id: start + j, vector: vector() }));
    resultOf(t, await call(server.url, 'PUT', '/collections/busy/points?wait=true', { points: batch }));
  }
  // A context query scans the collection once per pair: sized on this machine to hold the shard
  // workers for about 6 s, while telemetry needs them for its shard statistics.
  const contextQuery = (pairs: number) => ({ query: { context: Array.from({ length: pairs }, () => ({ positive: vector(), negative: vector() })) }, limit: 1 });
  // The first query warms the shards up (and costs more than the next): it is not the measure.
  resultOf(t, await call(server.url, 'POST', '/collections/busy/points/query', contextQuery(20)));
  const begin = performance.now();
  resultOf(t, await call(server.url, 'POST', '/collections/busy/points/query', contextQuery(20)));
  const pairs = Math.ceil((20 * 6) / Math.max(0.05, (performance.now() - begin) / 1000));
  let finished = false;
  const slow = call(server.url, 'POST', '/collections/busy/points/query', contextQuery(pairs)).finally(() => (finished = true));

  const paths = ['/telemetry?details_level=2&timeout=1', '/cluster/telemetry?timeout=1', '/metrics?timeout=1'];
  let answers: RawResponse[] = [];
  // A request that reaches the workers before the slow query's tasks is answered in time: ask again.
  while (!finished) {
    answers = await Promise.all(paths.map((path) => call(server.url, 'GET', path)));
    if (answers.every((a) => a.status === 408)) break;
  }
  t.notOk(finished, 'asked while the slow query held the workers');
  assertError(t, answers[0], 408, "Timeout: Operation 'collections telemetry' timed out after 1s", 'telemetry');
  assertError(t, answers[1], 408, "Timeout: Operation 'cluster_telemetry' timed out after 1s", 'cluster telemetry');
  assertError(t, answers[2], 408, "Timeout: Operation 'collections telemetry' timed out after 1s", 'metrics');
  t.equal((await slow).status, 200, 'the slow query itself completes');
  t.equal((await call(server.url, 'GET', '/telemetry?timeout=5')).status, 200, 'then telemetry answers within its timeout');
  resultOf(t, await call(server.url, 'DELETE', '/collections/busy'));
});

t.test('the peer id survives a restart', async (t) => {
  const peerOf = async (s: RunningServer) => Object.keys(resultOf<{ cluster: { peers: Record<string, unknown> } }>(t, await call(s.url, 'GET', '/cluster/telemetry')).cluster.peers)[0];
  const before = await peerOf(server);
  await server.stop();
  const again = await startServer({ storage: server.storage, workers: 2 });
  t.teardown(() => again.stop());
  t.equal(await peerOf(again), before, 'same peer id');
  t.equal(sampleValue(await metrics(t, again), 'collection_points', { id: 'tele' }), COUNT, 'points still counted after restart');
});
