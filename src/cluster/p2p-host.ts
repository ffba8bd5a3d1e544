// What a cluster peer's p2p routes serve (src/peer/p2p-server.ts): its local replicas as the
// view it applied places them, the updates other peers forward to it as the leader of a shard
// (medium and strong ordering, plan 1.5), and the wait for a sender's revision.

import { collectionNotFound } from '../messages.js';
import type { LocalShard, P2pHost } from '../peer/p2p-server.js';
import type { ForwardedUpdate } from '../replica/replica.js';
import { withWriteScope } from '../replica/request-scope.js';
import type { WriteOp } from '../shard/write-ops.js';
import type { ClusterPlacement } from './cluster-placement.js';

/** A collection as the leader's write path needs it (src/collection/collection.ts `applyToShard`). */
export interface ShardWriter {
  applyToShard(shard: number, ops: WriteOp[], wait: boolean): Promise<number>;
}

export interface PeerHostOptions {
  placement: Pick<ClusterPlacement, 'localShard'>;
  /** This peer's collection named `name` (not an alias), if it has one open. */
  collection: (name: string) => ShardWriter | undefined;
  /** Resolves true once this peer applied `revision`, false after `ms` (the apply loop's wait: `revisionWait`). */
  awaitRevision: (revision: number, ms: number) => Promise<boolean>;
}

/** `waitApplied` (the apply loop's) as the p2p server asks it: true once applied, false on timeout or stop. */
export function revisionWait(waitApplied: (revision: number, timeoutMs: number) => Promise<void>): (revision: number, ms: number) => Promise<boolean> {
  return (revision, ms) => waitApplied(revision, ms).then(() => true, () => false);
}

export class PeerHost implements P2pHost {
  constructor(private readonly options: PeerHostOptions) {}

  localReplica(collection: string, shard: number): LocalShard | null {
    return this.options.placement.localShard(collection, shard);
  }

  /**
   * Applies a forwarded update through this peer's write path for the one shard, with the
   * sender's ordering: this peer's set chooses the leader again from the view it applied (as
   * Qdrant's receiving replica set does), numbers the update with this peer's clock, and
   * honours `wait`. Answers the first operation id it gave.
   */
  forward(collection: string, shard: number, update: ForwardedUpdate): Promise<number> {
    const target = this.options.collection(collection);
    if (!target) return Promise.reject(collectionNotFound(collection));
    return withWriteScope(update.ordering, () => target.applyToShard(shard, update.ops, update.wait));
  }

  awaitRevision(revision: number, ms: number): Promise<boolean> {
    return this.options.awaitRevision(revision, ms);
  }
}
