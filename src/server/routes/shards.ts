// A collection's shards: custom shard keys (PUT/GET /collections/{name}/shards, POST
// .../shards/delete) and the cluster view of its shards (GET /collections/{name}/cluster).

import type { FastifyInstance } from 'fastify';
import { emptyPlacement, initialStateNotAllowed, peerDoesNotExist } from '../../api/messages.js';
import { COMMIT_PARAMS, validateBody } from '../../api/validator.js';
import { BadRequest } from '../../errors.js';
import { REPLICA_STATE } from '../../telemetry/shard-telemetry.js';
import { withCommitTimeout } from '../deadline.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { collectionName, query } from './params.js';

export function registerShardRoutes(app: FastifyInstance, { collections, node }: ServerContext): void {
  app.put('/collections/:name/shards', async (request) => {
    const { timeout } = query(request, COMMIT_PARAMS);
    const body = validateBody('CreateShardingKey', request.body);
    const name = collectionName(request);
    collections.resolve(name);
    const { initial_state: state, placement } = body;
    if (state && state !== 'Active' && state !== 'Partial') throw initialStateNotAllowed(state);
    // Shards of a single node serve as soon as they exist; a Partial shard would wait for a
    // transfer from a peer there is not (a Quiver-only refusal).
    if (state && state !== REPLICA_STATE) throw new BadRequest(`Sharding key ${body.shard_key} initial state ${state} is not possible on a single node: its shards are Active`);
    if (placement && placement.length === 0) throw emptyPlacement(body.shard_key);
    const unknown = placement?.find((peer) => peer !== node.peerId);
    if (unknown !== undefined) throw peerDoesNotExist(unknown);
    await withCommitTimeout(collections.createShardKey(name, body.shard_key, body.shards_number ?? null), timeout);
    return ok(request, true);
  });

  app.get('/collections/:name/shards', async (request) => {
    const keys = collections.shardKeys(collectionName(request));
    return ok(request, { shard_keys: keys === null ? null : keys.map((key) => ({ key })) });
  });

  app.post('/collections/:name/shards/delete', async (request) => {
    const { timeout } = query(request, COMMIT_PARAMS);
    const body = validateBody('DropShardingKey', request.body);
    await withCommitTimeout(collections.dropShardKey(collectionName(request), body.shard_key), timeout);
    return ok(request, true);
  });

  app.get('/collections/:name/cluster', async (request) => {
    const collection = collections.get(collectionName(request));
    const shards = collection.shards;
    const stats = await collection.stats();
    return ok(request, {
      peer_id: node.peerId,
      shard_count: shards.length,
      local_shards: shards.map((s, i) => ({
        shard_id: s.id,
        ...(s.shardKey === undefined ? {} : { shard_key: s.shardKey }),
        points_count: stats[i].points,
        state: REPLICA_STATE,
      })),
      remote_shards: [],
      shard_transfers: [],
    });
  });
}
