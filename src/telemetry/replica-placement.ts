// Where the replicas of each shard are, and their states, as telemetry and metrics report them:
// on a cluster peer, the control plane's view this peer applied (the states every peer's replica
// sets read, src/cluster/view-replica-states.ts); on a single node, one Active replica per shard,
// on this node.

import { shardTransfersIn, type ShardTransferInfo } from '../cluster/collection-cluster-info.js';
import type { ClusterView } from '../cluster/cluster-view.js';
import type { ReplicaState } from '../replica/replica.js';

/** The replicas of one shard by peer id, in peer id order. */
export type ShardReplicas = ReadonlyMap<number, ReplicaState>;

export interface ReplicaPlacement {
  /** The peer this node runs as. */
  readonly self: number;
  /** The replicas of a collection's shard (none when the shard is not placed). */
  replicasOf(collection: string, shard: number): ShardReplicas;
  /** The collection's shard transfers under way (progress comments on their source's report). */
  transfersOf(collection: string): ShardTransferInfo[];
}

export function singleNodePlacement(peerId: number): ReplicaPlacement {
  const only: ShardReplicas = new Map([[peerId, 'Active']]);
  return { self: peerId, replicasOf: () => only, transfersOf: () => [] };
}

export function viewPlacement(peerId: number, view: ClusterView): ReplicaPlacement {
  return {
    self: peerId,
    replicasOf: (collection, shard) => new Map([...(view.replicas(collection, shard) ?? [])].sort(([a], [b]) => a - b)),
    transfersOf: (collection) => shardTransfersIn(view, collection, (t) => t.from === peerId),
  };
}

/** The placement a node reports: the view's on a cluster peer (`view` given), else the single node's. */
export function placementOf(peerId: number, view?: () => ClusterView): ReplicaPlacement {
  return view ? viewPlacement(peerId, view()) : singleNodePlacement(peerId);
}
