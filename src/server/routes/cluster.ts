// GET /cluster (this node's distributed-mode status), the cluster metadata keys (GET
// /cluster/metadata/keys, GET|PUT|DELETE /cluster/metadata/keys/{key}), DELETE
// /cluster/peer/{id} and POST /cluster/recover, answered by the node's ClusterService
// (cluster-service.ts).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { formatError } from '../../api/messages.js';
import { METADATA_PARAMS, PEER_REMOVAL_PARAMS } from '../../api/validator.js';
import { DEFAULT_COMMIT_TIMEOUT_SECONDS } from '../../cluster/cluster-catalog.js';
import type { JsonValue } from '../../model.js';
import type { ServerContext } from '../app.js';
import { ok } from '../reply.js';
import { query } from './params.js';

const keyOf = (request: FastifyRequest): string => (request.params as { key: string }).key;

export function registerClusterRoutes(app: FastifyInstance, { cluster }: ServerContext): void {
  app.get('/cluster', async (request) => ok(request, await cluster.status()));

  app.get('/cluster/metadata/keys', async (request) => ok(request, await cluster.keys()));

  app.get('/cluster/metadata/keys/:key', async (request) => ok(request, await cluster.get(keyOf(request))));

  // The body is any JSON value; Qdrant's `wait` defaults to false (only proposed).
  app.put('/cluster/metadata/keys/:key', async (request) => {
    const { wait } = query(request, METADATA_PARAMS);
    if (request.body === undefined) throw formatError('EOF while parsing a value at line 1 column 0');
    await cluster.put(keyOf(request), request.body as JsonValue, wait ?? false);
    return ok(request, true);
  });

  app.delete('/cluster/metadata/keys/:key', async (request) => {
    const { wait } = query(request, METADATA_PARAMS);
    await cluster.delete(keyOf(request), wait ?? false);
    return ok(request, true);
  });

  app.delete('/cluster/peer/:peer_id', async (request) => {
    const { timeout, force } = query(request, PEER_REMOVAL_PARAMS);
    await cluster.removePeer(peerIdOf(request), force ?? false, (timeout ?? DEFAULT_COMMIT_TIMEOUT_SECONDS) * 1000);
    return ok(request, true);
  });

  app.post('/cluster/recover', async (request) => {
    await cluster.recover(DEFAULT_COMMIT_TIMEOUT_SECONDS * 1000);
    return ok(request, true);
  });
}

/** The path's peer id, a u64 as Qdrant parses it (Quiver's ids stay below 2^53, so a larger one names no peer). */
function peerIdOf(request: FastifyRequest): number {
  const raw = (request.params as { peer_id: string }).peer_id;
  if (!/^[0-9]+$/.test(raw) || BigInt(raw) > 18_446_744_073_709_551_615n) throw formatError(`can not parse "${raw}" to a u64`, 'path parameters');
  return Number(raw);
}
