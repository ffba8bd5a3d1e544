// A replica set's updates (src/replica/write-ordering.ts and write-outcome.ts through
// src/replica/replica-set.ts), over in-memory replicas: the leader per write ordering and
// forwarding to it, the targets per state, `write_consistency_factor`, which failed replicas are
// marked Dead and when the answer waits for it, and Qdrant's error texts.

import t from 'tap';
import { withWriteScope } from '../src/replica/request-scope.js';
import { BadInput, ServiceError } from '../src/errors.js';
import { pointNotFound } from '../src/messages.js';
import type { ReplicaState, ReplicaTask, WriteOrdering } from '../src/replica/replica.js';
import { ReplicaSet } from '../src/replica/replica-set.js';
import type { MarkDecision, ReplicaStates } from '../src/replica/replica-states.js';
import { applyAcross } from '../src/replica/shard-writes.js';
import { OperationClock } from '../src/replica/operation-clock.js';
import { updateLeader } from '../src/replica/write-ordering.js';
import { judgeUpdate, requiredSuccesses, statesKeptSince, type TargetOutcome } from '../src/replica/write-outcome.js';
import type { WriteOp } from '../src/shard/write-ops.js';
import { FakeReplica } from './helpers/fake-replica.js';

const SHARD = { collection: 'c', shard: 3 };
const OPS: WriteOp[] = [{ kind: 'upsert', points: [{ id: 1, vectors: { '': new Float32Array([1, 0]) }, payload: {} }], mode: 'upsert', updateFilter: null }];

function apply(wait = true, opId = 1): Extract<ReplicaTask, { type: 'apply' }> {
  return { type: 'apply', ops: OPS, opId, clock: { peer: 0, clockId: 0, tick: opId }, wait, dryRun: false };
}

/**
 * States as a cluster view would hold them: a failure is proposed (recorded in `proposed`) and
 * shows as Dead only once `applyProposals()` is called, or at once with `autoApply`.
 */
class ProposedStates implements ReplicaStates {
  readonly proposed: { peer: number; from: ReplicaState | null }[] = [];
  private readonly pending: (() => void)[] = [];

  /** How each mark was decided in the cluster (null: not a cluster's states). */
  decision: MarkDecision | null = null;
  /** Peer -> the last revision its replica was seen other than a source of truth (a cluster's views). */
  readonly lapses = new Map<number, number>();

  constructor(private readonly states: Map<number, ReplicaState>, private readonly autoApply: boolean, readonly revision?: () => number) {}

  stateOf(peer: number): ReplicaState | undefined {
    return this.states.get(peer);
  }

  markFailed(peer: number, from: ReplicaState | null): Promise<MarkDecision | null> {
    this.proposed.push({ peer, from });
    const apply = () => {
      if (from === null || this.states.get(peer) === from) this.states.set(peer, 'Dead');
    };
    if (this.autoApply) {
      apply();
      return Promise.resolve(this.decision);
    }
    return new Promise((resolve) => this.pending.push(() => (apply(), resolve(this.decision))));
  }

  applyProposals(): void {
    for (const apply of this.pending.splice(0)) apply();
  }

  sourceOfTruthSince(peer: number, revision: number): boolean {
    return (this.lapses.get(peer) ?? -Infinity) <= revision;
  }
}

interface Options {
  thisPeer?: number;
  wcf?: number;
  autoApply?: boolean;
  deactivationTimeoutMs?: number;
  /** The revision of the states (a cluster view's); absent: a single node's. */
  revision?: () => number;
}

/** A set of one replica per state given, of peers 0, 1, ... */
function replicaSet(states: ReplicaState[], { thisPeer = 0, wcf = 1, autoApply = true, deactivationTimeoutMs, revision }: Options = {}) {
  const replicas = states.map((_, peer) => new FakeReplica(SHARD, peer));
  const held = new ProposedStates(new Map(states.map((s, peer) => [peer, s])), autoApply, revision);
  const set = new ReplicaSet(SHARD, replicas, { peer: thisPeer, states: held, params: () => ({ writeConsistencyFactor: wcf, readFanOutFactor: null }), deactivationTimeoutMs });
  return { set, replicas, states: held };
}

