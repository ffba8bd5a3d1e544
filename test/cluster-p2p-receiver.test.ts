// A transfer's receiver on the p2p routes (src/peer/p2p-server.ts): while Partial it takes the
// updates of senders that applied its transfer's start, and refuses, as a replica failure, an
// update sent from an earlier revision (one meant for the replica before it was Dead, which would
// land among the transfer's batches).

import t from 'tap';
import { buildP2pApp, type LocalShard } from '../src/peer/p2p-server.js';
import { CONTENT_TYPE, decode, encode, encodeFrames, REVISION_HEADER, shardRoute, WIRE_FORMAT, WIRE_FORMAT_HEADER, type ApplyAnswer, type ReplicaUpdate } from '../src/peer/wire.js';
import { FakeReplica } from './helpers/fake-replica.js';

const SHARD = { collection: 'c', shard: 0 };

t.test('a Partial receiver takes updates sent from its transfer\'s start on', async (t) => {
  const replica = new FakeReplica(SHARD, 2);
  const local: LocalShard = { replica, state: 'Partial', updatesSince: 10 };
  const app = buildP2pApp({
    host: { localReplica: () => local, forward: () => Promise.reject(new Error('no leader here')), awaitRevision: async () => true },
    apiKey: null,
    revisionWaitMs: 1000,
  });
  t.teardown(() => app.close());
  const update = (tick: number): ReplicaUpdate => ({ type: 'apply', ops: [{ kind: 'upsert', points: [{ id: tick, vectors: {}, payload: null }], mode: 'upsert', updateFilter: null }], opId: tick, clock: { peer: 1, clockId: 1, tick }, wait: true, dryRun: false });
  const send = (revision: number, tick: number) => app.inject({
    method: 'POST',
    url: shardRoute('c', 0, 'apply'),
    headers: { 'content-type': CONTENT_TYPE, [WIRE_FORMAT_HEADER]: WIRE_FORMAT, [REVISION_HEADER]: String(revision) },
    payload: encodeFrames([encode(update(tick))]),
  });

  const stale = await send(9, 1);
  t.equal(stale.statusCode, 500, "a replica failure to the sender");
  t.equal((decode<{ error: { message: string } }>(stale.rawPayload)).error.message, 'Service internal error: the replica of shard 0 of collection c on this peer takes updates sent from revision 10 on');
  t.same([...replica.points.keys()], [], 'nothing applied');

  const fresh = await send(10, 2);
  t.equal(fresh.statusCode, 200);
  t.same(decode<ApplyAnswer>(fresh.rawPayload), { replies: [{ ok: null }] });
  t.same([...replica.points.keys()], [2]);
});
