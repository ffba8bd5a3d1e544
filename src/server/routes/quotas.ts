// GET /quotas (configuration and this node's usage) and PUT /quotas (replace the configuration;
// persisted, so it survives restarts, and it takes precedence over `storage.quotas`).

import type { FastifyInstance } from 'fastify';
import { QUOTA_PARAMS, validateBody } from '../../api/validator.js';
import { fromWire, renderQuotaConfig } from '../../quota/config.js';
import type { ServerContext } from '../app.js';
import { ok } from '../reply.js';
import { query } from './params.js';

export function registerQuotaRoutes(app: FastifyInstance, { node, cluster }: ServerContext): void {
  app.get('/quotas', async (request) => {
    const peers = await cluster.quotaPeers();
    return ok(request, { config: renderQuotaConfig(node.quota.config), usage: node.quota.usage(), ...(peers ? { peers } : {}) });
  });

  // Through consensus in a cluster (every peer applies and persists it); stored at once on one node.
  app.put('/quotas', async (request) => {
    const { wait } = query(request, QUOTA_PARAMS);
    await cluster.updateQuota(fromWire(validateBody('QuotaConfig', request.body)), wait ?? false);
    return ok(request, true);
  });
}
