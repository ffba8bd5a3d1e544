// Shard transfers in the control plane, against a real one-member etcd: the key layout, the start
// (receiver Dead -> Partial and the key created in one transaction, refused by states, by an
// existing transfer and by the per-peer limits), the finish (Partial -> Active, key gone), the
// abort (Partial -> Dead, key gone), progress comments, concurrent starts (one winner), and the
// transfers' removal with their collection.

import t, { type Test } from 'tap';
import { fromCreateRequest } from '../src/api/collection-config.js';
import { changesBetween } from '../src/cluster/cluster-view.js';
import type { TransferLimits } from '../src/cluster/control-plane.js';
import { decodeTransferRecord, parseKey, transferKey, ClusterValueError } from '../src/cluster/keys.js';
import { progressComment } from '../src/cluster/transfer-runner.js';
import { loadConfig } from '../src/config/config.js';
import { controlPlaneCluster } from './helpers/control-plane-cluster.js';

const ONE_EACH: TransferLimits = { incoming: 1, outgoing: 1 };
const NO_LIMIT: TransferLimits = { incoming: null, outgoing: null };

/** Four peers, two proposers, an observer's apply loop, and collection `c` of `shards` shards with three replicas each, all Active. */
async function cluster(t: Test, shards = 2) {
  const { a, b, seen } = await controlPlaneCluster(t, 4);
  const config = fromCreateRequest({ vectors: { size: 4, distance: 'Cosine' }, shard_number: shards, replication_factor: 3 } as Parameters<typeof fromCreateRequest>[0], 4);
  const { placement } = await a.createCollection('c', config);
  for (const [shard, peers] of placement) for (const p of peers) await a.setReplicaState('c', shard, p, 'Active', ['Initializing']);
  return { a, b, seen, placement };
}

t.test('transfer keys: encoded under transfers/, parsed back with their parts, records checked', async (t) => {
  const ref = { collection: 'a/b c', shard: 12, from: 7, to: 9007199254740991 };
  const key = transferKey(ref);
  t.equal(key, 'transfers/a%2Fb%20c/12/7-9007199254740991');
  t.same(parseKey(key), { kind: 'transfer', ...ref });
  t.same(parseKey('transfers/c/1/7'), { kind: 'unknown' });
  t.same(parseKey('transfers/c/x/1-2'), { kind: 'unknown' });
  t.same(parseKey('transfers/c/1/1-2/more'), { kind: 'unknown' });
  t.same(decodeTransferRecord(key, '{"method":"stream_records","sync":true,"started_at":"2026-01-01T00:00:00Z","comment":"x"}'),
    { method: 'stream_records', sync: true, started_at: '2026-01-01T00:00:00Z', comment: 'x' });
  const failure = (text: string) => {
    try {
      decodeTransferRecord(key, text);
      return null;
    } catch (err) {
      return err;
    }
  };
  const method = failure('{"method":"resharding_stream_records","sync":true,"started_at":"x"}');
  t.type(method, ClusterValueError);
  t.equal((method as Error).message, `cluster state key quiver/${key}: unknown transfer method resharding_stream_records`);
  const sync = failure('{"method":"stream_records","sync":"yes","started_at":"x"}');
  t.type(sync, ClusterValueError);
  t.equal((sync as Error).message, `cluster state key quiver/${key}: member sync is not a boolean`);
});

t.test('storage.performance transfer limits: Qdrant\'s defaults (1 each), the environment, refusals', async (t) => {
  t.same(loadConfig([], {}).storage.performance, { incoming_shard_transfers_limit: 1, outgoing_shard_transfers_limit: 1 });
  const env = { QDRANT__STORAGE__PERFORMANCE__INCOMING_SHARD_TRANSFERS_LIMIT: '3', QDRANT__STORAGE__PERFORMANCE__OUTGOING_SHARD_TRANSFERS_LIMIT: '0', QDRANT__STORAGE__PERFORMANCE__MAX_SEARCH_THREADS: '2' };
  t.same(loadConfig([], env).storage.performance, { incoming_shard_transfers_limit: 3, outgoing_shard_transfers_limit: 0 }, 'other performance keys are ignored');
  t.throws(() => loadConfig([], { QDRANT__STORAGE__PERFORMANCE__INCOMING_SHARD_TRANSFERS_LIMIT: '-1' }), /invalid storage\.performance\.incoming_shard_transfers_limit: -1 \(a whole number of transfers, or null\)/);
});

