// `GET /collections/{name}/cluster`: the collection's shards as this peer sees them, in Qdrant's
// CollectionClusterInfo shape. On a single node every shard is local and Active; on a cluster
// peer the control plane's view says which replicas are here (`local_shards`, with points counted
// by this peer's own replica) and which are on other peers (`remote_shards`), and the transfers
// under way (`shard_transfers`; the progress `comment` only on the source, as Qdrant shows it:
// there its transfer task runs).

import type { Collection } from '../collection/collection.js';
import type { ShardKey } from '../model.js';
import type { ReplicaState } from '../replica/replica.js';
import type { ShardStats } from '../shard/stats.js';
import type { ClusterView, ShardTransfer } from './cluster-view.js';
import type { ShardEntry, TransferMethod } from './keys.js';

/** A single node's one replica: always Active. */
const REPLICA_STATE: ReplicaState = 'Active';

interface LocalShardInfo {
  shard_id: number;
  shard_key?: ShardKey;
  points_count: number;
  state: ReplicaState;
}

interface RemoteShardInfo {
  shard_id: number;
  shard_key?: ShardKey;
  peer_id: number;
  state: ReplicaState;
}

/** Qdrant's ShardTransferInfo. */
export interface ShardTransferInfo {
  shard_id: number;
  /** The receiver's shard when it is another than the source's (`replicate_points`). */
  to_shard_id?: number;
  from: number;
  to: number;
  sync: boolean;
  method: TransferMethod;
  comment?: string;
}

export interface CollectionClusterInfo {
  peer_id: number;
  shard_count: number;
  local_shards: LocalShardInfo[];
  remote_shards: RemoteShardInfo[];
  shard_transfers: ShardTransferInfo[];
}

/** Points of each shard this peer holds a replica of, counted by that replica (shard id -> stats). */
export async function localStats(collection: Collection): Promise<Map<number, ShardStats>> {
  const held = collection.shards.flatMap((s) => {
    const local = s.localReplica;
    return local ? [{ id: s.id, local }] : [];
  });
  const stats = await Promise.all(held.map(({ local }) => local.run({ type: 'stats' }, null)));
  return new Map(held.map(({ id }, i) => [id, stats[i]]));
}

function keyOf(shardKey: ShardKey | undefined): { shard_key?: ShardKey } {
  return shardKey === undefined ? {} : { shard_key: shardKey };
}

/** A single node: every shard local, Active. */
export function singleNodeClusterInfo(peerId: number, collection: Collection, stats: ReadonlyMap<number, ShardStats>): CollectionClusterInfo {
  return {
    peer_id: peerId,
    shard_count: collection.shards.length,
    local_shards: collection.shards.map((s) => ({ shard_id: s.id, ...keyOf(s.shardKey), points_count: stats.get(s.id)?.points ?? 0, state: REPLICA_STATE })),
    remote_shards: [],
    shard_transfers: [],
  };
}

/** A cluster peer: each shard's replicas as the view places them, this peer's among `local_shards`. */
export function collectionClusterInfo(view: ClusterView, peerId: number, collection: Collection, stats: ReadonlyMap<number, ShardStats>): CollectionClusterInfo {
  const local: LocalShardInfo[] = [];
  const remote: RemoteShardInfo[] = [];
  const entries: ReadonlyMap<number, ShardEntry> = view.shards.get(collection.name) ?? new Map();
  for (const [shard, entry] of entries) {
    for (const [peer, state] of Object.entries(entry.replicas)) {
      if (Number(peer) === peerId) local.push({ shard_id: shard, ...keyOf(entry.shard_key), points_count: stats.get(shard)?.points ?? 0, state });
      else remote.push({ shard_id: shard, ...keyOf(entry.shard_key), peer_id: Number(peer), state });
    }
  }
  const transfers = shardTransfersIn(view, collection.name, (t) => t.from === peerId);
  return { peer_id: peerId, shard_count: entries.size, local_shards: local, remote_shards: remote, shard_transfers: transfers };
}

/**
 * The transfers of a collection under way in `view`, in Qdrant's ShardTransferInfo shape; the
 * progress `comment` where `withComment` says (this peer's own view shows it on the source only,
 * as Qdrant's does; the cluster-wide telemetry, merged from every peer, has the source's).
 */
export function shardTransfersIn(view: ClusterView, collection: string, withComment: (t: ShardTransfer) => boolean): ShardTransferInfo[] {
  return view.transfers.filter((t) => t.collection === collection).map((t): ShardTransferInfo => ({
    shard_id: t.shard, ...(t.toShard === undefined ? {} : { to_shard_id: t.toShard }), from: t.from, to: t.to, sync: t.record.sync, method: t.record.method,
    ...(withComment(t) && t.record.comment !== undefined ? { comment: t.record.comment } : {}),
  }));
}
