// A shard's replica states on a cluster peer: those of the control plane's view this peer applied
// (src/replica/replica-states.ts says why a set never decides a state itself). A replica that
// failed an update is proposed Dead through etcd, and the mark is done once this peer's apply
// loop applied that change, so the set's next request already sees the replica Dead.

import { setTimeout as sleep } from 'node:timers/promises';
import { isQuiverError } from '../errors.js';
import type { ReplicaState } from '../replica/replica.js';
import type { MarkDecision, ReplicaStates } from '../replica/replica-states.js';
import type { ShardId } from '../replica/shard-id.js';
import { DEACTIVATION_TIMEOUT_MS } from '../replica/write-outcome.js';
import type { ClusterView } from './cluster-view.js';
import type { ControlPlane, ReplicaStateChange } from './control-plane.js';
import type { SourceLapses } from './source-lapses.js';

/** The view a peer's data path reads, and the wait for a revision to be applied (the apply loop's). */
export interface AppliedViews {
  /** The view this peer applied (or is applying: a reconcile reads the view it applies). */
  view(): ClusterView;
  /** Settles once this peer applied `revision`; rejects after `timeoutMs`. */
  waitApplied(revision: number, timeoutMs: number): Promise<void>;
}

/** What the states propose to the cluster. */
export type StateProposer = Pick<ControlPlane, 'setReplicaState' | 'markDead'>;

/**
 * The state of `peer`'s replica of `shard` in `view`, for the collection stored under `storageId`:
 * undefined when the view holds no such replica, or the name now stands for another collection
 * (deleted and created again: its replicas are not this collection's).
 */
export function replicaStateIn(view: ClusterView, shard: ShardId, storageId: string, peer: number): ReplicaState | undefined {
  if (view.collections.get(shard.collection)?.storageId !== storageId) return undefined;
  return view.shards.get(shard.collection)?.get(shard.shard)?.replicas[String(peer)];
}

/** First and longest pause between proposals that etcd did not commit. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 1000;
/** How long a mark that outlived its request goes on being proposed (etcd without a quorum for longer: an operator's case). */
const BACKGROUND_MARK_MS = 10 * 60_000;

export class ViewReplicaStates implements ReplicaStates {
  /** Marks that go on being proposed after the request that asked for them gave up: peer -> expected state. */
  private readonly lingering = new Map<number, ReplicaState | null>();
  private lingerLoop: Promise<void> | null = null;

  /** `waitMs`: how long a mark waits for this peer to apply it (Qdrant's deactivation timeout by default). */
  constructor(
    private readonly shard: ShardId,
    private readonly storageId: string,
    private readonly views: AppliedViews,
    private readonly proposer: StateProposer,
    private readonly lapses: SourceLapses,
    private readonly waitMs = DEACTIVATION_TIMEOUT_MS,
  ) {}

  sourceOfTruthSince(peer: number, revision: number): boolean {
    return this.lapses.keptSince(peer, revision);
  }

  stateOf(peer: number): ReplicaState | undefined {
    return replicaStateIn(this.views.view(), this.shard, this.storageId, peer);
  }

  revision(): number {
    return this.views.view().revision;
  }

  transferSourceOf(peer: number): number | undefined {
    const view = this.views.view();
    if (view.collections.get(this.shard.collection)?.storageId !== this.storageId) return undefined;
    // A copy of points from another shard (`replicate_points`) does not feed the replica in this set's stead.
    const transfer = view.transferTo(this.shard.collection, this.shard.shard, peer);
    return transfer?.toShard === undefined ? transfer?.from : undefined;
  }

  /**
   * Proposes `peer`'s replica Dead if it is still in `from` (any state when null), and resolves
   * once this peer applied the revision that decided it: the change, or the state another change
   * left (the compare failed because the replica already left `from`). A proposal etcd does not
   * commit (no quorum) is made again until the bound passes, as Qdrant's consensus keeps the
   * proposal until it commits or the deactivation timeout ends the wait; a refusal (the
   * collection or shard is gone) is final. Rejects once the bound passed (the set stops skipping
   * the replica once the mark settled either way: from then on the view's state rules, replica-set.ts).
   */
  async markFailed(peer: number, from: ReplicaState | null): Promise<MarkDecision> {
    const end = Date.now() + this.waitMs;
    let change: ReplicaStateChange;
    try {
      change = await this.propose(peer, from, end);
    } catch (err) {
      if (!(isQuiverError(err) && err.statusCode < 500)) this.linger(peer, from);
      throw err;
    }
    await this.views.waitApplied(change.revision, Math.max(0, end - Date.now()));
    return { read: change.read, committed: change.changed ? change.revision : null };
  }

  /**
   * Goes on proposing a mark that etcd could not commit in time (no quorum: most peers down).
   * The replica missed an update all the same, which the request's error said was not
   * guaranteed; once the quorum is back the mark lands, and the replica, Dead, is recovered from
   * one that has the update, rather than staying Active without it. Every lingering mark of the
   * shard goes in one transaction, so that no replica that missed the update is recovered from
   * another that missed it too.
   */
  private linger(peer: number, from: ReplicaState | null): void {
    if (!this.lingering.has(peer)) this.lingering.set(peer, from);
    this.lingerLoop ??= this.proposeLingering().finally(() => {
      this.lingerLoop = null;
      this.lingering.clear();
    });
  }

  private async proposeLingering(): Promise<void> {
    const end = Date.now() + BACKGROUND_MARK_MS;
    for (let pause = RETRY_FIRST_MS; this.lingering.size > 0 && Date.now() < end; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      const marks = new Map(this.lingering);
      try {
        await this.proposer.markDead(this.shard.collection, this.shard.shard, marks);
        for (const peer of marks.keys()) this.lingering.delete(peer);
        continue;
      } catch (err) {
        // Refused: the collection or shard is gone, nothing is left to mark.
        if (isQuiverError(err) && err.statusCode < 500) return;
      }
      // A pause does not keep a stopping process alive.
      await sleep(pause, undefined, { ref: false });
    }
  }

  private async propose(peer: number, from: ReplicaState | null, end: number): Promise<ReplicaStateChange> {
    for (let pause = RETRY_FIRST_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      try {
        return await this.proposer.setReplicaState(this.shard.collection, this.shard.shard, peer, 'Dead', from === null ? null : [from]);
      } catch (err) {
        if ((isQuiverError(err) && err.statusCode < 500) || Date.now() + pause >= end) throw err;
        // Bounded like the set's own wait for the mark (replica-set.ts), which runs as long.
        await sleep(pause);
      }
    }
  }
}
