// The replicas of one shard, one per peer holding a copy, with their states: the read policy
// (which replica answers a read) and the write path (which replicas take an update, one write
// of the shard at a time). On a single node a set has one replica, Active.

import { isQuiverError, ServiceError } from '../errors.js';
import type { ShardKey } from '../model.js';
import { budgetOf, type Deadline } from '../shard/deadline.js';
import { WriteQueue } from '../write-queue.js';
import { READABLE, UPDATABLE, type ReplicaResult, type ReplicaTask, type ShardReplica } from './replica.js';
import type { ShardId } from './shard-id.js';

/**
 * Whether `err` says the replica could not answer (it failed, or was unreachable), rather than
 * answering: a refusal of the request itself (a missing point, a bad filter, a timeout) would be
 * the same from any replica, so it is not worth asking another.
 */
function replicaFailed(err: unknown): boolean {
  return !isQuiverError(err) || err.statusCode >= 500;
}

export class ReplicaSet {
  private readonly writes = new WriteQueue();
  private updating = 0;

  constructor(readonly shard: ShardId, readonly replicas: readonly ShardReplica[], readonly shardKey?: ShardKey) {}

  /** Qdrant's shard id within the collection. */
  get id(): number {
    return this.shard.shard;
  }

  private noActiveReplica(): ServiceError {
    return new ServiceError(`No active replica of shard ${this.id} of collection ${this.shard.collection}`);
  }

  /**
   * Runs a read on the first readable replica; if that replica fails, on the next, until one
   * answers. Each try carries what is left of the deadline when it is sent.
   */
  async read<T extends ReplicaTask>(task: T, deadline: Deadline | null): Promise<ReplicaResult<T>> {
    const readable = this.replicas.filter((r) => READABLE.has(r.state));
    if (readable.length === 0) throw this.noActiveReplica();
    let failure: unknown;
    for (const replica of readable) {
      try {
        return await replica.run(task, deadline && budgetOf(deadline));
      } catch (err) {
        if (!replicaFailed(err)) throw err;
        failure = err;
      }
    }
    throw failure;
  }

  /**
   * Sends an update to every replica that takes updates. It stands once a readable (Active)
   * replica applied it; a replica that failed it while another applied it no longer has the
   * shard's data and is marked Dead (reads skip it until it is recovered). If no readable replica
   * applied it, the first error is the answer and no state changes: the update itself was
   * refused, or every copy failed.
   */
  /** Point updates sent to the replicas and not answered yet: Qdrant's update queue of the shard. */
  get queuedUpdates(): number {
    return this.updating;
  }

  async update<T extends ReplicaTask>(task: T): Promise<ReplicaResult<T>> {
    const targets = this.replicas.filter((r) => UPDATABLE.has(r.state));
    const queued = task.type === 'apply' ? 1 : 0;
    this.updating += queued;
    const outcomes = await Promise.allSettled(targets.map((r) => r.run(task, null)));
    this.updating -= queued;
    const applied = outcomes.findIndex((o, i) => o.status === 'fulfilled' && READABLE.has(targets[i].state));
    if (applied < 0) {
      const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      throw refused ? refused.reason : this.noActiveReplica();
    }
    outcomes.forEach((o, i) => {
      if (o.status === 'rejected') targets[i].state = 'Dead';
    });
    return (outcomes[applied] as PromiseFulfilledResult<ReplicaResult<T>>).value;
  }

  /**
   * Runs a task that concerns every copy whatever its state, as closing or dropping the shard:
   * each replica lets go of its resources even if another fails to.
   */
  async each<T extends ReplicaTask>(task: T): Promise<void> {
    const outcomes = await Promise.allSettled(this.replicas.map((r) => r.run(task, null)));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Runs `job` alone among the jobs this set serialises: the shard's writes, one at a time, in order. */
  serially<T>(job: () => Promise<T>): Promise<T> {
    return this.writes.enqueue(job);
  }
}
