// Which replica leads a point update, by the request's write `ordering` (Qdrant's
// `leader_peer_for_update`, lib/collection/src/shards/replica_set/update.rs): `weak` = this peer,
// whatever replicas it holds (no order between writers is promised); `medium` = the highest peer
// id among replicas that can be the shard's source of truth, so writers through different peers
// meet at one replica while it is alive; `strong` = the highest peer id among all replicas, alive
// or not, so the order never changes leader (and fails while that replica is down). The leader
// applies the update through its own replica set; on this peer, the set's write queue already
// keeps one update of the shard at a time, which is Qdrant's ordering lock.

import { ServiceError } from '../errors.js';
import { SOURCE_OF_TRUTH, type ReplicaState, type WriteOrdering } from './replica.js';
import { errorText } from './replica-errors.js';

export type { WriteOrdering } from './replica.js';

/** A replica as the leader choice sees it: its peer, its state, and whether this peer disabled it after a failure. */
export interface LeaderCandidate {
  peer: number;
  state: ReplicaState | undefined;
  disabled: boolean;
}

/** The leader's peer id for an update with `ordering`, or null when none can be chosen. */
export function updateLeader(ordering: WriteOrdering, thisPeer: number, replicas: readonly LeaderCandidate[]): number | null {
  const highest = (peers: number[]): number | null => (peers.length ? Math.max(...peers) : null);
  switch (ordering) {
    case 'weak':
      return thisPeer;
    case 'medium':
      return highest(replicas.filter((r) => r.state !== undefined && SOURCE_OF_TRUTH.has(r.state) && !r.disabled).map((r) => r.peer));
    case 'strong':
      return highest(replicas.filter((r) => r.state !== undefined).map((r) => r.peer));
  }
}

/** The ordering as Qdrant's messages print it (its enum's name). */
export function orderingName(ordering: WriteOrdering): string {
  return ordering[0].toUpperCase() + ordering.slice(1);
}

/** Qdrant's 500 when no replica can lead the update. */
export function noLeader(collection: string, shard: number, ordering: WriteOrdering): ServiceError {
  return new ServiceError(`Cannot update shard ${collection}:${shard} with ${orderingName(ordering)} ordering because no leader could be selected`);
}

/** Qdrant's 500 when forwarding to the leader failed transiently (the leader is then disabled and proposed Dead). */
export function leaderFailed(ordering: WriteOrdering, leader: number, error: unknown): ServiceError {
  return new ServiceError(`Failed to apply update with ${orderingName(ordering)} ordering via leader peer ${leader}: ${errorText(error)}`);
}

/** Qdrant's 500 when the chosen leader holds no replica of the set any more. */
export function leaderGone(shard: number): ServiceError {
  return new ServiceError(`Cannot forward update to shard ${shard} because was removed from the replica set`);
}
