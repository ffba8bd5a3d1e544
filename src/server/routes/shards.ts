// A collection's shards: custom shard keys (PUT/GET /collections/{name}/shards, POST
// .../shards/delete) and the cluster view of its shards (GET /collections/{name}/cluster).

import type { FastifyInstance } from 'fastify';
import { emptyPlacement, initialStateNotAllowed, peerDoesNotExist } from '../../api/messages.js';
import { COMMIT_PARAMS, validateBody } from '../../api/validator.js';
import type { ShardKeyRequest } from '../../collection/catalog.js';
import type { ReplicaState } from '../../replica/replica.js';
import { collectionClusterInfo, localStats, singleNodeClusterInfo } from '../../cluster/collection-cluster-info.js';
import { withCommitTimeout } from '../deadline.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { collectionName, query } from './params.js';

export function registerShardRoutes(app: FastifyInstance, { collections, catalog, node, clusterView }: ServerContext): void {
  app.put('/collections/:name/shards', async (request) => {
    const { timeout } = query(request, COMMIT_PARAMS);
    const body = validateBody('CreateShardingKey', request.body);
    const name = collectionName(request);
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

  app.get('/collections/:name/cluster', async (request) => {
    const collection = collections.get(collectionName(request));
    const stats = await localStats(collection);
    return ok(request, clusterView ? collectionClusterInfo(clusterView(), node.peerId, collection, stats) : singleNodeClusterInfo(node.peerId, collection, stats));
  });
}
