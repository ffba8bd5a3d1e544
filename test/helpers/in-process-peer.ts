// Cluster peers inside the test process, sharing one etcd: each with its own storage folder, one
// shard worker, a CollectionManager, the apply loop with the reconcile, the cluster catalogue, and
// the REST app (reached with inject, no port), and the p2p server with the peer's host, so their
// replica sets reach the other peers' replicas as a cluster peer's do (ClusterPlacement).

import { Etcd3 } from 'etcd3';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { ApplyLoop } from '../../src/cluster/apply-loop.js';
import { ClusterCatalog } from '../../src/cluster/cluster-catalog.js';
import { ControlPlane } from '../../src/cluster/control-plane.js';
import { clusterNamespace } from '../../src/cluster/keys.js';
import { registerPeer } from '../../src/cluster/peer-registry.js';
import { Reconciler } from '../../src/cluster/reconcile.js';
import { CollectionManager } from '../../src/collection/manager.js';
import { defaultConfig } from '../../src/config/config.js';
import { ClusterPlacement } from '../../src/cluster/cluster-placement.js';
import { PeerHost, revisionWait } from '../../src/cluster/p2p-host.js';
import { P2pClient } from '../../src/peer/p2p-client.js';
import { P2pServer } from '../../src/peer/p2p-server.js';
import { buildServer } from '../../src/server/app.js';
import { StandaloneCluster } from '../../src/server/cluster-service.js';
import { openNodeState } from '../../src/telemetry/node.js';
import { ShardWorkers } from '../../src/worker/pool.js';

export interface InProcessPeer {
  id: number;
  storage: string;
  collections: CollectionManager;
  reconciler: Reconciler;
  loop: ApplyLoop;
  catalog: ClusterCatalog;
  controlPlane: ControlPlane;
  app: FastifyInstance;
  /** Failures the reconcile reported. */
  errors: Error[];
  /** Stops the app, the loop and the manager (the storage stays, for a restart). */
  stop(): Promise<void>;
}

export async function peerStorage(t: Test): Promise<string> {
  const storage = await mkdtemp(join(tmpdir(), 'quiver-peer-'));
  t.teardown(() => rm(storage, { recursive: true, force: true }));
  return storage;
}

/** Registers peer `id` (on the first start) and starts it on `storage`; stopped at the test's end. */
export async function startInProcessPeer(t: Test, etcdUrl: string, id: number, storage: string): Promise<InProcessPeer> {
  const etcd = new Etcd3({ hosts: etcdUrl });
  const controlPlane = new ControlPlane(clusterNamespace(etcd));
  const workers = new ShardWorkers(1);
  let loop: ApplyLoop | null = null;
  const waitApplied = (revision: number, ms: number) => loop!.waitApplied(revision, ms);
  const client = new P2pClient({ connectionTimeoutMs: 2000, requestTimeoutMs: 30_000, apiKey: null, appliedRevision: () => loop?.appliedRevision ?? 0 });
  // The stored collections open with their replicas where the cluster places them now.
  const initialView = await controlPlane.read();
  const placement = new ClusterPlacement({ storagePath: storage, workers, peer: id, incarnation: 1, proposer: controlPlane, waitApplied, client, view: initialView });
  const collections = await CollectionManager.openWith(storage, workers, placement);
  const p2p = new P2pServer({ host: new PeerHost({ placement, collection: (name) => collections.collectionNamed(name), awaitRevision: revisionWait(waitApplied) }), apiKey: null, revisionWaitMs: 10_000 });
  const uri = await p2p.start('127.0.0.1', 0);
  await registerPeer(etcd, id, { uri, etcd_member_id: String(id), etcd_peer_url: 'http://127.0.0.1:2380', version: '0.1.0' });
  const errors: Error[] = [];
  const reconciler = new Reconciler({ peerId: id, collections, controlPlane, onError: (err) => errors.push(err) });
  loop = new ApplyLoop({
    namespace: clusterNamespace(etcd),
    onApply: async (view, changes, revision) => {
      placement.applyView(view);
      await reconciler.onApply(view, changes, revision);
    },
    initialView,
    retryInitialMs: 20,
    retryMaxMs: 200,
  });
  await loop.start();
  const catalog = new ClusterCatalog({ controlPlane, loop, reconciler, collections, peerId: id, transferMethod: null });
  const config = defaultConfig();
  config.storage.storage_path = storage;
  config.storage.snapshots_path = join(storage, 'snapshots');
  config.cluster.peer_id = id;
  const node = await openNodeState(collections.meta, config);
  const view = reconciler;
  const app = buildServer({ config, collections, catalog, node, cluster: new StandaloneCluster(node.quota, node.peerId, collections), clusterView: () => view.view });
  await app.ready();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await app.close();
    await p2p.stop();
    await loop!.stop();
    view.stop();
    await client.close();
    await collections.close();
    etcd.close();
  };
  t.teardown(stop);
  return { id, storage, collections, reconciler, loop, catalog, controlPlane, app, errors, stop };
}
