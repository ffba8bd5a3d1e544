// A replica on another peer, reached through the p2p client. A replica must start tasks in the
// order of the calls (replica.ts): the write path sends a shard's updates one after another without
// waiting for each. Separate HTTP requests may overtake each other (risk R6 of the cluster plan),
// so every task that changes the replica goes through one lane per replica with ONE request in
// flight: updates called while a batch is in flight queue and go together as the next batch (the
// peer logs them with one synced write, as a local worker does), and a task that is not an update
// (open, drop, an index) goes alone in its turn. Reads change nothing and go at once, one request
// each. A turn may be reserved for an update known later (a transfer's batch): the lane waits
// for it. One RemoteReplica must exist per (peer, shard) for the lane to order the shard's updates.

import { fromWire } from '../errors.js';
import type { DeadlineBudget } from '../shard/deadline.js';
import { isReadTask } from '../worker/tasks.js';
import type { P2pClient } from './p2p-client.js';
import { encode, type ReplicaUpdate } from './wire.js';
import type { ForwardedUpdate, ReplicaResult, ReplicaTask, ShardReplica } from '../replica/replica.js';
import type { ApplyTask, LaneSlot, ReceiverLane } from '../replica/transfer-proxy.js';
import type { ShardId } from '../replica/shard-id.js';
import type { RecoveryPoint } from '../shard/shard.js';

/** A task waiting in the lane for its turn, with its caller's answer. */
interface Queued {
  /** Null while a reserved turn waits for its update (`reserve`): the lane waits with it. */
  task: ReplicaTask | null;
  deadline: DeadlineBudget | null;
  /** An update's wire form, encoded as it queues (so a batch's size is known before it goes). */
  frame: Buffer | null;
  resolve: (result: unknown) => void;
  reject: (err: unknown) => void;
}

export interface RemoteReplicaOptions {
  /** A batch takes queued updates up to this many encoded bytes (at least one update); DEFAULT_BATCH_BYTES if absent. */
  batchBytes?: number;
}

/** Well under the p2p server's body limit (src/cluster/p2p-server.ts): one batch, one request. */
export const DEFAULT_BATCH_BYTES = 8 * 1024 * 1024;

function isUpdate(task: ReplicaTask): task is ReplicaUpdate {
  return task.type === 'apply' && !task.dryRun;
}

/** A task that only reads the shard: a read, or the dry run that checks an update. */
function onlyReads(task: ReplicaTask): boolean {
  return isReadTask(task) || (task.type === 'apply' && task.dryRun);
}

export class RemoteReplica implements ShardReplica, ReceiverLane {
  private readonly lane: Queued[] = [];
  private sending = false;
  private readonly batchBytes: number;

  /** `peer` is the peer's id, `uri` its p2p URI. */
  constructor(readonly shard: ShardId, readonly peer: number, readonly uri: string, private readonly client: P2pClient, options: RemoteReplicaOptions = {}) {
    this.batchBytes = options.batchBytes ?? DEFAULT_BATCH_BYTES;
  }

  run<T extends ReplicaTask>(task: T, deadline: DeadlineBudget | null): Promise<ReplicaResult<T>> {
    if (onlyReads(task)) return this.client.run(this.uri, this.shard, task, deadline);
    return new Promise<ReplicaResult<T>>((resolve, reject) => {
      this.lane.push({ task, deadline, frame: isUpdate(task) ? encode(task) : null, resolve: resolve as (result: unknown) => void, reject });
      this.pump();
    });
  }

