// POST /collections/{name}/facet: counts per value of an indexed payload field.

import type { FastifyInstance } from 'fastify';
import { toFilter } from '../../api/filter.js';
import { validateBody } from '../../api/validator.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { canonicalKey, collectionName, read } from './params.js';

const DEFAULT_FACET_LIMIT = 10;

export function registerFacetRoutes(app: FastifyInstance, { collections }: ServerContext): void {
  app.post('/collections/:name/facet', (request) => read(request, 'Facet', async () => {
    const body = validateBody('FacetRequest', request.body);
    const hits = await collections.get(collectionName(request)).reader(body.shard_key).facet(canonicalKey(body.key), body.filter ? toFilter(body.filter) : null, body.limit ?? DEFAULT_FACET_LIMIT);
    return ok(request, { hits });
  }));
}
