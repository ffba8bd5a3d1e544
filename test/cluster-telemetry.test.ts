// `GET /cluster/telemetry` and the replica gauges of `/metrics` through three CLI-started peers:
// every peer lists the three peers as responsive with their consensus details, and every replica
// of a replicated collection with its state (as `/collections/{c}/cluster` places it) and the
// figures its holder reports (the replicas of a shard agree on its points; one per shard adds up
// to the collection). A stopped peer is listed unresponsive, its details null and its replicas
// without figures, within the request's timeout; it answers again once resumed. With the etcd
// members of two peers stopped (no quorum) the third still answers its metrics and telemetry.
// Each peer's own `/telemetry` lists every shard with the states of the view, its own replica
// (null where it holds none) and the other peers' replicas, its cluster configuration at level 2
// and every peer's version at level 3; its figures count its own replicas; its `/metrics` carry
// its consensus standing as `/cluster` tells it. Without peers: the merge for a collection-scoped
// caller, and Qdrant's counting rules of the replica gauges.

import { execFileSync } from 'node:child_process';
import t, { type Test } from 'tap';
import { Ajv } from 'ajv';
import { SHARED_RESPONSE_SCHEMAS } from '../src/api/schemas/responses/optimizations.js';
import { envelope } from '../src/api/schemas/responses/shape.js';
import { DISTRIBUTED_TELEMETRY_DATA } from '../src/api/schemas/responses/telemetry.js';
import { replicaGauges } from '../src/telemetry/metrics.js';
import { distributedTelemetry } from '../src/telemetry/cluster-telemetry.js';
import { fromCreateRequest } from '../src/api/collection-config.js';
import { ClusterView } from '../src/cluster/cluster-view.js';
import { collectionKey, encodeValue, peerKey, shardEntryKey, type ShardEntry } from '../src/cluster/keys.js';
import type { CollectionRecord } from '../src/collection/manager.js';
import { ServiceError } from '../src/errors.js';
import { call } from './helpers/api-http.js';
import { startCluster, until, type ClusterPeer } from './helpers/cluster.js';
import { metrics, parseMetrics, sampleValue } from './helpers/metrics-text.js';

type Envelope<T> = { result: T; status: unknown };

interface Replica {
  peer_id: number;
  state: string;
  num_points?: number;
  status?: string;
}

interface NodeTelemetry {
  collections: { collections: { id: string; shards: { id: number; local: { num_points: number } | null; remote: { shard_id: number; peer_id: number; searches: null; updates: null }[]; replicate_states: Record<string, string> }[] }[] };
  cluster: { enabled: boolean; status?: { peer_id?: number }; config?: unknown };
}

interface RaftInfo {
  peer_id: number;
  raft_info: { term: number; commit: number };
}

/** Non-default settings of the test's peers: telemetry must report these, not Qdrant's defaults. */
const GRPC_TIMEOUT_MS = 45_000;
const BOOTSTRAP_TIMEOUT_SEC = 20;

interface Telemetry {
  collections: Record<string, { id: string; shards: { id: number; replicas: Replica[] }[] }>;
  cluster: {
    enabled: boolean;
    number_of_peers: number;
    peers: Record<string, { uri: string; responsive: boolean; details: { version: string; role: string | null; is_voter: boolean; term: number; commit: number } | null }>;
  };
}

const ajv = new Ajv({ allErrors: true, keywords: ['serde'] });
for (const [id, schema] of Object.entries(SHARED_RESPONSE_SCHEMAS)) ajv.addSchema(schema, id);
const validate = ajv.compile(envelope(DISTRIBUTED_TELEMETRY_DATA));

