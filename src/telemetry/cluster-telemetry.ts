// `GET /cluster/telemetry`: Qdrant's DistributedTelemetryData as a one-peer cluster sees it.
// Every shard has one replica, on this peer, Active, with its live counts and sizes; no
// transfers or reshardings exist. Quiver runs no consensus, which the peer details say. As in
// Qdrant, the cluster part is for callers with a node-wide grant only.

import { VERSION } from '../version.js';
import type { NodeState } from './node.js';
import { localShardFigures, REPLICA_STATE } from './shard-telemetry.js';
import type { CollectionSnapshot } from './snapshot.js';

export function clusterTelemetry(node: NodeState, snapshot: CollectionSnapshot[], peerUri: string, nodeWide: boolean) {
  const collections = Object.fromEntries(snapshot.map((collection) => [collection.record.name, {
    id: collection.record.name,
    shards: collection.shards.map((shard) => ({
      id: shard.id,
      ...(shard.key === undefined ? {} : { key: shard.key }),
      replicas: [{ peer_id: node.peerId, state: REPLICA_STATE, ...localShardFigures(shard) }],
    })),
  }]));
  if (!nodeWide) return { collections };
  return {
    collections,
    cluster: {
      enabled: false,
      number_of_peers: 1,
      peers: {
        [node.peerId]: {
          uri: peerUri,
          responsive: true,
          details: {
            version: VERSION,
            is_voter: false,
            term: 0,
            commit: 0,
            num_pending_operations: 0,
            consensus_thread_status: { consensus_thread_status: 'stopped' },
          },
        },
      },
    },
  };
}
