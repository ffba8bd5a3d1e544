// The HTTP server: Fastify with Qdrant's JSON body handling, envelope and error mapping, and
// the route modules of each resource.

import Fastify, { type FastifyInstance } from 'fastify';
import type { QuiverConfig } from '../config/config.js';
import type { Catalog } from '../collection/catalog.js';
import type { CollectionManager } from '../collection/manager.js';
import type { ClusterView } from '../cluster/cluster-view.js';
import type { NodeState } from '../telemetry/node.js';
import type { ClusterService } from './cluster-service.js';
import { parseJsonBody } from '../api/json-body.js';
import { registerAuth } from './auth/hook.js';
import { FRAMEWORK_ERROR_OPTIONS } from './framework-errors.js';
import { registerPathNameCheck } from './path-names.js';
import { registerQueryCheck } from './query-params.js';
import { requireCatalogueEntries } from './route-catalogue.js';
import { errorBody, markStart, printReply, sendError } from './reply.js';
import { registerAccessLog } from './access-log.js';
import type { LogFilter } from '../config/log-filter.js';
import { discardUnreadBody } from './unread-body.js';
import { registerRequestTelemetry } from './request-telemetry.js';
import { registerRequestHardware } from './request-hardware.js';
import { requestLoggerFactory } from './request-logger.js';
import { registerAliasRoutes } from './routes/aliases.js';
import { registerClusterRoutes } from './routes/cluster.js';
import { registerCollectionRoutes } from './routes/collections.js';
import { registerFacetRoutes } from './routes/facet.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerIndexRoutes } from './routes/indexes.js';
import { registerVectorNameRoutes } from './routes/vector-names.js';
import { registerIssueRoutes } from './routes/issues.js';
import { registerShardRoutes } from './routes/shards.js';
import { registerMatrixRoutes } from './routes/matrix.js';
import { registerMetricsRoutes } from './routes/metrics.js';
import { registerOptimizationRoutes } from './routes/optimizations.js';
import { registerPointRoutes } from './routes/points.js';
import { registerQuotaRoutes } from './routes/quotas.js';
import { registerSearchRoutes } from './routes/search.js';
import { registerServiceRoutes } from './routes/service.js';
import { registerSnapshotRoutes } from './routes/snapshots.js';
import { registerTelemetryRoutes } from './routes/telemetry.js';
import { httpsOptions } from './tls.js';

/** Node's default limit on a request's headers (16 KiB) holds the request line too. */
const MAX_PARAM_LENGTH = 16 * 1024;

export interface ServerContext {
  config: QuiverConfig;
  /** This node's collections: every read, and what the node serves. */
  collections: CollectionManager;
  /** Where the routes change collections and aliases: the CollectionManager on a single node, the cluster catalogue on a peer. */
  catalog: Catalog;
  /** A cluster peer's applied view of the control plane (where shards and their replicas are); absent on a single node. */
  clusterView?: () => ClusterView;
  node: NodeState;
  /** `/cluster` and the metadata keys: StandaloneCluster on a single node. */
  cluster: ClusterService;
}

/** A server's context as its builder gives it: a single node's catalogue is its CollectionManager. */
export type ServerSetup = Omit<ServerContext, 'catalog'> & { catalog?: Catalog };

/** `logging`: the log filter the server logs by (its level, and whether it writes the access log); none: no log. */
export function buildServer(setup: ServerSetup, logging: Pick<LogFilter, 'level' | 'accessLog'> | null = null): FastifyInstance {
  const context: ServerContext = { ...setup, catalog: setup.catalog ?? setup.collections };
  const app = Fastify({
    logger: logging === null ? false : { level: logging.level },
    bodyLimit: context.config.service.max_request_size_mb * 1024 * 1024,
    // Qdrant's ids and routes are case-sensitive. Path parameters are judged by Quiver's own
    // rules (a collection name may be 255 characters, each up to 12 once percent-encoded); this
    // bound is above what Node's HTTP parser lets through in a request line anyway.
    routerOptions: { caseSensitive: true, maxParamLength: MAX_PARAM_LENGTH },
    https: httpsOptions(context.config),
    childLoggerFactory: requestLoggerFactory,
    // One access log line per request instead (access-log.ts), as Qdrant writes.
    disableRequestLogging: true,
    ...FRAMEWORK_ERROR_OPTIONS,
  });
  app.removeAllContentTypeParsers();
  // Qdrant reads every body as JSON whatever the content type says.
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  // JSON.stringify, except that point ids past 2^53 (bigints) are printed as JSON integers; the
  // hot search answers through compiled serialisers that print the same text (reply.ts).
  app.setReplySerializer(printReply);
  app.addHook('onRequest', async (request) => markStart(request));
  if (logging?.accessLog) registerAccessLog(app);
  // Before the routes: each route must have a catalogue entry, which gives it its access rule and
  // its query parameters as it registers. Before any body is read: authentication, then the
  // collection name in the path, then the query string (Qdrant reads most bodies before the query
  // string; a request wrong in both gets the query string's error here).
  requireCatalogueEntries(app);
  registerAuth(app, context);
  registerPathNameCheck(app);
  registerQueryCheck(app);
  registerRequestTelemetry(app, context.node.requests);
  registerRequestHardware(app, context.collections.workers.hardware, context.config.service.hardware_reporting);
  app.setErrorHandler(async (error, request, reply) => {
    if ((error as { code?: unknown }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') await discardUnreadBody(request.raw);
    return sendError(error, request, reply);
  });
  app.setNotFoundHandler((request, reply) => reply.code(404).send(errorBody(`Not found: ${request.method} ${request.url}`, 0)));
  registerServiceRoutes(app, context);
  registerCollectionRoutes(app, context);
  registerOptimizationRoutes(app, context);
  registerAliasRoutes(app, context);
  registerPointRoutes(app, context);
  registerIndexRoutes(app, context);
  registerVectorNameRoutes(app, context);
  registerSearchRoutes(app, context);
  registerFacetRoutes(app, context);
  registerMatrixRoutes(app, context);
  registerSnapshotRoutes(app, context);
  registerTelemetryRoutes(app, context);
  registerClusterRoutes(app, context);
  registerMetricsRoutes(app, context);
  registerHealthRoutes(app, context);
  registerQuotaRoutes(app, context);
  registerIssueRoutes(app, context);
  registerShardRoutes(app, context);
  return app;
}
