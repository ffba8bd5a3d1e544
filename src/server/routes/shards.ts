// A collection's shards: custom shard keys (PUT/GET /collections/{name}/shards, POST
// .../shards/delete) and the cluster view of its shards (GET /collections/{name}/cluster).

import { isTransferMethod } from '../../replica/transfer-method.js';
import type { FastifyInstance } from 'fastify';
import { emptyPlacement, initialStateNotAllowed, peerDoesNotExist } from '../../api/messages.js';
import { distributedModeDisabled, reshardingCloudOnly, reshardingNotInProgress, targetShardNotAllowed, transferMethodNotSupported } from '../../messages.js';
import { COMMIT_PARAMS, validateBody } from '../../api/validator.js';
import { toFilter } from '../../api/filter.js';
import type { ReplicaChange, ShardKeyRequest } from '../../collection/catalog.js';
import type { WireClusterOperations, WireCreateShardingKey } from '../../api/types.js';
import type { ReplicaState } from '../../replica/replica.js';
import type { JsonValue } from '../../model.js';
import { collectionClusterInfo, localStats, singleNodeClusterInfo } from '../../cluster/collection-cluster-info.js';
import { withCommitTimeout } from '../deadline.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { collectionName, query } from './params.js';

export function registerShardRoutes(app: FastifyInstance, { collections, catalog, node, clusterView }: ServerContext): void {
  const createShardKey = async (name: string, body: WireCreateShardingKey, timeout: number | undefined): Promise<void> => {
    collections.resolve(name);
    const { initial_state: state, placement } = body;
    if (state && state !== 'Active' && state !== 'Partial') throw initialStateNotAllowed(state);
    if (placement && placement.length === 0) throw emptyPlacement(body.shard_key);
    const shardKey: ShardKeyRequest = {
      shardsNumber: body.shards_number ?? null,
      replicationFactor: body.replication_factor ?? null,
      placement: placement ?? null,
      initialState: (state ?? null) as ReplicaState | null, // one of REPLICA_STATES: the schema checked it
    };
    await withCommitTimeout(catalog.createShardKey(name, body.shard_key, shardKey, timeout), timeout);
  };

  app.put('/collections/:name/shards', async (request) => {
    const { timeout } = query(request, COMMIT_PARAMS);
    await createShardKey(collectionName(request), validateBody('CreateShardingKey', request.body), timeout);
    return ok(request, true);
  });

  app.get('/collections/:name/shards', async (request) => {
    const keys = collections.shardKeys(collectionName(request));
    return ok(request, { shard_keys: keys === null ? null : keys.map((key) => ({ key })) });
  });

  app.post('/collections/:name/shards/delete', async (request) => {
    const { timeout } = query(request, COMMIT_PARAMS);
    const body = validateBody('DropShardingKey', request.body);
    await withCommitTimeout(catalog.dropShardKey(collectionName(request), body.shard_key, timeout), timeout);
    return ok(request, true);
  });

  // Qdrant's update_collection_cluster: shard keys as the routes above, replica changes through the catalogue.
  app.post('/collections/:name/cluster', async (request) => {
    const { timeout } = query(request, COMMIT_PARAMS);
    const body = validateBody('ClusterOperations', request.body);
    if (!clusterView) throw distributedModeDisabled();
    const name = collectionName(request);
    if ('start_resharding' in body || 'abort_resharding' in body) {
      // As Qdrant's open-source build answers, once the collection is found: resharding is not enabled.
      const collection = collections.resolve(name);
      throw 'start_resharding' in body ? reshardingCloudOnly() : reshardingNotInProgress(collection);
    }
    if ('create_sharding_key' in body) await createShardKey(name, body.create_sharding_key, timeout);
    else if ('drop_sharding_key' in body) await withCommitTimeout(catalog.dropShardKey(name, body.drop_sharding_key.shard_key, timeout), timeout);
    else await withCommitTimeout(catalog.changeReplicas(name, replicaChangeOf(body), timeout), timeout);
    return ok(request, true);
  });

  app.get('/collections/:name/cluster', async (request) => {
    const collection = collections.get(collectionName(request));
    const stats = await localStats(collection);
    return ok(request, clusterView ? collectionClusterInfo(clusterView(), node.peerId, collection, stats) : singleNodeClusterInfo(node.peerId, collection, stats));
  });
}

/** The replica change a body asks for; what Quiver does not do is refused, never accepted and ignored. */
function replicaChangeOf(body: Exclude<WireClusterOperations, { create_sharding_key: unknown } | { drop_sharding_key: unknown } | { start_resharding: unknown } | { abort_resharding: unknown }>): ReplicaChange {
  if ('move_shard' in body || 'replicate_shard' in body) {
    const move = 'move_shard' in body;
    const op = move ? body.move_shard : body.replicate_shard;
    const method = op.method ?? null;
    if (method !== null && !isTransferMethod(method)) throw transferMethodNotSupported(method);
    if (op.to_shard_id !== undefined && op.to_shard_id !== null) throw targetShardNotAllowed(op.to_shard_id);
    return { kind: 'transfer', shard: op.shard_id, from: op.from_peer_id, to: op.to_peer_id, move, method };
  }
  if ('restart_transfer' in body) {
    const op = body.restart_transfer;
    if (!isTransferMethod(op.method)) throw transferMethodNotSupported(op.method);
    return { kind: 'restart_transfer', shard: op.shard_id, from: op.from_peer_id, to: op.to_peer_id, ...intoShard(op.shard_id, op.to_shard_id), method: op.method };
  }
  if ('abort_transfer' in body) {
    const op = body.abort_transfer;
    return { kind: 'abort_transfer', shard: op.shard_id, from: op.from_peer_id, to: op.to_peer_id, ...intoShard(op.shard_id, op.to_shard_id) };
  }
  if ('replicate_points' in body) {
    const { filter, from_shard_key: fromKey, to_shard_key: toKey } = body.replicate_points;
    // Read as every filter is (Qdrant's 4xx for a bad one), and kept in the form it came in.
    if (filter !== undefined && filter !== null) toFilter(filter, 'replicate_points.filter');
    return { kind: 'replicate_points', fromKey, toKey, filter: (filter ?? null) as JsonValue | null };
  }
  return { kind: 'drop_replica', shard: body.drop_replica.shard_id, peer: body.drop_replica.peer_id };
}

/** A transfer's receiver shard when the request names another than its source shard (`to_shard_id`). */
function intoShard(shard: number, toShard: number | null | undefined): { toShard?: number } {
  return toShard === undefined || toShard === null || toShard === shard ? {} : { toShard };
}
