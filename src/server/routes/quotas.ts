// GET /quotas (configuration and this node's usage) and PUT /quotas (replace the configuration;
// persisted, so it survives restarts, and it takes precedence over `storage.quotas`).

import type { FastifyInstance } from 'fastify';
import { QUOTA_PARAMS, validateBody } from '../../api/validator.js';
import { fromWire, renderQuotaConfig } from '../../quota/config.js';
import type { ServerContext } from '../app.js';
import { ok } from '../reply.js';
import { query } from './params.js';

export function registerQuotaRoutes(app: FastifyInstance, { node }: ServerContext): void {
  // Outside distributed mode Qdrant leaves out the per-peer map.
  app.get('/quotas', async (request) => ok(request, { config: renderQuotaConfig(node.quota.config), usage: node.quota.usage() }));

  // One node has no consensus to wait for: the change is stored before the answer whatever `wait` says.
  app.put('/quotas', async (request) => {
    query(request, QUOTA_PARAMS);
    await node.quota.update(fromWire(validateBody('QuotaConfig', request.body)));
    return ok(request, true);
  });
}