t.test('storage.shard_transfer_method: null by default (Qdrant\'s), a method from the environment, anything else refused', async (t) => {
  t.equal(loadConfig([], {}).storage.shard_transfer_method, null);
  for (const method of ['stream_records', 'snapshot', 'wal_delta']) t.equal(loadConfig([], { QDRANT__STORAGE__SHARD_TRANSFER_METHOD: method }).storage.shard_transfer_method, method);
  t.throws(() => loadConfig([], { QDRANT__STORAGE__SHARD_TRANSFER_METHOD: 'resharding_stream_records' }), /invalid storage\.shard_transfer_method: resharding_stream_records \(stream_records, snapshot, wal_delta, or null\)/);
});

t.test('progress comment: Qdrant\'s shape, the total never below what was done', async (t) => {
  t.equal(progressComment(0, 5000, 400), 'Transferring records (0/5000), started 0s ago, ETA: -');
  t.equal(progressComment(1200, 5000, 3000), 'Transferring records (1200/5000), started 3s ago, ETA: 9.50s');
  t.equal(progressComment(120, 100, 2500), 'Transferring records (120/120), started 2s ago, ETA: 0.00s');
});

t.test('start, comment and finish: each one transaction, every peer sees states and key change together', async (t) => {
  const { a, seen, placement } = await cluster(t);
  const [from, to] = placement.get(0)!;
  const ref = { collection: 'c', shard: 0, from, to };

  const notDead = await a.startTransfer(ref, true, ONE_EACH, 'stream_records');
  t.same([notDead.started, notDead.reason], [false, `the receiver's replica is Active`], 'only a Dead replica is recovered');
  const before = await seen((await a.setReplicaState('c', 0, to, 'Dead', ['Active'])).revision);

  const started = await a.startTransfer(ref, true, ONE_EACH, 'stream_records');
  t.equal(started.started, true);
  const view = await seen(started.revision);
  t.equal(view.replicas('c', 0)!.get(to), 'Partial');
  t.equal(view.transfers.length, 1);
  const transfer = view.transfers[0];
  t.match(transfer, { collection: 'c', shard: 0, from, to, record: { method: 'stream_records', sync: true }, createRevision: started.revision });
  t.equal(view.transferTo('c', 0, to), transfer);
  t.ok(changesBetween(before, view).transfersChanged);
  t.same(changesBetween(before, view).shardsChanged, [{ collection: 'c', shard: 0 }]);

  const again = await a.startTransfer(ref, true, NO_LIMIT, 'stream_records');
  t.equal(again.started, false, 'a second start of the same transfer changes nothing');

  const commented = await a.setTransferComment(ref, transfer.createRevision, 'Transferring records (1/2), started 0s ago, ETA: -');
  t.equal(commented.stored, true);
  t.equal((await seen(commented.revision)).transferTo('c', 0, to)!.record.comment, 'Transferring records (1/2), started 0s ago, ETA: -');
  t.equal((await a.setTransferComment(ref, transfer.createRevision + 1000, 'stale')).stored, false, 'another run of the transfer is not commented');

  t.equal((await a.finishTransfer(ref, transfer.createRevision + 1000)).ended, false, 'another run of the transfer is not finished');
  const finished = await a.finishTransfer(ref, transfer.createRevision);
  t.equal(finished.ended, true);
  const after = await seen(finished.revision);
  t.equal(after.replicas('c', 0)!.get(to), 'Active');
  t.same(after.transfers, []);
  t.equal((await a.finishTransfer(ref)).ended, false, 'a finished transfer ends once');
  t.equal((await a.abortTransfer(ref)).ended, false, 'nor is it aborted after');
  t.equal((await seen((await a.abortTransfer(ref)).revision)).replicas('c', 0)!.get(to), 'Active');
});

