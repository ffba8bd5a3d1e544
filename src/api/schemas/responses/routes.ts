// What every REST route answers on success, by method and Fastify URL pattern (the keys of the
// route tables in src/server/query-params.ts and src/server/auth/requirements.ts), as in Qdrant
// v1.19. Errors answer ERROR_BODY whatever the route (src/server/reply.ts).

import { bool, seq } from '../builders.js';
import { COLLECTION_CLUSTER_INFO, CLUSTER_STATUS, SHARD_KEYS_RESPONSE } from './cluster.js';
import { ALIASES_RESPONSE, COLLECTION_EXISTENCE, COLLECTION_INFO, COLLECTIONS_RESPONSE } from './collection.js';
import { OPTIMIZATIONS_RESPONSE } from './optimizations.js';
import { COUNT_RESULT, FACET_RESPONSE, RECORD, SCROLL_RESULT, UPDATE_RESULT } from './points.js';
import { GROUPS_RESULT, MATRIX_OFFSETS, MATRIX_PAIRS, QUERY_RESPONSE, SCORED_POINT_BATCH, SCORED_POINTS } from './search.js';
import { ISSUES_REPORT, QUOTA_STATUS, SNAPSHOT_DESCRIPTION, SNAPSHOT_LIST, VERSION_INFO } from './service.js';
import type { Schema } from '../builders.js';
import { DISTRIBUTED_TELEMETRY_DATA, TELEMETRY_DATA } from './telemetry.js';

export type RouteResponse =
  /** Qdrant's envelope around `result`; `accepted`: with `wait=false` the route answers 202 ACCEPTED_BODY instead. */
  | { kind: 'envelope'; result: Schema; accepted?: true }
  /** A JSON body without the envelope (only GET /). */
  | { kind: 'json'; body: Schema }
  /** Plain text of this content type (health probes, Prometheus metrics). */
  | { kind: 'text'; contentType: string }
  /** A snapshot file (application/octet-stream). */
  | { kind: 'file' };

const result = (schema: Schema): RouteResponse => ({ kind: 'envelope', result: schema });
/** Snapshot jobs, which `wait=false` answers at once. */
const job = (schema: Schema): RouteResponse => ({ kind: 'envelope', result: schema, accepted: true });
const TEXT: RouteResponse = { kind: 'text', contentType: 'text/plain' };
const FILE: RouteResponse = { kind: 'file' };
const TRUE = result(bool());
const UPDATE = result(UPDATE_RESULT);
const SCORED = result(SCORED_POINTS);
const SCORED_BATCH = result(SCORED_POINT_BATCH);
const GROUPS = result(GROUPS_RESULT);

const C = '/collections/:name';
const SHARD = `${C}/shards/:shard`;

