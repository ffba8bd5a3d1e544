// A network partition of one peer under write load (issue 18's fault tests): three CLI-started
// peers whose links all go through loopback proxies (helpers/partitioned-cluster.ts), a
// collection with replication factor 2 and one with 3, a writer through every peer on each
// (`wait=true`, disjoint ids, a failed write retried with a newer value). The etcd leader's peer
// is cut off from the other two, its p2p and etcd traffic both ways, while the writers go on; then
// the partition heals. Every replica must be Active again within a bound, and every peer's
// `consistency=all` scroll must be the same and hold exactly the last acknowledged value of every
// point written: nothing lost, nothing stale, nothing Active that missed a write. The numbers are
// printed.
//
// QUIVER_PARTITION_MS sets how long the partition lasts at least (default 8 s: longer than a
// peer's 5 s liveness lease, so the others see the cut-off peer gone, not only its failed writes).
// QUIVER_PARTITION_HELD=reset drops, at the heal, the requests sent during the cut that still
// wait for an answer, instead of delivering them late (the default, as a link that comes back
// delivers what was retransmitted meanwhile).

import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { AckHistory, runWriter, untilAcknowledged } from './helpers/ack-history.js';
import { until } from './helpers/cluster.js';
import { allActive, describePeers, firstExit, formed, replicaStates, result, untilAllActive } from './helpers/cluster-api.js';
import { startPartitionedCluster } from './helpers/partitioned-cluster.js';
import { shardOf } from '../src/shard/routing.js';

const ENV = { QDRANT__CLUSTER__GRPC_TIMEOUT_MS: '2000', QDRANT__CLUSTER__CONNECTION_TIMEOUT_MS: '1000' };
const DIM = 4;
const SHARDS = 3;
const IDS_PER_WRITER = 300;
const COLLECTIONS = [{ name: 'rf2', replication_factor: 2 }, { name: 'rf3', replication_factor: 3 }];
const PARTITION_MS = Number(process.env.QUIVER_PARTITION_MS ?? 8000);
const HELD = process.env.QUIVER_PARTITION_HELD === 'reset' ? 'reset' : 'forward';

function vector(id: number): number[] {
  return Array.from({ length: DIM }, (_, d) => Math.sin(id * 0.37 + d * 1.1));
}

