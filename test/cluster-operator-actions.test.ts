// An operator's changes of where a shard's replicas are (`POST /collections/{c}/cluster`) across
// three CLI-started peers: replicate_shard and move_shard stream the shard while a writer never
// stops, and the replica each ends on holds every acknowledged write; a move's source leaves the
// shard; drop_replica removes a replica; abort_transfer of a move removes its receiver; each
// refusal answers with Qdrant's status and message. A single node refuses them all as Qdrant does.

import t, { type Test } from 'tap';
import { call, type RawResponse } from './helpers/api-http.js';
import { startCluster, startPeer, until, type ClusterPeer } from './helpers/cluster.js';
import { formed, replicaStates, result, type CollectionClusterInfo } from './helpers/cluster-api.js';
import { SINGLE_NODE_ENV, startServer } from './helpers/server.js';

type Envelope<T> = { result: T; status: unknown };

// A long request timeout: a transfer into a stopped peer waits on it instead of failing at once.
const ENV = { QDRANT__CLUSTER__GRPC_TIMEOUT_MS: '30000', QDRANT__CLUSTER__CONNECTION_TIMEOUT_MS: '1000' };
const DIM = 4;
const POINTS = 2000;

function vector(id: number): number[] {
  return Array.from({ length: DIM }, (_, d) => Math.cos(id * 0.7 + d * 1.3));
}

function range(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}

async function write(peer: ClusterPeer, ids: number[], value: number): Promise<boolean> {
  const answer = await call(peer.url, 'PUT', '/collections/ops/points?wait=true', { points: ids.map((id) => ({ id, vector: vector(id), payload: { v: value } })) });
  return answer.status === 200 && (answer.body as Envelope<{ status: string }>).result.status === 'completed';
}

/** Replica state by peer id, and the transfers, as `peer` sees shard 0 of `ops`. */
async function replicas(peer: ClusterPeer): Promise<{ states: Map<number, string>; transfers: CollectionClusterInfo['shard_transfers'] }> {
  const { states, transfers } = await replicaStates(peer, 'ops');
  return { states: new Map([...states].map(([key, state]): [number, string] => [Number(key.split('@')[1]), state])), transfers };
}

/** Whether every peer sees exactly `expected` (peer id -> state) and no transfer. */
async function settled(peers: ClusterPeer[], expected: Map<number, string>): Promise<boolean> {
  const seen = await Promise.all(peers.map(replicas));
  const text = (m: Map<number, string>) => JSON.stringify([...m].sort((a, b) => a[0] - b[0]));
  return seen.every((s) => s.transfers.length === 0 && text(s.states) === text(expected));
}

/** [id, v] of every point the peer's own replica holds (a read through it tries its local replica first). */
async function held(peer: ClusterPeer): Promise<[number, unknown][]> {
  const page = await result<{ points: { id: number; payload: { v: unknown } }[] }>(peer, 'POST', '/collections/ops/points/scroll?consistency=1', { limit: POINTS + 1000, with_payload: true });
  return page.points.map((p): [number, unknown] => [p.id, p.payload.v]);
}

function operate(peer: ClusterPeer, body: unknown): Promise<RawResponse> {
  return call(peer.url, 'POST', '/collections/ops/cluster?timeout=30', body);
}

function assertError(t: Test, answer: RawResponse, status: number, error: string, what: string): void {
  t.equal(answer.status, status, `${what}: status`);
  t.equal((answer.body as { status?: { error?: string } }).status?.error, error, `${what}: message`);
}

