// The access every REST endpoint of Qdrant v1.19 requires, in one table keyed by method and path
// pattern, as Qdrant checks them: node-wide operations need a node-wide grant (manage for
// anything that changes the node, its collections' existence or configuration, aliases, shard
// keys, full snapshots, recovery, quotas, cluster membership); operations on one collection need
// an entry for it (write for point changes, extras for snapshots, payload indexes and cluster
// info, which `prw` excludes). Listings are open to every valid key and filtered by what it
// may see. A route missing from the table needs node-wide manage access.

import type { Requirement } from './grant.js';

export type AccessRule =
  /** Any valid key; the handler shows only what the caller may see. */
  | { readonly scope: 'any' }
  | { readonly scope: 'global'; readonly need: Requirement }
  | {
      readonly scope: 'collection';
      readonly need: Requirement;
      /** The body may name other collections (`lookup_from`, `with_lookup`), which need access too. */
      readonly bodyCollections?: boolean;
    };

const READ: Requirement = {};
const WRITE: Requirement = { write: true };
const EXTRAS: Requirement = { extras: true };
const WRITE_EXTRAS: Requirement = { write: true, extras: true };
const MANAGE: Requirement = { manage: true };

const ANY: AccessRule = { scope: 'any' };
const global = (need: Requirement): AccessRule => ({ scope: 'global', need });
const collection = (need: Requirement): AccessRule => ({ scope: 'collection', need });
const SEARCH: AccessRule = { scope: 'collection', need: READ, bodyCollections: true };

/** The route parameter that names the collection an operation is on. */
export const COLLECTION_PARAM = 'collection_name';

const C = `/collections/{${COLLECTION_PARAM}}`;

const RULES: Record<string, AccessRule> = {
  'GET /': ANY,
  'GET /healthz': ANY,
  'GET /livez': ANY,
  'GET /readyz': ANY,
  'GET /telemetry': ANY,
  'GET /metrics': global(READ),
  'GET /issues': ANY,
  'DELETE /issues': global(MANAGE),
  'GET /cluster': global(READ),
  'GET /cluster/telemetry': ANY,
  'POST /cluster/recover': global(MANAGE),
  'DELETE /cluster/peer/{peer_id}': global(MANAGE),
  'GET /quotas': global(READ),
  'PUT /quotas': global(MANAGE),

  'GET /collections': ANY,
  'GET /aliases': ANY,
  'POST /collections/aliases': global(MANAGE),
  [`GET ${C}`]: collection(READ),
  [`PUT ${C}`]: global(MANAGE),
  [`PATCH ${C}`]: global(MANAGE),
  [`DELETE ${C}`]: global(MANAGE),
  [`GET ${C}/exists`]: collection(READ),
  [`GET ${C}/aliases`]: collection(READ),
  [`GET ${C}/optimizations`]: collection(READ),
  [`GET ${C}/cluster`]: collection(EXTRAS),
  [`POST ${C}/cluster`]: collection({ write: true, manage: true, extras: true }),
  [`PUT ${C}/index`]: collection(WRITE_EXTRAS),
  [`DELETE ${C}/index/{field_name}`]: collection(WRITE_EXTRAS),
  [`PUT ${C}/vectors/{vector_name}`]: collection(WRITE_EXTRAS),
  [`DELETE ${C}/vectors/{vector_name}`]: collection(WRITE_EXTRAS),
  [`GET ${C}/shards`]: collection(READ),
  [`PUT ${C}/shards`]: global(MANAGE),
  [`POST ${C}/shards/delete`]: global(MANAGE),

  [`GET ${C}/snapshots`]: collection(EXTRAS),
  [`POST ${C}/snapshots`]: collection(WRITE_EXTRAS),
  [`GET ${C}/snapshots/{snapshot_name}`]: collection(EXTRAS),
  [`DELETE ${C}/snapshots/{snapshot_name}`]: collection(WRITE_EXTRAS),
  [`POST ${C}/snapshots/upload`]: global(MANAGE),
  [`PUT ${C}/snapshots/recover`]: global(MANAGE),
  'GET /snapshots': global(READ),
  'POST /snapshots': global(MANAGE),
  'GET /snapshots/{snapshot_name}': global(READ),
  'DELETE /snapshots/{snapshot_name}': global(MANAGE),
  [`GET ${C}/shards/{shard_id}/snapshot`]: collection(WRITE_EXTRAS),
  [`GET ${C}/shards/{shard_id}/snapshots`]: collection(EXTRAS),
  [`POST ${C}/shards/{shard_id}/snapshots`]: collection(WRITE_EXTRAS),
  [`GET ${C}/shards/{shard_id}/snapshots/{snapshot_name}`]: collection(EXTRAS),
  [`DELETE ${C}/shards/{shard_id}/snapshots/{snapshot_name}`]: collection(WRITE_EXTRAS),
  [`POST ${C}/shards/{shard_id}/snapshots/upload`]: global(MANAGE),
  [`PUT ${C}/shards/{shard_id}/snapshots/recover`]: global(MANAGE),

  [`GET ${C}/points/{id}`]: collection(READ),
  [`POST ${C}/points`]: collection(READ),
  [`POST ${C}/points/scroll`]: collection(READ),
  [`POST ${C}/points/count`]: collection(READ),
  [`POST ${C}/facet`]: collection(READ),
  [`PUT ${C}/points`]: collection(WRITE),
  [`POST ${C}/points/delete`]: collection(WRITE),
  [`PUT ${C}/points/vectors`]: collection(WRITE),
  [`POST ${C}/points/vectors/delete`]: collection(WRITE),
  [`POST ${C}/points/payload`]: collection(WRITE),
  [`PUT ${C}/points/payload`]: collection(WRITE),
  [`POST ${C}/points/payload/delete`]: collection(WRITE),
  [`POST ${C}/points/payload/clear`]: collection(WRITE),
  [`POST ${C}/points/batch`]: collection(WRITE),
  [`POST ${C}/points/search`]: SEARCH,
  [`POST ${C}/points/search/batch`]: SEARCH,
  [`POST ${C}/points/search/groups`]: SEARCH,
  [`POST ${C}/points/search/matrix/pairs`]: SEARCH,
  [`POST ${C}/points/search/matrix/offsets`]: SEARCH,
  [`POST ${C}/points/recommend`]: SEARCH,
  [`POST ${C}/points/recommend/batch`]: SEARCH,
  [`POST ${C}/points/recommend/groups`]: SEARCH,
  [`POST ${C}/points/discover`]: SEARCH,
  [`POST ${C}/points/discover/batch`]: SEARCH,
  [`POST ${C}/points/query`]: SEARCH,
  [`POST ${C}/points/query/batch`]: SEARCH,
  [`POST ${C}/points/query/groups`]: SEARCH,
};