async function result<T>(peer: ClusterPeer, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await call(peer.url, method, path, body);
  if (answer.status !== 200) throw new Error(`${method} ${path} through ${peer.url}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return (answer.body as Envelope<T>).result;
}

/** `/cluster/telemetry` through `peer`, checked against Qdrant's DistributedTelemetryData schema. */
async function telemetry(t: Test, peer: ClusterPeer, query = ''): Promise<Telemetry> {
  const answer = await call(peer.url, 'GET', `/cluster/telemetry${query}`);
  t.equal(answer.status, 200);
  t.ok(validate(answer.body), `the answer of ${peer.url} conforms: ${ajv.errorsText(validate.errors)}`);
  return (answer.body as Envelope<Telemetry>).result;
}

t.test('replica gauges count replica states as Qdrant does', async (t) => {
  t.same(replicaGauges([]), { min: 0, max: 0, dead: 0 }, 'no shard: zeros');
  t.same(replicaGauges([['Active', 'Active'], ['Active', 'Dead'], ['ReshardingScaleDown']]), { min: 1, max: 2, dead: 1 },
    'a resharding-down replica is active; a shard with a dead replica counts once');
  t.same(replicaGauges([['Active', 'Active'], ['Resharding', 'Active', 'Partial'], ['Initializing', 'Partial']]), { min: 0, max: 2, dead: 2 },
    'a shard being resharded up stays out of min and max, and counts as dead');
});

t.test('merged telemetry: a collection-scoped caller sees its collections only, and no answer at all is an error', async (t) => {
  const stored = (value: unknown) => ({ text: encodeValue(value), createRevision: 1, modRevision: 1 });
  const record = (name: string): CollectionRecord => ({ name, storageId: `sid-${name}`, config: fromCreateRequest({ vectors: { size: 2, distance: 'Dot' } } as Parameters<typeof fromCreateRequest>[0], 1), indexes: [] });
  const peer = (port: number) => stored({ uri: `http://127.0.0.1:${port}`, etcd_member_id: String(port), etcd_peer_url: 'http://127.0.0.1:1', version: '1' });
  const view = new ClusterView(1, new Map([
    [peerKey(7), peer(7001)], [peerKey(3), peer(3001)],
    [collectionKey('mine'), stored(record('mine'))], [collectionKey('theirs'), stored(record('theirs'))],
    [shardEntryKey('mine', 0), stored({ shard_key: 'k', replicas: { 7: 'Active', 3: 'Dead' } } satisfies ShardEntry)],
    [shardEntryKey('theirs', 0), stored({ replicas: { 3: 'Active' } } satisfies ShardEntry)],
  ]));
  const figures = { status: 'green' as const, total_optimized_points: 0, vectors_size_bytes: 8, payloads_size_bytes: 0, num_points: 1, num_vectors: 1, num_vectors_by_name: { '': 1 } };
  const details = { version: '1', role: 'Leader' as const, is_voter: true, term: 2, commit: 9, num_pending_operations: 0, consensus_thread_status: { consensus_thread_status: 'stopped' as const } };
  const reports = new Map([[7, { details, replicas: { mine: { 0: figures } } }], [3, null]]);
  const scoped = distributedTelemetry({ view, reports }, (name) => name === 'mine', false);
  t.same(scoped, { collections: { mine: { id: 'mine', shards: [{ id: 0, key: 'k', replicas: [{ peer_id: 3, state: 'Dead' }, { peer_id: 7, state: 'Active', ...figures }] }], shard_transfers: [] } } },
    'only its collection, replicas in peer id order, figures where the holder answered, no cluster part');
  t.ok(validate({ result: scoped, status: 'ok', time: 0 }), ajv.errorsText(validate.errors));
  const full = distributedTelemetry({ view, reports }, () => true, true);
  t.same(full.cluster, { enabled: true, number_of_peers: 2, peers: {
    3: { uri: 'http://127.0.0.1:3001/', responsive: false, details: null },
    7: { uri: 'http://127.0.0.1:7001/', responsive: true, details },
  } });
  t.throws(() => distributedTelemetry({ view, reports: new Map([[7, null], [3, null]]) }, () => true, true), new ServiceError('Could not get telemetry from cluster'));
});