t.test('replicate, move, drop and abort through POST /collections/{c}/cluster, with a writer that never stops', async (t) => {
  const peers = await startCluster(t, 3, { env: ENV });
  const { ids } = await formed(peers);
  const byId = new Map(ids.map((id, i) => [id, peers[i]]));
  t.equal(await result(peers[0], 'PUT', '/collections/ops?timeout=30', { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 1, replication_factor: 1 }), true);
  const first = await until('the one replica Active', async () => {
    const { states } = await replicas(peers[0]);
    return states.size === 1 && [...states.values()][0] === 'Active' && [...states.keys()][0];
  });
  const [second, third] = ids.filter((id) => id !== first);
  const acked = new Map<number, number>();
  for (let from = 1; from <= POINTS; from += 250) {
    const list = range(from, 250);
    t.ok(await write(peers[0], list, 0), `points ${from}-${from + 249} written`);
    list.forEach((id) => acked.set(id, 0));
  }

  // Refusals, in Qdrant's order of checks: nothing changes.
  assertError(t, await operate(peers[0], { move_shard: { shard_id: 0, from_peer_id: first, to_peer_id: first } }), 422,
    `Validation error in JSON body: [move_shard.to_peer_id: cannot transfer shard to itself, "to_peer_id" must be different than ${first} in "from_peer_id"]`, 'a move to the same peer');
  assertError(t, await operate(peers[0], { replicate_shard: { shard_id: 7, from_peer_id: first, to_peer_id: second } }), 400, 'Bad request: Shard 7 of ops does not exist', 'an unknown shard');
  assertError(t, await operate(peers[0], { replicate_shard: { shard_id: 0, from_peer_id: 12345, to_peer_id: 777 } }), 400, 'Bad request: Peer 777 does not exist', 'unknown peers: the receiver is checked first');
  assertError(t, await operate(peers[0], { replicate_shard: { shard_id: 0, from_peer_id: second, to_peer_id: third } }), 400, `Bad request: Shard 0 is not active on peer ${second}`, 'a source without the shard');
  assertError(t, await operate(peers[0], { replicate_shard: { shard_id: 0, from_peer_id: first, to_peer_id: second, method: 'resharding_stream_records' } }), 400,
    'Bad request: Shard transfer method resharding_stream_records is not supported by Quiver: use stream_records, snapshot or wal_delta', 'Qdrant\'s internal resharding method');
  assertError(t, await operate(peers[0], { abort_transfer: { shard_id: 0, from_peer_id: first, to_peer_id: second } }), 404,
    `Not found: Shard transfer ${first} -> ${second} for collection ops:0 does not exist`, 'aborting no transfer');
  assertError(t, await operate(peers[0], { drop_replica: { shard_id: 0, peer_id: second } }), 400, `Bad request: Peer ${second} has no replica of shard 0`, 'dropping a replica that is not there');
  assertError(t, await operate(peers[0], { drop_replica: { shard_id: 0, peer_id: first } }), 400, `Bad request: Shard 0 must have at least one active replica after removing ${first}`, 'dropping the last replica');
  assertError(t, await operate(peers[0], { start_resharding: { direction: 'up' } }), 400, 'Bad request: resharding is only supported in Qdrant Cloud', 'resharding, as Qdrant\'s open-source build answers');
  assertError(t, await operate(peers[0], { abort_resharding: {} }), 400, 'Bad request: resharding is not in progress for collection ops', 'aborting no resharding');
  assertError(t, await operate(peers[0], { replicate_points: { from_shard_key: 'a', to_shard_key: 'b' } }), 400, 'Bad request: Shard key a not found', 'replicate_points between keys of an automatically sharded collection');
  assertError(t, await operate(peers[0], { move_shard: { shard_id: 0 } }), 400, 'Format error in JSON body: data did not match any variant of untagged enum ClusterOperations', 'a body of no operation');
  t.ok(await settled(peers, new Map([[first, 'Active']])), 'the refusals changed nothing');

  // A writer through the peer that holds no replica yet, all along the operations below.
  let stop = false;
  let iteration = 0;
  const failures: string[] = [];
  const writer = (async () => {
    while (!stop) {
      iteration++;
      const list = range(1 + ((iteration * 7) % POINTS), 7).map((id) => ((id - 1) % (POINTS + 200)) + 1);
      if (await write(byId.get(third)!, list, iteration)) list.forEach((id) => acked.set(id, iteration));
      else failures.push(`write ${iteration}`);
    }
  })();
  // A failed step below must not leave the writer running past the test.
  t.teardown(async () => {
    stop = true;
    await writer;
  });
  const expected = () => [...acked].sort((a, b) => a[0] - b[0]);

  // By snapshot: the new replica downloads the source's shard part and restores it.
  t.equal(await result(byId.get(second)!, 'POST', '/collections/ops/cluster?timeout=30', { replicate_shard: { shard_id: 0, from_peer_id: first, to_peer_id: second, method: 'snapshot' } }), true, 'replicate_shard is accepted');
  await until('the replicated shard Active on both peers', () => settled(peers, new Map([[first, 'Active'], [second, 'Active']])), 60_000);
  const replicatedAt = iteration;
  await until('writes after the replication', async () => iteration > replicatedAt + 3);

  // Asked as wal_delta: the new replica has no recovery point, so the transfer falls back to a stream (as Qdrant's does).
  t.equal(await result(peers[0], 'POST', '/collections/ops/cluster?timeout=30', { move_shard: { shard_id: 0, from_peer_id: first, to_peer_id: third, method: 'wal_delta' } }), true, 'move_shard is accepted');
  await until('the shard moved: on the second and third peers only', () => settled(peers, new Map([[second, 'Active'], [third, 'Active']])), 60_000);
  const movedAt = iteration;
  await until('writes after the move', async () => iteration > movedAt + 3);

  t.equal(await result(peers[0], 'POST', '/collections/ops/cluster?timeout=30', { drop_replica: { shard_id: 0, peer_id: second } }), true, 'drop_replica is accepted');
  await until('the dropped replica gone', () => settled(peers, new Map([[third, 'Active']])), 30_000);
  const droppedAt = iteration;
  await until('writes after the drop', async () => iteration > droppedAt + 3);
  stop = true;
  await writer;
  t.same(failures, [], 'every write during the operations was acknowledged');
  t.same(await held(byId.get(third)!), expected(), 'the moved replica holds every acknowledged value');
  for (const id of [first, second]) {
    t.same((await result<CollectionClusterInfo>(byId.get(id)!, 'GET', '/collections/ops/cluster')).local_shards, [], `peer ${id} holds no replica any more`);
  }

  // A move into a stopped peer stays under way until it is aborted: its receiver then leaves the shard.
  const receiver = byId.get(first)!;
  receiver.server.process.kill('SIGSTOP');
  try {
    t.equal(await result(peers.find((p) => p !== receiver)!, 'POST', '/collections/ops/cluster?timeout=30', { move_shard: { shard_id: 0, from_peer_id: third, to_peer_id: first } }), true, 'a move into a stopped peer starts');
    const under = await until('the source applied the move', async () => {
      const seen = await replicas(byId.get(third)!);
      return seen.transfers.length > 0 && seen;
    });
    t.same(under.transfers.map(({ shard_id, from, to, sync, method }) => ({ shard_id, from, to, sync, method })), [{ shard_id: 0, from: third, to: first, sync: false, method: 'stream_records' }], 'the move is shown as Qdrant shows one');
    t.equal(under.states.get(first), 'Partial', 'its receiver is Partial');
    // Bounded: the stopped peer's report would take the whole request timeout, as long as the
    // move's own request to it, which would then end the move before the abort below.
    const telemetry = await result<{ collections: Record<string, { shard_transfers?: { from: number; to: number; sync: boolean; method: string }[] }> }>(byId.get(third)!, 'GET', '/cluster/telemetry?timeout=2');
    t.match(telemetry.collections.ops.shard_transfers, [{ shard_id: 0, from: third, to: first, sync: false, method: 'stream_records' }], 'and in /cluster/telemetry');
    const metrics = String((await call(byId.get(third)!.url, 'GET', '/metrics')).body);
    t.match(metrics, /^collection_shard_transfer_outgoing\{id="ops"\} 1$/m, 'the source counts its outgoing transfer in /metrics');
    t.equal(await result(byId.get(second)!, 'POST', '/collections/ops/cluster?timeout=30', { abort_transfer: { shard_id: 0, from_peer_id: third, to_peer_id: first } }), true, 'abort_transfer is accepted');
  } finally {
    receiver.server.process.kill('SIGCONT');
  }
  await until('the aborted move left the shard where it was', () => settled(peers, new Map([[third, 'Active']])), 30_000);
  t.same(await held(byId.get(third)!), expected(), 'the source still holds every acknowledged value');
});

