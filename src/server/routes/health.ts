// Kubernetes probes: GET /healthz and /livez answer as soon as the HTTP API serves. GET /readyz
// says whether the node serves with its state caught up: a node opens every shard before it
// starts listening, so a single node always is; a cluster peer is while its etcd member runs and
// its apply loop follows the control plane (a peer that fell behind answers 503 until it caught up).
// Plain-text bodies, as Qdrant sends them.

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ServerContext } from '../app.js';

function plain(body: string) {
  return async (_request: unknown, reply: FastifyReply) => reply.type('text/plain').send(body);
}

export function registerHealthRoutes(app: FastifyInstance, { cluster }: ServerContext): void {
  app.get('/healthz', plain('healthz check passed'));
  app.get('/livez', plain('healthz check passed'));
  app.get('/readyz', async (_request, reply) => (cluster.ready()
    ? reply.type('text/plain').send('all shards are ready')
    : reply.code(503).type('text/plain').send('some shards are not ready')));
}
