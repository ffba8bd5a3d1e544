// A replica on this node: the shard worker thread that owns the shard, and the folder it keeps
// the shard in. Only this module (and the node's placement that builds it) knows either.

import { rm } from 'node:fs/promises';
import { deadlineOf, type DeadlineBudget } from '../shard/deadline.js';
import type { ShardWorkers } from '../worker/pool.js';
import type { ShardTask } from '../worker/tasks.js';
import type { ReplicaResult, ReplicaTask, ShardReplica } from './replica.js';
import type { ShardId } from './shard-id.js';

/** Where this node keeps a replica: its node-unique key in the workers, the worker, the folder. */
export interface LocalSite {
  key: string;
  worker: number;
  path: string;
}

export class LocalReplica implements ShardReplica {
  constructor(readonly shard: ShardId, readonly peer: number, private readonly workers: ShardWorkers, private readonly site: LocalSite) {}

  async run<T extends ReplicaTask>(task: T, deadline: DeadlineBudget | null): Promise<ReplicaResult<T>> {
    const placed = 'spec' in task ? { ...task, spec: { ...task.spec, path: this.site.path }, shard: this.site.key } : { ...task, shard: this.site.key };
    // The spread keeps the task's own kind; TypeScript cannot follow a union through it.
    const result = await this.workers.run(this.site.worker, placed as ShardTask, deadline && deadlineOf(deadline), this.shard.collection);
    // Also clears a folder its worker never opened: one left by a shard dropped just before a crash.
    if (task.type === 'drop') await rm(this.site.path, { recursive: true, force: true });
    return result as ReplicaResult<T>;
  }
}