t.test('a single node refuses every cluster operation as Qdrant does, after reading the body', async (t) => {
  const server = await startServer({ env: SINGLE_NODE_ENV });
  t.teardown(() => server.stop());
  t.equal((await call(server.url, 'PUT', '/collections/one', { vectors: { size: DIM, distance: 'Dot' } })).status, 200);
  const bodies = [
    { move_shard: { shard_id: 0, from_peer_id: 1, to_peer_id: 2 } },
    { drop_replica: { shard_id: 0, peer_id: 1 } },
    { create_sharding_key: { shard_key: 'k' } },
  ];
  for (const body of bodies) {
    for (const collection of ['one', 'missing']) {
      const answer = await call(server.url, 'POST', `/collections/${collection}/cluster`, body);
      assertError(t, answer, 400, 'Bad request: Distributed mode disabled', `${Object.keys(body)[0]} on ${collection}`);
    }
  }
  const malformed = await call(server.url, 'POST', '/collections/one/cluster', { drop_replica: { shard_id: -1, peer_id: 1 } });
  t.equal(malformed.status, 400, 'a malformed body is refused first');
});

t.test('DELETE /cluster/peer: refused while the peer holds replicas, forced it drops them; the removed peer does not start again with its storage', async (t) => {
  const peers = await startCluster(t, 3, { env: ENV });
  const { ids } = await formed(peers);
  t.equal(await result(peers[0], 'PUT', '/collections/rm?timeout=30', { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 3, replication_factor: 2 }), true);
  const points = range(1, 300).map((id) => ({ id, vector: vector(id), payload: { v: id } }));
  t.equal((await call(peers[0].url, 'PUT', '/collections/rm/points?wait=true', { points })).status, 200);
  const [victim, asker, other] = [peers[2], peers[0], peers[1]];
  const victimId = ids[2];

  assertError(t, await call(asker.url, 'DELETE', `/cluster/peer/${victimId}`), 400, `Bad request: Cannot remove peer ${victimId} as there are shards on it`, 'a peer holding replicas');
  assertError(t, await call(asker.url, 'DELETE', '/cluster/peer/12345'), 400, 'Bad request: Peer 12345 does not exist', 'an unknown peer');
  assertError(t, await call(asker.url, 'DELETE', '/cluster/peer/x'), 400, 'Deserialize error in path parameters: can not parse "x" to a u64', 'a peer id that is not one');
  t.equal(await result(asker, 'DELETE', `/cluster/peer/${victimId}?force=true&timeout=30`), true, 'forced, the peer is removed');

  for (const peer of [asker, other]) {
    const status = await until(`${peer.url} no longer lists the removed peer`, async () => {
      const body = await result<{ peers: Record<string, unknown> }>(peer, 'GET', '/cluster');
      return !(String(victimId) in body.peers) && body;
    });
    t.same(Object.keys(status.peers).map(Number).sort(), ids.slice(0, 2).sort(), 'two peers left');
    const info = await result<CollectionClusterInfo>(peer, 'GET', '/collections/rm/cluster');
    t.notOk(info.remote_shards.some((s) => s.peer_id === victimId), 'no replica on the removed peer');
    const counted = await result<{ count: number }>(peer, 'POST', '/collections/rm/points/count', { exact: true });
    t.equal(counted.count, 300, 'every point still served: each shard kept a replica');
  }
  t.equal((await call(other.url, 'PUT', '/collections/rm/points?wait=true', { points: [{ id: 301, vector: vector(301) }] })).status, 200, 'writes go on without the removed peer');
  await until('the removed peer no longer ready', async () => (await call(victim.url, 'GET', '/readyz')).status !== 200);

  await victim.server.stop('SIGKILL');
  await t.rejects(startPeer({ storage: victim.storage, ports: victim.ports, env: ENV }), /was removed from the cluster/, 'restarted with its old storage, the removed peer refuses to start');

  t.equal(await result(other, 'POST', '/cluster/recover'), true, 'POST /cluster/recover reads the control plane again');
  t.equal((await result<{ count: number }>(other, 'POST', '/collections/rm/points/count', { exact: true })).count, 301, 'and the peer serves as before');
});

t.test('a single node: DELETE /cluster/peer and POST /cluster/recover answer as Qdrant outside distributed mode', async (t) => {
  const server = await startServer({ env: SINGLE_NODE_ENV });
  t.teardown(() => server.stop());
  assertError(t, await call(server.url, 'DELETE', '/cluster/peer/1'), 400, 'Bad request: Distributed mode disabled.', 'removing a peer');
  assertError(t, await call(server.url, 'POST', '/cluster/recover'), 500, 'Service internal error: Qdrant is running in standalone mode', 'recover');
  t.equal((await call(server.url, 'PUT', '/collections/one', { vectors: { size: DIM, distance: 'Dot' } })).status, 200);
  const own = ((await call(server.url, 'GET', '/collections/one/cluster')).body as Envelope<{ peer_id: number }>).result.peer_id;
  assertError(t, await call(server.url, 'DELETE', `/cluster/peer/${own}`), 400, `Bad request: Cannot remove peer ${own} as there are shards on it`, 'the node itself, holding a collection');
  assertError(t, await call(server.url, 'DELETE', `/cluster/peer/${own}?force=true`), 400, 'Bad request: Distributed mode disabled.', 'forced');
});
