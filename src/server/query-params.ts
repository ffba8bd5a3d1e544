// The query parameters of every route (route-catalogue.ts), checked before any handler runs: a
// value of the wrong type is Qdrant's 400 "Deserialize error in query parameters: ..." whichever
// route it is sent to. Handlers read their typed values with `query()` (routes/params.ts).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { validateQuery } from '../api/validator.js';
import type { RawQuery } from '../api/schemas/query.js';
import { routeSpec } from './route-catalogue.js';

export function registerQueryCheck(app: FastifyInstance): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const url = request.routeOptions.url;
    // Unmatched paths answer 404 whatever their query string holds.
    if (url === undefined) return;
    validateQuery(routeSpec(request.method, url)!.params, request.query as RawQuery);
  });
}
