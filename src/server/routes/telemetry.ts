// GET /telemetry and GET /cluster/telemetry: what this node reports about itself and its
// collections (only those the caller may see).

import type { FastifyInstance } from 'fastify';
import { CLUSTER_TELEMETRY_PARAMS, TELEMETRY_PARAMS } from '../../api/validator.js';
import { namerFor } from '../../telemetry/anonymize.js';
import { clusterTelemetry, distributedTelemetry } from '../../telemetry/cluster-telemetry.js';
import { placementOf } from '../../telemetry/replica-placement.js';
import { takeSnapshot } from '../../telemetry/snapshot.js';
import { telemetryData } from '../../telemetry/telemetry-data.js';
import { accessOf } from '../access.js';
import type { ServerContext } from '../app.js';
import { withOperationTimeout } from '../deadline.js';
import { ok } from '../reply.js';
import { query } from './params.js';

export function registerTelemetryRoutes(app: FastifyInstance, { config, collections, node, cluster, clusterView }: ServerContext): void {
  app.get('/telemetry', async (request) => {
    const params = query(request, TELEMETRY_PARAMS);
    const access = accessOf(request);
    const snapshot = await withOperationTimeout(takeSnapshot(collections, (name) => access.canSee(name)), params.timeout, 'collections telemetry');
    return ok(request, telemetryData(node, config, snapshot, {
      level: params.details_level ?? 0,
      names: namerFor(params.anonymize),
      nodeWide: access.nodeWide,
      hardware: collections.workers.hardware.totals(),
      workers: collections.workers.count,
      cluster: await cluster.telemetry(params.details_level ?? 0, params.anonymize ?? false),
      placement: placementOf(node.peerId, clusterView),
    }));
  });

  app.get('/cluster/telemetry', async (request) => {
    const params = query(request, CLUSTER_TELEMETRY_PARAMS);
    const access = accessOf(request);
    const peers = await cluster.peerTelemetry(params.timeout === undefined ? undefined : params.timeout * 1000);
    if (peers) return ok(request, distributedTelemetry(peers, (name) => access.canSee(name), access.nodeWide));
    const snapshot = await withOperationTimeout(takeSnapshot(collections, (name) => access.canSee(name)), params.timeout, 'cluster_telemetry');
    const scheme = config.service.enable_tls ? 'https' : 'http';
    return ok(request, clusterTelemetry(node, snapshot, `${scheme}://${config.service.host}:${config.service.http_port}/`, access.nodeWide));
  });
}
