// Every route of the REST API in one table, keyed by method and Fastify URL pattern, as in Qdrant
// v1.19: the query parameters it reads (checked before any handler runs, see query-params.ts), the
// access it requires when the node has a key (auth/hook.ts), and what it answers on success
// (src/api/schemas/responses). A route registered without an entry stops the server at
// start-up, so no route can forget one of the three.

import type { FastifyInstance } from 'fastify';
import {
  CLUSTER_TELEMETRY_PARAMS, COMMIT_PARAMS, METADATA_PARAMS, METRICS_PARAMS, PEER_REMOVAL_PARAMS, NO_PARAMS, OPTIMIZATIONS_PARAMS, POINT_READ_PARAMS, QUOTA_PARAMS,
  READ_PARAMS, SNAPSHOT_PARAMS, SNAPSHOT_UPLOAD_PARAMS, TELEMETRY_PARAMS, WRITE_PARAMS,
} from '../api/validator.js';
import type { QueryParamSet } from '../api/schemas/query.js';
import { bool, seq, str } from '../api/schemas/builders.js';
import { COLLECTION_CLUSTER_INFO, CLUSTER_STATUS, SHARD_KEYS_RESPONSE } from '../api/schemas/responses/cluster.js';
import { ALIASES_RESPONSE, COLLECTION_EXISTENCE, COLLECTION_INFO, COLLECTIONS_RESPONSE } from '../api/schemas/responses/collection.js';
import { OPTIMIZATIONS_RESPONSE } from '../api/schemas/responses/optimizations.js';
import { COUNT_RESULT, FACET_RESPONSE, RECORD, SCROLL_RESULT, UPDATE_RESULT } from '../api/schemas/responses/points.js';
import {
  FILE, GROUPS, job, result, SCORED, SCORED_BATCH, TEXT, TRUE, UPDATE, type RouteResponse,
} from '../api/schemas/responses/route-response.js';
import { MATRIX_OFFSETS, MATRIX_PAIRS, QUERY_RESPONSE } from '../api/schemas/responses/search.js';
import { ISSUES_REPORT, QUOTA_STATUS, SNAPSHOT_DESCRIPTION, SNAPSHOT_LIST, VERSION_INFO } from '../api/schemas/responses/service.js';
import { DISTRIBUTED_TELEMETRY_DATA, TELEMETRY_DATA } from '../api/schemas/responses/telemetry.js';
import {
  ANY, collection, EXTRAS, global, MANAGE, READ, SEARCH, WRITE, WRITE_EXTRAS, type AccessRule,
} from './auth/requirements.js';

export interface RouteSpec {
  readonly params: QueryParamSet;
  readonly access: AccessRule;
  readonly response: RouteResponse;
}

export interface RouteEntry extends RouteSpec {
  readonly method: string;
  /** Fastify's URL pattern, path parameters as `:name`. */
  readonly url: string;
}

const route = (params: QueryParamSet, access: AccessRule, response: RouteResponse): RouteSpec => ({ params, access, response });

/** The path parameter naming the collection of every collection route. */
export const COLLECTION_PARAM = 'name';

const C = `/collections/:${COLLECTION_PARAM}`;
const SHARD = `${C}/shards/:shard`;

