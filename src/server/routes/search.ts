// Vector search: v1.18's /points/search and /points/recommend (and their batches), and the query
// API's nearest and recommend queries (/points/query, /points/query/batch). Examples and query
// inputs may be vectors or stored points, whose vectors are looked up first.

import type { FastifyInstance } from 'fastify';
import { pointNotFound } from '../../api/messages.js';
import { averageVector, fromQueryRequest, fromSearchRequest, queryPlan, recommendPlan, renderScored, type Example, type PlannedSearch, type QueryPlan } from '../../api/search-convert.js';
import type { WireGrouping, WireQueryRequest, WireRecommendRequest } from '../../api/types.js';
import { renderRecord, toPayloadSelection, toVectorSelection, type WireRecord } from '../../api/point-convert.js';
import { lookupId, searchGroups } from '../../collection/groups.js';
import { READ_PARAMS, validateBody } from '../../api/validator.js';
import type { Collection } from '../../collection/collection.js';
import type { CollectionManager } from '../../collection/manager.js';
import type { SearchQuery } from '../../shard/search.js';
import { BadInput } from '../../errors.js';
import { DEFAULT_VECTOR } from '../../model.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { collectionName, query } from './params.js';

/**
 * Looks up the vectors of examples given as point ids (in `lookup_from` if named) and turns the
 * plan into the shards' query. Example points of this collection are left out of the results,
 * as Qdrant leaves them out.
 */
async function planSearch(collections: CollectionManager, collection: Collection, body: WireQueryRequest, plan: QueryPlan): Promise<PlannedSearch> {
  const using = body.using ?? DEFAULT_VECTOR;
  const source = body.lookup_from ? collections.get(body.lookup_from.collection) : collection;
  const name = body.lookup_from?.vector ?? using;
  const examples = plan.kind === 'nearest' ? [plan.input] : [...plan.positives, ...plan.negatives];
  const ids = examples.flatMap((e) => ('pointId' in e ? [e.pointId] : []));
  const found = ids.length ? await source.retrieve(ids, { withPayload: { all: false }, withVector: [name] }) : [];
  const stored = new Map(found.map((p) => [p.id, p.vectors?.[name]]));
  const vectorOf = (e: Example): number[] => {
    if ('vector' in e) return e.vector;
    if (!stored.has(e.pointId)) throw pointNotFound(e.pointId);
    const v = stored.get(e.pointId);
    if (!v) throw new BadInput(`Vector \`${name}\` of point ${e.pointId} not found`);
    return v;
  };
  let query: SearchQuery;
  if (plan.kind === 'nearest') query = { kind: 'nearest', vector: vectorOf(plan.input) };
  else {
    const positives = plan.positives.map(vectorOf);
    const negatives = plan.negatives.map(vectorOf);
    query = plan.strategy === 'average_vector'
      ? { kind: 'nearest', vector: averageVector(positives, negatives) }
      : { kind: 'recommend', strategy: plan.strategy, positives, negatives };
  }
  const planned = fromQueryRequest(body, query);
  if (ids.length && !body.lookup_from) {
    const exclude = { mustNot: [{ kind: 'hasId' as const, ids: new Set(ids) }] };
    planned.spec.filter = planned.spec.filter ? { must: [{ kind: 'filter', filter: planned.spec.filter }], ...exclude } : exclude;
  }
  return planned;
}

function recommendBody(body: WireRecommendRequest): [WireQueryRequest, QueryPlan] {
  return [body, recommendPlan(body.positive ?? [], body.negative ?? [], body.strategy ?? null)];
}

const DEFAULT_GROUP_SIZE = 3;
const DEFAULT_GROUP_LIMIT = 10;

/** Groups of a planned search, with each group's record looked up in `with_lookup` if asked. */
async function groupsResult(collections: CollectionManager, collection: Collection, planned: PlannedSearch, body: WireGrouping) {
  const groups = await searchGroups(collection, planned, {
    groupBy: body.group_by,
    groupSize: body.group_size ?? DEFAULT_GROUP_SIZE,
    limit: body.limit ?? DEFAULT_GROUP_LIMIT,
  });
  const lookup = body.with_lookup;
  const found = new Map<unknown, WireRecord>();
  if (lookup) {
    const target = typeof lookup === 'string' ? { collection: lookup } : lookup;
    const ids = groups.flatMap((g) => lookupId(g.id) ?? []);
    const records = await collections.get(target.collection).retrieve(ids, {
      withPayload: toPayloadSelection(target.with_payload ?? true),
      withVector: toVectorSelection(target.with_vectors ?? false),
    });
    for (const r of records) found.set(r.id, renderRecord(r));
  }
  return {
    groups: groups.map((g) => {
      const out: { id: string | number; hits: ReturnType<typeof renderScored>[]; lookup?: WireRecord } = { id: g.id, hits: g.hits.map(renderScored) };
      const record = found.get(lookupId(g.id));
      if (record) out.lookup = record;
      return out;
    }),
  };
}

export function registerSearchRoutes(app: FastifyInstance, { collections }: ServerContext): void {
  app.post('/collections/:name/points/search/groups', async (request) => {
    query(request, READ_PARAMS);
    const body = validateBody('SearchGroupsRequest', request.body);
    const collection = collections.get(collectionName(request));
    return ok(request, await groupsResult(collections, collection, fromSearchRequest(body), body));
  });

  app.post('/collections/:name/points/recommend/groups', async (request) => {
    query(request, READ_PARAMS);
    const body = validateBody('RecommendGroupsRequest', request.body);
    const collection = collections.get(collectionName(request));
    const [queryBody, plan] = recommendBody(body);
    return ok(request, await groupsResult(collections, collection, await planSearch(collections, collection, queryBody, plan), body));
  });

  app.post('/collections/:name/points/query/groups', async (request) => {
    query(request, READ_PARAMS);
    const body = validateBody('QueryGroupsRequest', request.body);
    const collection = collections.get(collectionName(request));
    return ok(request, await groupsResult(collections, collection, await planSearch(collections, collection, body, queryPlan(body)), body));
  });

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

  /** Plans every (body, plan) pair and runs them as one batch: one task per shard. */
  const run = async (name: string, requests: [WireQueryRequest, QueryPlan][]) => {
    const collection = collections.get(name);
    const planned = await Promise.all(requests.map(([body, plan]) => planSearch(collections, collection, body, plan)));
    return (await collection.search(planned)).map((hits) => hits.map(renderScored));
  };

  app.post('/collections/:name/points/query', async (request) => {
    query(request, READ_PARAMS);
    const body = validateBody('QueryRequest', request.body);
    const [points] = await run(collectionName(request), [[body, queryPlan(body)]]);
    return ok(request, { points });
  });

  app.post('/collections/:name/points/query/batch', async (request) => {
    query(request, READ_PARAMS);
    const body = validateBody('QueryRequestBatch', request.body);
    const results = await run(collectionName(request), body.searches.map((s) => [s, queryPlan(s)]));
    return ok(request, results.map((points) => ({ points })));
  });

  app.post('/collections/:name/points/recommend', async (request) => {
    query(request, READ_PARAMS);
    const [points] = await run(collectionName(request), [recommendBody(validateBody('RecommendRequest', request.body))]);
    return ok(request, points);
  });

  app.post('/collections/:name/points/recommend/batch', async (request) => {
    query(request, READ_PARAMS);
    const body = validateBody('RecommendRequestBatch', request.body);
    return ok(request, await run(collectionName(request), body.searches.map(recommendBody)));
  });
}
