// A transfer's receiver on the p2p routes (src/peer/p2p-server.ts): while Partial (or Recovery)
// it takes updates from its transfer's source only, sent once the source applied the transfer's
// start, and no batch of another transfer; anything else is left over from before (an update
// meant for the replica before it was Dead, a transfer aborted since) and is refused as a replica
// failure. An update passed on before the run's opening is answered and not applied (the run's
// copy supersedes it); whether the opening was taken is the replica's clock map.

import t from 'tap';
import { buildP2pApp, type LocalShard } from '../src/peer/p2p-server.js';
import { CONTENT_TYPE, decode, encode, encodeFrames, PEER_HEADER, REVISION_HEADER, shardRoute, WIRE_FORMAT, WIRE_FORMAT_HEADER, type ApplyAnswer, type ReplicaUpdate } from '../src/peer/wire.js';
import { transferClockId } from '../src/replica/transfer-proxy.js';
import { FakeReplica } from './helpers/fake-replica.js';

const SHARD = { collection: 'c', shard: 0 };
const SOURCE = 1;
const START = 10;

t.test('a Partial receiver takes updates from its source, sent from its transfer\'s start on, and its own batches only', async (t) => {
  const replica = new FakeReplica(SHARD, 2);
  const local: LocalShard = { replica, state: 'Partial', transfer: { source: SOURCE, since: START, clockId: transferClockId(START) } };
  const app = buildP2pApp({
    host: { localReplica: () => local, forward: () => Promise.reject(new Error('no leader here')), awaitRevision: async () => true },
    apiKey: null,
    revisionWaitMs: 1000,
  });
  t.teardown(() => app.close());
  const update = (id: number, clockId = 1): ReplicaUpdate => ({ type: 'apply', ops: [{ kind: 'upsert', points: [{ id, vectors: {}, payload: null }], mode: 'upsert', updateFilter: null }], opId: id, clock: { peer: SOURCE, clockId, tick: id }, wait: true, dryRun: false });
  const send = (revision: number, peer: number, body: ReplicaUpdate) => app.inject({
    method: 'POST',
    url: shardRoute('c', 0, 'apply'),
    headers: { 'content-type': CONTENT_TYPE, [WIRE_FORMAT_HEADER]: WIRE_FORMAT, [REVISION_HEADER]: String(revision), [PEER_HEADER]: String(peer) },
    payload: encodeFrames([encode(body)]),
  });
  const refusal = (answer: { statusCode: number; rawPayload: Buffer }) => [answer.statusCode, decode<{ error: { message: string } }>(answer.rawPayload).error.message];
  const refused = 'Service internal error: the replica of shard 0 of collection c on this peer takes updates from peer 1 sent from revision 10 on';

  t.same(refusal(await send(START - 1, SOURCE, update(1))), [500, refused], 'sent before the source applied the start');
  t.same(refusal(await send(START, 3, update(2))), [500, refused], 'sent by another peer');
  t.same(refusal(await send(START, SOURCE, update(3, transferClockId(START - 3)))), [500, 'Service internal error: a batch of a transfer that no longer runs'], 'a batch of an earlier transfer');
  t.same([...replica.points.keys()], [], 'nothing applied');

  const accepted = async (body: ReplicaUpdate, what: string) => {
    const answer = await send(START, SOURCE, body);
    t.same([answer.statusCode, decode<ApplyAnswer>(answer.rawPayload)], [200, { replies: [{ ok: null }] }], what);
  };
  // Its opening is the first tick of the run's clock (a stream's clearing, a delta's close).
  const opening = (id: number): ReplicaUpdate => ({ ...update(id, transferClockId(START)), clock: { peer: SOURCE, clockId: transferClockId(START), tick: 1 } });
  await accepted(update(4), 'an update passed on before the opening (an earlier run queued it): answered');
  await accepted({ ...update(5, transferClockId(START - 3)), replay: true }, 'an entry of the source\'s log replayed, an older transfer\'s clock and all');
  await accepted(opening(6), 'the opening');
  await accepted(update(7), 'an update passed on after it');
  t.same([...replica.points.keys()], [5, 6, 7], 'the replayed entry, the opening, the update passed on; not the one before the opening');

  // Another process of this peer (it forgot what it saw) serving the same replica: its clock map holds the opening.
  const again = buildP2pApp({
    host: { localReplica: () => local, forward: () => Promise.reject(new Error('no leader here')), awaitRevision: async () => true },
    apiKey: null,
    revisionWaitMs: 1000,
  });
  t.teardown(() => again.close());
  const answer = await again.inject({
    method: 'POST',
    url: shardRoute('c', 0, 'apply'),
    headers: { 'content-type': CONTENT_TYPE, [WIRE_FORMAT_HEADER]: WIRE_FORMAT, [REVISION_HEADER]: String(START), [PEER_HEADER]: String(SOURCE) },
    payload: encodeFrames([encode(update(8))]),
  });
  t.same(decode<ApplyAnswer>(answer.rawPayload), { replies: [{ ok: null }] });
  t.same([...replica.points.keys()], [5, 6, 7, 8], 'an update passed on after the opening is applied');
});

t.test('a Recovery receiver (a wal_delta\'s) takes the same; an opening and what it precedes may share a batch', async (t) => {
  const replica = new FakeReplica(SHARD, 2);
  const local: LocalShard = { replica, state: 'Recovery', transfer: { source: SOURCE, since: START, clockId: transferClockId(START, 1) } };
  const app = buildP2pApp({
    host: { localReplica: () => local, forward: () => Promise.reject(new Error('no leader here')), awaitRevision: async () => true },
    apiKey: null,
    revisionWaitMs: 1000,
  });
  t.teardown(() => app.close());
  const update = (id: number, clockId: number, tick = id): ReplicaUpdate => ({ type: 'apply', ops: [{ kind: 'upsert', points: [{ id, vectors: {}, payload: null }], mode: 'upsert', updateFilter: null }], opId: id, clock: { peer: SOURCE, clockId, tick }, wait: true, dryRun: false });
  const answer = await app.inject({
    method: 'POST',
    url: shardRoute('c', 0, 'apply'),
    headers: { 'content-type': CONTENT_TYPE, [WIRE_FORMAT_HEADER]: WIRE_FORMAT, [REVISION_HEADER]: String(START), [PEER_HEADER]: String(SOURCE) },
    payload: encodeFrames([encode({ ...update(1, 1), replay: true }), encode(update(2, transferClockId(START, 1), 1)), encode(update(3, 1))]),
  });
  t.same([answer.statusCode, decode<ApplyAnswer>(answer.rawPayload)], [200, { replies: [{ ok: null }, { ok: null }, { ok: null }] }], 'replayed, opening, passed on');
  t.same([...replica.points.keys()], [1, 2, 3]);
});
