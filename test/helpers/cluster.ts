// Cluster peers for tests, started as a user starts Qdrant's: one process per peer with its own
// storage folder and its three ports (REST, gRPC = etcd's peer traffic here, p2p), the first
// with `--uri`, the others with `--bootstrap` to it, cluster mode on through the environment.

import { readFile } from 'node:fs/promises';
import type { Test } from 'tap';
import { startServer, freePorts, tempStorage, type RunningServer } from './server.js';

export interface PeerPorts {
  http: number;
  grpc: number;
  p2p: number;
}

export interface ClusterPeer {
  server: RunningServer;
  storage: string;
  ports: PeerPorts;
  /** The peer's p2p URI, as given to `--uri` and `--bootstrap`. */
  uri: string;
  url: string;
}

export interface PeerOptions {
  storage?: string;
  ports?: PeerPorts;
  /**
   * The p2p URI the peer advertises (`--uri`); `http://127.0.0.1:<p2p port>` by default. As in
   * Qdrant it may name another port than the one the peer listens on (a proxy in between).
   */
  uri?: string;
  /** The p2p URI of a running peer to join; none for the first peer. */
  bootstrap?: string;
  env?: Record<string, string>;
  args?: string[];
}

/** Three free loopback ports for a peer. */
export async function peerPorts(): Promise<PeerPorts> {
  const [http, grpc, p2p] = await freePorts(3);
  return { http, grpc, p2p };
}

/** Starts one peer (one shard worker) and answers once its REST port answers. */
export async function startPeer(options: PeerOptions = {}): Promise<ClusterPeer> {
  const storage = options.storage ?? (await tempStorage());
  const ports = options.ports ?? (await peerPorts());
  const uri = options.uri ?? `http://127.0.0.1:${ports.p2p}`;
  const server = await startServer({
    storage,
    port: ports.http,
    workers: 1,
    args: ['--uri', uri, ...(options.bootstrap ? ['--bootstrap', options.bootstrap] : []), ...(options.args ?? [])],
    env: {
      QDRANT__CLUSTER__ENABLED: 'true',
      QDRANT__CLUSTER__P2P__PORT: String(ports.p2p),
      QDRANT__SERVICE__GRPC_PORT: String(ports.grpc),
      ...options.env,
    },
  });
  return { server, storage, ports, uri, url: server.url };
}

/**
 * Starts `count` peers: the first, then the others joining it side by side. Stopped at the
 * test's end. `each` gives a peer's own ports, URI and environment (on top of `options.env`), by its index.
 */
export async function startCluster(t: Test, count: number, options: Omit<PeerOptions, 'storage' | 'ports' | 'bootstrap' | 'uri'> = {}, each: (index: number) => Pick<PeerOptions, 'ports' | 'uri' | 'env'> = () => ({})): Promise<ClusterPeer[]> {
  const optionsOf = (index: number): PeerOptions => {
    const own = each(index);
    return { ...options, ...own, env: { ...options.env, ...own.env } };
  };
  const first = await startPeer(optionsOf(0));
  t.teardown(() => first.server.stop('SIGKILL'));
  const others = await Promise.all(Array.from({ length: count - 1 }, (_, i) => startPeer({ ...optionsOf(i + 1), bootstrap: first.uri })));
  for (const peer of others) t.teardown(() => peer.server.stop('SIGKILL'));
  return [first, ...others];
}

/** Waits (bounded) until `check` holds, polling: the condition is the cluster's state, not a time. */
export async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export { tempStorage };

/**
 * The process id of the etcd member a peer runs: its child process (Linux's /proc, as cluster
 * mode's `setpriv` needs Linux anyway; the peer does not publish it).
 */
export async function etcdMemberPid(peer: ClusterPeer): Promise<number> {
  const pid = peer.server.process.pid!;
  const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8')).trim().split(/\s+/).filter(Boolean);
  for (const child of children) {
    const args = (await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (args.includes('--listen-peer-urls')) return Number(child);
  }
  throw new Error(`no etcd member among the child processes of peer ${peer.url} (pid ${pid})`);
}
