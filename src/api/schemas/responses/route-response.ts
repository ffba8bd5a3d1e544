// The kinds of answer a REST route gives on success, as in Qdrant v1.19, and the ones several
// routes share; each route's own is in src/server/route-catalogue.ts. Errors answer ERROR_BODY
// whatever the route (src/server/reply.ts).

import { bool, type Schema } from '../builders.js';
import { UPDATE_RESULT } from './points.js';
import { GROUPS_RESULT, SCORED_POINT_BATCH, SCORED_POINTS } from './search.js';

export type RouteResponse =
  /** Qdrant's envelope around `result`; `accepted`: with `wait=false` the route answers 202 ACCEPTED_BODY instead. */
  | { kind: 'envelope'; result: Schema; accepted?: true }
  /** A JSON body without the envelope (only GET /). */
  | { kind: 'json'; body: Schema }
  /** Plain text of this content type (health probes, Prometheus metrics). */
  | { kind: 'text'; contentType: string }
  /** A snapshot file (application/octet-stream). */
  | { kind: 'file' };

export const result = (schema: Schema): RouteResponse => ({ kind: 'envelope', result: schema });
/** Snapshot jobs, which `wait=false` answers at once. */
export const job = (schema: Schema): RouteResponse => ({ kind: 'envelope', result: schema, accepted: true });
export const TEXT: RouteResponse = { kind: 'text', contentType: 'text/plain' };
export const FILE: RouteResponse = { kind: 'file' };
export const TRUE = result(bool());
export const UPDATE = result(UPDATE_RESULT);
export const SCORED = result(SCORED_POINTS);
export const SCORED_BATCH = result(SCORED_POINT_BATCH);
export const GROUPS = result(GROUPS_RESULT);