t.test('the etcd leader\'s peer cut off from the others under writes through every peer, then healed: every acknowledged write on every replica', async (t) => {
  const started = Date.now();
  const cluster = await startPartitionedCluster(t, 3, ENV);
  const { peers, ids } = cluster;
  for (const { name, replication_factor } of COLLECTIONS) {
    t.equal(await result(peers[0], 'PUT', `/collections/${name}?timeout=60`, { vectors: { size: DIM, distance: 'Cosine' }, shard_number: SHARDS, replication_factor }), true, `${name} created`);
    await until(`${name} Active everywhere`, () => allActive(peers, name), 60_000);
  }

  const histories = COLLECTIONS.map(() => new AckHistory());
  let stop = false;
  const writers = COLLECTIONS.flatMap(({ name }, c) => peers.map((peer, w) => runWriter({
    peer: () => peer,
    collection: name,
    ids: Array.from({ length: IDS_PER_WRITER }, (_, i) => w * 100_000 + i + 1),
    perWrite: 5,
    history: histories[c],
    stopped: () => stop,
    vector,
  })));
  t.teardown(async () => {
    stop = true;
    await Promise.allSettled(writers);
  });
  const acknowledged = () => histories.reduce((n, h) => n + h.counts.acknowledged, 0);
  await untilAcknowledged('writes before the partition', histories, 30);

  const { leader } = await formed(peers);
  const cutOff = ids.indexOf(leader);
  const majority = peers.filter((_, i) => i !== cutOff);
  const names = COLLECTIONS.map(({ name }) => name);
  const timeline: string[] = [];
  const mark = (what: string) => timeline.push(`+${((Date.now() - started) / 1000).toFixed(1)} s ${what}`);
  // A wait that fails, or a peer that ends meanwhile, fails the test with what every peer says.
  const exited = firstExit(peers).then((peer) => {
    throw new Error(`peer ${peer.url} ended (${peer.server.process.exitCode ?? peer.server.process.signalCode})`);
  });
  exited.catch(() => {});
  const evidence = async <T>(step: Promise<T>): Promise<T> => {
    try {
      return await Promise.race([step, exited]);
    } catch (err) {
      throw new Error(`${(err as Error).message}\npeer ${leader} (${peers[cutOff].url}) was cut off; ${timeline.join(', ')}\n=== the peers ===\n${await describePeers(peers, names)}`);
    }
  };

  const atCut = histories.map((h) => h.counts.acknowledged);
  await cluster.isolate(cutOff);
  const cutAt = Date.now();
  mark(`peer ${leader} cut off`);
  try {
    // etcd is cut too: the others elect a leader among themselves.
    await evidence(until(`a leader other than peer ${leader} for the others`, async () => {
      const bodies = await Promise.all(majority.map((peer) => result<{ raft_info: { leader: number | null } }>(peer, 'GET', '/cluster')));
      const leaders = new Set(bodies.map((b) => b.raft_info.leader));
      return leaders.size === 1 && !leaders.has(leader) && !leaders.has(null);
    }, 60_000));
    mark('the others elected another leader');
    await evidence(untilAcknowledged(`writes through the other peers while peer ${leader} is cut off`, histories, 30));
    // The write path noticed: the others no longer count a replica on the cut-off peer as Active.
    await evidence(until(`a replica on peer ${leader} no longer Active for the others`, async () => {
      const { states } = await replicaStates(majority[0], names[0]);
      return [...states].some(([key, state]) => key.endsWith(`@${leader}`) && state !== 'Active');
    }, 60_000));
    // The fault's length, not a wait for a state: the partition stays until PARTITION_MS is up.
    await sleep(Math.max(0, PARTITION_MS - (Date.now() - cutAt)));
  } finally {
    cluster.heal(HELD);
  }
  const healedAt = Date.now();
  mark('healed');
  // What the cut-off peer and the others believe of the replicas as the link comes back.
  const viewsAtHeal = await Promise.all([peers[cutOff], majority[0]].map(async (peer) => {
    const { states } = await replicaStates(peer, names[0]).catch(() => ({ states: new Map<string, string>() }));
    return `${peer.url}: ${[...states].map(([key, state]) => `${key}=${state}`).join(' ')}`;
  }));
  mark(`${names[0]} as seen at the heal by the cut-off peer ${viewsAtHeal[0]}, by another ${viewsAtHeal[1]}`);
  const whileCut = histories.map((h, c) => h.counts.acknowledged - atCut[c]);
  await evidence(untilAcknowledged('writes after the heal', histories, 30));
  stop = true;
  await evidence(Promise.all(writers));
  mark('writers stopped');

  for (const name of names) await evidence(untilAllActive(peers, name, 120_000));
  const converged = (Date.now() - healedAt) / 1000;
  mark('every replica Active');

  let lost = 0;
  for (const [c, name] of names.entries()) {
    const scrolls = await Promise.all(peers.map(async (peer) => JSON.stringify(await result(peer, 'POST', `/collections/${name}/points/scroll?consistency=all`, { limit: histories[c].counts.points + 1000, with_payload: true, with_vector: true }))));
    t.equal(new Set(scrolls).size, 1, `${name}: every peer's consistency=all scroll the same`);
    for (const peer of peers) {
      const found = await histories[c].differences(peer, name, 'all');
      lost = Math.max(lost, found.missing + found.stale);
      if (!t.same(found, { missing: 0, stale: 0, unknown: 0 }, `${name} through ${peer.url}, consistency all: every acknowledged value, nothing else`)) {
        const mismatches = await histories[c].mismatches(peer, name, 'all', started, 20, (id) => ` (shard ${shardOf(id, SHARDS)})`);
        const transfers = await describePeers(peers, names, 60, /transfer|recover|Dead|mark|abort|crash|Error:/i);
        t.comment(`${name} through ${peer.url}: peer ${leader} (${peers[cutOff].url}) was cut off; ${timeline.join(', ')}\n${mismatches.join('\n')}\n=== the peers ===\n${transfers}`);
      }
    }
    const { acknowledged: acked, failed, points } = histories[c].counts;
    t.comment(`${name}: acknowledged writes ${acked} (${whileCut[c]} while cut off; ${points} points), failed attempts retried ${failed}`);
  }
  const { reset, held } = cluster.cuts();
  const failed = histories.reduce((n, h) => n + h.counts.failed, 0);
  t.comment(`partition: peers 3, the etcd leader's peer cut off for ${((healedAt - cutAt) / 1000).toFixed(1)} s (connections reset ${reset}, held ${held}), acknowledged writes ${acknowledged()} (${whileCut.reduce((a, b) => a + b, 0)} while cut off), failed attempts retried ${failed}, lost ${lost}, converged ${converged.toFixed(1)} s after the heal, whole run ${((Date.now() - started) / 1000).toFixed(0)} s`);
});
