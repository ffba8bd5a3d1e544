// Starts real Quiver servers (`src/main.ts` in a child process) on loopback ports for tests.
// The spawning and readiness wait are the benchmark CLI's own (src/bench/quiver-process.ts).

import { tempDir } from './temp-dir.js';
import { freePort, freePorts, startQuiver, type QuiverProcess, type QuiverProcessOptions } from '../../src/bench/quiver-process.js';

export { freePort, freePorts };

export type RunningServer = QuiverProcess;

/** The environment that starts a single node even when ONE_PEER_CLUSTER is set. */
export const SINGLE_NODE_ENV = { QDRANT__CLUSTER__ENABLED: 'false' } as const;

/**
 * A fresh storage folder, removed when the test file ends (after its tests' teardowns stopped
 * their servers; a cluster peer's holds ~120 MB of etcd files).
 */
export function tempStorage(): Promise<string> {
  return tempDir('quiver-test-');
}

export type StartOptions = Partial<Omit<QuiverProcessOptions, 'echo'>>;

/**
 * Whether this run starts every server a test starts as a single node as a one-peer cluster
 * (QUIVER_TEST_CLUSTER=1). The few answers that differ by design in cluster mode (the default
 * shard count, `/cluster`, telemetry's cluster section, the quota peers) are asked of it.
 */
export const ONE_PEER_CLUSTER = process.env.QUIVER_TEST_CLUSTER === '1';

/**
 * Spawns a server (2 shard workers and a fresh temp storage unless told) and resolves once it
 * answers GET / (or rejects if it exits first). With QUIVER_TEST_CLUSTER=1 every server a test
 * starts as a single node is a one-peer cluster instead (see onePeerCluster).
 */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const storage = options.storage ?? (await tempStorage());
  const asCluster = ONE_PEER_CLUSTER && options.env?.QDRANT__CLUSTER__ENABLED === undefined;
  const start = asCluster ? await onePeerCluster(storage, options) : options;
  return startQuiver({ ...start, storage, workers: options.workers ?? 2 });
}

/**
 * The URI telemetry and `/cluster` list the server's peer under: a single node its REST address
 * (Qdrant has none to show), a cluster peer its p2p URI.
 */
export function peerUriOf(server: RunningServer): string {
  const ports = clusterPorts.get(server.storage);
  return `http://127.0.0.1:${ONE_PEER_CLUSTER && ports ? ports.p2p : server.port}/`;
}

/** The REST, p2p and gRPC (etcd peer) ports of each one-peer cluster's storage: a restart keeps them, as a user's config does. */
const clusterPorts = new Map<string, { http: number; p2p: number; grpc: number }>();

/**
 * The options that start `storage` as a one-peer cluster: cluster mode through the environment,
 * the peer's own `--uri`, and ready once `/readyz` answers 200 (the peer applied the control plane).
 */
async function onePeerCluster(storage: string, options: StartOptions): Promise<StartOptions> {
  let ports = clusterPorts.get(storage);
  if (!ports) {
    const [http, p2p, grpc] = await freePorts(3);
    ports = { http, p2p, grpc };
    clusterPorts.set(storage, ports);
  }
  return {
    ...options,
    port: options.port ?? ports.http,
    readyPath: options.readyPath ?? '/readyz',
    args: ['--uri', `http://127.0.0.1:${ports.p2p}`, ...(options.args ?? [])],
    env: {
      QDRANT__CLUSTER__ENABLED: 'true',
      QDRANT__CLUSTER__P2P__PORT: String(ports.p2p),
      QDRANT__SERVICE__GRPC_PORT: String(ports.grpc),
      ...options.env,
    },
  };
}

/**
 * The first match of `pattern` in the server's output, waiting for it up to `ms`: a line logged
 * after the server started answering may still be in the pipe when a request returns.
 */
export async function outputMatch(server: RunningServer, pattern: RegExp, ms = 5000): Promise<RegExpExecArray | null> {
  const until = Date.now() + ms;
  for (;;) {
    const match = pattern.exec(server.output());
    if (match || Date.now() > until) return match;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