t.test('wal_delta: the receiver Recovery; a restart with another method keeps the transfer, its run counted, the receiver set for it', async (t) => {
  const { a, seen, placement } = await cluster(t);
  const [from, to] = placement.get(0)!;
  const ref = { collection: 'c', shard: 0, from, to };
  await a.setReplicaState('c', 0, to, 'Dead', ['Active']);
  const started = await a.startTransfer(ref, true, ONE_EACH, 'wal_delta');
  t.equal(started.started, true);
  const view = await seen(started.revision);
  t.equal(view.replicas('c', 0)!.get(to), 'Recovery', 'Qdrant\'s state of a delta\'s receiver');
  t.match(view.transferTo('c', 0, to), { record: { method: 'wal_delta', sync: true }, createRevision: started.revision });
  t.equal(view.transferTo('c', 0, to)!.record.run, undefined, 'a first run');

  t.equal((await a.restartTransfer(ref, 'stream_records', started.revision + 1000)).restarted, false, 'another run of the transfer is not restarted');
  t.equal((await a.restartTransfer({ ...ref, to: 999 }, 'stream_records')).restarted, false, 'a transfer that does not exist');
  const restarted = await a.restartTransfer(ref, 'stream_records', started.revision);
  t.equal(restarted.restarted, true);
  const after = await seen(restarted.revision);
  t.equal(after.replicas('c', 0)!.get(to), 'Partial', 'a stream\'s receiver');
  t.match(after.transferTo('c', 0, to), { record: { method: 'stream_records', sync: true, run: 1 }, createRevision: started.revision }, 'the same transfer, its second run');
  const aborted = await a.abortTransfer(ref, started.revision);
  t.equal(aborted.ended, true, 'ended as the transfer it always was');
  t.equal((await seen(aborted.revision)).replicas('c', 0)!.get(to), 'Dead');

  t.equal((await a.startTransfer(ref, true, ONE_EACH, 'wal_delta')).started, true);
  const aborting = await a.abortTransfer(ref);
  t.equal((await seen(aborting.revision)).replicas('c', 0)!.get(to), 'Dead', 'an aborted delta\'s receiver (Recovery) is Dead');
});

t.test('transfer records: the method and the run are checked', async (t) => {
  const key = transferKey({ collection: 'c', shard: 0, from: 1, to: 2 });
  t.same(decodeTransferRecord(key, '{"method":"wal_delta","sync":true,"started_at":"x","run":2}'), { method: 'wal_delta', sync: true, started_at: 'x', run: 2 });
  t.throws(() => decodeTransferRecord(key, '{"method":"wal_delta","sync":true,"started_at":"x","run":-1}'), { message: `cluster state key quiver/${key}: member run is not a whole number` });
});

t.test('abort: the receiver back to Dead, the key gone; the source must be Active to start and to finish', async (t) => {
  const { a, seen, placement } = await cluster(t);
  const [from, to, third] = placement.get(0)!;
  await a.setReplicaState('c', 0, to, 'Dead', ['Active']);
  await a.setReplicaState('c', 0, third, 'Dead', ['Active']);
  const deadSource = await a.startTransfer({ collection: 'c', shard: 0, from: third, to }, true, NO_LIMIT, 'stream_records');
  t.same([deadSource.started, deadSource.reason], [false, `the source's replica is Dead`]);
  const ref = { collection: 'c', shard: 0, from, to };
  t.equal((await a.startTransfer(ref, true, NO_LIMIT, 'stream_records')).started, true);
  t.equal((await a.setReplicaState('c', 0, from, 'Dead', ['Active'])).changed, false, 'the source, the shard\'s last Active replica, is never marked Dead');
  await a.setReplicaState('c', 0, third, 'Active', ['Dead']);
  // The source failed an update meanwhile: the receiver may have missed it, so no finish.
  const sourceDead = await a.setReplicaState('c', 0, from, 'Dead', ['Active']);
  t.equal((await a.finishTransfer(ref)).ended, false, 'no finish from a source that is not Active');
  t.equal((await seen(sourceDead.revision)).replicas('c', 0)!.get(to), 'Partial');
  const aborted = await a.abortTransfer(ref);
  t.equal(aborted.ended, true);
  const view = await seen(aborted.revision);
  t.equal(view.replicas('c', 0)!.get(to), 'Dead');
  t.equal(view.replicas('c', 0)!.get(from), 'Dead');
  t.same(view.transfers, []);
});

