// When each replica of a shard last stopped being a source of truth, in the views this peer
// applied. The apply loop hands over every revision in order, so a replica that was marked Dead
// and recovered between two moments shows here even though both moments show it Active: an
// update it applied in between may have been lost by the recovery (replica-set.ts).

import { SOURCE_OF_TRUTH, type ReplicaState } from '../replica/replica.js';

export class SourceLapses {
  /** Peer -> the last revision applied where its replica was missing or not a source of truth. */
  private readonly lapses = new Map<number, number>();
  private readonly known = new Set<number>();

  /** The shard's replica states at `revision` (null: the view no longer holds the shard). */
  observe(revision: number, replicas: Readonly<Record<string, ReplicaState>> | null): void {
    const present = new Set<number>();
    for (const [peer, state] of Object.entries(replicas ?? {})) {
      const id = Number(peer);
      present.add(id);
      this.known.add(id);
      if (!SOURCE_OF_TRUTH.has(state)) this.lapses.set(id, revision);
    }
    for (const id of this.known) if (!present.has(id)) this.lapses.set(id, revision);
  }

  /** Whether `peer`'s replica was a source of truth in every view applied after `revision`. */
  keptSince(peer: number, revision: number): boolean {
    return (this.lapses.get(peer) ?? -Infinity) <= revision;
  }
}
