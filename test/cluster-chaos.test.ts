// Kill -9 under write load (issue 18's fault tests): three CLI-started peers, a collection with
// replication factor 2 and one with 3, a writer through every peer on each (`wait=true`, disjoint
// ids, a failed write retried with a newer value). A peer is SIGKILLed and restarted, again and
// again (the first victim is the etcd leader's peer, so etcd elects another leader meanwhile);
// writes through the other peers go on while it is down. After the last restart every replica
// must be Active again within a bound, and every peer's `consistency=all` scroll must hold
// exactly the last acknowledged value of every point written: nothing lost, nothing stale,
// nothing Active that missed a write. The numbers are printed.
//
// QUIVER_SOAK_KILLS sets the number of kills (default 3; a soak runs with more).

import t from 'tap';
import { AckHistory, runWriter, untilAcknowledged } from './helpers/ack-history.js';
import { call } from './helpers/api-http.js';
import { startCluster, startPeer, until, type ClusterPeer } from './helpers/cluster.js';
import { allActive, formed, result, untilAllActive } from './helpers/cluster-api.js';

const ENV = { QDRANT__CLUSTER__GRPC_TIMEOUT_MS: '2000', QDRANT__CLUSTER__CONNECTION_TIMEOUT_MS: '1000' };
const DIM = 4;
const KILLS = Number(process.env.QUIVER_SOAK_KILLS ?? 3);
const IDS_PER_WRITER = 300;
const COLLECTIONS = [{ name: 'rf2', replication_factor: 2 }, { name: 'rf3', replication_factor: 3 }];

function vector(id: number): number[] {
  return Array.from({ length: DIM }, (_, d) => Math.sin(id * 0.37 + d * 1.1));
}

