// Where this node keeps its replicas: shard `id` of a collection in
// <storage>/collections/<storage id>/<id>, owned by worker `id` mod the worker count. The
// collection's storage id names the folder, not its name: a name may hold characters a path
// cannot, and a collection being replaced by a recovery exists twice for a while.

import { join } from 'node:path';
import type { ShardWorkers } from '../worker/pool.js';
import { LocalReplica } from './local-replica.js';
import type { ShardId } from './shard-id.js';

export class LocalPlacement {
  constructor(private readonly storagePath: string, readonly workers: ShardWorkers) {}

  /** The folder holding every collection's shard folders. */
  get collectionsFolder(): string {
    return join(this.storagePath, 'collections');
  }

  /** The folder of one collection's shards. */
  folderOf(storageId: string): string {
    return join(this.collectionsFolder, storageId);
  }

  /** This node's replica of `shard`, of the collection stored under `storageId`. */
  replica(shard: ShardId, storageId: string): LocalReplica {
    return new LocalReplica(shard, this.workers, {
      key: `${storageId}/${shard.shard}`,
      worker: shard.shard % this.workers.count,
      path: join(this.folderOf(storageId), String(shard.shard)),
    });
  }
}
