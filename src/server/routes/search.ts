// Vector search: v1.18's /points/search and /points/search/batch, and the query API's nearest
// queries (/points/query, /points/query/batch), by vector or by the vector of a stored point.

import type { FastifyInstance } from 'fastify';
import { pointNotFound } from '../../api/messages.js';
import { fromQueryRequest, fromSearchRequest, queryInput, renderScored, type PlannedSearch } from '../../api/search-convert.js';
import type { WireQueryRequest } from '../../api/types.js';
import { READ_PARAMS, validateBody } from '../../api/validator.js';
import type { Collection } from '../../collection/collection.js';
import { BadInput } from '../../errors.js';
import { DEFAULT_VECTOR } from '../../model.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { collectionName, query } from './params.js';

/** A query by point id searches with that point's vector and leaves the point itself out. */
async function planQuery(collection: Collection, body: WireQueryRequest): Promise<PlannedSearch> {
  const input = queryInput(body);
  if ('vector' in input) return fromQueryRequest(body, input.vector);
  const using = body.using ?? DEFAULT_VECTOR;
  const [point] = await collection.retrieve([input.pointId], { withPayload: { all: false }, withVector: [using] });
  if (!point) throw pointNotFound(input.pointId);
  const vector = point.vectors?.[using];
  if (!vector) throw new BadInput(`Vector \`${using}\` of point ${input.pointId} not found`);
  const planned = fromQueryRequest(body, vector);
  const exclude = { mustNot: [{ kind: 'hasId' as const, ids: new Set([input.pointId]) }] };
  planned.spec.filter = planned.spec.filter ? { must: [{ kind: 'filter', filter: planned.spec.filter }], ...exclude } : exclude;
  return planned;
}

export function registerSearchRoutes(app: FastifyInstance, { collections }: ServerContext): void {
  app.post('/collections/:name/points/search', async (request) => {
    query(request, READ_PARAMS);
    const planned = fromSearchRequest(validateBody('SearchRequest', request.body));
    const [hits] = await collections.get(collectionName(request)).search([planned]);
    return ok(request, hits.map(renderScored));
  });

  app.post('/collections/:name/points/search/batch', async (request) => {
    query(request, READ_PARAMS);
    const planned = validateBody('SearchRequestBatch', request.body).searches.map(fromSearchRequest);
    const results = await collections.get(collectionName(request)).search(planned);
    return ok(request, results.map((hits) => hits.map(renderScored)));
  });

  app.post('/collections/:name/points/query', async (request) => {
    query(request, READ_PARAMS);
    const body = validateBody('QueryRequest', request.body);
    const collection = collections.get(collectionName(request));
    const [hits] = await collection.search([await planQuery(collection, body)]);
    return ok(request, { points: hits.map(renderScored) });
  });

  app.post('/collections/:name/points/query/batch', async (request) => {
    query(request, READ_PARAMS);
    const body = validateBody('QueryRequestBatch', request.body);
    const collection = collections.get(collectionName(request));
    const planned = await Promise.all(body.searches.map((s) => planQuery(collection, s)));
    const results = await collection.search(planned);
    return ok(request, results.map((hits) => ({ points: hits.map(renderScored) })));
  });
}
