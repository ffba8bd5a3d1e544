// PUT /collections/{name}/index and DELETE /collections/{name}/index/{field}: payload indexes.

import type { FastifyInstance } from 'fastify';
import { WRITE_PARAMS, validateBody } from '../../api/validator.js';
import { toIndexSchema } from '../../api/write-convert.js';
import { fieldSchemaRequired } from '../../api/messages.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { canonicalKey, collectionName, query, type Params } from './params.js';

export function registerIndexRoutes(app: FastifyInstance, { collections, catalog, node }: ServerContext): void {
  app.put('/collections/:name/index', async (request) => {
    const { timeout } = query(request, WRITE_PARAMS);
    const body = validateBody('CreateFieldIndex', request.body);
    const name = collectionName(request);
    collections.resolve(name);
    // Qdrant looks the collection up (for its strict mode) before it asks for the schema.
    if (body.field_schema === undefined || body.field_schema === null) throw fieldSchemaRequired();
    node.quota.check();
    return ok(request, await catalog.createIndex(name, { key: canonicalKey(body.field_name), schema: toIndexSchema(body.field_schema) }, timeout));
  });

  app.delete('/collections/:name/index/:field', async (request) => {
    const { timeout } = query(request, WRITE_PARAMS);
    const name = collectionName(request);
    const field = canonicalKey((request.params as Params).field!, 'path parameters');
    // Qdrant drops an index that does not exist without complaint: the operation is a no-op.
    return ok(request, await catalog.dropIndex(name, field, timeout));
  });
}
