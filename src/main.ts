// `npm start`: loads the configuration, opens the storage, serves the REST API, and shuts down
// gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests within
// service.shutdown_timeout_sec or cut them short, close the stores).
//
// Start-up order: the shard workers are spawned first, from this module's few static imports, so
// that each thread loads its modules and the engine while this thread loads the server's (the
// dynamic imports below); then the stored collections open on the workers.

import { isLoopback, loadConfig, type QuiverConfig } from './config/config.js';
import { ConfigError } from './config/config-error.js';
import { parseLogFilter } from './config/log-filter.js';
import { ShardWorkers } from './worker/pool.js';
import type { WireFilter } from './api/filter.js';

function startConfig(): QuiverConfig {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`Cannot start: ${err.message}`);
    process.exit(2);
  }
}

const config = startConfig();
// Test-only (src/worker/faults.ts): read once, here, so nothing else can turn it on.
const faults = process.env.QUIVER_TEST_FAULTS === '1';
const workers = new ShardWorkers(config.workers, { limits: config.worker_limits, faults });

const [{ CollectionManager }, { buildServer }, { shutDown }, { hasApiKeys }, { prepareSnapshots }, { openNodeState }, { VERSION }, { StandaloneCluster }, { startClusterPeer }, { MetaStore }, { toFilter }] = await Promise.all([
  import('./collection/manager.js'),
  import('./server/app.js'),
  import('./server/shutdown.js'),
  import('./server/auth/keys.js'),
  import('./snapshot/startup.js'),
  import('./telemetry/node.js'),
  import('./version.js'),
  import('./server/cluster-service.js'),
  import('./cluster/cluster-peer.js'),
  import('./storage/meta-store.js'),
  import('./api/filter.js'),
]);

const logFilter = parseLogFilter(config.log_level);
const keyed = hasApiKeys(config);
if (!keyed && !isLoopback(config.service.host) && !config.service.allow_unauthenticated_bind) {
  console.error(`Refusing to listen on ${config.service.host} without an API key: set QDRANT__SERVICE__API_KEY, or pass --allow-unauthenticated-bind to accept an open server.`);
  process.exit(2);
}

// A cluster peer joins (or restarts in) its cluster before it serves: its collections open where
// the control plane places them. Its log lines before the server's logger exists go to stderr.
let server: ReturnType<typeof buildServer> | null = null;
const clusterLog = {
  info: (m: string) => (server ? server.log.info(m) : console.error(m)),
  warn: (m: string) => (server ? server.log.warn(m) : console.error(m)),
  error: (m: string) => (server ? server.log.error(m) : console.error(m)),
};

async function openClusterPeer() {
  if (config.recover.storage_snapshot !== null) {
    console.error('Cannot start: --storage-snapshot recovers a single node\'s storage; a cluster peer takes its collections from the cluster');
    process.exit(2);
  }
  const meta = await MetaStore.open(config.storage.storage_path);
  const node = await openNodeState(meta, config);
  const peer = await startClusterPeer({ config, workers, meta, processId: node.processId, startedAt: node.startedAt, quota: node.quota, log: clusterLog, filterOf: (wire) => toFilter(wire as WireFilter) }).catch(async (err: Error) => {
    console.error(`Cannot start the cluster peer: ${err.message}`);
    await workers.close();
    await meta.close();
    process.exit(2);
  });
  // Temporary files of a snapshot interrupted by a crash go, as on a single node (no storage snapshot to recover: refused above).
  const recovered = await prepareSnapshots(peer.collections, config, node.peerId);
  return { node, peer, collections: peer.collections, recovered };
}

async function openSingleNode() {
  const collections = await CollectionManager.openWith(config.storage.storage_path, workers);
  const node = await openNodeState(collections.meta, config);
  const recovered = await prepareSnapshots(collections, config, node.peerId).catch(async (err: Error) => {
    console.error(`Cannot recover the storage snapshot ${config.recover.storage_snapshot}: ${err.message}`);
    await collections.close();
    process.exit(2);
  });
  return { node, peer: null, collections, recovered };
}

const { node, peer, collections, recovered } = config.cluster.enabled ? await openClusterPeer() : await openSingleNode();
const app = buildServer({
  config,
  collections,
  node,
  ...(peer ? { catalog: peer.catalog, clusterView: peer.view } : {}),
  cluster: peer?.node ?? new StandaloneCluster(node.quota, node.peerId, collections),
}, logFilter);
server = app;
for (const directive of logFilter.ignored) app.log.warn(`log_level: ignoring \`${directive}\`: not a level`);
collections.workers.onFault((worker, reason) => app.log.error(`shard worker ${worker} failed (${reason}): replacing it and reopening its shards from storage`));
await app.listen({ host: config.service.host, port: config.service.http_port });
app.log.info(`Quiver ${VERSION} (Qdrant REST API) on ${config.service.enable_tls ? 'https' : 'http'}://${config.service.host}:${config.service.http_port}, storage ${config.storage.storage_path}, ${config.workers} shard workers`);
if (recovered.length > 0) app.log.info(`recovered collections ${recovered.join(', ')} from ${config.recover.storage_snapshot}`);
if (faults) app.log.warn('QUIVER_TEST_FAULTS=1: test-only fault injection is on; never run a production node this way');
if (!keyed) app.log.warn(`no API key configured: listening on ${config.service.host} only; every request is served without authentication`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  app.log.info(`${signal}: shutting down`);
  try {
    const outcome = await shutDown(app, collections, config.service.shutdown_timeout_sec, peer);
    if (outcome === 'forced') app.log.warn(`requests still running after ${config.service.shutdown_timeout_sec}s (service.shutdown_timeout_sec) were cut short`);
    process.exit(0);
  } catch (err) {
    app.log.error(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