const ROUTES: Readonly<Record<string, RouteSpec>> = {
  'GET /': route(NO_PARAMS, ANY, { kind: 'json', body: VERSION_INFO }),
  'GET /healthz': route(NO_PARAMS, ANY, TEXT),
  'GET /livez': route(NO_PARAMS, ANY, TEXT),
  'GET /readyz': route(NO_PARAMS, ANY, TEXT),
  'GET /telemetry': route(TELEMETRY_PARAMS, ANY, result(TELEMETRY_DATA)),
  'GET /metrics': route(METRICS_PARAMS, global(READ), { kind: 'text', contentType: 'text/plain; version=0.0.4' }),
  'GET /issues': route(NO_PARAMS, ANY, result(ISSUES_REPORT)),
  'DELETE /issues': route(NO_PARAMS, global(MANAGE), TRUE),
  'GET /cluster': route(NO_PARAMS, global(READ), result(CLUSTER_STATUS)),
  'GET /cluster/telemetry': route(CLUSTER_TELEMETRY_PARAMS, ANY, result(DISTRIBUTED_TELEMETRY_DATA)),
  // The metadata keys: a listing, any JSON value (null for a key without one), `true` once stored.
  'GET /cluster/metadata/keys': route(NO_PARAMS, global(READ), result(seq(str()))),
  'GET /cluster/metadata/keys/:key': route(NO_PARAMS, global(READ), result(true)),
  'PUT /cluster/metadata/keys/:key': route(METADATA_PARAMS, global(WRITE), TRUE),
  'DELETE /cluster/metadata/keys/:key': route(METADATA_PARAMS, global(WRITE), TRUE),
  'DELETE /cluster/peer/:peer_id': route(PEER_REMOVAL_PARAMS, global(MANAGE), TRUE),
  'POST /cluster/recover': route(NO_PARAMS, global(MANAGE), TRUE),
  'GET /quotas': route(NO_PARAMS, global(READ), result(QUOTA_STATUS)),
  'PUT /quotas': route(QUOTA_PARAMS, global(MANAGE), TRUE),

  'GET /collections': route(NO_PARAMS, ANY, result(COLLECTIONS_RESPONSE)),
  'GET /aliases': route(NO_PARAMS, ANY, result(ALIASES_RESPONSE)),
  'POST /collections/aliases': route(COMMIT_PARAMS, global(MANAGE), TRUE),
  [`GET ${C}`]: route(NO_PARAMS, collection(READ), result(COLLECTION_INFO)),
  [`PUT ${C}`]: route(COMMIT_PARAMS, global(MANAGE), TRUE),
  [`PATCH ${C}`]: route(COMMIT_PARAMS, global(MANAGE), TRUE),
  [`DELETE ${C}`]: route(COMMIT_PARAMS, global(MANAGE), TRUE),
  [`GET ${C}/exists`]: route(NO_PARAMS, collection(READ), result(COLLECTION_EXISTENCE)),
  [`GET ${C}/aliases`]: route(NO_PARAMS, collection(READ), result(ALIASES_RESPONSE)),
  [`GET ${C}/optimizations`]: route(OPTIMIZATIONS_PARAMS, collection(READ), result(OPTIMIZATIONS_RESPONSE)),
  [`GET ${C}/cluster`]: route(NO_PARAMS, collection(EXTRAS), result(COLLECTION_CLUSTER_INFO)),
  // Qdrant asks write, manage and extras of the collection (only a node-wide manage grant has manage).
  [`POST ${C}/cluster`]: route(COMMIT_PARAMS, collection({ write: true, extras: true, manage: true }), TRUE),
  [`PUT ${C}/index`]: route(WRITE_PARAMS, collection(WRITE_EXTRAS), UPDATE),
  [`DELETE ${C}/index/:field`]: route(WRITE_PARAMS, collection(WRITE_EXTRAS), UPDATE),
  [`PUT ${C}/vectors/:vector`]: route(WRITE_PARAMS, collection(WRITE_EXTRAS), UPDATE),
  [`DELETE ${C}/vectors/:vector`]: route(WRITE_PARAMS, collection(WRITE_EXTRAS), UPDATE),
  [`GET ${C}/shards`]: route(NO_PARAMS, collection(READ), result(SHARD_KEYS_RESPONSE)),
  [`PUT ${C}/shards`]: route(COMMIT_PARAMS, global(MANAGE), TRUE),
  [`POST ${C}/shards/delete`]: route(COMMIT_PARAMS, global(MANAGE), TRUE),

  'GET /snapshots': route(NO_PARAMS, global(READ), result(SNAPSHOT_LIST)),
  'POST /snapshots': route(SNAPSHOT_PARAMS, global(MANAGE), job(SNAPSHOT_DESCRIPTION)),
  'GET /snapshots/:snapshot': route(NO_PARAMS, global(READ), FILE),
  'DELETE /snapshots/:snapshot': route(SNAPSHOT_PARAMS, global(MANAGE), job(bool())),
  [`GET ${C}/snapshots`]: route(NO_PARAMS, collection(EXTRAS), result(SNAPSHOT_LIST)),
  [`POST ${C}/snapshots`]: route(SNAPSHOT_PARAMS, collection(WRITE_EXTRAS), job(SNAPSHOT_DESCRIPTION)),
  [`GET ${C}/snapshots/:snapshot`]: route(NO_PARAMS, collection(EXTRAS), FILE),
  [`DELETE ${C}/snapshots/:snapshot`]: route(SNAPSHOT_PARAMS, collection(WRITE_EXTRAS), job(bool())),
  [`PUT ${C}/snapshots/recover`]: route(SNAPSHOT_PARAMS, global(MANAGE), job(bool())),
  [`POST ${C}/snapshots/upload`]: route(SNAPSHOT_UPLOAD_PARAMS, global(MANAGE), job(bool())),
  [`GET ${SHARD}/snapshot`]: route(NO_PARAMS, collection(WRITE_EXTRAS), FILE),
  [`GET ${SHARD}/snapshots`]: route(NO_PARAMS, collection(EXTRAS), result(SNAPSHOT_LIST)),
  [`POST ${SHARD}/snapshots`]: route(SNAPSHOT_PARAMS, collection(WRITE_EXTRAS), job(SNAPSHOT_DESCRIPTION)),
  [`GET ${SHARD}/snapshots/:snapshot`]: route(NO_PARAMS, collection(EXTRAS), FILE),
  [`DELETE ${SHARD}/snapshots/:snapshot`]: route(SNAPSHOT_PARAMS, collection(WRITE_EXTRAS), job(bool())),
  [`PUT ${SHARD}/snapshots/recover`]: route(SNAPSHOT_PARAMS, global(MANAGE), job(bool())),
  [`POST ${SHARD}/snapshots/upload`]: route(SNAPSHOT_UPLOAD_PARAMS, global(MANAGE), job(bool())),

  [`GET ${C}/points/:id`]: route(POINT_READ_PARAMS, collection(READ), result(RECORD)),
  [`POST ${C}/points`]: route(READ_PARAMS, collection(READ), result(seq(RECORD))),
  [`POST ${C}/points/scroll`]: route(READ_PARAMS, collection(READ), result(SCROLL_RESULT)),
  [`POST ${C}/points/count`]: route(READ_PARAMS, collection(READ), result(COUNT_RESULT)),
  [`POST ${C}/facet`]: route(READ_PARAMS, collection(READ), result(FACET_RESPONSE)),
  [`PUT ${C}/points`]: route(WRITE_PARAMS, collection(WRITE), UPDATE),
  [`POST ${C}/points/delete`]: route(WRITE_PARAMS, collection(WRITE), UPDATE),
  [`PUT ${C}/points/vectors`]: route(WRITE_PARAMS, collection(WRITE), UPDATE),
  [`POST ${C}/points/vectors/delete`]: route(WRITE_PARAMS, collection(WRITE), UPDATE),
  [`POST ${C}/points/payload`]: route(WRITE_PARAMS, collection(WRITE), UPDATE),
  [`PUT ${C}/points/payload`]: route(WRITE_PARAMS, collection(WRITE), UPDATE),
  [`POST ${C}/points/payload/delete`]: route(WRITE_PARAMS, collection(WRITE), UPDATE),
  [`POST ${C}/points/payload/clear`]: route(WRITE_PARAMS, collection(WRITE), UPDATE),
  [`POST ${C}/points/batch`]: route(WRITE_PARAMS, collection(WRITE), result(seq(UPDATE_RESULT))),
  [`POST ${C}/points/search`]: route(READ_PARAMS, SEARCH, SCORED),
  [`POST ${C}/points/search/batch`]: route(READ_PARAMS, SEARCH, SCORED_BATCH),
  [`POST ${C}/points/search/groups`]: route(READ_PARAMS, SEARCH, GROUPS),
  [`POST ${C}/points/search/matrix/pairs`]: route(READ_PARAMS, SEARCH, result(MATRIX_PAIRS)),
  [`POST ${C}/points/search/matrix/offsets`]: route(READ_PARAMS, SEARCH, result(MATRIX_OFFSETS)),
  [`POST ${C}/points/recommend`]: route(READ_PARAMS, SEARCH, SCORED),
  [`POST ${C}/points/recommend/batch`]: route(READ_PARAMS, SEARCH, SCORED_BATCH),
  [`POST ${C}/points/recommend/groups`]: route(READ_PARAMS, SEARCH, GROUPS),
  [`POST ${C}/points/discover`]: route(READ_PARAMS, SEARCH, SCORED),
  [`POST ${C}/points/discover/batch`]: route(READ_PARAMS, SEARCH, SCORED_BATCH),
  [`POST ${C}/points/query`]: route(READ_PARAMS, SEARCH, result(QUERY_RESPONSE)),
  [`POST ${C}/points/query/batch`]: route(READ_PARAMS, SEARCH, result(seq(QUERY_RESPONSE))),
  [`POST ${C}/points/query/groups`]: route(READ_PARAMS, SEARCH, GROUPS),
};

/** Every route of the REST API. */
export function routeCatalogue(): RouteEntry[] {
  return Object.entries(ROUTES).map(([key, spec]) => {
    const [method, url] = key.split(' ');
    return { method, url, ...spec };
  });
}

/** Route `METHOD url`'s entry (Fastify's HEAD routes share their GET's); every registered route has one. */
export function routeSpec(method: string, url: string): RouteSpec | undefined {
  return ROUTES[`${method === 'HEAD' ? 'GET' : method} ${url}`];
}

/** Must be registered before the routes: a route without an entry stops the server at start-up. */
export function requireCatalogueEntries(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (routeSpec(method, route.url) === undefined) throw new Error(`route ${method} ${route.url} has no entry in the route catalogue`);
    }
  });
}