export const RESPONSE_SCHEMAS: Readonly<Record<string, RouteResponse>> = {
  'GET /': { kind: 'json', body: VERSION_INFO },
  'GET /healthz': TEXT,
  'GET /livez': TEXT,
  'GET /readyz': TEXT,
  'GET /telemetry': result(TELEMETRY_DATA),
  'GET /metrics': { kind: 'text', contentType: 'text/plain; version=0.0.4' },
  'GET /issues': result(ISSUES_REPORT),
  'DELETE /issues': TRUE,
  'GET /cluster': result(CLUSTER_STATUS),
  'GET /cluster/telemetry': result(DISTRIBUTED_TELEMETRY_DATA),
  'GET /quotas': result(QUOTA_STATUS),
  'PUT /quotas': TRUE,

  'GET /collections': result(COLLECTIONS_RESPONSE),
  'GET /aliases': result(ALIASES_RESPONSE),
  'POST /collections/aliases': TRUE,
  [`GET ${C}`]: result(COLLECTION_INFO),
  [`PUT ${C}`]: TRUE,
  [`PATCH ${C}`]: TRUE,
  [`DELETE ${C}`]: TRUE,
  [`GET ${C}/exists`]: result(COLLECTION_EXISTENCE),
  [`GET ${C}/aliases`]: result(ALIASES_RESPONSE),
  [`GET ${C}/optimizations`]: result(OPTIMIZATIONS_RESPONSE),
  [`GET ${C}/cluster`]: result(COLLECTION_CLUSTER_INFO),
  [`PUT ${C}/index`]: UPDATE,
  [`DELETE ${C}/index/:field`]: UPDATE,
  [`GET ${C}/shards`]: result(SHARD_KEYS_RESPONSE),
  [`PUT ${C}/shards`]: TRUE,
  [`POST ${C}/shards/delete`]: TRUE,

  'GET /snapshots': result(SNAPSHOT_LIST),
  'POST /snapshots': job(SNAPSHOT_DESCRIPTION),
  'GET /snapshots/:snapshot': FILE,
  'DELETE /snapshots/:snapshot': job(bool()),
  [`GET ${C}/snapshots`]: result(SNAPSHOT_LIST),
  [`POST ${C}/snapshots`]: job(SNAPSHOT_DESCRIPTION),
  [`GET ${C}/snapshots/:snapshot`]: FILE,
  [`DELETE ${C}/snapshots/:snapshot`]: job(bool()),
  [`PUT ${C}/snapshots/recover`]: job(bool()),
  [`POST ${C}/snapshots/upload`]: job(bool()),
  [`GET ${SHARD}/snapshot`]: FILE,
  [`GET ${SHARD}/snapshots`]: result(SNAPSHOT_LIST),
  [`POST ${SHARD}/snapshots`]: job(SNAPSHOT_DESCRIPTION),
  [`GET ${SHARD}/snapshots/:snapshot`]: FILE,
  [`DELETE ${SHARD}/snapshots/:snapshot`]: job(bool()),
  [`PUT ${SHARD}/snapshots/recover`]: job(bool()),
  [`POST ${SHARD}/snapshots/upload`]: job(bool()),

  [`GET ${C}/points/:id`]: result(RECORD),
  [`POST ${C}/points`]: result(seq(RECORD)),
  [`POST ${C}/points/scroll`]: result(SCROLL_RESULT),
  [`POST ${C}/points/count`]: result(COUNT_RESULT),
  [`POST ${C}/facet`]: result(FACET_RESPONSE),
  [`PUT ${C}/points`]: UPDATE,
  [`POST ${C}/points/delete`]: UPDATE,
  [`PUT ${C}/points/vectors`]: UPDATE,
  [`POST ${C}/points/vectors/delete`]: UPDATE,
  [`POST ${C}/points/payload`]: UPDATE,
  [`PUT ${C}/points/payload`]: UPDATE,
  [`POST ${C}/points/payload/delete`]: UPDATE,
  [`POST ${C}/points/payload/clear`]: UPDATE,
  [`POST ${C}/points/batch`]: result(seq(UPDATE_RESULT)),
  [`POST ${C}/points/search`]: SCORED,
  [`POST ${C}/points/search/batch`]: SCORED_BATCH,
  [`POST ${C}/points/search/groups`]: GROUPS,
  [`POST ${C}/points/search/matrix/pairs`]: result(MATRIX_PAIRS),
  [`POST ${C}/points/search/matrix/offsets`]: result(MATRIX_OFFSETS),
  [`POST ${C}/points/recommend`]: SCORED,
  [`POST ${C}/points/recommend/batch`]: SCORED_BATCH,
  [`POST ${C}/points/recommend/groups`]: GROUPS,
  [`POST ${C}/points/discover`]: SCORED,
  [`POST ${C}/points/discover/batch`]: SCORED_BATCH,
  [`POST ${C}/points/query`]: result(QUERY_RESPONSE),
  [`POST ${C}/points/query/batch`]: result(seq(QUERY_RESPONSE)),
  [`POST ${C}/points/query/groups`]: GROUPS,
};
