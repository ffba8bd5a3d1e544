// Vector search: v1.18's /points/search and /points/recommend (and their batches), and the query
// API's nearest and recommend queries (/points/query, /points/query/batch). Examples and query
// inputs may be vectors or stored points, whose vectors are looked up first.

import type { FastifyInstance } from 'fastify';
import { fromSearchRequest, isReadPlan, queryPlan, renderScored, resultShape, type PlannedSearch } from '../../api/search-convert.js';
import { evaluate, planLeaf, type QueryContext } from '../query-pipeline.js';
import type { WireDiscoverRequest, WireGrouping, WireQueryRequest, WireRecommendRequest } from '../../api/types.js';
import { BadRequest } from '../../errors.js';
import { renderRecord, toPayloadSelection, toVectorSelection, type WireRecord } from '../../api/point-convert.js';
import { lookupId, searchGroups } from '../../collection/groups.js';
import { validateBody } from '../../api/validator.js';
import type { ShardReader } from '../../collection/shard-reader.js';
import type { Collection } from '../../collection/collection.js';
import type { ScoredView } from '../../shard/search.js';
import type { CollectionManager } from '../../collection/manager.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { collectionName, read } from './params.js';

/** A v1.18 recommend body as a query with a recommend query. */
function recommendQuery(body: WireRecommendRequest): WireQueryRequest {
  return { ...body, query: { recommend: { positive: body.positive, negative: body.negative, strategy: body.strategy } } };
}

/** A v1.18 discover body as a query: discover with a target, context search without one. */
function discoverQuery(body: WireDiscoverRequest): WireQueryRequest {
  const context = body.context ?? [];
  if (body.target !== null && body.target !== undefined) return { ...body, query: { discover: { target: body.target, context } } };
  if (context.length === 0) throw new BadRequest('target or context must be provided');
  return { ...body, query: { context } };
}

function context(collections: CollectionManager, name: string, body: WireQueryRequest): QueryContext {
  return { collections, collection: collections.get(name).reader(body.shard_key), shape: resultShape(body) };
}

/**
 * Runs a batch of planned searches with one task per shard for each distinct shard-key
 * selection among them (usually one: the whole batch goes to the shards together).
 */
async function searchBatch(collection: Collection, batch: { planned: PlannedSearch; shardKey: WireQueryRequest['shard_key'] }[]): Promise<ScoredView[][]> {
  const out: ScoredView[][] = new Array(batch.length);
  const bySelection = new Map<string, number[]>();
  batch.forEach(({ shardKey }, i) => {
    const selection = JSON.stringify(shardKey ?? null);
    bySelection.set(selection, [...(bySelection.get(selection) ?? []), i]);
  });
  await Promise.all([...bySelection.values()].map(async (members) => {
    const results = await collection.reader(batch[members[0]].shardKey).search(members.map((i) => batch[i].planned));
    results.forEach((hits, j) => (out[members[j]] = hits));
  }));
  return out;
}

const DEFAULT_GROUP_SIZE = 3;
const DEFAULT_GROUP_LIMIT = 10;

/** Groups of a planned search, with each group's record looked up in `with_lookup` if asked. */
async function groupsResult(collections: CollectionManager, collection: ShardReader, planned: PlannedSearch, body: WireGrouping) {
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
    const records = await collections.get(target.collection).reader().retrieve(ids, {
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
  app.post('/collections/:name/points/search/groups', (request) => read(request, 'Search', async () => {
    const body = validateBody('SearchGroupsRequest', request.body);
    const collection = collections.get(collectionName(request)).reader(body.shard_key);
    return ok(request, await groupsResult(collections, collection, fromSearchRequest(body), body));
  }));

  app.post('/collections/:name/points/recommend/groups', (request) => read(request, 'Search', async () => {
    const body = validateBody('RecommendGroupsRequest', request.body);
    const ctx = context(collections, collectionName(request), recommendQuery(body));
    return ok(request, await groupsResult(collections, ctx.collection, await planLeaf(ctx, recommendQuery(body), null), body));
  }));

  app.post('/collections/:name/points/query/groups', (request) => read(request, 'Query', async () => {
    const body = validateBody('QueryGroupsRequest', request.body);
    const ctx = context(collections, collectionName(request), body);
    return ok(request, await groupsResult(collections, ctx.collection, await planLeaf(ctx, body, null), body));
  }));

  app.post('/collections/:name/points/search', (request) => read(request, 'Search', async () => {
    const body = validateBody('SearchRequest', request.body);
    const [hits] = await collections.get(collectionName(request)).reader(body.shard_key).search([fromSearchRequest(body)]);
    return ok(request, hits.map(renderScored));
  }));

  app.post('/collections/:name/points/search/batch', (request) => read(request, 'Search', async () => {
    const batch = validateBody('SearchRequestBatch', request.body).searches.map((s) => ({ planned: fromSearchRequest(s), shardKey: s.shard_key }));
    const results = await searchBatch(collections.get(collectionName(request)), batch);
    return ok(request, results.map((hits) => hits.map(renderScored)));
  }));

  /**
   * Runs query bodies: vector searches without prefetch go together as one batch (one task per
   * shard), the others are evaluated as their query trees.
   */
  const run = async (name: string, bodies: WireQueryRequest[]) => {
    const out: ReturnType<typeof renderScored>[][] = new Array(bodies.length);
    const batched = (b: WireQueryRequest) => !b.prefetch && !isReadPlan(queryPlan(b));
    const flat = bodies.map((b, i) => [b, i] as const).filter(([b]) => batched(b));
    if (flat.length) {
      const batch = await Promise.all(flat.map(async ([b]) => ({ planned: await planLeaf(context(collections, name, b), b, null), shardKey: b.shard_key })));
      (await searchBatch(collections.get(name), batch)).forEach((hits, j) => (out[flat[j][1]] = hits.map(renderScored)));
    }
    await Promise.all(bodies.map(async (b, i) => {
      if (!batched(b)) out[i] = (await evaluate(context(collections, name, b), b, null)).hits.map(renderScored);
    }));
    return out;
  };

  app.post('/collections/:name/points/query', (request) => read(request, 'Query', async () => {
    const body = validateBody('QueryRequest', request.body);
    const [points] = await run(collectionName(request), [body]);
    return ok(request, { points });
  }));

  app.post('/collections/:name/points/query/batch', (request) => read(request, 'Query', async () => {
    const body = validateBody('QueryRequestBatch', request.body);
    const results = await run(collectionName(request), body.searches);
    return ok(request, results.map((points) => ({ points })));
  }));

  app.post('/collections/:name/points/recommend', (request) => read(request, 'Search', async () => {
    const [points] = await run(collectionName(request), [recommendQuery(validateBody('RecommendRequest', request.body))]);
    return ok(request, points);
  }));

  app.post('/collections/:name/points/discover', (request) => read(request, 'Search', async () => {
    const [points] = await run(collectionName(request), [discoverQuery(validateBody('DiscoverRequest', request.body))]);
    return ok(request, points);
  }));

  app.post('/collections/:name/points/discover/batch', (request) => read(request, 'Search', async () => {
    const body = validateBody('DiscoverRequestBatch', request.body);
    return ok(request, await run(collectionName(request), body.searches.map(discoverQuery)));
  }));

  app.post('/collections/:name/points/recommend/batch', (request) => read(request, 'Search', async () => {
    const body = validateBody('RecommendRequestBatch', request.body);
    return ok(request, await run(collectionName(request), body.searches.map(recommendQuery)));
  }));
}
