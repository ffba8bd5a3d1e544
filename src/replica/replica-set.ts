// The replicas of one shard, one per peer holding a copy: the read policy (which replicas answer
// a read, and what their answers resolve to) and the write path (which replica leads an update,
// which replicas take it, one write of the shard at a time, and whether it stands). The rules
// are Qdrant's, each in its own module: read-consistency.ts, read-resolution.ts,
// write-ordering.ts, write-outcome.ts; the replicas' states come from replica-states.ts. On a
// single node a set has one replica, Active and local: every consistency is met by its answer,
// it leads every ordering, and `write_consistency_factor` is met by its success.

import type { ShardKey } from '../model.js';
import { budgetOf, type Deadline } from '../shard/deadline.js';
import { activeConsistency, activeOrdering } from './request-scope.js';
import { WriteQueue } from '../write-queue.js';
import { answersReads, countReplicas, fanOut, gatherAnswers, notEnoughReplicas, readOrder, readRequirement, ReadsFailed, type ReplicaStanding } from './read-consistency.js';
import { resolveAnswers, resolves } from './read-resolution.js';
import { FED_BY_TRANSFER, SOURCE_OF_TRUTH, type ReplicaResult, type ReplicaState, type ReplicaTask, type ShardReplica, type WriteOrdering } from './replica.js';
import { isTransient } from './replica-errors.js';
import type { MarkDecision, ReplicaStates } from './replica-states.js';
import type { ShardId } from './shard-id.js';
import { leaderFailed, leaderGone, noLeader, updateLeader } from './write-ordering.js';
import { appliesWithoutWait, DEACTIVATION_TIMEOUT_MS, deactivation, deactivationTimedOut, judgeUpdate, noLongerActive, noUpdatableReplica, statesChangedMeanwhile, statesKeptSince, takesUpdates, type Deactivation, type TargetOutcome } from './write-outcome.js';

/** The collection parameters a set's policies read, at the time of each request (they may change). */
export interface ReplicaSetParams {
  writeConsistencyFactor: number;
  /** Replicas asked beyond those a read needs; null = Qdrant's default (read-consistency.ts). */
  readFanOutFactor: number | null;
}

export interface ReplicaSetOptions {
  /** This peer's id: its replica (if the set has one) is asked first and leads weak writes. */
  peer: number;
  states: ReplicaStates;
  params: () => ReplicaSetParams;
  shardKey?: ShardKey;
  /** Shuffles the other peers' replicas for each read (Math.random; tests fix it). */
  random?: () => number;
  /** How long a `wait=true` update waits for failed replicas to be marked Dead. */
  deactivationTimeoutMs?: number;
  /**
   * Lifecycle tasks (every task but point updates and reads: open, reopen, close, drop, indexes,
   * optimizer settings, restore) reach only this peer's replica. In a cluster each peer's
   * reconcile runs them on its own replicas as it applies the control plane's change; a single
   * node (default false) sends them to every replica of the set, all of them its own.
   */
  localLifecycle?: boolean;
}

/** A replica an update goes to, with its state when it was sent. */
interface Target {
  replica: ShardReplica;
  state: ReplicaState;
}

export class ReplicaSet {
  private readonly writes = new WriteQueue();
  private updating = 0;
  /** Updates sent and not settled on every target yet. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The replicas the last update went to directly (null before the first). */
  private lastTargets: Set<number> | null = null;
  /** Set while updates wait for earlier ones to settle (`dispatch`); each sends after the one before. */
  private gate: Promise<unknown> | null = null;
  /** Peers whose replica failed an update, skipped until the states show them Dead (Qdrant's locally disabled peers). */
  private readonly disabled = new Set<number>();
  /** The Dead mark of each disabled peer's replica, under way. */
  private readonly marks = new Map<number, Promise<MarkDecision | null>>();
  readonly peer: number;
  readonly shardKey?: ShardKey;
  private readonly states: ReplicaStates;
  private readonly params: () => ReplicaSetParams;
  private readonly random: () => number;
  private readonly deactivationTimeoutMs: number;
  private readonly localLifecycle: boolean;
  /** This peer's replica as the set last opened it (`localNeedsOpening`). */
  private opened: ShardReplica | undefined;

  constructor(readonly shard: ShardId, readonly replicas: readonly ShardReplica[], options: ReplicaSetOptions) {
    this.peer = options.peer;
    this.shardKey = options.shardKey;
    this.states = options.states;
    this.params = options.params;
    this.random = options.random ?? Math.random;
    this.deactivationTimeoutMs = options.deactivationTimeoutMs ?? DEACTIVATION_TIMEOUT_MS;
    this.localLifecycle = options.localLifecycle ?? false;
  }

