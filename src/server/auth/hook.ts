// Authentication and authorization of every request, when the node has a key: who the caller is
// (before the body is read), whether its grant covers the route's requirement, and for searches
// whether it covers the other collections the body reads. The caller's grant also decides what
// listings show (src/server/access.ts).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerContext } from '../app.js';
import { setAccess } from '../access.js';
import { referencedCollections } from './body-collections.js';
import { checkCollection, checkGlobal, requestAccess, type Grant } from './grant.js';
import { NodeKeys } from './keys.js';
import { COLLECTION_PARAM, routeSpec } from '../route-catalogue.js';
import { isExemptPath, type AccessRule } from './requirements.js';

export interface ProtectedRoute {
  method: string;
  url: string;
  access: AccessRule;
}

const routesOf = new WeakMap<FastifyInstance, Map<string, ProtectedRoute>>();

/** Every route of the app with the access it requires (filled as routes register). */
export function protectedRoutes(app: FastifyInstance): ProtectedRoute[] {
  return [...(routesOf.get(app)?.values() ?? [])];
}

const grants = new WeakMap<FastifyRequest, Grant>();

/** Must run before the routes register, so that each one gets its access rule. */
export function registerAuth(app: FastifyInstance, { config, collections }: ServerContext): void {
  const routes = new Map<string, ProtectedRoute>();
  routesOf.set(app, routes);
  app.addHook('onRoute', (route) => {
    // The query parameter check (query-params.ts) has already refused a route without an entry.
    for (const method of [route.method].flat()) routes.set(`${method} ${route.url}`, { method, url: route.url, access: routeSpec(method, route.url)!.access });
  });

  const keys = new NodeKeys(config, collections);
  if (!keys.enabled) return;
  const targetOf = (name: string): string | undefined => (collections.exists(name) ? collections.resolve(name) : undefined);
  // Matched routes only: an unknown path needs nothing beyond a valid key, its answer is a 404.
  const ruleOf = (request: FastifyRequest): AccessRule | undefined => {
    const url = request.routeOptions.url;
    return url === undefined ? undefined : routes.get(`${request.method} ${url}`)?.access;
  };
  const collectionOf = (request: FastifyRequest): string => (request.params as Record<string, string>)[COLLECTION_PARAM];

  app.addHook('onRequest', async (request) => {
    if (isExemptPath(request.url.split('?')[0])) return;
    const grant = await keys.authenticate(request.headers);
    grants.set(request, grant);
    setAccess(request, requestAccess(grant, targetOf));
    const route = ruleOf(request);
    if (route === undefined) return;
    if (route.scope === 'global') checkGlobal(grant, route.need);
    else if (route.scope === 'collection') {
      const name = collectionOf(request);
      checkCollection(grant, name, targetOf(name), route.need);
    }
  });

  app.addHook('preHandler', async (request) => {
    const grant = grants.get(request);
    const route = ruleOf(request);
    if (grant === undefined || 'global' in grant || route?.scope !== 'collection' || !route.bodyCollections) return;
    for (const name of referencedCollections(request.body)) checkCollection(grant, name, targetOf(name), {});
  });
}
