// GET /collections/{name}/optimizations: the progress of every shard optimizer of a collection.

import type { FastifyInstance } from 'fastify';
import { renderOptimizations } from '../../api/optimizations.js';
import { OPTIMIZATIONS_PARAMS } from '../../api/validator.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { collectionName, query } from './params.js';

/** Qdrant's default `completed_limit`. */
const DEFAULT_COMPLETED_LIMIT = 16;

export function registerOptimizationRoutes(app: FastifyInstance, { collections }: ServerContext): void {
  app.get('/collections/:name/optimizations', async (request) => {
    const params = query(request, OPTIMIZATIONS_PARAMS);
    const shards = await collections.get(collectionName(request)).optimizations();
    return ok(request, renderOptimizations(shards, params.with ?? new Set(), params.completed_limit ?? DEFAULT_COMPLETED_LIMIT));
  });
}