  /** This peer's replica of the shard, if it holds one. */
  get localReplica(): ShardReplica | undefined {
    return this.replicas.find((r) => r.peer === this.peer);
  }

  /** The replicas a lifecycle task goes to (see `localLifecycle`). */
  private lifecycleTargets(): readonly ShardReplica[] {
    return this.localLifecycle ? this.replicas.filter((r) => r.peer === this.peer) : this.replicas;
  }

  /** Whether one of its replicas is Active (Qdrant's `active_shards`): what routing by a fallback shard key asks of a target key's shards. */
  get hasActiveReplica(): boolean {
    return this.replicas.some((r) => this.stateOf(r) === 'Active');
  }

  /** Qdrant's shard id within the collection. */
  get id(): number {
    return this.shard.shard;
  }

  /** Point updates sent to the replicas and not answered yet: Qdrant's update queue of the shard. */
  get queuedUpdates(): number {
    return this.updating;
  }

  private stateOf(replica: ShardReplica): ReplicaState | undefined {
    return this.states.stateOf(replica.peer);
  }

  private standing(replica: ShardReplica): ReplicaStanding & { peer: number } {
    return { peer: replica.peer, state: this.stateOf(replica), disabled: this.disabled.has(replica.peer) };
  }

  /**
   * Runs a read with the request's read consistency: as many readable replicas as it needs
   * answer (this peer's first), each try carrying what is left of the deadline when it is sent,
   * and their answers resolve into one. A task whose answers do not resolve takes the first
   * replica's answer.
   */
  async read<T extends ReplicaTask>(task: T, deadline: Deadline | null): Promise<ReplicaResult<T>> {
    const { total, readable } = countReplicas(this.replicas.map((r) => this.standing(r)));
    const { required, condition } = resolves(task) ? readRequirement(activeConsistency(), total) : { required: 1, condition: 'All' as const };
    if (readable < required) throw notEnoughReplicas(this.id, this.peer);
    const answering = this.replicas.filter((r) => answersReads(this.standing(r)));
    const local = answering.find((r) => r.peer === this.peer) ?? null;
    const order = readOrder(local, answering.filter((r) => r !== local), this.random);
    const extra = fanOut(this.params().readFanOutFactor, local !== null, this.updating > 0);
    let answers: ReplicaResult<T>[];
    try {
      answers = await gatherAnswers(order, required, extra, (r) => r.run(task, deadline && budgetOf(deadline)));
    } catch (err) {
      // A set of one replica (a single node) answers that replica's own error, as single-node
      // Quiver always has; Qdrant would wrap it in "1 of 1 read operations failed".
      if (err instanceof ReadsFailed && this.replicas.length === 1 && err.errors.length === 1) throw err.errors[0];
      throw err;
    }
    return resolveAnswers(task, answers, condition);
  }

  /**
   * Sends a point update by the request's write ordering: led by this peer (weak, or when it
   * holds the leading replica), to every replica that takes updates; or forwarded to the
   * leader's peer (medium, strong), which numbers and applies it through its own set. Answers
   * null when led here (the caller's numbering stands), the leader's first operation id when
   * forwarded (what Qdrant's answer carries).
   */
  async apply(task: Extract<ReplicaTask, { type: 'apply' }>): Promise<number | null> {
    const ordering = activeOrdering();
    const leader = updateLeader(ordering, this.peer, this.replicas.map((r) => this.standing(r)));
    if (leader === null) throw noLeader(this.shard.collection, this.id, ordering);
    if (leader !== this.peer) return this.forward(leader, ordering, task);
    await this.applyHere(task);
    return null;
  }

  /**
   * Sends one of the shard's other updates (open, indexes, settings): as a weak one, to every
   * replica that takes updates, or in a cluster to this peer's replica alone (`localLifecycle`).
   */
  async update<T extends Exclude<ReplicaTask, { type: 'apply' }>>(task: T): Promise<ReplicaResult<T>> {
    if (this.localLifecycle) return this.lifecycleHere(task);
    return this.applyHere(task);
  }

  /**
   * A lifecycle task on this peer's replica alone (`localLifecycle`), whatever its state (a
   * replica still Initializing is opened by it). A set with no replica here has nothing to do:
   * it answers as a shard with no operation applied would.
   */
  private async lifecycleHere<T extends ReplicaTask>(task: T): Promise<ReplicaResult<T>> {
    const [local] = this.lifecycleTargets();
    if (!local) return (task.type === 'open' || task.type === 'reopen' || task.type === 'restore' ? { lastOp: 0 } : null) as ReplicaResult<T>;
    const result = await local.run(task, null);
    if (task.type === 'open') this.opened = local;
    return result;
  }

