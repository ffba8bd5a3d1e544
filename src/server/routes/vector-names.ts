// PUT and DELETE /collections/{name}/vectors/{vector}: create and delete a named vector.

import type { FastifyInstance } from 'fastify';
import { WRITE_PARAMS, validateBody } from '../../api/validator.js';
import { addVectorName, checkVectorName, removeVectorName } from '../../api/vector-name-config.js';
import { checkServable } from '../../collection/config-model.js';
import { withCommitTimeout } from '../deadline.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { collectionName, query, type Params } from './params.js';

export function registerVectorNameRoutes(app: FastifyInstance, { catalog, node }: ServerContext): void {
  app.put('/collections/:name/vectors/:vector', async (request) => {
    const { timeout } = query(request, WRITE_PARAMS);
    const vector = (request.params as Params).vector!;
    checkVectorName(vector);
    const body = validateBody('VectorNameConfig', request.body);
    node.quota.check();
    const change = catalog.changeVectorName(collectionName(request), (config) => checkServable(addVectorName(config, vector, body)), null, timeout);
    return ok(request, await withCommitTimeout(change, timeout));
  });

  app.delete('/collections/:name/vectors/:vector', async (request) => {
    const { timeout } = query(request, WRITE_PARAMS);
    const vector = (request.params as Params).vector!;
    checkVectorName(vector);
    const change = catalog.changeVectorName(collectionName(request), (config) => removeVectorName(config, vector), vector, timeout);
    return ok(request, await withCommitTimeout(change, timeout));
  });
}