t.test('limits: one incoming and one outgoing transfer per peer by default; null is no limit', async (t) => {
  const { a, seen, placement } = await cluster(t, 4);
  // Two shards that share a peer to receive in and another to send from.
  const shards = [...placement];
  const pick = () => {
    for (const [s1, p1] of shards) for (const [s2, p2] of shards) {
      if (s1 >= s2) continue;
      const receivers = p1.filter((p) => p2.includes(p));
      for (const to of receivers) {
        const from = p1.find((p) => p !== to && p2.includes(p));
        if (from !== undefined) return { s1, s2, to, from };
      }
    }
    return null;
  };
  const chosen = pick();
  if (!chosen) throw new Error('two shards of three replicas over four peers share two peers');
  const { s1, s2, to, from } = chosen;
  await a.setReplicaState('c', s1, to, 'Dead', ['Active']);
  await a.setReplicaState('c', s2, to, 'Dead', ['Active']);
  t.equal((await a.startTransfer({ collection: 'c', shard: s1, from, to }, true, ONE_EACH, 'stream_records')).started, true);
  const incoming = await a.startTransfer({ collection: 'c', shard: s2, from, to }, true, { incoming: 1, outgoing: null }, 'stream_records');
  t.same([incoming.started, incoming.reason], [false, `peer ${to} has 1 incoming transfers (limit 1)`]);
  const outgoing = await a.startTransfer({ collection: 'c', shard: s2, from, to }, true, { incoming: null, outgoing: 1 }, 'stream_records');
  t.same([outgoing.started, outgoing.reason], [false, `peer ${from} has 1 outgoing transfers (limit 1)`]);
  const unlimited = await a.startTransfer({ collection: 'c', shard: s2, from, to }, true, NO_LIMIT, 'stream_records');
  t.equal(unlimited.started, true);
  t.equal((await seen(unlimited.revision)).transfers.length, 2);
});

t.test('two peers start the same recovery at once: one transaction wins', async (t) => {
  const { a, b, seen, placement } = await cluster(t);
  const [from, to, other] = placement.get(1)!;
  await a.setReplicaState('c', 1, to, 'Dead', ['Active']);
  const answers = await Promise.all([a.startTransfer({ collection: 'c', shard: 1, from, to }, true, NO_LIMIT, 'stream_records'), b.startTransfer({ collection: 'c', shard: 1, from: other, to }, true, NO_LIMIT, 'stream_records')]);
  t.equal(answers.filter((x) => x.started).length, 1, 'exactly one started');
  const view = await seen(Math.max(...answers.map((x) => x.revision)));
  t.equal(view.transfers.length, 1);
  t.equal(view.replicas('c', 1)!.get(to), 'Partial');
});

t.test('deleting the collection deletes its transfers', async (t) => {
  const { a, seen, placement } = await cluster(t);
  const [from, to] = placement.get(0)!;
  await a.setReplicaState('c', 0, to, 'Dead', ['Active']);
  t.equal((await a.startTransfer({ collection: 'c', shard: 0, from, to }, true, NO_LIMIT, 'stream_records')).started, true);
  const deleted = await a.deleteCollection('c');
  const view = await seen(deleted.revision);
  t.same(view.transfers, []);
  t.same([...view.entries.keys()].filter((k) => k.startsWith('transfers/')), []);
});

