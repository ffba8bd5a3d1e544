// Distributed mode's settings: Qdrant's `cluster` section (src/settings.rs `ClusterConfig` and
// config/config.yaml, Qdrant v1.19) plus Quiver's own `cluster.etcd`, and the peer's start
// arguments `--uri`, `--bootstrap`, `--reinit` (Qdrant's src/main.rs `Args`).

import { checkBoolean, checkPort, checkPositiveInteger, httpUrl } from './checks.js';
import { ConfigError } from './config-error.js';

/** Qdrant's largest peer id: peer ids stay exact as JSON numbers. */
export const MAX_PEER_ID = 2 ** 53 - 1;

export interface ClusterConfig {
  /** Run as a peer of a distributed deployment (QDRANT__CLUSTER__ENABLED=true). */
  enabled: boolean;
  /** The peer id this node takes when it first starts (no id stored yet); drawn at random when null. */
  peer_id: number | null;
  /** Bound on a request to another peer, in ms (Qdrant's transport default: 60 s). */
  grpc_timeout_ms: number;
  /** Bound on connecting to another peer, in ms (Qdrant's transport default: 2 s). */
  connection_timeout_ms: number;
  p2p: {
    /** The port other peers reach this one on (its `--uri`). */
    port: number;
    enable_tls: boolean;
  };
  consensus: {
    /** Consensus heartbeat; the election timeout is ten ticks. */
    tick_period_ms: number;
    /** How long a joining peer waits for its bootstrap peer. */
    bootstrap_timeout_sec: number;
  };
  etcd: {
    /**
     * Quiver's own: the client URLs of an external etcd cluster holding the control plane. Empty:
     * each peer runs its own etcd member (its peer traffic on `service.grpc_port`).
     */
    endpoints: string[];
    /**
     * Quiver's own: the port the other peers' etcd members reach this peer's member on, when it
     * is not `service.grpc_port`, the port the member listens on (a proxy or a port mapping in
     * between, as `--uri` may name another port than `cluster.p2p.port`). Null: `service.grpc_port`.
     * Taken when the peer enters a cluster; a restart keeps the address it entered with.
     */
    advertise_port: number | null;
  };
}

/** How this peer enters a deployment: Qdrant's command-line arguments, read at each start. */
export interface PeerStart {
  /** `--uri` / QDRANT_URI: this peer's p2p address, as Qdrant prints it (`http://host:6335/`). */
  uri: string | null;
  /** `--bootstrap` / QDRANT_BOOTSTRAP: a peer of the deployment to join; null on its first peer. */
  bootstrap: string | null;
  /** `--reinit`: drop this peer's consensus state and enter again (see README, distributed mode). */
  reinit: boolean;
}

export function defaultClusterConfig(): ClusterConfig {
  return {
    enabled: false,
    peer_id: null,
    grpc_timeout_ms: 60_000,
    connection_timeout_ms: 2_000,
    p2p: { port: 6335, enable_tls: false },
    consensus: { tick_period_ms: 100, bootstrap_timeout_sec: 15 },
    etcd: { endpoints: [], advertise_port: null },
  };
}

/** The flags of PeerStart, in node:util parseArgs' terms. */
export const PEER_FLAGS = {
  uri: { type: 'string' },
  bootstrap: { type: 'string' },
  reinit: { type: 'boolean' },
} as const;

const PEER_URI_EXAMPLE = 'http://peer-1:6335';

/** PeerStart from the flags, then the environment (clap's `env`: a flag wins; an empty variable counts as unset). */
export function peerStart(flags: { uri?: string; bootstrap?: string; reinit?: boolean }, env: NodeJS.ProcessEnv): PeerStart {
  const given = (flag: string | undefined, variable: string | undefined): string | undefined => flag ?? (variable === '' ? undefined : variable);
  const uri = given(flags.uri, env.QDRANT_URI);
  const bootstrap = given(flags.bootstrap, env.QDRANT_BOOTSTRAP);
  return {
    // Printed as Qdrant prints a parsed URI, with the path's `/`: the form peers list each other in.
    uri: uri === undefined ? null : httpUrl('--uri', uri, PEER_URI_EXAMPLE).href,
    bootstrap: bootstrap === undefined ? null : httpUrl('--bootstrap', bootstrap, PEER_URI_EXAMPLE).href,
    reinit: flags.reinit ?? false,
  };
}

/**
 * `cluster.etcd.endpoints` as a list: YAML gives a list, an environment variable a text of
 * comma-separated URLs (QDRANT__CLUSTER__ETCD__ENDPOINTS=http://a:2379,http://b:2379).
 */
export function etcdEndpoints(value: unknown): string[] {
  const items = typeof value === 'string' ? (value.trim() === '' ? [] : value.split(',')) : value === null ? [] : value;
  if (!Array.isArray(items)) throw new ConfigError(`invalid cluster.etcd.endpoints: ${JSON.stringify(value)} (a list of etcd client URLs)`);
  return items.map((item) => {
    const text = typeof item === 'string' ? item.trim() : '';
    httpUrl('cluster.etcd.endpoints', text || JSON.stringify(item), 'http://etcd-1:2379');
    return text;
  });
}

/** Refuses a `cluster` section (and the ports it needs) Qdrant would refuse, or that cannot run as a cluster. */
export function checkCluster(cluster: ClusterConfig, service: { http_port: number; grpc_port: number | null }): void {
  checkBoolean('cluster.enabled', cluster.enabled);
  if (cluster.peer_id !== null) checkPositiveInteger('cluster.peer_id', cluster.peer_id, MAX_PEER_ID);
  checkPositiveInteger('cluster.grpc_timeout_ms', cluster.grpc_timeout_ms);
  checkPositiveInteger('cluster.connection_timeout_ms', cluster.connection_timeout_ms);
  checkPort('cluster.p2p.port', cluster.p2p.port, false);
  checkBoolean('cluster.p2p.enable_tls', cluster.p2p.enable_tls);
  checkPositiveInteger('cluster.consensus.tick_period_ms', cluster.consensus.tick_period_ms);
  checkPositiveInteger('cluster.consensus.bootstrap_timeout_sec', cluster.consensus.bootstrap_timeout_sec);
  if (service.grpc_port !== null) checkPort('service.grpc_port', service.grpc_port, false);
  if (cluster.etcd.advertise_port !== null) checkPort('cluster.etcd.advertise_port', cluster.etcd.advertise_port, false);
  if (!cluster.enabled) return;
  // Refused rather than accepted and ignored: a peer would talk in clear, or to its own etcd.
  if (cluster.p2p.enable_tls) throw new ConfigError('cluster.p2p.enable_tls is not supported by this server: peers talk plain HTTP on the p2p port; keep it (and the gRPC port etcd uses) on a private network');
  // A peer opens three ports: REST, p2p, and etcd's peer port (Quiver serves no gRPC, so etcd
  // takes the gRPC port). With an external etcd the gRPC port stays unused, as Qdrant's is
  // unused by clients that speak REST only: it is still required and kept apart from the others.
  if (service.grpc_port === null) throw new ConfigError('cluster mode needs service.grpc_port: the etcd member of each peer talks to the others on it');
  const ports: Array<[string, number]> = [['service.http_port', service.http_port], ['service.grpc_port', service.grpc_port], ['cluster.p2p.port', cluster.p2p.port]];
  for (const [i, [key, port]] of ports.entries()) {
    const clash = ports.slice(i + 1).find(([, other]) => other === port);
    if (clash) throw new ConfigError(`${key} and ${clash[0]} are both ${port}: a peer needs a port for each`);
  }
}
