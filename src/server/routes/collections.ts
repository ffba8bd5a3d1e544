// /collections: list, create, inspect, update, delete, exists, and a collection's aliases.

import type { FastifyInstance } from 'fastify';
import { applyUpdate, fromCreateRequest, renderCollectionInfo } from '../../api/collection-config.js';
import { collectionHealth } from '../../api/optimizations.js';
import { COMMIT_PARAMS, validateBody } from '../../api/validator.js';
import { checkServable } from '../../collection/config-model.js';
import { accessOf } from '../access.js';
import { withCommitTimeout } from '../deadline.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { collectionName, query } from './params.js';

export function registerCollectionRoutes(app: FastifyInstance, { collections, catalog, node }: ServerContext): void {
  app.get('/collections', async (request) => {
    const access = accessOf(request);
    return ok(request, { collections: collections.names().filter((name) => access.canSee(name)).map((name) => ({ name })) });
  });

  app.get('/collections/:name', async (request) => {
    const record = collections.record(collectionName(request));
    const collection = collections.get(record.name);
    // Taken before the shards are asked: their answers wait for the updates queued ahead.
    const updateQueueLength = collection.shards.reduce((n, s) => n + s.queuedUpdates, 0);
    const [stats, optimizations] = await Promise.all([collection.stats(), collection.optimizations()]);
    const payloadIndexes = Object.fromEntries(record.indexes.map((i) => [i.key, { schema: i.schema, points: stats.reduce((n, s) => n + (s.indexedPoints[i.key] ?? 0), 0) }]));
    const pointsCount = stats.reduce((n, s) => n + s.points, 0);
    const indexedVectorsCount = optimizations.reduce((n, o) => n + o.indexedVectors, 0);
    const { status, optimizerError } = collectionHealth(optimizations);
    return ok(request, renderCollectionInfo(record.config, {
      status, optimizerError, pointsCount, indexedVectorsCount, segmentsCount: stats.length, updateQueueLength, payloadIndexes,
    }));
  });

  app.put('/collections/:name', async (request) => {
    const { timeout } = query(request, COMMIT_PARAMS);
    const body = validateBody('CreateCollection', request.body);
    const config = fromCreateRequest(body, catalog.defaultShardNumber());
    checkServable(config); // before anything is created
    node.quota.check();
    await withCommitTimeout(catalog.create(collectionName(request), config, timeout), timeout);
    return ok(request, true);
  });

  app.patch('/collections/:name', async (request) => {
    const { timeout } = query(request, COMMIT_PARAMS);
    const body = validateBody('UpdateCollection', request.body);
    // Applied to the configuration as it is when the update runs, so concurrent updates compose.
    const update = catalog.updateConfig(collectionName(request), (current) => {
      return checkServable(applyUpdate(current, body));
    }, timeout);
    await withCommitTimeout(update, timeout);
    return ok(request, true);
  });

  app.delete('/collections/:name', async (request) => {
    const { timeout } = query(request, COMMIT_PARAMS);
    return ok(request, await withCommitTimeout(catalog.delete(collectionName(request), timeout), timeout));
  });

  app.get('/collections/:name/exists', async (request) => ok(request, { exists: collections.exists(collectionName(request)) }));

  // Qdrant lists the aliases that point at this exact name: it neither follows an alias nor
  // checks that the collection exists (an unknown name has no aliases).
  app.get('/collections/:name/aliases', async (request) => {
    const name = collectionName(request);
    const access = accessOf(request);
    return ok(request, { aliases: collections.aliasesOf(name).filter((alias) => access.canSee(alias)).sort().map((alias_name) => ({ alias_name, collection_name: name })) });
  });
}
