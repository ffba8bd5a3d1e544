// Vector search: v1.18's /points/search, /recommend and /discover (and their batches and groups),
// and the query API (/points/query, its batch and groups). Each route validates the body,
// converts it to the collection layer's request, runs it there and renders the answer.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { discoverQuery, fromSearchRequest, recommendQuery, renderGroups, renderScored, toGroupSpec, toQueryRequest } from '../../api/search-convert.js';
import { validateBody } from '../../api/validator.js';
import { queryGroups, type GroupSpec } from '../../collection/groups.js';
import { collectionScope, runQueries } from '../../collection/query-planner.js';
import type { QueryRequest } from '../../collection/query-tree.js';
import type { CollectionManager } from '../../collection/manager.js';
import { groupsRead, queryRead } from '../../collection/strict-reads.js';
import { ok, okCompiled } from '../reply.js';
import { QUERY_ANSWER, QUERY_BATCH_ANSWER, SEARCH_ANSWER, SEARCH_BATCH_ANSWER } from '../answer-serializers.js';
import type { ServerContext } from '../app.js';
import { admitRead, collectionName, read } from './params.js';

/**
 * Runs requests on the collection the path names (an unknown collection is reported before what
 * `convert` finds wrong), once strict mode admits them, one list of rendered hits per request.
 * `batch`: they came as one batch request.
 */
async function run(collections: CollectionManager, request: FastifyRequest, convert: () => QueryRequest[], batch = false) {
  const name = collectionName(request);
  const scope = collectionScope(collections, name);
  const requests = convert();
  admitRead(collections.get(name), request, queryRead(requests, batch));
  return (await runQueries(scope, requests)).map((hits) => hits.map(renderScored));
}

/** Runs a grouped search once strict mode admits it. */
async function groups(collections: CollectionManager, request: FastifyRequest, convert: () => [QueryRequest, GroupSpec]) {
  const name = collectionName(request);
  const scope = collectionScope(collections, name);
  const [query, spec] = convert();
  admitRead(collections.get(name), request, groupsRead(query, spec.groupBy, spec.limit, spec.groupSize));
  return renderGroups(await queryGroups(scope, query, spec));
}

export function registerSearchRoutes(app: FastifyInstance, { collections }: ServerContext): void {
  app.post('/collections/:name/points/search/groups', (request) => read(request, 'Search', async () => {
    const body = validateBody('SearchGroupsRequest', request.body);
    return ok(request, await groups(collections, request, () => [fromSearchRequest(body), toGroupSpec(body)]));
  }));

  app.post('/collections/:name/points/recommend/groups', (request) => read(request, 'Search', async () => {
    const body = validateBody('RecommendGroupsRequest', request.body);
    return ok(request, await groups(collections, request, () => [toQueryRequest(recommendQuery(body)), toGroupSpec(body)]));
  }));

  app.post('/collections/:name/points/query/groups', (request) => read(request, 'Query', async () => {
    const body = validateBody('QueryGroupsRequest', request.body);
    return ok(request, await groups(collections, request, () => [toQueryRequest(body), toGroupSpec(body)]));
  }));

  app.post('/collections/:name/points/search', (request, reply) => read(request, 'Search', async () => {
    const body = validateBody('SearchRequest', request.body);
    const [points] = await run(collections, request, () => [fromSearchRequest(body)]);
    return okCompiled(request, reply, SEARCH_ANSWER, points);
  }));

  app.post('/collections/:name/points/search/batch', (request, reply) => read(request, 'Search', async () => {
    const requests = validateBody('SearchRequestBatch', request.body).searches.map(fromSearchRequest);
    return okCompiled(request, reply, SEARCH_BATCH_ANSWER, await run(collections, request, () => requests, true));
  }));

  app.post('/collections/:name/points/query', (request, reply) => read(request, 'Query', async () => {
    const body = validateBody('QueryRequest', request.body);
    const [points] = await run(collections, request, () => [toQueryRequest(body)]);
    return okCompiled(request, reply, QUERY_ANSWER, { points });
  }));

  app.post('/collections/:name/points/query/batch', (request, reply) => read(request, 'Query', async () => {
    const body = validateBody('QueryRequestBatch', request.body);
    const results = await run(collections, request, () => body.searches.map(toQueryRequest), true);
    return okCompiled(request, reply, QUERY_BATCH_ANSWER, results.map((points) => ({ points })));
  }));

  app.post('/collections/:name/points/recommend', (request) => read(request, 'Search', async () => {
    const body = validateBody('RecommendRequest', request.body);
    const [points] = await run(collections, request, () => [toQueryRequest(recommendQuery(body))]);
    return ok(request, points);
  }));

  app.post('/collections/:name/points/discover', (request) => read(request, 'Search', async () => {
    const query = discoverQuery(validateBody('DiscoverRequest', request.body));
    const [points] = await run(collections, request, () => [toQueryRequest(query)]);
    return ok(request, points);
  }));

  app.post('/collections/:name/points/discover/batch', (request) => read(request, 'Search', async () => {
    const queries = validateBody('DiscoverRequestBatch', request.body).searches.map(discoverQuery);
    return ok(request, await run(collections, request, () => queries.map(toQueryRequest), true));
  }));

  app.post('/collections/:name/points/recommend/batch', (request) => read(request, 'Search', async () => {
    const body = validateBody('RecommendRequestBatch', request.body);
    return ok(request, await run(collections, request, () => body.searches.map((s) => toQueryRequest(recommendQuery(s))), true));
  }));
}
