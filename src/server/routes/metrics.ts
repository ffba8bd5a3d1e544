// GET /metrics: Prometheus text exposition of the node's metrics (collections the caller may see).

import type { FastifyInstance } from 'fastify';
import { METRICS_PARAMS } from '../../api/validator.js';
import { namerFor } from '../../telemetry/anonymize.js';
import { METRICS_CONTENT_TYPE, renderMetrics } from '../../telemetry/metrics.js';
import { REPLICA_STATE } from '../../telemetry/shard-telemetry.js';
import { takeSnapshot, type CollectionSnapshot } from '../../telemetry/snapshot.js';
import type { ClusterView } from '../../cluster/cluster-view.js';
import type { ReplicaState } from '../../replica/replica.js';
import { accessOf } from '../access.js';
import type { ServerContext } from '../app.js';
import { withOperationTimeout } from '../deadline.js';
import { query } from './params.js';

export function registerMetricsRoutes(app: FastifyInstance, { config, collections, node, clusterView }: ServerContext): void {
  app.get('/metrics', async (request, reply) => {
    const params = query(request, METRICS_PARAMS);
    const access = accessOf(request);
    const snapshot = await withOperationTimeout(takeSnapshot(collections, (name) => access.canSee(name)), params.timeout, 'collections telemetry');
    return reply.type(METRICS_CONTENT_TYPE).send(await renderMetrics({
      node,
      snapshot,
      names: namerFor(params.anonymize),
      hardware: config.service.hardware_reporting ? [...collections.workers.hardware.totals()] : null,
      shardReplicas: clusterView ? viewReplicaStates(clusterView(), snapshot) : snapshot.flatMap((c) => c.shards.map((): ReplicaState[] => [REPLICA_STATE])),
      clusterEnabled: clusterView !== undefined,
    }));
  });
}

/** A cluster peer's replica states of the snapshot's collections, as the control plane it applied places them. */
function viewReplicaStates(view: ClusterView, snapshot: CollectionSnapshot[]): ReplicaState[][] {
  return snapshot.flatMap((c) => [...(view.shards.get(c.record.name)?.values() ?? [])].map((entry) => Object.values(entry.replicas)));
}
