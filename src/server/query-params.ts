// The query parameters of every route, in one table, checked before any handler runs: a value of
// the wrong type is Qdrant's 400 "Deserialize error in query parameters: ..." whichever route it
// is sent to. A route registered without an entry stops the server at start-up, so no route can
// forget its parameters. Handlers read their typed values with `query()` (routes/params.ts).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  CLUSTER_TELEMETRY_PARAMS, COMMIT_PARAMS, METRICS_PARAMS, NO_PARAMS, OPTIMIZATIONS_PARAMS, POINT_READ_PARAMS, QUOTA_PARAMS,
  READ_PARAMS, SNAPSHOT_PARAMS, SNAPSHOT_UPLOAD_PARAMS, TELEMETRY_PARAMS, validateQuery, WRITE_PARAMS,
} from '../api/validator.js';
import type { QueryParamSet, RawQuery } from '../api/schemas/query.js';

const C = '/collections/:name';
const SHARD = `${C}/shards/:shard`;

/** Each route's parameters, by method and Fastify URL pattern, as in Qdrant v1.19's REST API. */
const ROUTE_PARAMS: Record<string, QueryParamSet> = {
  'GET /': NO_PARAMS,
  'GET /healthz': NO_PARAMS,
  'GET /livez': NO_PARAMS,
  'GET /readyz': NO_PARAMS,
  'GET /telemetry': TELEMETRY_PARAMS,
  'GET /metrics': METRICS_PARAMS,
  'GET /issues': NO_PARAMS,
  'DELETE /issues': NO_PARAMS,
  'GET /cluster': NO_PARAMS,
  'GET /cluster/telemetry': CLUSTER_TELEMETRY_PARAMS,
  'GET /quotas': NO_PARAMS,
  'PUT /quotas': QUOTA_PARAMS,

  'GET /collections': NO_PARAMS,
  'GET /aliases': NO_PARAMS,
  'POST /collections/aliases': COMMIT_PARAMS,
  [`GET ${C}`]: NO_PARAMS,
  [`PUT ${C}`]: COMMIT_PARAMS,
  [`PATCH ${C}`]: COMMIT_PARAMS,
  [`DELETE ${C}`]: COMMIT_PARAMS,
  [`GET ${C}/exists`]: NO_PARAMS,
  [`GET ${C}/aliases`]: NO_PARAMS,
  [`GET ${C}/optimizations`]: OPTIMIZATIONS_PARAMS,
  [`GET ${C}/cluster`]: NO_PARAMS,
  [`PUT ${C}/index`]: WRITE_PARAMS,
  [`DELETE ${C}/index/:field`]: WRITE_PARAMS,
  [`PUT ${C}/vectors/:vector`]: WRITE_PARAMS,
  [`DELETE ${C}/vectors/:vector`]: WRITE_PARAMS,
  [`GET ${C}/shards`]: NO_PARAMS,
  [`PUT ${C}/shards`]: COMMIT_PARAMS,
  [`POST ${C}/shards/delete`]: COMMIT_PARAMS,

  'GET /snapshots': NO_PARAMS,
  'POST /snapshots': SNAPSHOT_PARAMS,
  'GET /snapshots/:snapshot': NO_PARAMS,
  'DELETE /snapshots/:snapshot': SNAPSHOT_PARAMS,
  [`GET ${C}/snapshots`]: NO_PARAMS,
  [`POST ${C}/snapshots`]: SNAPSHOT_PARAMS,
  [`GET ${C}/snapshots/:snapshot`]: NO_PARAMS,
  [`DELETE ${C}/snapshots/:snapshot`]: SNAPSHOT_PARAMS,
  [`PUT ${C}/snapshots/recover`]: SNAPSHOT_PARAMS,
  [`POST ${C}/snapshots/upload`]: SNAPSHOT_UPLOAD_PARAMS,
  [`GET ${SHARD}/snapshot`]: NO_PARAMS,
  [`GET ${SHARD}/snapshots`]: NO_PARAMS,
  [`POST ${SHARD}/snapshots`]: SNAPSHOT_PARAMS,
  [`GET ${SHARD}/snapshots/:snapshot`]: NO_PARAMS,
  [`DELETE ${SHARD}/snapshots/:snapshot`]: SNAPSHOT_PARAMS,
  [`PUT ${SHARD}/snapshots/recover`]: SNAPSHOT_PARAMS,
  [`POST ${SHARD}/snapshots/upload`]: SNAPSHOT_UPLOAD_PARAMS,

  [`GET ${C}/points/:id`]: POINT_READ_PARAMS,
  [`POST ${C}/points`]: READ_PARAMS,
  [`POST ${C}/points/scroll`]: READ_PARAMS,
  [`POST ${C}/points/count`]: READ_PARAMS,
  [`POST ${C}/facet`]: READ_PARAMS,
  [`PUT ${C}/points`]: WRITE_PARAMS,
  [`POST ${C}/points/delete`]: WRITE_PARAMS,
  [`PUT ${C}/points/vectors`]: WRITE_PARAMS,
  [`POST ${C}/points/vectors/delete`]: WRITE_PARAMS,
  [`POST ${C}/points/payload`]: WRITE_PARAMS,
  [`PUT ${C}/points/payload`]: WRITE_PARAMS,
  [`POST ${C}/points/payload/delete`]: WRITE_PARAMS,
  [`POST ${C}/points/payload/clear`]: WRITE_PARAMS,
  [`POST ${C}/points/batch`]: WRITE_PARAMS,
  [`POST ${C}/points/search`]: READ_PARAMS,
  [`POST ${C}/points/search/batch`]: READ_PARAMS,
  [`POST ${C}/points/search/groups`]: READ_PARAMS,
  [`POST ${C}/points/search/matrix/pairs`]: READ_PARAMS,
  [`POST ${C}/points/search/matrix/offsets`]: READ_PARAMS,
  [`POST ${C}/points/recommend`]: READ_PARAMS,
  [`POST ${C}/points/recommend/batch`]: READ_PARAMS,
  [`POST ${C}/points/recommend/groups`]: READ_PARAMS,
  [`POST ${C}/points/discover`]: READ_PARAMS,
  [`POST ${C}/points/discover/batch`]: READ_PARAMS,
  [`POST ${C}/points/query`]: READ_PARAMS,
  [`POST ${C}/points/query/batch`]: READ_PARAMS,
  [`POST ${C}/points/query/groups`]: READ_PARAMS,
};