function update(set: ReplicaSet, task: Extract<ReplicaTask, { type: 'apply' }> = apply(), ordering?: WriteOrdering) {
  return withWriteScope(ordering, () => set.apply(task));
}

const applies = (replicas: FakeReplica[]) => replicas.map((r) => r.tasks('apply').length);

t.test('targets: Active, Initializing and Listener replicas (a Listener without waiting); never Dead or recovering ones, nor a Partial one directly', async (t) => {
  const { set, replicas } = replicaSet(['Active', 'Partial', 'Initializing', 'Listener', 'Dead', 'Recovery', 'PartialSnapshot']);
  t.equal(await update(set), null);
  t.same(applies(replicas), [1, 0, 1, 1, 0, 0, 0], 'a Partial replica is fed through its transfer\'s source only');
  t.same([0, 2, 3].map((i) => replicas[i].tasks('apply')[0].wait), [true, true, false], 'the Listener applies with wait=false');
  const none = replicaSet(['Dead', 'Recovery']);
  await t.rejects(update(none.set), { message: 'Service internal error: The replica set for shard 3 on peer 0 has no active replica', statusCode: 500 }, 'no replica takes updates');
});

t.test('write_consistency_factor: successes >= min(wcf, replicas in the set)', async (t) => {
  t.same([[1, 3], [2, 3], [5, 3], [3, 1]].map(([wcf, n]) => requiredSuccesses(wcf, n)), [1, 2, 3, 1]);

  const two = replicaSet(['Active', 'Active', 'Active'], { wcf: 2 });
  two.replicas[1].failNext('apply', new ServiceError('disk full'));
  t.equal(await update(two.set), null, 'wcf 2 of 3: one failure, two successes: it stands');
  t.same(two.states.proposed, [{ peer: 1, from: 'Active' }], 'the failed replica is proposed Dead, from Active');
  t.equal(two.states.stateOf(1), 'Dead');

  const three = replicaSet(['Active', 'Active', 'Active'], { wcf: 3 });
  three.replicas[2].failNext('apply', new ServiceError('disk full'));
  await t.rejects(update(three.set), { message: 'Service internal error: disk full', statusCode: 500 }, 'wcf 3: the failure\'s own error');
  t.same(three.states.proposed, [], 'and no replica is marked Dead');
  t.same(three.replicas.map((r) => r.applied), [[1], [1], []], 'nothing rolled back');

  const deadOne = replicaSet(['Active', 'Active', 'Dead'], { wcf: 3 });
  t.equal(await update(deadOne.set), null, 'wcf 3 with a Dead replica and no failure: it stands (successes are only counted against a failure)');
  deadOne.replicas[1].failNext('apply', new ServiceError('disk full'));
  await t.rejects(update(deadOne.set), { message: 'Service internal error: disk full' }, 'one failure: 1 success < min(3, 3 replicas, the Dead one counted)');
});

t.test('an update applied only on replicas that are no source of truth: Qdrant\'s consistency error', async (t) => {
  const { set, replicas, states } = replicaSet(['Initializing', 'Active']);
  replicas[1].failNext('apply', new ServiceError('boom'));
  await t.rejects(update(set), {
    message: 'Service internal error: Failed to apply operation to at least one `Active` replica. Consistency of this update is not guaranteed. Please retry. Failed peer: 1, error: Service internal error: boom',
    statusCode: 500,
  });
  t.same(states.proposed, [{ peer: 1, from: 'Active' }], 'the Active replica that failed is proposed Dead first');
});

