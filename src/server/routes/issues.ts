// GET /issues (problems found in how the node is used) and DELETE /issues (forget them).

import type { FastifyInstance } from 'fastify';
import { accessOf } from '../access.js';
import type { ServerContext } from '../app.js';
import { ok } from '../reply.js';

export function registerIssueRoutes(app: FastifyInstance, { collections, node }: ServerContext): void {
  app.get('/issues', async (request) => {
    // Qdrant shows a collection-scoped key only the issues of its collections; every issue Quiver
    // raises concerns the whole node.
    if (!accessOf(request).nodeWide) return ok(request, { issues: [] });
    const names = collections.names();
    const counts = await Promise.all(names.map((name) => collections.get(name).reader().count(null).catch(() => 0)));
    node.issues.checkCollectionDensity(counts);
    return ok(request, { issues: node.issues.list() });
  });

  app.delete('/issues', async (request) => {
    node.issues.clear();
    return ok(request, true);
  });
}