export interface RouteEntry {
  method: string;
  /** Fastify's URL pattern, path parameters as `:name`. */
  url: string;
  params: QueryParamSet;
}

/** Every route of the REST API with its query parameters (the table the server checks its routes against). */
export function routeTable(): RouteEntry[] {
  return Object.entries(ROUTE_PARAMS).map(([key, params]) => {
    const [method, url] = key.split(' ');
    return { method, url, params };
  });
}

function keyOf(method: string, url: string): string {
  // Fastify adds a HEAD route for each GET one; it reads what the GET reads.
  return `${method === 'HEAD' ? 'GET' : method} ${url}`;
}

/** The query parameters route `METHOD url` reads; every registered route has an entry. */
export function routeQueryParams(method: string, url: string): QueryParamSet | undefined {
  return ROUTE_PARAMS[keyOf(method, url)];
}

/** Must be registered before the routes, so that each route is checked for an entry as it registers. */
export function registerQueryCheck(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (routeQueryParams(method, route.url) === undefined) throw new Error(`route ${method} ${route.url} has no entry in the query parameter table`);
    }
  });
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const url = request.routeOptions.url;
    // Unmatched paths answer 404 whatever their query string holds.
    if (url === undefined) return;
    validateQuery(routeQueryParams(request.method, url)!, request.query as RawQuery);
  });
}
