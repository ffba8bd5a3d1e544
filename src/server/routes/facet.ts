// POST /collections/{name}/facet: counts per value of an indexed payload field.

import type { FastifyInstance } from 'fastify';
import { toFilter } from '../../api/filter.js';
import { validateBody } from '../../api/validator.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { plainRead } from '../../collection/strict-reads.js';
import { admitRead, canonicalKey, collectionName, read } from './params.js';

const DEFAULT_FACET_LIMIT = 10;

export function registerFacetRoutes(app: FastifyInstance, { collections }: ServerContext): void {
  app.post('/collections/:name/facet', (request) => read(request, 'Facet', async () => {
    const body = validateBody('FacetRequest', request.body);
    const collection = collections.get(collectionName(request));
    const filter = body.filter ? toFilter(body.filter) : null;
    admitRead(collection, request, plainRead(body.shard_key ?? null, filter, body.limit ?? null, body.exact ?? null));
    const hits = await collection.reader(body.shard_key).facet(canonicalKey(body.key), filter, body.limit ?? DEFAULT_FACET_LIMIT);
    return ok(request, { hits });
  }));
}