t.test('cluster telemetry lists every peer and replica, and a stopped peer as unresponsive', async (t) => {
  const peers = await startCluster(t, 3, { env: {
    QDRANT__CLUSTER__GRPC_TIMEOUT_MS: String(GRPC_TIMEOUT_MS),
    QDRANT__CLUSTER__CONSENSUS__BOOTSTRAP_TIMEOUT_SEC: String(BOOTSTRAP_TIMEOUT_SEC),
  } });
  const ids = await until('three peers', async () => {
    const bodies = await Promise.all(peers.map((p) => result<{ peer_id: number; peers: object }>(p, 'GET', '/cluster')));
    return bodies.every((b) => Object.keys(b.peers).length === 3) && bodies.map((b) => b.peer_id);
  }, 60_000);
  const uris = Object.fromEntries(ids.map((id, i) => [String(id), `${peers[i].uri}/`]));

  t.equal(await result(peers[0], 'PUT', '/collections/docs?timeout=60', { vectors: { size: 4, distance: 'Dot' }, replication_factor: 2 }), true);
  for (const peer of peers) await until('the collection on every peer', async () => (await call(peer.url, 'GET', '/collections/docs')).status === 200);
  const points = Array.from({ length: 45 }, (_, i) => ({ id: i + 1, vector: [i, 1, 0, 1] }));
  t.equal((await result<{ status: string }>(peers[1], 'PUT', '/collections/docs/points?wait=true', { points })).status, 'completed');

  // Where the replicas are and their states, as `/collections/{c}/cluster` tells it.
  const layout = await Promise.all(peers.map((p) => result<{ peer_id: number; local_shards: { shard_id: number; state: string; points_count: number }[] }>(p, 'GET', '/collections/docs/cluster')));
  const expected = [0, 1, 2].map((shard) => ({
    id: shard,
    replicas: layout.flatMap((l) => l.local_shards.filter((s) => s.shard_id === shard).map((s) => ({ peer_id: l.peer_id, state: s.state, num_points: s.points_count })))
      .sort((a, b) => a.peer_id - b.peer_id),
  }));
  t.ok(expected.every((s) => s.replicas.length === 2), 'two replicas per shard');

  let withoutReplica = 0;
  for (const peer of peers) {
    const body = await telemetry(t, peer, '?details_level=3');
    t.same(Object.keys(body.collections), ['docs']);
    const shards = body.collections.docs.shards;
    t.same(shards.map((s) => ({ id: s.id, replicas: s.replicas.map((r) => ({ peer_id: r.peer_id, state: r.state, num_points: r.num_points })) })), expected,
      `${peer.url}: every replica on its peer, with its state and its holder's point count`);
    t.ok(shards.every((s) => s.replicas.every((r) => r.status === 'green')), 'each replica reports its status');
    t.equal(shards.reduce((n, s) => n + s.replicas[0].num_points!, 0), points.length, 'one replica per shard adds up to the collection');
    t.equal(body.cluster.enabled, true);
    t.equal(body.cluster.number_of_peers, 3);
    t.same(Object.fromEntries(Object.entries(body.cluster.peers).map(([id, p]) => [id, p.uri])), uris, 'every peer with its p2p URI');
    for (const [id, info] of Object.entries(body.cluster.peers)) {
      t.equal(info.responsive, true, `peer ${id} responsive`);
      t.ok(info.details && info.details.is_voter && info.details.term > 0 && info.details.commit > 0 && typeof info.details.version === 'string', `peer ${id} reports its consensus details`);
    }
    t.equal(Object.values(body.cluster.peers).filter((p) => p.details?.role === 'Leader').length, 1, 'one leader among the peers');

    const own = await result<NodeTelemetry>(peer, 'GET', '/telemetry?details_level=2');
    const id = own.cluster.status!.peer_id!;
    const mine = layout.find((l) => l.peer_id === id)!;
    t.same(own.collections.collections.find((c) => c.id === 'docs')!.shards.map((s) => ({ id: s.id, local: s.local && s.local.num_points, remote: s.remote, replicate_states: s.replicate_states })),
      expected.map((s) => ({
        id: s.id,
        local: mine.local_shards.find((l) => l.shard_id === s.id)?.points_count ?? null,
        remote: s.replicas.filter((r) => r.peer_id !== id).map((r) => ({ shard_id: s.id, peer_id: r.peer_id, searches: null, updates: null })),
        replicate_states: Object.fromEntries(s.replicas.map((r) => [String(r.peer_id), r.state])),
      })), `${peer.url}: /telemetry's shards with the view's states, its own replica (null where it holds none) and the others'`);
    withoutReplica += own.collections.collections.find((c) => c.id === 'docs')!.shards.filter((s) => s.local === null).length;
    t.same(own.cluster.config, { grpc_timeout_ms: GRPC_TIMEOUT_MS, consensus: { tick_period_ms: 100, bootstrap_timeout_sec: BOOTSTRAP_TIMEOUT_SEC } }, 'the configured cluster settings at level 2');
    const localPoints = mine.local_shards.reduce((n, s) => n + s.points_count, 0);
    t.ok(localPoints > 0 && localPoints < points.length, `this peer holds part of the points (${localPoints})`);
    const level1 = await result<{ collections: { collections: { vectors: number }[] }; cluster: object }>(peer, 'GET', '/telemetry?details_level=1');
    t.notOk('config' in level1.cluster, 'no configuration below level 2');
    t.same(level1.collections.collections.map((c) => c.vectors), [localPoints], 'the aggregated vectors count this peer\'s replicas, as Qdrant does');
    t.notOk('peer_metadata' in own.cluster, 'no peer metadata below level 3');
    const level3 = await result<{ app: { version: string }; cluster: { peer_metadata: Record<string, { version: string }> } }>(peer, 'GET', '/telemetry?details_level=3');
    t.same(level3.cluster.peer_metadata, Object.fromEntries(ids.map((peerId) => [String(peerId), { version: level3.app.version }])), 'level 3: every peer with the version it registered');

    const before = await result<RaftInfo>(peer, 'GET', '/cluster');
    const families = await metrics(t, peer.server);
    const after = await result<RaftInfo>(peer, 'GET', '/cluster');
    t.same(['collection_active_replicas_min', 'collection_active_replicas_max', 'collection_dead_replicas', 'cluster_enabled'].map((name) => sampleValue(families, name)), [2, 2, 0, 1],
      'replica gauges from the cluster placement');
    t.same([sampleValue(families, 'collection_points', { id: 'docs' }), sampleValue(families, 'collections_vector_total')], [localPoints, localPoints],
      'point and vector figures of this peer\'s replicas');
    t.same(['cluster_peers_total', 'cluster_voter', 'cluster_pending_operations_total'].map((name) => [name, families.get(name)?.type, sampleValue(families, name)]),
      [['cluster_peers_total', 'gauge', 3], ['cluster_voter', 'gauge', 1], ['cluster_pending_operations_total', 'gauge', 0]], 'three peers; this one a voter with nothing left to apply');
    const term = sampleValue(families, 'cluster_term')!;
    const commit = sampleValue(families, 'cluster_commit', { peer_id: String(id) })!;
    t.ok(families.get('cluster_term')?.type === 'counter' && before.raft_info.term <= term && term <= after.raft_info.term, `term ${term} as /cluster tells it (${before.raft_info.term}..${after.raft_info.term})`);
    t.ok(families.get('cluster_commit')?.type === 'counter' && before.raft_info.commit <= commit && commit <= after.raft_info.commit, `commit ${commit}, labelled with the peer id, as /cluster tells it (${before.raft_info.commit}..${after.raft_info.commit})`);
    const anonymous = await metrics(t, peer.server, '?anonymize=true');
    t.same(['cluster_peers_total', 'cluster_term', 'cluster_commit', 'cluster_pending_operations_total', 'cluster_voter'].map((name) => anonymous.has(name)), [true, true, false, false, false],
      'anonymized: the families that name the peer are left out');
  }

  t.equal(withoutReplica, 3 * 3 - 6, 'each shard is local to the two peers holding it, and null on the third');

  const stopped = peers[2];
  const stoppedId = String(ids[2]);
  stopped.server.process.kill('SIGSTOP');
  try {
    const body = await until('the stopped peer listed unresponsive', async () => {
      const answer = await telemetry(t, peers[0], '?timeout=2');
      return answer.cluster.peers[stoppedId].responsive === false && answer;
    }, 20_000);
    t.same(body.cluster.peers[stoppedId], { uri: uris[stoppedId], responsive: false, details: null }, 'no details for a peer that did not answer');
    t.equal(Object.values(body.cluster.peers).filter((p) => p.responsive).length, 2, 'the other two answer');
    const ofStopped = body.collections.docs.shards.flatMap((s) => s.replicas).filter((r) => r.peer_id === ids[2]);
    t.ok(ofStopped.length > 0 && ofStopped.every((r) => Object.keys(r).sort().join() === 'peer_id,state'), 'its replicas listed with their state only');

    // The etcd members of the two other peers stopped too: the first has no quorum, and still
    // reports its own standing (its etcd member runs as a child of its process: stopping the
    // process alone leaves it answering).
    const members = [peers[1], stopped].map((p) => Number(execFileSync('pgrep', ['-P', String(p.server.process.pid), 'etcd']).toString().trim()));
    t.ok(members.every((pid) => pid > 0), 'the etcd members found');
    for (const pid of members) process.kill(pid, 'SIGSTOP');
    try {
      const scrape = await fetch(`${peers[0].url}/metrics`, { signal: AbortSignal.timeout(20_000) });
      t.equal(scrape.status, 200, 'metrics answer without a quorum');
      const families = parseMetrics(t, await scrape.text());
      t.same([sampleValue(families, 'cluster_peers_total'), sampleValue(families, 'cluster_voter')], [3, 1], 'the peers this peer applied, itself a voter');
      t.equal((await result<NodeTelemetry>(peers[0], 'GET', '/telemetry?details_level=1')).cluster.enabled, true, 'telemetry answers without a quorum');
    } finally {
      for (const pid of members) process.kill(pid, 'SIGCONT');
    }
  } finally {
    stopped.server.process.kill('SIGCONT');
  }
  await until('the resumed peer answering again', async () => (await telemetry(t, peers[1], '?timeout=5')).cluster.peers[stoppedId].responsive, 20_000);
  t.pass('the resumed peer is responsive again');
});