t.test('a copy of points into another shard (replicate_points): its key, its start and refusals, the source\'s removal ends it with the target Dead', async (t) => {
  const ref = { collection: 'k', shard: 3, from: 7, to: 9, toShard: 5 };
  t.equal(transferKey(ref), 'transfers/k/3/7-9-5', 'the receiver\'s shard after the peers');
  t.same(parseKey(transferKey(ref)), { kind: 'transfer', ...ref });
  t.same(parseKey('transfers/k/3/7-9-x'), { kind: 'unknown' });
  t.match(decodeTransferRecord(transferKey(ref), '{"method":"stream_records","sync":true,"started_at":"x","filter":{"must":[]}}'), { filter: { must: [] } });
  t.throws(() => decodeTransferRecord(transferKey(ref), '{"method":"stream_records","sync":true,"started_at":"x","filter":[1]}'), /member filter is not an object/);

  const { a, seen } = await controlPlaneCluster(t, 2);
  const [first, second] = [...(await seen(0)).peers.keys()];
  const config = fromCreateRequest({ vectors: { size: 4, distance: 'Cosine' }, sharding_method: 'custom', shard_number: 1, replication_factor: 1 } as Parameters<typeof fromCreateRequest>[0], 2);
  await a.createCollection('k', config);
  const fallback = await a.createShardKey('k', 'default', { placement: [first!] });
  const tenant = await a.createShardKey('k', 'tenant', { placement: [second!] });
  await a.createShardKey('k', 'wide', { shardsNumber: 2, placement: [first!] });
  const filter = { must: [{ key: 'city', match: { value: 'London' } }] };
  const refused = async (work: Promise<unknown>) => work.then(() => 'started', (err: Error) => err.message.replace(/^Bad request: /, ''));
  t.equal(await refused(a.startPointsTransfer('k', 'nope', 'tenant', null, 'stream_records')), 'Shard key nope not found');
  t.equal(await refused(a.startPointsTransfer('k', 'wide', 'tenant', null, 'stream_records')), 'Only replicating from shard keys with exactly one shard is supported. Shard key wide has 2 shards');
  t.equal(await refused(a.startPointsTransfer('k', 'default', 'default', null, 'stream_records')), 'Cannot replicate points from shard key default into itself', 'the same key');
  t.equal(await refused(a.startPointsTransfer('k', 'default', 'wide', null, 'stream_records')), 'Only replicating to shard keys with exactly one replica is supported. Shard key wide has 2 replicas');
  t.equal(await refused(a.startPointsTransfer('k', 'default', 'tenant', filter, 'snapshot')), 'Can\'t do shard transfer using method Snapshot in combination with a filter', 'the configured method, with a filter');
  t.equal(await refused(a.startPointsTransfer('k', 'default', 'tenant', null, 'wal_delta')),
    'Shard transfer method wal_delta is not supported by Quiver for replicate_points: points are copied between shards by stream_records', 'without one');

  const started = await a.startPointsTransfer('k', 'default', 'tenant', filter, 'stream_records');
  const [from, into] = [fallback.shards[0]!, tenant.shards[0]!];
  t.same(started.ref, { collection: 'k', shard: from, from: first, to: second, toShard: into });
  let view = await seen(started.revision);
  t.equal(view.replicas('k', into)!.get(second!), 'Partial', 'the target Partial, from Active');
  t.same(view.transfers.map((x) => [x.shard, x.toShard, x.record.filter]), [[from, into, filter]]);
  t.equal(view.transferTo('k', into, second!)?.toShard, into, 'the transfer feeding the target is found by the target\'s shard');
  t.equal(view.transferTo('k', from, second!), undefined, 'not by the source\'s');
  t.equal(await refused(a.startPointsTransfer('k', 'default', 'tenant', null, 'stream_records')), `Shard ${from} is already involved in transfer ${first} -> ${second}`, 'one copy at a time');

  const comment = await a.setTransferComment(started.ref, view.transfers[0]!.createRevision, 'x');
  t.equal(comment.stored, true, 'a progress comment, found through the target\'s shard');
  const finished = await a.finishTransfer(started.ref);
  t.equal(finished.ended, true);
  view = await seen(finished.revision);
  t.equal(view.replicas('k', into)!.get(second!), 'Active', 'the finish makes the target Active');
  t.same(view.transfers, []);

  // Again, then the source's replica dropped: the copy ends with the target Dead.
  const again = await a.startPointsTransfer('k', 'default', 'tenant', null, 'stream_records');
  const removed = await a.removePeer(first!, true);
  view = await seen(removed.revision);
  t.equal(view.replicas('k', into)!.get(second!), 'Dead', 'the target Dead once its source left');
  t.same(view.transfers.filter((x) => x.createRevision === again.revision), [], 'the copy is gone');
});