/** A seeded generator (mulberry32): the same victims every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

t.test(`${KILLS} kill -9s of a random peer under writes through every peer: every acknowledged write on every replica`, async (t) => {
  const started = Date.now();
  const peers = await startCluster(t, 3, { env: ENV });
  const { ids, leader } = await formed(peers);
  for (const { name, replication_factor } of COLLECTIONS) {
    t.equal(await result(peers[0], 'PUT', `/collections/${name}?timeout=60`, { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 3, replication_factor }), true, `${name} created`);
    await until(`${name} Active everywhere`, () => allActive(peers, name), 60_000);
  }

  // Writers hold the peer by index, so a restarted peer's new process is written through too.
  const live = [...peers];
  const histories = new Map(COLLECTIONS.map(({ name }) => [name, new AckHistory()]));
  let stop = false;
  const writers = COLLECTIONS.flatMap(({ name }) => live.map((_, w) => runWriter({
    peer: () => live[w],
    collection: name,
    ids: Array.from({ length: IDS_PER_WRITER }, (_, i) => w * 100_000 + i + 1),
    perWrite: 5,
    history: histories.get(name)!,
    stopped: () => stop,
    vector,
  })));
  t.teardown(async () => {
    stop = true;
    await Promise.allSettled(writers);
  });
  const progress = (what: string, more: number) => untilAcknowledged(what, [...histories.values()], more);

  const random = seeded(18);
  let lastRestart = Date.now();
  await progress('writes before the first kill', 30);
  for (let kill = 0; kill < KILLS; kill++) {
    const index = kill === 0 ? ids.indexOf(leader) : Math.floor(random() * live.length);
    const victim = live[index];
    await victim.server.stop('SIGKILL');
    await progress(`writes through the other peers while peer ${ids[index]} is down`, 20);
    const bootstrap = live.find((p) => p !== victim)!.uri;
    const back = await startPeer({ storage: victim.storage, ports: victim.ports, bootstrap, env: ENV });
    t.teardown(() => back.server.stop('SIGKILL'));
    live[index] = back;
    lastRestart = Date.now();
    await until(`peer ${ids[index]} ready again`, async () => (await call(back.url, 'GET', '/readyz')).status === 200, 60_000);
    await progress(`writes after peer ${ids[index]} is back`, 20);
  }
  stop = true;
  await Promise.all(writers);

  for (const { name } of COLLECTIONS) await untilAllActive(live, name, 120_000);
  const converged = (Date.now() - lastRestart) / 1000;

  for (const { name } of COLLECTIONS) {
    const history = histories.get(name)!;
    for (const peer of live) {
      const found = await history.differences(peer, name, 'all');
      t.same(found, { missing: 0, stale: 0, unknown: 0 }, `${name} through ${peer.url}, consistency all: every acknowledged value, nothing else`);
    }
    const { acknowledged: acked, failed, points } = history.counts;
    t.comment(`${name}: peers 3, kills ${KILLS}, acknowledged writes ${acked} (${points} points), failed attempts retried ${failed}, lost 0 (checked above), converged ${converged.toFixed(1)} s after the last restart, whole run ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
});

t.test('two of three peers down: no write is acknowledged without its replicas; after both restart the replicas agree again', async (t) => {
  const peers = await startCluster(t, 3, { env: ENV });
  await formed(peers);
  t.equal(await result(peers[0], 'PUT', '/collections/quorum?timeout=60', { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 1, replication_factor: 3 }), true);
  await until('quorum Active everywhere', () => allActive(peers, 'quorum'), 60_000);
  const history = new AckHistory();
  const written = Array.from({ length: 100 }, (_, i) => i + 1);
  const first = await call(peers[0].url, 'PUT', '/collections/quorum/points?wait=true', { points: written.map((id) => ({ id, vector: vector(id), payload: { v: 1 } })) });
  t.equal(first.status, 200, 'written while every peer is up');
  history.acknowledge(written, 1);

  await Promise.all([peers[1].server.stop('SIGKILL'), peers[2].server.stop('SIGKILL')]);
  // The survivor cannot mark the two replicas Dead (etcd has no quorum): the write is not acknowledged.
  const began = Date.now();
  const lonely = await call(peers[0].url, 'PUT', '/collections/quorum/points?wait=true', { points: [1, 2, 3].map((id) => ({ id, vector: vector(id), payload: { v: 2 } })) });
  t.not(lonely.status, 200, `a write with two of three replicas down is refused (${lonely.status} after ${((Date.now() - began) / 1000).toFixed(1)} s: ${JSON.stringify(lonely.body).slice(0, 160)})`);

  const again = await Promise.all([peers[1], peers[2]].map((p) => startPeer({ storage: p.storage, ports: p.ports, bootstrap: peers[0].uri, env: ENV })));
  for (const p of again) t.teardown(() => p.server.stop('SIGKILL'));
  const live = [peers[0], ...again];
  const restartedAt = Date.now();
  // The survivor's marks of the two replicas that missed its update land once etcd has a quorum
  // again; they are then recovered from it. Until then all three show Active and disagree.
  const agreed = async () => {
    if (!(await allActive(live, 'quorum'))) return false;
    const scrolls = await Promise.all(live.map(async (p) => JSON.stringify((await result<{ points: unknown[] }>(p, 'POST', '/collections/quorum/points/scroll?consistency=all', { limit: 1000, with_payload: true })).points)));
    return new Set(scrolls).size === 1 && history.expected().every(([id]) => scrolls[0].includes(`"id":${id},`));
  };
  await until('every replica Active again and holding the same points', agreed, 120_000);
  t.pass(`every replica Active again, every peer reading the same points with consistency all, ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after the restarts`);
  for (const peer of live) {
    const found = await history.differences(peer, 'quorum', 'all');
    t.same({ missing: found.missing, unknown: found.unknown }, { missing: 0, unknown: 0 }, `every acknowledged point through ${peer.url}`);
  }
});

t.test('a hung peer (SIGSTOP) under writes through every peer: the others go on, and once it resumes it catches up', async (t) => {
  const peers = await startCluster(t, 3, { env: ENV });
  const { ids } = await formed(peers);
  t.equal(await result(peers[0], 'PUT', '/collections/hung?timeout=60', { vectors: { size: DIM, distance: 'Cosine' }, shard_number: 3, replication_factor: 2 }), true);
  await until('hung Active everywhere', () => allActive(peers, 'hung'), 60_000);
  const history = new AckHistory();
  let stop = false;
  const writers = peers.map((peer, w) => runWriter({
    peer: () => peer, collection: 'hung', ids: Array.from({ length: IDS_PER_WRITER }, (_, i) => w * 100_000 + i + 1), perWrite: 5, history, stopped: () => stop, vector,
  }));
  t.teardown(async () => {
    stop = true;
    await Promise.allSettled(writers);
  });
  const progress = (what: string, more: number) => untilAcknowledged(what, [history], more);
  await progress('writes before the hang', 30);
  const hung = peers[1];
  hung.server.process.kill('SIGSTOP');
  try {
    await progress(`writes through the other peers while peer ${ids[1]} hangs`, 30);
  } finally {
    hung.server.process.kill('SIGCONT');
  }
  const resumedAt = Date.now();
  await progress(`writes after peer ${ids[1]} resumed`, 30);
  stop = true;
  await Promise.all(writers);
  await untilAllActive(peers, 'hung', 120_000);
  for (const peer of peers) t.same(await history.differences(peer, 'hung', 'all'), { missing: 0, stale: 0, unknown: 0 }, `every acknowledged value through ${peer.url}, consistency all`);
  const { acknowledged, failed, points } = history.counts;
  t.comment(`hung: peers 3, one SIGSTOPped, acknowledged writes ${acknowledged} (${points} points), failed attempts retried ${failed}, lost 0, converged ${((Date.now() - resumedAt) / 1000).toFixed(1)} s after it resumed`);
});
