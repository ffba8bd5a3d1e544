// Cluster peers inside the test process, sharing one etcd: each with its own storage folder, one
// shard worker, a CollectionManager, the apply loop with the reconcile, the cluster catalogue, and
// the REST app (reached with inject, no port). Their replica sets hold their LOCAL replicas only
// (ViewPlacement): what the collection tests here need; replicas on other peers come with the
// cluster placement.

import { Etcd3 } from 'etcd3';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { ApplyLoop } from '../../src/cluster/apply-loop.js';
import { ClusterCatalog } from '../../src/cluster/cluster-catalog.js';
import { ClusterView } from '../../src/cluster/cluster-view.js';
import { ControlPlane } from '../../src/cluster/control-plane.js';
import { clusterNamespace } from '../../src/cluster/keys.js';
import { registerPeer } from '../../src/cluster/peer-registry.js';
import { Reconciler } from '../../src/cluster/reconcile.js';
import { CollectionManager } from '../../src/collection/manager.js';
import { defaultConfig } from '../../src/config/config.js';
import type { ShardKey } from '../../src/model.js';
import { LocalPlacement } from '../../src/replica/local-placement.js';
import { ReplicaSet, type ReplicaSetParams } from '../../src/replica/replica-set.js';
import type { ReplicaStates } from '../../src/replica/replica-states.js';
import type { ShardId } from '../../src/replica/shard-id.js';
import type { ShardPlacement } from '../../src/replica/shard-placement.js';
import { buildServer } from '../../src/server/app.js';
import { StandaloneMetadata } from '../../src/server/cluster-metadata.js';
import { openNodeState } from '../../src/telemetry/node.js';
import { ShardWorkers } from '../../src/worker/pool.js';

/** A peer's replica sets as the view places them, with this peer's replica only; states read from the view. */
export class ViewPlacement implements ShardPlacement {
  private readonly local: LocalPlacement;

  constructor(storage: string, readonly workers: ShardWorkers, readonly peer: number, private readonly view: () => ClusterView, private readonly controlPlane: ControlPlane) {
    this.local = new LocalPlacement(storage, workers, peer);
  }

  replicaSet(shard: ShardId, storageId: string, params: () => ReplicaSetParams, shardKey?: ShardKey): ReplicaSet {
    const replicasOf = () => this.view().shards.get(shard.collection)?.get(shard.shard)?.replicas ?? {};
    const here = replicasOf()[String(this.peer)] !== undefined;
    const states: ReplicaStates = {
      stateOf: (peer) => replicasOf()[String(peer)],
      markFailed: async (peer, from) => {
        await this.controlPlane.setReplicaState(shard.collection, shard.shard, peer, 'Dead', from === null ? null : [from]);
      },
    };
    return new ReplicaSet(shard, here ? [this.local.replica(shard, storageId)] : [], { peer: this.peer, states, params, shardKey, localLifecycle: true });
  }

  removeCollection(storageId: string): Promise<void> {
    return this.local.removeCollection(storageId);
  }

  removeOrphans(kept: ReadonlyMap<string, readonly number[]>): Promise<string[]> {
    return this.local.removeOrphans(kept);
  }
}

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
  await registerPeer(etcd, id, { uri: `http://127.0.0.1:${6335 + id}`, etcd_member_id: String(id), etcd_peer_url: 'http://127.0.0.1:2380', version: '0.1.0' });
  const controlPlane = new ControlPlane(clusterNamespace(etcd));
  const workers = new ShardWorkers(1);
  let reconciler: Reconciler | null = null;
  // Until the reconcile exists (the stored collections open first) no shard is placed here.
  const placement = new ViewPlacement(storage, workers, id, () => reconciler?.view ?? ClusterView.empty(), controlPlane);
  const collections = await CollectionManager.openWith(storage, workers, placement);
  const errors: Error[] = [];
  reconciler = new Reconciler({ peerId: id, collections, controlPlane, onError: (err) => errors.push(err) });
  const loop = new ApplyLoop({ namespace: clusterNamespace(etcd), onApply: reconciler.onApply, retryInitialMs: 20, retryMaxMs: 200 });
  await loop.start();
  const catalog = new ClusterCatalog({ controlPlane, loop, reconciler });
  const config = defaultConfig();
  config.storage.storage_path = storage;
  config.storage.snapshots_path = join(storage, 'snapshots');
  config.cluster.peer_id = id;
  const node = await openNodeState(collections.meta, config);
  const view = reconciler;
  const app = buildServer({ config, collections, catalog, node, clusterMetadata: new StandaloneMetadata(), clusterView: () => view.view });
  await app.ready();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await app.close();
    await loop.stop();
    view.stop();
    await collections.close();
    etcd.close();
  };
  t.teardown(stop);
  return { id, storage, collections, reconciler, loop, catalog, controlPlane, app, errors, stop };
}