  /**
   * Whether this peer's replica joined the set after the set was opened (a transfer's new
   * receiver): it is opened apart, before anything is sent to it (Collection.openJoinedReplicas).
   */
  get localNeedsOpening(): boolean {
    const local = this.localLifecycle ? this.localReplica : undefined;
    return local !== undefined && local !== this.opened;
  }

  private async forward(leader: number, ordering: WriteOrdering, task: Extract<ReplicaTask, { type: 'apply' }>): Promise<number> {
    const replica = this.replicas.find((r) => r.peer === leader);
    if (!replica?.forward) throw leaderGone(this.id);
    try {
      return await replica.forward({ ops: task.ops, wait: task.wait, ordering });
    } catch (err) {
      if (!isTransient(err)) throw err;
      this.deactivate([deactivation(leader, this.stateOf(replica))]);
      throw leaderFailed(ordering, leader, err);
    }
  }

  /**
   * Applies an update on every replica that takes updates, and judges the outcome
   * (write-outcome.ts): it stands once `min(write_consistency_factor, replicas)` applied it, one
   * of them a source of truth; the replicas that failed it meanwhile are marked Dead (with
   * `wait`, the answer waits until they are). Otherwise the first failure answers. A replica
   * fed by a transfer gets it through the transfer's source (`relay`).
   */
  private async applyHere<T extends ReplicaTask>(task: T): Promise<ReplicaResult<T>> {
    const waits = task.type !== 'apply' || task.wait;
    const queued = task.type === 'apply' ? 1 : 0;
    this.updating += queued;
    const { targets, relays, skipped, settled, seen } = await this.dispatch(task);
    this.updating -= queued;
    const outcomes: TargetOutcome[] = settled.map((s, i) => {
      const { replica, state } = targets[i];
      return s.status === 'fulfilled' ? { peer: replica.peer, state, ok: true, completed: waits && !appliesWithoutWait(state) } : { peer: replica.peer, state, ok: false, error: s.reason };
    });
    const verdict = judgeUpdate(outcomes, this.replicas.length, this.params().writeConsistencyFactor);
    // A source marked Dead did not pass the update on either: its receivers missed it too.
    const missed = verdict.deactivate.flatMap(({ peer }) => (relays.get(peer) ?? []).map((receiver): Deactivation => ({ peer: receiver, from: this.states.stateOf(receiver) ?? null })));
    const marked = this.deactivate([...verdict.deactivate, ...missed]);
    // A replica skipped because an earlier update failed on it missed this one too: the update
    // stands only once its Dead mark shows, as for a replica that failed this one. Acknowledged
    // without it, an update taken by this peer's replica alone, while this peer cannot reach the
    // others nor etcd (a partition), would be lost once its view catches up and shows its own
    // replica Dead.
    const waitFor = verdict.waitForDeactivation || skipped.length > 0;
    if (verdict.accepted && waits && waitFor) {
      const decisions = await this.shownWithin(Promise.all([marked, ...skipped]).then((lists) => lists.flat()));
      if (decisions === null) throw deactivationTimedOut(this.id, this.deactivationTimeoutMs, verdict.firstFailure);
      // The states now shown may say the answering replica was no longer a source of truth (marked Dead elsewhere meanwhile).
      const answering = this.replicas.find((r) => r.peer === verdict.answerFrom);
      const now = answering && this.stateOf(answering);
      if (verdict.error === null && (now === undefined || !SOURCE_OF_TRUTH.has(now))) throw noLongerActive(this.id, verdict.answerFrom!, now);
      // Active now is not Active throughout: a replica this peer believed Active may have been
      // Dead in the cluster when it applied the update (this peer's view behind, as after a
      // partition), and recovered since from one that never had it. The update stands only if
      // the marks found the shard's states as this peer sent it, but for the marks themselves,
      // or if the answering replica stayed a source of truth in every view applied since (other
      // replicas' states may change meanwhile: a transfer to another peer finishing).
      const kept = seen === undefined || statesKeptSince(seen, decisions) || this.states.sourceOfTruthSince?.(verdict.answerFrom!, seen) === true;
      if (verdict.error === null && !kept) throw statesChangedMeanwhile(this.id, verdict.answerFrom!);
    }
    if (verdict.error !== null) throw verdict.error;
    const answer = settled[targets.findIndex((t) => t.replica.peer === verdict.answerFrom)];
    return (answer as PromiseFulfilledResult<ReplicaResult<T>>).value;
  }

