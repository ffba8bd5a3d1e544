// What the cluster routes (routes/cluster.ts) ask of the node: its distributed-mode status
// (`GET /cluster`) and the cluster-wide key/value store behind /cluster/metadata/keys (JSON values
// Qdrant replicates through consensus). A single node answers with StandaloneCluster, a cluster
// peer with its ClusterNode.

import type { ClusterStatusBody, ClusterTelemetry } from '../cluster/raft-info.js';
import type { PeerQuotaUsage } from '../cluster/quota-fan-out.js';
import type { PeerTelemetry } from '../cluster/telemetry-fan-out.js';
import type { CollectionManager } from '../collection/manager.js';
import { BadRequest, ServiceError } from '../errors.js';
import { peerHoldsShards } from '../messages.js';
import type { JsonValue } from '../model.js';
import type { QuotaConfig } from '../quota/config.js';
import type { QuotaGuard } from '../quota/guard.js';

/** `GET /cluster`: disabled on a single node. */
export type ClusterStatus = { status: 'disabled' } | ClusterStatusBody;

export interface ClusterService {
  status(): Promise<ClusterStatus>;
  /** Whether the node's state is caught up (`/readyz`). */
  ready(): boolean;
  /** The `cluster` section of `/telemetry` at `level`. */
  telemetry(level: number, anonymize: boolean): Promise<ClusterTelemetry>;
  /**
   * `/cluster/telemetry`'s reports of every peer, each asked within `timeoutMs`; null outside
   * distributed mode, where the node reports itself alone (src/telemetry/cluster-telemetry.ts).
   */
  peerTelemetry(timeoutMs?: number): Promise<PeerTelemetry | null>;
  /** Replaces the quota configuration everywhere the node's deployment enforces it; `wait` as for metadata. */
  updateQuota(config: QuotaConfig, wait: boolean): Promise<void>;
  /** Each answering peer's quota usage by peer id (itself included); undefined outside distributed mode. */
  quotaPeers(): Promise<Record<string, PeerQuotaUsage> | undefined>;
  /** The keys that hold a value. */
  keys(): Promise<string[]>;
  /** A key's value; null when it holds none. */
  get(key: string): Promise<JsonValue>;
  /** Stores `value` under `key`; with `wait`, resolves once this peer has applied it, else once it is proposed. */
  put(key: string, value: JsonValue, wait: boolean): Promise<void>;
  /** Removes `key` (Qdrant stores JSON null through consensus); `wait` as for put. */
  delete(key: string, wait: boolean): Promise<void>;
  /** `DELETE /cluster/peer/{id}`: refused while the peer holds replicas unless `force`; `timeoutMs` bounds the commit. */
  removePeer(peer: number, force: boolean, timeoutMs: number): Promise<void>;
  /** `POST /cluster/recover`: the node's state read again from the cluster's. */
  recover(timeoutMs: number): Promise<void>;
}

/**
 * A node outside distributed mode reports its cluster as disabled, and has no consensus to keep
 * metadata in: Qdrant refuses every
 * metadata request, the listing included, with a 500 (src/actix/api/cluster_api.rs,
 * TableOfContent::update_cluster_metadata).
 */
export class StandaloneCluster implements ClusterService {
  /** The node's quota, its own id (its replicas'), and its collections (whether it holds any shard). */
  constructor(private readonly quota: QuotaGuard, private readonly peerId: number, private readonly collections: Pick<CollectionManager, 'names'>) {}

  status(): Promise<ClusterStatus> {
    return Promise.resolve({ status: 'disabled' });
  }

  /** A single node opened everything before it serves. */
  ready(): boolean {
    return true;
  }

  /** Qdrant's section outside distributed mode. */
  telemetry(): Promise<ClusterTelemetry> {
    return Promise.resolve({ enabled: false });
  }

  /** No other peer to ask. */
  peerTelemetry(): Promise<null> {
    return Promise.resolve(null);
  }

  /** One node has no consensus to wait for: the change is stored before the answer whatever `wait` says. */
  updateQuota(config: QuotaConfig): Promise<void> {
    return this.quota.update(config);
  }

  /** Outside distributed mode Qdrant leaves out the per-peer map. */
  quotaPeers(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  keys(): Promise<string[]> {
    return Promise.reject(standalone());
  }

  get(): Promise<JsonValue> {
    return Promise.reject(standalone());
  }

  put(): Promise<void> {
    return Promise.reject(standalone());
  }

  delete(): Promise<void> {
    return Promise.reject(standalone());
  }

  /**
   * Qdrant checks that the peer holds no replica before it looks for a cluster: the node's own
   * id with a collection is refused for that, anything else because there is no cluster.
   */
  removePeer(peer: number, force: boolean): Promise<void> {
    if (!force && peer === this.peerId && this.collections.names().length > 0) return Promise.reject(peerHoldsShards(peer));
    return Promise.reject(new BadRequest('Distributed mode disabled.'));
  }

  recover(): Promise<void> {
    return Promise.reject(standalone());
  }
}

function standalone(): ServiceError {
  return new ServiceError('Qdrant is running in standalone mode');
}
