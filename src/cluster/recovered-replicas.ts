// The replica states of a shard after this peer restored its own replica from a snapshot, by the
// recovery's priority, as Qdrant settles them. If no other replica is Active, nothing can differ
// from the restored one: it becomes Active. Otherwise `no_sync` activates it and touches nothing
// else; `snapshot` (the snapshot is the truth) activates it and marks the other Active replicas
// Dead, so they are synchronized from it; `replica` (the existing replicas are the truth, Qdrant's
// default) marks the restored one Dead, so it is synchronized from an Active one. A Dead replica
// is brought back by the peers' recovery transfers; this module only says which one is Dead.

import type { SnapshotPriority } from '../collection/catalog.js';
import type { ReplicaState } from '../replica/replica.js';
import type { PeerId } from './keys.js';

/** The shard's replica states once `peer`'s replica is restored; null when they stay as they are. */
export function statesAfterRecovery(replicas: Readonly<Record<string, ReplicaState>>, peer: PeerId, priority: SnapshotPriority): Record<string, ReplicaState> | null {
  const self = String(peer);
  if (replicas[self] === undefined) return null;
  const othersActive = Object.keys(replicas).filter((p) => p !== self && replicas[p] === 'Active');
  const next: Record<string, ReplicaState> = { ...replicas };
  if (othersActive.length > 0 && priority === 'replica') {
    next[self] = 'Dead';
  } else {
    next[self] = 'Active';
    if (priority === 'snapshot') for (const p of othersActive) next[p] = 'Dead';
  }
  return Object.keys(next).every((p) => next[p] === replicas[p]) ? null : next;
}