  /** The replicas that take an update now, and the receivers each transfer source passes it on to. */
  private targets(): { targets: Target[]; relays: Map<number, number[]>; skipped: Promise<MarkDecision | null>[] } {
    const targets: Target[] = [];
    const relays = new Map<number, number[]>();
    const skipped: Promise<MarkDecision | null>[] = [];
    for (const replica of this.replicas) {
      const state = this.stateOf(replica);
      if (takesUpdates(state, this.disabled.has(replica.peer))) targets.push({ replica, state: state! });
      else if (takesUpdates(state, false)) skipped.push(this.marks.get(replica.peer) ?? Promise.resolve(null));
      const source = state !== undefined && FED_BY_TRANSFER.has(state) ? this.states.transferSourceOf?.(replica.peer) : undefined;
      if (source !== undefined) relays.set(source, [...(relays.get(source) ?? []), replica.peer]);
    }
    return { targets, relays, skipped };
  }

  /**
   * Sends an update to its targets, in the order of the calls. When a replica becomes a direct
   * target (a transfer just ended, its receiver is Active), the update waits until every update
   * sent before it settled: those reached that replica through the transfer's source, and a
   * direct one must not overtake them (the replica would skip the older clock tags it then meets).
   * Updates called while one waits queue behind it, so the order of the calls holds.
   */
  private dispatch(task: ReplicaTask): Promise<{ targets: Target[]; relays: Map<number, number[]>; skipped: Promise<MarkDecision | null>[]; settled: PromiseSettledResult<unknown>[]; seen: number | undefined }> {
    const send = () => {
      const { targets, relays, skipped } = this.targets();
      if (targets.length === 0) throw noUpdatableReplica(this.id, this.peer);
      this.lastTargets = new Set(targets.map((t) => t.replica.peer));
      const seen = this.states.revision?.();
      const sent = Promise.allSettled(targets.map(({ replica, state }) => {
        let sentTask = task.type === 'apply' && appliesWithoutWait(state) ? { ...task, wait: false } : task;
        const relay = relays.get(replica.peer);
        if (sentTask.type === 'apply' && (relay || seen !== undefined)) sentTask = { ...sentTask, ...(relay ? { relay } : {}), ...(seen !== undefined ? { seen } : {}) };
        return replica.run(sentTask, null);
      }));
      this.inFlight.add(sent);
      void sent.finally(() => this.inFlight.delete(sent));
      return sent.then((settled) => ({ targets, relays, skipped, settled, seen }));
    };
    const last = this.lastTargets;
    if (this.gate === null && this.inFlight.size > 0 && last !== null && this.targets().targets.some((t) => !last.has(t.replica.peer))) {
      this.gate = Promise.allSettled([...this.inFlight]);
    }
    if (this.gate === null) {
      try {
        return send();
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const turn = this.gate.then(send);
    const gate = turn.then(() => undefined, () => undefined);
    this.gate = gate;
    // The last one queued behind the gate lifts it once sent.
    void gate.then(() => {
      if (this.gate === gate) this.gate = null;
    });
    return turn;
  }

  /** What `marked` resolves with, if within the deactivation timeout; null otherwise (a mark that failed never shows). */
  private async shownWithin<T>(marked: Promise<T>): Promise<T | null> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.deactivationTimeoutMs);
    });
    return Promise.race([marked.then((value) => value, () => null), expired]).finally(() => clearTimeout(timer));
  }

  /**
   * Disables failed replicas on this peer at once (reads and updates skip them) and has their
   * states marked Dead; resolves once every one is, with how each was decided. A replica stays
   * disabled until its mark settled: from then on its state says whether it is used.
   */
  private deactivate(failed: readonly Deactivation[]): Promise<(MarkDecision | null)[]> {
    const marks = failed.map(({ peer, from }) => {
      this.disabled.add(peer);
      const mark: Promise<MarkDecision | null> = this.states.markFailed(peer, from).finally(() => {
        if (this.marks.get(peer) !== mark) return;
        this.disabled.delete(peer);
        this.marks.delete(peer);
      });
      this.marks.set(peer, mark);
      return mark;
    });
    const all = Promise.all(marks);
    // Without `wait` nobody awaits the marks; a failed one leaves the replica as it was.
    all.catch(() => undefined);
    return all;
  }

  /**
   * Runs a task that concerns every copy whatever its state, as closing or dropping the shard:
   * each replica lets go of its resources even if another fails to.
   */
  async each<T extends ReplicaTask>(task: T): Promise<void> {
    const outcomes = await Promise.allSettled(this.lifecycleTargets().map((r) => r.run(task, null)));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Runs `job` alone among the jobs this set serialises: the shard's writes, one at a time, in order. */
  serially<T>(job: () => Promise<T>): Promise<T> {
    return this.writes.enqueue(job);
  }
}
