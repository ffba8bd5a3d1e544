// The REST responses Qdrant's `rest_responses_*` metric families report (its selection of point
// and search endpoints), and their duration histogram: a prom-client Histogram observed as each
// response is answered, so it counts every response since start as Qdrant's does.

import { Histogram } from 'prom-client';

/** The REST endpoints Qdrant reports response metrics for. */
export const REPORTED_ENDPOINTS = new Set([
  '/collections/{collection_name}/index',
  '/collections/{collection_name}/points',
  '/collections/{collection_name}/points/batch',
  '/collections/{collection_name}/points/count',
  '/collections/{collection_name}/points/delete',
  '/collections/{collection_name}/points/discover',
  '/collections/{collection_name}/points/discover/batch',
  '/collections/{collection_name}/points/facet',
  '/collections/{collection_name}/points/payload',
  '/collections/{collection_name}/points/payload/clear',
  '/collections/{collection_name}/points/payload/delete',
  '/collections/{collection_name}/points/query',
  '/collections/{collection_name}/points/query/batch',
  '/collections/{collection_name}/points/query/groups',
  '/collections/{collection_name}/points/recommend',
  '/collections/{collection_name}/points/recommend/batch',
  '/collections/{collection_name}/points/recommend/groups',
  '/collections/{collection_name}/points/scroll',
  '/collections/{collection_name}/points/search',
  '/collections/{collection_name}/points/search/batch',
  '/collections/{collection_name}/points/search/groups',
  '/collections/{collection_name}/points/search/matrix/offsets',
  '/collections/{collection_name}/points/search/matrix/pairs',
  '/collections/{collection_name}/points/vectors',
  '/collections/{collection_name}/points/vectors/delete',
]);

/** Qdrant exports timings only for successful responses. */
export const TIMED_STATUS = 200;

/** Upper bounds (seconds) of the duration histogram buckets Qdrant exports. */
const DURATION_BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 5, 10, 50];

export type ResponseLabel = 'method' | 'endpoint' | 'status';

/** A `rest_responses_duration_seconds` histogram of its own, in no registry until a scrape adds it. */
export function responseDurationHistogram(): Histogram<ResponseLabel> {
  return new Histogram({
    name: 'rest_responses_duration_seconds',
    help: 'response duration histogram',
    labelNames: ['method', 'endpoint', 'status'],
    buckets: DURATION_BUCKETS_SECONDS,
    // Not the global registry: every server in the process keeps its own figures.
    registers: [],
  });
}
