// Kubernetes probes: GET /healthz and /livez answer as soon as the HTTP API serves; GET /readyz
// too, since a single node has no consensus to catch up with and opens every shard before it
// starts listening. Plain-text bodies, as Qdrant sends them.

import type { FastifyInstance, FastifyReply } from 'fastify';

function plain(body: string) {
  return async (_request: unknown, reply: FastifyReply) => reply.type('text/plain').send(body);
}

export function registerHealthRoutes(app: FastifyInstance): void {
  app.get('/healthz', plain('healthz check passed'));
  app.get('/livez', plain('healthz check passed'));
  app.get('/readyz', plain('all shards are ready'));
}
