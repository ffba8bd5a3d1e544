// A cluster peer assembled: the ClusterNode (identity, membership, p2p, etcd), the collections
// opened where the control plane places their replicas (ClusterPlacement), the reconcile that
// applies each later view to them, the p2p host serving this peer's replicas, and the catalogue
// the REST routes change collections through. What src/main.ts runs in cluster mode.

import type { QuiverConfig } from '../config/config.js';
import type { Catalog } from '../collection/catalog.js';
import { CollectionManager } from '../collection/manager.js';
import type { QuotaGuard } from '../quota/guard.js';
import type { JsonValue } from '../model.js';
import type { Filter } from '../shard/filter/types.js';
import type { MetaStore } from '../storage/meta-store.js';
import type { ShardWorkers } from '../worker/pool.js';
import { ClusterCatalog } from './cluster-catalog.js';
import { ClusterNode } from './cluster-node.js';
import { ClusterPlacement } from './cluster-placement.js';
import { changesBetween, ClusterView, type ClusterChanges } from './cluster-view.js';
import { PeerHost, revisionWait } from './p2p-host.js';
import { Reconciler } from './reconcile.js';
import { Recovery } from './recovery.js';
import { TransferRunner } from './transfer-runner.js';
import { localReplicaFigures } from './telemetry-fan-out.js';

export interface ClusterPeerOptions {
  config: QuiverConfig;
  workers: ShardWorkers;
  /** The node's metadata store, opened before anything else (the peer's identity is in it). */
  meta: MetaStore<unknown>;
  processId: string;
  startedAt: Date;
  quota: QuotaGuard;
  log: { info(message: string): void; warn(message: string): void; error(message: string): void };
  /** A stored filter (a `replicate_points` transfer's) read as the REST layer reads a request's (the layer above hands it down). */
  filterOf: (wire: JsonValue) => Filter;
}

export interface ClusterPeer {
  node: ClusterNode;
  collections: CollectionManager;
  catalog: Catalog;
  /** The control plane as this peer applied it last (where shards and replicas are). */
  view: () => ClusterView;
  /** Stops the peer's parts (the collections are closed by the caller, after). */
  stop(): Promise<void>;
}

export async function startClusterPeer(options: ClusterPeerOptions): Promise<ClusterPeer> {
  const { config, workers, meta, log } = options;
  const node = await ClusterNode.start({ config, meta, processId: options.processId, startedAt: options.startedAt, quota: options.quota, log });
  try {
    const initialView = await node.initialView();
    const waitApplied = (revision: number, ms: number) => node.waitApplied(revision, ms);
    const placement = new ClusterPlacement({
      storagePath: config.storage.storage_path,
      workers,
      peer: node.peerId,
      incarnation: node.identity.incarnation,
      proposer: node.controlPlane,
      waitApplied,
      client: node.p2pClient,
      view: initialView,
      // Called once updates flow, after the runner below exists.
      onRelayFailed: (shard, peer, err) => transfers.relayFailed(shard, peer, err),
      onDropFailed: (shard, err) => log.warn(`dropping this peer's copy of ${shard.collection}:${shard.shard}: ${err instanceof Error ? err.message : String(err)}`),
    });
    const transfers = new TransferRunner({
      peer: node.peerId,
      controlPlane: node.controlPlane,
      source: (view, collection, shard) => placement.transferSource(view, collection, shard),
      pointsLane: (view, collection, shard, peer) => placement.pointsLane(view, collection, shard, peer),
      filterOf: options.filterOf,
      parts: node.transferParts,
      // Transfers run once the collections are open (below).
      restoreSpec: (collection, shard) => collections.collectionNamed(collection)?.restoreSpecOf(shard) ?? null,
      // As Qdrant's source sends its API key for the receiver's download.
      downloadHeaders: config.service.api_key === null ? {} : { 'api-key': config.service.api_key },
      firstRevision: initialView.revision,
      waitApplied,
      log,
    });
    const collections = await CollectionManager.openWith(config.storage.storage_path, workers, placement, meta);
    const reconciler = new Reconciler({
      peerId: node.peerId,
      collections,
      controlPlane: node.controlPlane,
      listener: config.storage.node_type === 'Listener',
      onError: (err, collection) => log.warn(`applying the cluster state${collection === null ? '' : ` to collection ${collection}`}: ${err.message}`),
    });
    const recovery = new Recovery({
      peer: node.peerId,
      controlPlane: node.controlPlane,
      view: () => reconciler.view,
      holds: (name) => collections.exists(name),
      limits: { incoming: config.storage.performance.incoming_shard_transfers_limit, outgoing: config.storage.performance.outgoing_shard_transfers_limit },
      // Qdrant's choice for automatic recovery: the configured method, else wal_delta.
      method: config.storage.shard_transfer_method ?? 'wal_delta',
      log,
    });
    const onApply = async (view: ClusterView, changes: ClusterChanges, revision: number) => {
      // A new transfer's receiver is cleared before any replica set reads the view (transfer-runner.ts).
      transfers.prepare(view);
      // The sets take the view's placement first: a collection the reconcile opens gets its replicas from it.
      placement.applyView(view);
      await reconciler.onApply(view, changes, revision);
      transfers.settle();
      recovery.check();
    };
    // The collections opened from this peer's own records; the first view reconciles them with
    // the control plane as a later one would: what changed while this peer was down (or was cut
    // short by a crash: a creation whose replicas are still Initializing) converges now, not at
    // the next change; transfers this peer's previous process was running are aborted. The loop
    // applies only the views after it.
    await onApply(initialView, changesBetween(ClusterView.empty(), initialView), initialView.revision);
    await node.follow({
      initialView,
      onApply,
      host: new PeerHost({ placement, collection: (name) => collections.collectionNamed(name), awaitRevision: revisionWait(waitApplied) }),
      replicaFigures: () => localReplicaFigures(collections),
    });
    recovery.start();
    const catalog = new ClusterCatalog({ controlPlane: node.controlPlane, loop: node, reconciler, collections, peerId: node.peerId, transferMethod: config.storage.shard_transfer_method });
    return {
      node,
      collections,
      catalog,
      view: () => reconciler.view,
      async stop() {
        transfers.stop();
        await recovery.stop();
        await node.stop();
        reconciler.stop();
      },
    };
  } catch (err) {
    await node.stop();
    throw err;
  }
}
