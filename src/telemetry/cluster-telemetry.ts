// `GET /cluster/telemetry`: Qdrant's DistributedTelemetryData. On a single node, as a one-peer
// cluster sees it: every shard has one replica, on this peer, Active, with its live counts and sizes; no
// transfers or reshardings exist. A single node runs no consensus, which the peer details say. In a
// cluster, merged from every peer's report (distributedTelemetry). As in Qdrant, the cluster part
// is for callers with a node-wide grant only.

import type { ShardEntry } from '../cluster/keys.js';
import { shardTransfersIn } from '../cluster/collection-cluster-info.js';
import { printedUri } from '../cluster/raft-info.js';
import type { PeerTelemetry } from '../cluster/telemetry-fan-out.js';
import { ServiceError } from '../errors.js';
import { localShardFigures } from '../shard/shard-figures.js';
import { VERSION } from '../version.js';
import type { NodeState } from './node.js';
import { singleNodePlacement } from './replica-placement.js';
import type { CollectionSnapshot } from './snapshot.js';

export function clusterTelemetry(node: NodeState, snapshot: CollectionSnapshot[], peerUri: string, nodeWide: boolean) {
  const placement = singleNodePlacement(node.peerId);
  const collections = Object.fromEntries(snapshot.map((collection) => [collection.record.name, {
    id: collection.record.name,
    shards: collection.shards.map((shard) => ({
      id: shard.id,
      ...(shard.key === undefined ? {} : { key: shard.key }),
      replicas: [...placement.replicasOf(collection.record.name, shard.id)].map(([peer, state]) => ({ peer_id: peer, state, ...localShardFigures(shard) })),
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

/**
 * The answer of a cluster peer, merged as Qdrant merges its peers' telemetry
 * (DistributedTelemetryData::resolve_telemetries): every shard of every visible collection with
 * each replica the control plane places, its state from the view and, when the holding peer
 * answered, the figures it reports for its copy (replicas in peer id order). For a node-wide
 * caller, every registered peer with its URI and, if it answered, its own details; a peer that
 * did not answer is `responsive: false` with `details: null`.
 */
export function distributedTelemetry({ view, reports }: PeerTelemetry, canSee: (name: string) => boolean, nodeWide: boolean) {
  if (![...reports.values()].some((report) => report !== null)) throw new ServiceError('Could not get telemetry from cluster');
  const collections = Object.fromEntries([...view.collections.keys()].filter(canSee).map((name) => [name, {
    id: name,
    shards: [...(view.shards.get(name) ?? new Map<number, ShardEntry>())].map(([id, entry]) => ({
      id,
      ...(entry.shard_key === undefined ? {} : { key: entry.shard_key }),
      replicas: Object.entries(entry.replicas).map(([peer, state]) => [Number(peer), state] as const).sort(([a], [b]) => a - b).map(([peer, state]) => ({
        peer_id: peer,
        state,
        ...reports.get(peer)?.replicas[name]?.[String(id)],
      })),
    })),
    shard_transfers: shardTransfersIn(view, name, () => true),
  }]));
  if (!nodeWide) return { collections };
  return {
    collections,
    cluster: {
      enabled: true,
      number_of_peers: view.peers.size,
      peers: Object.fromEntries([...view.peers].map(([id, peer]) => {
        const report = reports.get(id) ?? null;
        return [String(id), { uri: printedUri(peer.uri), responsive: report !== null, details: report?.details ?? null }];
      })),
    },
  };
}