  /**
   * Keeps the lane's next turn for updates known later (a transfer's batch, read while the
   * updates behind it queue; a log's delta): nothing behind it is sent before it is filled or
   * dropped; what is put in it meanwhile goes ahead of it.
   */
  reserve(): LaneSlot {
    let settle!: { resolve: (result: unknown) => void; reject: (err: unknown) => void };
    const sent = new Promise<void>((resolve, reject) => {
      settle = { resolve: () => resolve(), reject };
    });
    const queued: Queued = { task: null, deadline: null, frame: null, ...settle };
    this.lane.push(queued);
    return {
      sent,
      put: <T extends ReplicaTask>(task: T) => new Promise<ReplicaResult<T>>((resolve, reject) => {
        const at = this.lane.indexOf(queued);
        if (at < 0 || queued.task !== null) throw new Error('the lane\'s kept turn has ended');
        this.lane.splice(at, 0, { task, deadline: null, frame: isUpdate(task) ? encode(task) : null, resolve: resolve as (result: unknown) => void, reject });
        this.pump();
      }),
      fill: (update: ApplyTask) => {
        if (!this.lane.includes(queued) || queued.task !== null) return;
        queued.task = update;
        queued.frame = encode(update);
        this.pump();
      },
      // Once only: a slot dropped (or sent) already is no longer in the lane.
      drop: (err?: unknown) => {
        const at = this.lane.indexOf(queued);
        if (at < 0 || queued.task !== null) return;
        this.lane.splice(at, 1);
        if (err === undefined) queued.resolve(null);
        else queued.reject(err);
        this.pump();
      },
    };
  }

  recoveryPoint(): Promise<RecoveryPoint> {
    return this.client.run(this.uri, this.shard, { type: 'recovery_point' }, null);
  }

  /** Hands an update to this peer as the leader of the shard's replicas (medium/strong ordering); answers its operation id. */
  forward(update: ForwardedUpdate): Promise<number> {
    return this.client.forward(this.uri, this.shard, update);
  }

  /** Tasks queued and not answered yet (the batch in flight included). */
  get pending(): number {
    return this.lane.length;
  }

  /** Sends the lane's next request, unless one is in flight; sends the one after once it is answered. */
  private pump(): void {
    if (this.sending || this.lane.length === 0 || this.lane[0].task === null) return;
    this.sending = true;
    const sent = this.lane[0].frame === null ? this.sendAlone() : this.sendBatch();
    void sent.finally(() => {
      this.sending = false;
      this.pump();
    });
  }

  /** The updates at the head of the lane, up to the batch size, as one request; each caller gets its own answer. */
  private async sendBatch(): Promise<void> {
    let size = 0;
    let count = 0;
    while (count < this.lane.length && this.lane[count].task !== null && this.lane[count].frame !== null && (count === 0 || size + this.lane[count].frame!.length <= this.batchBytes)) {
      size += this.lane[count].frame!.length;
      count++;
    }
    const batch = this.lane.slice(0, count);
    let failure: unknown = null;
    try {
      const replies = await this.client.apply(this.uri, this.shard, batch.map((q) => q.frame!));
      replies.forEach((reply, i) => {
        if (!('error' in reply)) return batch[i].resolve(null);
        failure ??= fromWire(reply.error);
        batch[i].reject(fromWire(reply.error));
      });
    } catch (err) {
      failure = err;
      for (const queued of batch) queued.reject(err);
    }
    this.lane.splice(0, count);
    // The updates queued behind one the peer did not take fail with it: one taken past a missed
    // one would leave its replica holding a later tick of a clock without an earlier one, which
    // its recovery point would then claim (src/cluster/wal-delta.ts). Its sender marks it Dead.
    if (failure === null) return;
    for (const queued of this.lane.filter((q) => q.frame !== null)) {
      this.lane.splice(this.lane.indexOf(queued), 1);
      queued.reject(failure);
    }
  }

  /** A task that changes the replica but is not a point update, in its turn. */
  private async sendAlone(): Promise<void> {
    const queued = this.lane[0];
    try {
      queued.resolve(await this.client.run(this.uri, this.shard, queued.task!, queued.deadline));
    } catch (err) {
      queued.reject(err);
    } finally {
      this.lane.shift();
    }
  }
}