t.test('which failed replicas are marked Dead', async (t) => {
  const listener = replicaSet(['Active', 'Listener']);
  listener.replicas[1].failNext('apply', new ServiceError('boom'));
  await update(listener.set);
  t.same(listener.states.proposed, [], 'a Listener\'s failure is ignored');

  const refused = replicaSet(['Active', 'Active']);
  refused.replicas[1].failNext('apply', new BadInput('bad vector'));
  await update(refused.set, apply(false));
  t.same(refused.states.proposed, [], 'wait=false (nothing completed) and a refusal any replica would give: not marked');
  refused.replicas[1].failNext('apply', new BadInput('bad vector'));
  await update(refused.set, apply(true, 2));
  t.same(refused.states.proposed, [{ peer: 1, from: 'Active' }], 'wait=true (the update completed elsewhere): any failure means divergence');

  const partial = replicaSet(['Active', 'Resharding', 'Initializing']);
  partial.replicas[1].failNext('apply', pointNotFound(1));
  partial.replicas[2].failNext('apply', new ServiceError('boom'));
  await update(partial.set);
  t.same(partial.states.proposed, [{ peer: 2, from: 'Initializing' }], 'a missing point on a replica receiving a transfer is no failure');

  const moving = replicaSet(['Active', 'Resharding']);
  moving.replicas[1].failNext('apply', new ServiceError('boom'));
  await update(moving.set);
  t.same(moving.states.proposed, [{ peer: 1, from: null }], 'a receiving replica is proposed Dead from whatever state it is in');
});

t.test('with wait, the answer waits until failed replicas show Dead; bounded by the deactivation timeout', async (t) => {
  const { set, replicas, states } = replicaSet(['Active', 'Active', 'Active'], { autoApply: false, deactivationTimeoutMs: 5000 });
  replicas[2].failNext('apply', new ServiceError('unreachable'));
  let answered = false;
  const writing = update(set).then(() => (answered = true));
  while (states.proposed.length === 0) await new Promise((resolve) => setImmediate(resolve));
  t.notOk(answered, 'not answered while the proposal is pending');
  await withWriteScope(undefined, async () => {
    const count = await set.read({ type: 'count', filter: null }, null);
    t.equal(count, 1, 'reads go on meanwhile (the point applied on peer 0)');
  });
  t.equal(replicas[2].tasks('count').length, 0, 'and skip the disabled replica');
  states.applyProposals();
  await writing;
  t.equal(states.stateOf(2), 'Dead');

  const timed = replicaSet(['Active', 'Active'], { autoApply: false, deactivationTimeoutMs: 50 });
  timed.replicas[1].failNext('apply', new ServiceError('unreachable'));
  await t.rejects(update(timed.set), {
    message: 'Service internal error: Some replica of shard 3 failed to apply operation and deactivation timed out after 50ms. Consistency of this update is not guaranteed. Please retry. Failed peer: 1, error: Service internal error: unreachable',
    statusCode: 500,
  });
  timed.replicas[1].failNext('apply', new ServiceError('unreachable'));
  t.equal(await update(timed.set, apply(false, 2)), null, 'without wait: answered at once');
  t.same(timed.states.proposed.map((p) => p.peer), [1], 'the still-disabled replica was not asked again');
  t.equal(timed.replicas[1].tasks('apply').length, 1);
  timed.states.applyProposals();
});

