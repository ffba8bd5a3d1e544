// The etcd member a cluster peer runs beside itself: its command line, its start, its stop.
//
// The member dies with the Quiver process that started it, even on SIGKILL: it runs under
// `setpriv --pdeathsig KILL`, which asks the kernel to kill it when its parent thread exits.
// Node forks children from its main thread, so that parent is the process itself. Without
// setpriv a SIGKILL would leave an etcd behind holding the peer's ports and data, so cluster
// mode refuses to start rather than risk it.
//
// A start waits until the member serves its client port, not until it is healthy: a peer of a
// stopped cluster restarts before the others and its member has no quorum until they are back.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { request } from 'undici';
import { ServiceError } from '../errors.js';
import type { ReservedPort } from '../free-port.js';

export interface EtcdMemberOptions {
  /** The member's name: the Quiver peer id in decimal, so members map to peers. */
  name: string;
  dataDir: string;
  /** The peer URL other members reach this one at (the peer's `--uri` host, its gRPC port). */
  advertisePeerUrl: string;
  /** Where this member listens for other members. */
  listenPeerUrl: string;
  /** The loopback port clients (this Quiver only) use. */
  clientPort: number;
  /** The reservation holding `clientPort` since it was chosen: released just before etcd starts and binds it. */
  clientPortHold?: ReservedPort;
  /** `name=peerUrl,...` of the members at the first start; ignored by etcd once the data dir exists. */
  initialCluster: string;
  initialClusterState: 'new' | 'existing';
  clusterToken: string;
  /** Raft's heartbeat; elections time out after ten of them (etcd's recommended ratio). */
  tickMs: number;
  /** Makes this member the only one, keeping its data (Qdrant's `--reinit` without a bootstrap peer). */
  forceNewCluster?: boolean;
  /** etcd's own binary; `etcd` from the PATH by default. */
  binary?: string;
}

export interface EtcdExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines the member wrote to stderr: why it stopped. */
  stderr: string;
}

const STDERR_LINES = 40;
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;
const POLL_MS = 25;

/** etcd's command line for `options`. */
export function etcdArguments(options: EtcdMemberOptions): string[] {
  const clientUrl = `http://127.0.0.1:${options.clientPort}`;
  return [
    '--name', options.name,
    '--data-dir', options.dataDir,
    '--listen-peer-urls', options.listenPeerUrl,
    '--initial-advertise-peer-urls', options.advertisePeerUrl,
    '--listen-client-urls', clientUrl,
    '--advertise-client-urls', clientUrl,
    '--initial-cluster', options.initialCluster,
    '--initial-cluster-state', options.initialClusterState,
    '--initial-cluster-token', options.clusterToken,
    '--heartbeat-interval', String(options.tickMs),
    '--election-timeout', String(options.tickMs * 10),
    // The control plane's history is small; compaction bounds it. A watcher that falls behind
    // the compacted revision re-reads everything (the apply loop does).
    '--auto-compaction-mode', 'revision',
    '--auto-compaction-retention', '10000',
    '--logger', 'zap',
    '--log-level', 'warn',
    ...(options.forceNewCluster ? ['--force-new-cluster'] : []),
  ];
}

export class EtcdMember {
  private readonly stderrLines: string[] = [];
  private exit: EtcdExit | null = null;
  /** Settles when the process ends, for whatever reason. */
  readonly exited: Promise<EtcdExit>;

  private constructor(private readonly child: ChildProcess, readonly clientUrl: string) {
    let partial = '';
    // Always drained: a full pipe would block the member.
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      this.stderrLines.push(...lines);
      if (this.stderrLines.length > STDERR_LINES) this.stderrLines.splice(0, this.stderrLines.length - STDERR_LINES);
    });
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal, stderr: this.stderrLines.join('\n') };
        resolve(this.exit);
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.exit === null;
  }

  /** Starts a member and answers once it serves its client port. */
  static async start(options: EtcdMemberOptions): Promise<EtcdMember> {
    await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
    const binary = options.binary ?? 'etcd';
    await options.clientPortHold?.release();
    const child = spawn('setpriv', ['--pdeathsig', 'KILL', binary, ...etcdArguments(options)], { stdio: ['ignore', 'ignore', 'pipe'] });
    const spawned = await new Promise<Error | null>((resolve) => {
      child.once('spawn', () => resolve(null));
      child.once('error', resolve);
    });
    if (spawned) throw new ServiceError(`Cannot start etcd for cluster mode (setpriv and etcd, Debian packages util-linux and etcd-server, are required): ${spawned.message}`);
    const member = new EtcdMember(child, `http://127.0.0.1:${options.clientPort}`);
    await member.untilServing();
    return member;
  }

  private async untilServing(): Promise<void> {
    const until = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < until) {
      if (this.exit) throw new ServiceError(`etcd exited at start (code ${this.exit.code}, signal ${this.exit.signal}): ${this.exit.stderr}`);
      try {
        const answer = await request(`${this.clientUrl}/version`, { headersTimeout: 1000, bodyTimeout: 1000 });
        await answer.body.dump();
        if (answer.statusCode === 200) return;
      } catch {
        // Not listening yet.
      }
      await Promise.race([new Promise((resolve) => setTimeout(resolve, POLL_MS)), this.exited]);
    }
    await this.stop();
    throw new ServiceError(`etcd did not serve ${this.clientUrl} within ${START_TIMEOUT_MS / 1000} s: ${this.stderrLines.join('\n')}`);
  }

  /** Stops the member: SIGTERM, then SIGKILL if it has not ended within a bound. */
  async stop(): Promise<EtcdExit> {
    if (this.exit) return this.exit;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
