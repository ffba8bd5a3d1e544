// GET /cluster (this node's distributed-mode status) and the cluster metadata keys: GET
// /cluster/metadata/keys, GET|PUT|DELETE /cluster/metadata/keys/{key}, answered by the node's
// ClusterService (cluster-service.ts).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { formatError } from '../../api/messages.js';
import { METADATA_PARAMS } from '../../api/validator.js';
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
}
