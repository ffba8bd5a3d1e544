// The `config` member of telemetry's `cluster` section (Qdrant's ClusterConfigTelemetry), which
// Qdrant reports from details level 2 whether or not the node runs in distributed mode. Only the
// settings Quiver has are reported: its request bound to other peers and its consensus tick and
// bootstrap wait. Qdrant's `p2p.connection_pool_size` (gRPC channels per peer) and
// `consensus.max_message_queue_size` (its Raft message queue) have no counterpart here: peers talk
// over an undici pool that opens connections as needed, and etcd keeps its own queues.

import type { ClusterTelemetry } from '../cluster/raft-info.js';
import type { ClusterConfig } from '../config/cluster-options.js';

export interface ClusterConfigTelemetry {
  grpc_timeout_ms: number;
  consensus: { tick_period_ms: number; bootstrap_timeout_sec: number };
}

/** Qdrant's details level from which the section shows the configuration. */
const CONFIG_LEVEL = 2;

export function clusterConfigTelemetry(cluster: ClusterConfig): ClusterConfigTelemetry {
  return {
    grpc_timeout_ms: cluster.grpc_timeout_ms,
    consensus: { tick_period_ms: cluster.consensus.tick_period_ms, bootstrap_timeout_sec: cluster.consensus.bootstrap_timeout_sec },
  };
}

/** The section with the configuration at `level`, placed after the status as Qdrant orders it. */
export function withClusterConfig(section: ClusterTelemetry, cluster: ClusterConfig, level: number): ClusterTelemetry & { config?: ClusterConfigTelemetry } {
  if (level < CONFIG_LEVEL) return section;
  const { enabled, status, ...rest } = section;
  return { enabled, ...(status ? { status } : {}), config: clusterConfigTelemetry(cluster), ...rest };
}