t.test('a cluster\'s marks: the update stands only if the states changed since it was sent by its own marks alone', async (t) => {
  // The update was sent by the view at revision 20; peer 1 failed it and is marked Dead.
  const kept = replicaSet(['Active', 'Active'], { revision: () => 20 });
  kept.states.decision = { read: 18, committed: 21 };
  kept.replicas[1].failNext('apply', new ServiceError('unreachable'));
  t.equal(await update(kept.set), null, 'the mark read the states as they were at 20, and changed them itself: the update stands');

  // The mark found a change after 20 it did not make (this peer's view was behind: its own
  // replica Dead since 19 < x, and maybe recovered since from one without the update).
  const moved = replicaSet(['Active', 'Active'], { revision: () => 20 });
  moved.states.decision = { read: 25, committed: null };
  moved.states.lapses.set(0, 22);
  moved.replicas[1].failNext('apply', new ServiceError('unreachable'));
  await t.rejects(update(moved.set), {
    message: 'Service internal error: The replica states of shard 3 changed while the operation was applied on peer 0. Consistency of this update is not guaranteed. Please retry.',
    statusCode: 500,
  });

  // The same change after 20, the answering replica a source of truth in every view since (another
  // replica's state changed: a transfer to it finishing): the update stands.
  const others = replicaSet(['Active', 'Active'], { revision: () => 20 });
  others.states.decision = { read: 25, committed: null };
  others.states.lapses.set(0, 19);
  others.replicas[1].failNext('apply', new ServiceError('unreachable'));
  t.equal(await update(others.set), null, 'peer 0 last lapsed at 19, before the update was sent');
  const lapsed = replicaSet(['Active', 'Active'], { revision: () => 20 });
  lapsed.states.decision = { read: 25, committed: null };
  lapsed.states.lapses.set(0, 23);
  lapsed.replicas[1].failNext('apply', new ServiceError('unreachable'));
  await t.rejects(update(lapsed.set), { message: /replica states of shard 3 changed/ }, 'peer 0 lapsed at 23: Dead and recovered meanwhile');

  // A later update skipping the replica disabled by that failure waits for the same mark, and is judged by it too.
  const skipping = replicaSet(['Active', 'Active'], { revision: () => 20, autoApply: false, deactivationTimeoutMs: 5000 });
  skipping.states.decision = { read: 30, committed: null };
  skipping.states.lapses.set(0, 28);
  skipping.replicas[1].failNext('apply', new ServiceError('unreachable'));
  const first = update(skipping.set);
  while (skipping.states.proposed.length === 0) await new Promise((resolve) => setImmediate(resolve));
  const second = update(skipping.set);
  skipping.states.applyProposals();
  await t.rejects(first, { message: /replica states of shard 3 changed/ });
  await t.rejects(second, { message: /replica states of shard 3 changed/ }, 'the skipped one as well');
  t.equal(skipping.replicas[1].tasks('apply').length, 1, 'the disabled replica was not asked again');

  t.ok(statesKeptSince(20, [{ read: 20, committed: 22 }, { read: 22, committed: 23 }, null]), 'a chain of the update\'s own marks');
  t.notOk(statesKeptSince(20, [{ read: 20, committed: 22 }, { read: 21, committed: 23 }]), 'a change at 21 that none of them made');
});

t.test('the leader per ordering', async (t) => {
  const replicas = [
    { peer: 1, state: 'Active', disabled: false },
    { peer: 4, state: 'Partial', disabled: false },
    { peer: 3, state: 'Active', disabled: false },
    { peer: 2, state: 'Dead', disabled: false },
  ] as const;
  t.equal(updateLeader('weak', 7, replicas), 7, 'weak: this peer, replica or not');
  t.equal(updateLeader('medium', 7, replicas), 3, 'medium: the highest source of truth');
  t.equal(updateLeader('strong', 7, replicas), 4, 'strong: the highest replica, whatever its state');
  t.equal(updateLeader('medium', 7, [{ peer: 3, state: 'Active', disabled: true }, { peer: 1, state: 'Active', disabled: false }]), 1, 'medium skips a disabled replica');
  t.equal(updateLeader('medium', 7, [{ peer: 3, state: 'Dead', disabled: false }]), null);
  t.equal(updateLeader('strong', 7, []), null);

  const { set } = replicaSet(['Dead', 'Partial']);
  await t.rejects(update(set, apply(), 'medium'), { message: 'Service internal error: Cannot update shard c:3 with Medium ordering because no leader could be selected', statusCode: 500 });
});

