// Collection names in request paths are checked once for every route, after authentication and
// before the body is read: Qdrant's path extractor refuses them before its handler runs (422
// "Validation error in path parameters: [name: ...]"). Fastify has already percent-decoded the
// parameter, so `%2F` is judged as `/`.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { nameViolations, type NameUse } from '../api/collection-name.js';
import { validationError } from '../api/messages.js';

/** The route parameter that holds a collection (or alias) name in every route that has one. */
export const NAME_PARAM = 'name';

/** Routes that can bring a collection into existence under the path's name: Qdrant's StrictCollectionPath. */
const CREATING_ROUTES = new Set(['PUT /collections/:name', 'POST /collections/:name/snapshots/upload']);

function useOf(request: FastifyRequest): NameUse {
  return CREATING_ROUTES.has(`${request.method} ${request.routeOptions.url}`) ? 'create' : 'refer';
}

/** Must be registered after authentication, whose hooks run first. */
export function registerPathNameCheck(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const name = (request.params as Record<string, string | undefined>)[NAME_PARAM];
    if (name === undefined) return;
    const violations = nameViolations(name, useOf(request));
    if (violations.length > 0) throw validationError(violations.map((message) => ({ path: NAME_PARAM, message })), 'path parameters');
  });
}
