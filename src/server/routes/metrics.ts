// GET /metrics: Prometheus text exposition of the node's metrics (collections the caller may see).

import type { FastifyInstance } from 'fastify';
import { METRICS_PARAMS } from '../../api/validator.js';
import { namerFor } from '../../telemetry/anonymize.js';
import { METRICS_CONTENT_TYPE, renderMetrics } from '../../telemetry/metrics.js';
import { placementOf } from '../../telemetry/replica-placement.js';
import { takeSnapshot } from '../../telemetry/snapshot.js';
import { accessOf } from '../access.js';
import type { ServerContext } from '../app.js';
import { withOperationTimeout } from '../deadline.js';
import { query } from './params.js';

export function registerMetricsRoutes(app: FastifyInstance, { config, collections, node, cluster, clusterView }: ServerContext): void {
  app.get('/metrics', async (request, reply) => {
    const params = query(request, METRICS_PARAMS);
    const access = accessOf(request);
    const snapshot = await withOperationTimeout(takeSnapshot(collections, (name) => access.canSee(name)), params.timeout, 'collections telemetry');
    return reply.type(METRICS_CONTENT_TYPE).send(await renderMetrics({
      node,
      snapshot,
      names: namerFor(params.anonymize),
      hardware: config.service.hardware_reporting ? [...collections.workers.hardware.totals()] : null,
      placement: placementOf(node.peerId, clusterView),
      // Qdrant derives its metrics from its telemetry at details level 1.
      cluster: await cluster.telemetry(1, params.anonymize ?? false),
    }));
  });
}
