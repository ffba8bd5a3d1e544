// A shard's replica states from the applied view, and the mark of a failed replica: proposed Dead
// until etcd commits it (within the bound), done once this peer applied the deciding revision; a
// refusal ends it at once; a name that now stands for another collection has no replicas here.

import t from 'tap';
import { fromCreateRequest } from '../src/api/collection-config.js';
import { ClusterView } from '../src/cluster/cluster-view.js';
import type { ReplicaStateChange } from '../src/cluster/control-plane.js';
import { collectionKey, encodeValue, shardEntryKey, type ShardEntry } from '../src/cluster/keys.js';
import { ViewReplicaStates, type AppliedViews, type StateProposer } from '../src/cluster/view-replica-states.js';
import { SourceLapses } from '../src/cluster/source-lapses.js';
import type { CollectionRecord } from '../src/collection/manager.js';
import { NotFound, ServiceError } from '../src/errors.js';
import type { ReplicaState } from '../src/replica/replica.js';
import { until } from './helpers/cluster.js';

const SHARD = { collection: 'c', shard: 0 };
const RECORD: CollectionRecord = { name: 'c', storageId: 'sid-1', config: fromCreateRequest({ vectors: { size: 2, distance: 'Dot' } } as Parameters<typeof fromCreateRequest>[0], 1), indexes: [] };

function viewAt(revision: number, replicas: Record<string, ReplicaState>, record = RECORD): ClusterView {
  const stored = (value: unknown) => ({ text: encodeValue(value), createRevision: 1, modRevision: revision });
  return new ClusterView(revision, new Map([
    [collectionKey('c'), stored(record)],
    [shardEntryKey('c', 0), stored({ replicas } satisfies ShardEntry)],
  ]));
}

/** A peer's applied views: `apply` makes the next one current and answers the waiters it satisfies. */
class Views implements AppliedViews {
  readonly waits: [number, number][] = [];
  private waiters: { revision: number; resolve: () => void }[] = [];
  constructor(public current: ClusterView) {}
  view(): ClusterView {
    return this.current;
  }
  waitApplied(revision: number, timeoutMs: number): Promise<void> {
    this.waits.push([revision, timeoutMs]);
    if (this.current.revision >= revision) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ revision, resolve }));
  }
  apply(view: ClusterView): void {
    this.current = view;
    for (const w of this.waiters.filter((w) => w.revision <= view.revision)) w.resolve();
  }
}

/**
 * Fails the first `failures` single marks with `error`, then commits at revision 10 and has
 * `views` apply it; a shard's lingering marks (`markDead`) fail while `quorumLost()` says so.
 */
function proposer(views: Views, failures: number, error: Error, quorumLost = () => false): StateProposer & { calls: unknown[][]; batches: number[][] } {
  const calls: unknown[][] = [];
  const batches: number[][] = [];
  return {
    calls,
    batches,
    async setReplicaState(...args: Parameters<StateProposer['setReplicaState']>): Promise<ReplicaStateChange> {
      calls.push(args);
      if (calls.length <= failures) throw error;
      setImmediate(() => views.apply(viewAt(10, { 1: 'Active', 2: 'Dead' })));
      return { revision: 10, changed: true, previous: 'Active', read: 4 };
    },
    async markDead(_collection: string, _shard: number, from: ReadonlyMap<number, ReplicaState | null>) {
      if (quorumLost()) throw new ServiceError('etcd has no quorum');
      batches.push([...from.keys()]);
      return { revision: 11, changed: [...from.keys()] };
    },
  };
}

t.test('states are the applied view\'s, for this collection only', async (t) => {
  const views = new Views(viewAt(5, { 1: 'Active', 2: 'Initializing' }));
  const states = new ViewReplicaStates(SHARD, 'sid-1', views, proposer(views, 0, new Error('unused')), new SourceLapses());
  t.strictSame([states.stateOf(1), states.stateOf(2), states.stateOf(3)], ['Active', 'Initializing', undefined]);
  views.apply(viewAt(6, { 1: 'Active', 2: 'Active' }));
  t.equal(states.stateOf(2), 'Active', 'a later view is read at once');
  views.apply(viewAt(7, { 1: 'Active', 2: 'Active' }, { ...RECORD, storageId: 'sid-2' }));
  t.equal(states.stateOf(1), undefined, 'the name now stands for another collection');
});

t.test('a mark proposes Dead from the failed state and resolves once applied here', async (t) => {
  const views = new Views(viewAt(5, { 1: 'Active', 2: 'Active' }));
  const p = proposer(views, 2, new ServiceError('etcd has no quorum'));
  const states = new ViewReplicaStates(SHARD, 'sid-1', views, p, new SourceLapses(), 5000);
  t.strictSame(await states.markFailed(2, 'Active'), { read: 4, committed: 10 }, 'how it was decided: the revision it read, and its own');
  t.strictSame(p.calls, [['c', 0, 2, 'Dead', ['Active']], ['c', 0, 2, 'Dead', ['Active']], ['c', 0, 2, 'Dead', ['Active']]], 'proposed again until committed');
  t.equal(states.stateOf(2), 'Dead', 'shown once the mark resolved');
  t.equal(views.waits[0][0], 10, 'waited for the committed revision');
  t.ok(views.waits[0][1] <= 5000, 'within what is left of the bound');
  const any = proposer(views, 0, new Error('unused'));
  await new ViewReplicaStates(SHARD, 'sid-1', views, any, new SourceLapses()).markFailed(1, null);
  t.strictSame(any.calls[0], ['c', 0, 1, 'Dead', null], 'from any state when the failed state is not known');
});

t.test('a refusal ends the mark; an uncommitted proposal ends with the bound', async (t) => {
  const views = new Views(viewAt(5, { 1: 'Active', 2: 'Active' }));
  const gone = proposer(views, 100, new NotFound('Collection `c` doesn\'t exist!'));
  await t.rejects(new ViewReplicaStates(SHARD, 'sid-1', views, gone, new SourceLapses(), 5000).markFailed(2, 'Active'), { message: 'Not found: Collection `c` doesn\'t exist!' });
  t.equal(gone.calls.length, 1, 'not proposed again');
  const stuck = proposer(views, 1000, new ServiceError('etcd has no quorum'));
  const started = Date.now();
  await t.rejects(new ViewReplicaStates(SHARD, 'sid-1', views, stuck, new SourceLapses(), 300).markFailed(2, 'Active'), { message: 'Service internal error: etcd has no quorum' });
  t.ok(stuck.calls.length >= 2, `proposed ${stuck.calls.length} times`);
  t.ok(Date.now() - started < 2000, 'gave up around the bound');
});

t.test('marks that outlived their request go on, every replica of the shard in one proposal, once the quorum is back', async (t) => {
  const views = new Views(viewAt(5, { 1: 'Active', 2: 'Active', 3: 'Active' }));
  let lost = true;
  const p = proposer(views, 1000, new ServiceError('etcd has no quorum'), () => lost);
  const states = new ViewReplicaStates(SHARD, 'sid-1', views, p, new SourceLapses(), 100);
  await Promise.all([
    t.rejects(states.markFailed(2, 'Active'), { message: 'Service internal error: etcd has no quorum' }),
    t.rejects(states.markFailed(3, 'Active'), { message: 'Service internal error: etcd has no quorum' }),
  ]);
  t.same(p.batches, [], 'nothing committed while the quorum is lost');
  lost = false;
  await until('the lingering marks committed', async () => p.batches.length > 0, 10_000);
  t.same(p.batches, [[2, 3]], 'both replicas marked in one proposal once it commits');
});