/** Unlisted routes: the safe default. */
const DEFAULT_RULE = { scope: 'global', need: MANAGE } as const satisfies AccessRule;

/** `/a/{x}/b` and `/a/:x/b` have one shape, `/a/{}/b`, so Fastify's routes find their entry. */
function shapeOf(pattern: string): string {
  return pattern.replace(/\{[^/}]+\}|:[^/]+/g, '{}');
}

const BY_SHAPE = new Map(Object.entries(RULES).map(([key, rule]) => {
  const [method, pattern] = key.split(' ');
  return [`${method} ${shapeOf(pattern)}`, { pattern, rule }];
}));

type CollectionRule = Extract<AccessRule, { scope: 'collection' }>;

/** A route's rule; a collection rule also names the Fastify route parameter holding the collection. */
export type RouteAccess = Exclude<AccessRule, CollectionRule> | (CollectionRule & { readonly param: string });

/** The access a route needs, from its method and its Fastify URL pattern (`/collections/:name`). */
export function routeAccess(method: string, url: string): RouteAccess {
  const entry = BY_SHAPE.get(`${method === 'HEAD' ? 'GET' : method} ${shapeOf(url)}`);
  if (entry === undefined) return DEFAULT_RULE;
  if (entry.rule.scope !== 'collection') return entry.rule;
  // Collection rules are all under /collections/{collection_name}, so the segment exists.
  const segment = entry.pattern.split('/').indexOf(`{${COLLECTION_PARAM}}`);
  return { ...entry.rule, param: url.split('/')[segment].slice(1) };
}

/** Paths Qdrant serves without a key whatever the method: the root and the health probes. */
export function isExemptPath(path: string): boolean {
  return path === '/' || path === '/healthz' || path.startsWith('/readyz') || path.startsWith('/livez');
}
