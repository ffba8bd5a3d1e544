// Where the states of a shard's replicas come from. A replica set reads them (a read asks the
// readable ones, an update goes to the updatable ones) and reports a replica that failed an
// update; it never decides a state itself. On a single node the states are held here, every
// replica Active until it fails; in a cluster they are the cluster view's (applied from etcd),
// and a failure is proposed there as a change to Dead that every peer applies.

import type { ReplicaState } from './replica.js';

/**
 * How a Dead mark was decided in the cluster: the revision of the last change of the shard's
 * states it read (`read`), and the revision of its own change (`committed`; null when it wrote
 * nothing: the replica had already left the state, or is the shard's last Active one).
 */
export interface MarkDecision {
  read: number;
  committed: number | null;
}

export interface ReplicaStates {
  /** The state of `peer`'s replica of the shard; undefined when the shard has none on that peer. */
  stateOf(peer: number): ReplicaState | undefined;
  /**
   * Records that `peer`'s replica failed an update while in state `from` (null: in whatever state
   * it is in now): its state becomes Dead, unless it already left `from` (another change came
   * first). Resolves once the new state is applied and `stateOf` shows it; in a cluster, once
   * this peer applied the change proposed through etcd, with how it was decided (null: the states
   * are this node's own, nobody else changes them).
   */
  markFailed(peer: number, from: ReplicaState | null): Promise<MarkDecision | null>;
  /**
   * In a cluster: whether `peer`'s replica was a source of truth in every view this peer applied
   * after `revision` (views are applied one revision at a time). Absent on a single node.
   */
  sourceOfTruthSince?(peer: number, revision: number): boolean;
  /**
   * The peer whose replica feeds `peer`'s through a transfer (FED_BY_TRANSFER), if one does: the
   * set sends that source the updates to pass on. Absent where no transfer ever runs (a single node).
   */
  transferSourceOf?(peer: number): number | undefined;
  /** The revision of the states read (a cluster view's), stamped on each update (`seen`). */
  revision?(): number;
}

/**
 * States held by this node alone: every replica starts Active (a single node's one replica only
 * ever is), and one that failed an update is Dead at once.
 */
export class LocalReplicaStates implements ReplicaStates {
  private readonly states = new Map<number, ReplicaState>();

  constructor(peers: Iterable<number>) {
    for (const peer of peers) this.states.set(peer, 'Active');
  }

  stateOf(peer: number): ReplicaState | undefined {
    return this.states.get(peer);
  }

  /** Sets a replica's state, as a recovery or transfer would (none runs on a single node yet). */
  set(peer: number, state: ReplicaState): void {
    this.states.set(peer, state);
  }

  markFailed(peer: number, from: ReplicaState | null): Promise<MarkDecision | null> {
    const state = this.states.get(peer);
    if (state !== undefined && (from === null || state === from)) this.states.set(peer, 'Dead');
    return Promise.resolve(null);
  }
}