t.test('medium and strong: forwarded to the leader without a clock tag; led here when this peer leads', async (t) => {
  const { set, replicas } = replicaSet(['Active', 'Active', 'Active']);
  t.equal(await update(set, apply(true, 5), 'medium'), 1, 'answers the leader\'s operation id, not the one this peer took');
  t.same(replicas[2].forwarded, [{ ops: OPS, wait: true, ordering: 'medium' }], 'medium: to peer 2, the ops, wait and ordering only');
  t.same(applies(replicas), [0, 0, 1], 'this peer applied nothing; the leader applied it under its own id');
  t.same(replicas[2].tasks('apply')[0].clock, { peer: 2, clockId: 0, tick: 1 });

  const weakNoLocal = replicaSet(['Active', 'Active'], { thisPeer: 9 });
  await update(weakNoLocal.set, apply(), 'weak');
  t.same(applies(weakNoLocal.replicas), [1, 1], 'weak from a peer without a replica: sent to every replica');

  const strong = replicaSet(['Active', 'Active', 'Dead']);
  await update(strong.set, apply(false), 'strong');
  t.same(strong.replicas.map((r) => r.forwarded.length), [0, 0, 1], 'strong: to peer 2 though it is Dead');
  await update(strong.set, apply(), 'medium');
  t.same(strong.replicas.map((r) => r.forwarded.length), [0, 1, 1], 'medium: to peer 1, the highest Active');

  const leading = replicaSet(['Active', 'Active', 'Active'], { thisPeer: 2 });
  t.equal(await update(leading.set, apply(), 'strong'), null, 'led here: the caller\'s operation id stands');
  t.same(applies(leading.replicas), [1, 1, 1], 'this peer leads: applied to every replica here');
  t.same(leading.replicas.map((r) => r.forwarded.length), [0, 0, 0]);

  const other = replicaSet(['Active', 'Active']);
  await withWriteScope('strong', () => other.set.update({ type: 'drop_index', key: 'k' }));
  t.same(other.replicas.map((r) => r.forwarded.length), [0, 0], 'only point updates are ordered');
});

t.test('a leader that fails transiently is disabled and proposed Dead: Qdrant\'s text; a refusal is the answer', async (t) => {
  const { set, replicas, states } = replicaSet(['Active', 'Active', 'Active']);
  replicas[2].failNextForward(new ServiceError('unreachable'));
  await t.rejects(update(set, apply(), 'medium'), {
    message: 'Service internal error: Failed to apply update with Medium ordering via leader peer 2: Service internal error: unreachable',
    statusCode: 500,
  });
  t.same(states.proposed, [{ peer: 2, from: 'Active' }]);
  await update(set, apply(), 'medium');
  t.same(replicas[1].forwarded.length, 1, 'the next medium update goes to the next highest Active replica');
  replicas[1].failNextForward(new BadInput('bad vector'));
  await t.rejects(update(set, apply(), 'medium'), { message: 'Wrong input: bad vector', statusCode: 400 });
  t.same(states.proposed.length, 1, 'a refusal marks nothing');
});

t.test('the answer is the highest peer\'s among those that applied it', async (t) => {
  const outcomes: TargetOutcome[] = [
    { peer: 5, state: 'Active', ok: true, completed: true },
    { peer: 9, state: 'Partial', ok: true, completed: true },
    { peer: 7, state: 'Active', ok: false, error: new ServiceError('x') },
  ];
  const verdict = judgeUpdate(outcomes, 3, 1);
  t.same([verdict.accepted, verdict.answerFrom, verdict.error, verdict.deactivate, verdict.waitForDeactivation], [true, 9, null, [{ peer: 7, from: 'Active' }], true]);
});

t.test('a request\'s ordering reaches the sets through the write path (shard-writes.ts)', async (t) => {
  const { set, replicas } = replicaSet(['Active', 'Active']);
  const clock = new OperationClock();
  await withWriteScope('strong', () => applyAcross(new Map([[set, OPS]]), clock, 1, { checkFirst: true, wait: true }));
  t.same(replicas.map((r) => r.forwarded.length), [0, 1], 'forwarded to peer 1');
  t.same(replicas.map((r) => r.tasks('apply').filter((a) => a.dryRun).length), [1, 0], 'the dry run read this peer\'s replica');
});
