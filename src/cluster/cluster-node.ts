// A peer of a cluster, wired: its identity, its p2p server (the join route and the shard routes),
// its etcd member (first peer, join, restart or reinit) or its registration in an external etcd
// (`cluster.etcd.endpoints`), its liveness lease, the ordered apply
// loop of the control plane, and what `/cluster`, `/cluster/metadata/keys` and the cluster's
// quota answer from them.
//
// Start order: the identity first (its incarnation is synced before etcd can see this start), the
// p2p server next (a joiner's bootstrap peer must be reachable, and peers may call this one as
// soon as it is registered), then the member and the lease (`start`); the collections open where
// the control plane places them (`initialView`), and the apply loop follows it from there with
// the peer's own replicas served (`follow`). Stop in reverse.

import { TransferParts } from './transfer-parts.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import type { FastifyInstance } from 'fastify';
import type { QuiverConfig } from '../config/config.js';
import { BadRequest, ServiceError } from '../errors.js';
import { reservePort, type ReservedPort } from '../free-port.js';
import type { JsonValue } from '../model.js';
import { P2pClient } from '../peer/p2p-client.js';
import { P2pServer, type P2pHost } from '../peer/p2p-server.js';
import type { QuotaConfig } from '../quota/config.js';
import type { QuotaGuard } from '../quota/guard.js';
import type { MetaStore } from '../storage/meta-store.js';
import { ApplyLoop } from './apply-loop.js';
import type { ClusterChanges, ClusterView } from './cluster-view.js';
import { ControlPlane } from './control-plane.js';
import { JoinHandler } from './join-handler.js';
import { localPeerVersion, type JoinAdmission, type JoinAnswer, type JoinBody, type JoinRequest } from './join-protocol.js';
import { clusterNamespace } from './keys.js';
import { Liveness } from './liveness.js';
import { MembershipError, planStart, removedPeerError, REMOVED_MEMBER, startMembership, type LocalMembership } from './membership.js';
import { ExternalJoinHandler } from './external-join-handler.js';
import { externalStatus, startExternalMembership, type ExternalMembership } from './external-membership.js';
import type { EtcdMember } from './etcd-process.js';
import { isMemberNotFound, isUnhealthyCluster } from './etcd-gateway.js';
import { quotaPeers, quotaUsageRoute, type PeerQuotaUsage } from './quota-fan-out.js';
import { openNodeIdentity, recordAppliedRevision, type NodeIdentity } from './node-identity.js';
import { clusterStatus, clusterTelemetrySection, type ClusterStatusBody, type ClusterTelemetry, type ConsensusState } from './raft-info.js';
import { gatherPeerReports, peerDetails, peerTelemetryRoute, type PeerReport, type PeerTelemetry } from './telemetry-fan-out.js';
import { VERSION } from '../version.js';

/** How long a metadata change with `wait` waits for this peer to apply it (no `timeout` parameter there). */
const METADATA_WAIT_MS = 30_000;
/** How long a p2p request waits for this peer to apply the revision its sender had applied. */
const REVISION_WAIT_MS = 10_000;

export interface ClusterNodeOptions {
  config: QuiverConfig;
  meta: MetaStore<unknown>;
  /** This run's process id as telemetry reports it (the live key names it). */
  processId: string;
  startedAt: Date;
  /** This peer's quota: the cluster-wide configuration is applied to it, and it reports this peer's usage. */
  quota: QuotaGuard;
  log: { warn(message: string): void; error(message: string): void };
}

/** The JSON body of a join, checked before it reaches the handler. */
function joinBodyOf(body: unknown): JoinBody {
  const b = body as Partial<JoinBody> | null;
  const port = (p: unknown) => Number.isInteger(p) && (p as number) > 0 && (p as number) < 65536;
  const external = (e: JoinBody['external_etcd'] | null) => e === undefined || (typeof e === 'object' && e !== null && (e.cluster === null || typeof e.cluster === 'string'));
  if (b === null || typeof b !== 'object' || !Number.isSafeInteger(b.peer_id) || !port(b.p2p_port) || !port(b.grpc_port)
    || (b.uri !== undefined && typeof b.uri !== 'string') || !external(b.external_etcd)
    || typeof b.version?.quiver !== 'string' || typeof b.version?.node !== 'string') {
    throw new BadRequest('a join needs peer_id, p2p_port, grpc_port, version {quiver, node} and optionally uri and external_etcd {cluster}');
  }
  return b as JoinBody;
}

/** How the peer follows the control plane once its collections are open. */
export interface FollowOptions {
  /** The view the collections were opened with (`initialView`). */
  initialView: ClusterView;
  /** Applies each later view to this peer's local state (collections, aliases). */
  onApply: (view: ClusterView, changes: ClusterChanges, revision: number) => Promise<void>;
  /** Serves the shard routes from this peer's replicas. */
  host: Omit<P2pHost, 'awaitRevision'>;
  /** The figures of the replicas this peer holds (its part of `/cluster/telemetry`). */
  replicaFigures: () => Promise<PeerReport['replicas']>;
}

/** Between two tries of a member removal etcd refused for now. */
const MEMBER_RETRY_MS = 500;
/** A whole-cluster restart waits this long for a quorum of members to be back. */
const QUORUM_WAIT_MS = 120_000;
const READ_RETRY_MS = 250;

export class ClusterNode {
  private host: Omit<P2pHost, 'awaitRevision'> | null = null;
  private replicaFigures: FollowOptions['replicaFigures'] | null = null;
  private joinHandler: JoinAdmission | null = null;
  private membership: LocalMembership | ExternalMembership | null = null;
  private liveness: Liveness | null = null;
  private loop: ApplyLoop | null = null;
  private stopping = false;
  /** Set once a view this peer applied no longer registers it: another peer removed it (`DELETE /cluster/peer`). */
  private removed = false;
  readonly controlPlane: ControlPlane;

  private constructor(
    readonly identity: NodeIdentity,
    private readonly options: ClusterNodeOptions,
    private readonly etcd: Etcd3,
    readonly p2pClient: P2pClient,
    private readonly p2pServer: P2pServer,
    /** The shard parts this peer's snapshot transfers serve. */
    readonly transferParts: TransferParts,
  ) {
    this.controlPlane = new ControlPlane(clusterNamespace(etcd));
  }

  get peerId(): number {
    return this.identity.peerId;
  }

  static async start(options: ClusterNodeOptions): Promise<ClusterNode> {
    const { config, meta } = options;
    const identity = await openNodeIdentity(meta, config.cluster.peer_id ?? undefined);
    const { endpoints } = config.cluster.etcd;
    // Held until the member starts: joining can take seconds, in which a free port could be
    // taken. Not one of this peer's configured ports, which may be free until they are bound.
    const clientPort = endpoints.length > 0 ? null : await reservePort([config.service.http_port, config.service.grpc_port!, config.cluster.p2p.port]);
    const etcd = new Etcd3({ hosts: clientPort === null ? endpoints : `http://127.0.0.1:${clientPort.port}` });
    const p2pClient = new P2pClient({
      connectionTimeoutMs: config.cluster.connection_timeout_ms,
      requestTimeoutMs: config.cluster.grpc_timeout_ms,
      apiKey: config.service.api_key,
      appliedRevision: () => node.loop?.appliedRevision ?? 0,
      peerId: identity.peerId,
    });
    let node: ClusterNode;
    const transferParts = await TransferParts.open(config.storage.storage_path);
    const p2pServer = new P2pServer({
      host: {
        // Until the collections are open, this peer serves no replica (a replica failure to the sender).
        localReplica: (collection, shard) => node.host?.localReplica(collection, shard) ?? null,
        forward: (collection, shard, update) => {
          if (!node.host) throw new ServiceError(`this peer holds no replica of shard ${shard} of collection ${collection} yet`);
          return node.host.forward(collection, shard, update);
        },
        awaitRevision: (revision, ms) => node.awaitRevision(revision, ms),
      },
      apiKey: config.service.api_key,
      revisionWaitMs: REVISION_WAIT_MS,
      plugins: [async (app: FastifyInstance) => {
        app.post('/p2p/join', async (request) => node.admit({ ...joinBodyOf(request.body), source_ip: request.socket.remoteAddress ?? '127.0.0.1' }));
      }, quotaUsageRoute(options.quota), peerTelemetryRoute(() => node.peerReport()), transferParts.route()],
    });
    node = new ClusterNode(identity, options, etcd, p2pClient, p2pServer, transferParts);
    try {
      await p2pServer.start(config.service.host, config.cluster.p2p.port);
      if (clientPort === null) await node.register();
      else await node.join(clientPort);
    } catch (err) {
      await clientPort?.release();
      await node.stop();
      throw err;
    }
    return node;
  }

  /**
   * What either way of entering the cluster takes from this peer: the plan from its flags and its
   * stored state (`present`: its etcd data folder, or with an external etcd its recorded cluster).
   */
  private entry(present: boolean) {
    const { config, meta } = this.options;
    const uri = config.peer.uri ?? undefined;
    return {
      plan: planStart({ uri, bootstrap: config.peer.bootstrap ?? undefined, reinit: config.peer.reinit }, this.identity, present),
      identity: this.identity,
      meta,
      uri,
      p2pPort: config.cluster.p2p.port,
      etcd: this.etcd,
      sendJoin: (bootstrap: string, body: JoinBody) => this.sendJoin(bootstrap, body),
    };
  }

  private async join(clientPort: ReservedPort): Promise<void> {
    const { config } = this.options;
    const dataDir = join(config.storage.storage_path, 'cluster', 'etcd');
    this.membership = await startMembership({
      ...this.entry(existsSync(dataDir)),
      grpcPort: config.cluster.etcd.advertise_port ?? config.service.grpc_port!,
      listenPort: config.service.grpc_port!,
      member: { dataDir, clientPort: clientPort.port, clientPortHold: clientPort, tickMs: config.cluster.consensus.tick_period_ms },
    });
    this.joinHandler = new JoinHandler({
      gateway: this.membership.gateway,
      etcd: this.etcd,
      clusterToken: this.membership.clusterToken,
      version: localPeerVersion(),
      onPromoteFailure: (peer, reason) => this.options.log.error(`peer ${peer} joined as a learner but was not promoted: ${reason}`),
    });
    this.membership.member.exited.then((exit) => {
      if (!this.stopping) this.options.log.error(`the etcd member stopped (code ${exit.code}, signal ${exit.signal}): ${exit.stderr}`);
    });
    await this.startLiveness();
  }

  /** Enters the cluster an external etcd holds (`cluster.etcd.endpoints`): registered, no member of its own. */
  private async register(): Promise<void> {
    const { config } = this.options;
    this.membership = await startExternalMembership({
      ...this.entry(this.identity.clusterToken !== null),
      grpcPort: config.service.grpc_port!,
      endpoints: config.cluster.etcd.endpoints,
    });
    this.joinHandler = new ExternalJoinHandler({ etcd: this.etcd, clusterToken: this.membership.clusterToken, version: localPeerVersion() });
    await this.startLiveness();
  }

  private async startLiveness(): Promise<void> {
    this.liveness = await Liveness.start(this.etcd, this.peerId, { process_id: this.options.processId, started_at: this.options.startedAt.toISOString() }, {
      onLost: (reason) => this.options.log.warn(`liveness lease lost: ${reason}`),
    });
  }

  /** This peer's etcd member; null with an external etcd (or before the start reached it). */
  private get member(): EtcdMember | null {
    return this.membership !== null && 'member' in this.membership ? this.membership.member : null;
  }


  /**
   * The control plane as it is now, read once a quorum of members answers (a peer restarted
   * before the others waits for them, bounded): where this peer's collections open.
   */
  async initialView(): Promise<ClusterView> {
    const until = Date.now() + QUORUM_WAIT_MS;
    for (;;) {
      const member = this.member;
      // etcd stops a member the cluster removed as soon as it starts: no quorum will ever come.
      if (member !== null && !member.running) {
        const { stderr } = await member.exited;
        throw REMOVED_MEMBER.test(stderr) ? removedPeerError(this.peerId) : new MembershipError(`the etcd member stopped: ${stderr}`);
      }
      let view: ClusterView;
      try {
        view = await this.controlPlane.read();
      } catch (err) {
        if (this.stopping || Date.now() > until) throw err;
        await new Promise((resolve) => setTimeout(resolve, READ_RETRY_MS));
        continue;
      }
      if (!view.peers.has(this.peerId)) throw removedPeerError(this.peerId);
      return view;
    }
  }

  /** Serves this peer's replicas and applies the control plane from `initialView` on, in order; answers once the first view is applied. */
  async follow(options: FollowOptions): Promise<void> {
    const { meta } = this.options;
    this.host = options.host;
    this.replicaFigures = options.replicaFigures;
    // A quota changed while this peer was down is in the first view, not in a change after it.
    if (options.initialView.quota) await this.options.quota.update(options.initialView.quota);
    this.loop = new ApplyLoop({
      namespace: clusterNamespace(this.etcd),
      initialView: options.initialView,
      onApply: async (view, changes, revision) => {
        if (!this.removed && changes.peersChanged && !view.peers.has(this.peerId)) {
          this.removed = true;
          this.options.log.error(`this peer (id ${this.peerId}) was removed from the cluster: it stops following the control plane once its etcd member stops`);
        }
        // Every peer persists the cluster's quota configuration too (QuotaGuard.update), so it holds after a restart.
        if (changes.quotaChanged && view.quota) await this.options.quota.update(view.quota);
        await options.onApply(view, changes, revision);
        await recordAppliedRevision(meta, revision);
      },
      onError: (err) => this.options.log.warn(`control plane: ${err.message}`),
    });
    await this.loop.start();
  }

  private async sendJoin(bootstrap: string, body: JoinBody): Promise<JoinAnswer> {
    // `cluster.consensus.bootstrap_timeout_sec`: how long one join request waits for the bootstrap peer's answer.
    const timeoutMs = this.options.config.cluster.consensus.bootstrap_timeout_sec * 1000;
    const answer = await this.p2pClient.send(bootstrap, { method: 'POST', path: '/p2p/join', body: Buffer.from(JSON.stringify(body)), contentType: 'application/json', timeoutMs });
    const text = answer.body.toString('utf8');
    if (answer.statusCode !== 200) throw new Error(`the bootstrap peer answered ${answer.statusCode}: ${text}`);
    return JSON.parse(text) as JoinAnswer;
  }

  /** A join asked of this peer; until its own member runs, the joiner is told to come back. */
  private admit(request: JoinRequest): Promise<JoinAnswer> | JoinAnswer {
    if (this.joinHandler === null) return { status: 'retry', reason: 'the asked peer is still starting', retry_after_ms: 250 };
    return this.joinHandler.handle(request);
  }

  private async awaitRevision(revision: number, ms: number): Promise<boolean> {
    if (this.loop === null) return false;
    try {
      await this.loop.waitApplied(revision, ms);
      return true;
    } catch {
      return false;
    }
  }

  /** Resolves once this peer applied `revision` (bounded by `ms`). */
  waitApplied(revision: number, ms: number): Promise<void> {
    return this.loop!.waitApplied(revision, ms);
  }

  /** The view of the control plane this peer applied last. */
  get view(): ClusterView {
    return this.loop!.current;
  }

  /** Qdrant's `GET /cluster` body, from etcd's status (the local member's, or an external endpoint's) and the applied view. */
  async status(): Promise<ClusterStatusBody> {
    const membership = this.membership!;
    const status = 'gateway' in membership ? await membership.gateway.status() : await externalStatus(membership);
    const loop = this.loop!;
    const member = this.member;
    const consensus: ConsensusState = this.removed
      ? { state: 'stopped_with_err', error: 'this peer was removed from the cluster' }
      : member !== null && !member.running
      ? { state: 'stopped_with_err', error: 'the etcd member is not running' }
      : loop.lastError && !loop.lastUpdate
        ? { state: 'stopped_with_err', error: loop.lastError.message }
        : { state: 'working', lastUpdate: loop.lastUpdate ?? this.options.startedAt };
    return clusterStatus({
      peerId: this.peerId,
      status,
      // The view's peers, not a read of etcd: like Qdrant's, the answer is this peer's own state
      // and comes without a quorum (metrics and telemetry are needed most when one is lost).
      peers: this.view.peers,
      votes: member !== null,
      pendingOperations: loop.pendingOperations,
      consensus,
      sendFailures: this.p2pClient.sendFailures(),
    });
  }

  /** Caught up: a member of the cluster whose etcd member runs (if it has one) and whose apply loop follows the control plane without error. */
  ready(): boolean {
    return !this.removed && this.membership !== null && (this.member?.running ?? true) && this.loop !== null && this.loop.lastError === null;
  }

  /**
   * `DELETE /cluster/peer/{id}`: the peer's etcd member leaves etcd, then its record and (with
   * `force`) its replicas leave the control plane, checked again in that transaction. The member
   * goes first so that a refusal of etcd's (a member change while a member joined or restarted
   * less than 5 s ago is refused for a while: retried within the timeout) leaves the cluster as it
   * was; a peer removing itself goes last instead, since its own member answers the transaction.
   * The removed peer's etcd member stops, and it refuses to start again with its old storage.
   * With an external etcd no peer has a member: the record is all there is to remove.
   */
  async removePeer(peer: number, force: boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const record = this.controlPlane.checkPeerRemoval(await this.controlPlane.read(), peer, force);
    if (peer !== this.peerId) await this.removeMember(record.etcd_member_id, deadline);
    const { revision } = await this.controlPlane.removePeer(peer, force);
    await this.waitApplied(revision, Math.max(0, deadline - Date.now()));
    if (peer === this.peerId) await this.removeMember(record.etcd_member_id, deadline);
  }

  private async removeMember(memberId: string, deadline: number): Promise<void> {
    const membership = this.membership!;
    if (!('gateway' in membership)) return;
    for (;;) {
      try {
        await membership.gateway.memberRemove(memberId);
        return;
      } catch (err) {
        if (isMemberNotFound(err)) return;
        if (!isUnhealthyCluster(err) || Date.now() + MEMBER_RETRY_MS > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, MEMBER_RETRY_MS));
      }
    }
  }

  /**
   * `POST /cluster/recover`: Qdrant's peer asks the leader for a snapshot of the consensus state;
   * this one reads the whole control plane again and reconciles its local state with it.
   */
  recover(timeoutMs: number): Promise<void> {
    return this.loop!.resynchronize(timeoutMs);
  }

  /** The cluster metadata keys (`GET /cluster/metadata/keys`) holding a value, as this peer applied them. */
  async keys(): Promise<string[]> {
    return [...this.view.metadata].filter(([, value]) => value !== null).map(([key]) => key);
  }

  async get(key: string): Promise<JsonValue> {
    return this.view.metadata.get(key) ?? null;
  }

  /** Stores a metadata key through the control plane; with `wait`, answers once this peer applied it. */
  async put(key: string, value: JsonValue, wait: boolean): Promise<void> {
    const { revision } = await this.controlPlane.putMetadata(key, value);
    if (wait) await this.waitApplied(revision, METADATA_WAIT_MS);
  }

  /** Qdrant stores JSON null through consensus for a deleted key. */
  async delete(key: string, wait: boolean): Promise<void> {
    const { revision } = await this.controlPlane.deleteMetadata(key);
    if (wait) await this.waitApplied(revision, METADATA_WAIT_MS);
  }

  /** The `cluster` section of `/telemetry`. */
  async telemetry(level: number, anonymize: boolean): Promise<ClusterTelemetry> {
    const view = this.view;
    return clusterTelemetrySection(await this.status(), view.peers, view.metadata, level, anonymize);
  }

  /** What this peer reports to `/cluster/telemetry`; refused until it follows the control plane (it has no view before). */
  private async peerReport(): Promise<PeerReport> {
    if (this.loop === null || this.replicaFigures === null) throw new ServiceError('this peer is still starting');
    const [status, replicas] = await Promise.all([this.status(), this.replicaFigures()]);
    return { details: peerDetails(VERSION, status), replicas };
  }

  /**
   * `/cluster/telemetry`: every registered peer's report, each within `timeoutMs` (at most the
   * p2p request timeout, Qdrant's gRPC timeout; that timeout when absent).
   */
  async peerTelemetry(timeoutMs?: number): Promise<PeerTelemetry> {
    const view = this.view;
    const bound = Math.min(timeoutMs ?? Infinity, this.options.config.cluster.grpc_timeout_ms);
    return { view, reports: await gatherPeerReports(this.peerId, () => this.peerReport(), view.peers, this.p2pClient, bound) };
  }

  /** `PUT /quotas`: through consensus; with `wait`, answers once this peer applied it. */
  async updateQuota(config: QuotaConfig, wait: boolean): Promise<void> {
    const { revision } = await this.controlPlane.putQuota(config);
    if (wait) await this.waitApplied(revision, METADATA_WAIT_MS);
  }

  /** `GET /quotas`' `peers`: every answering peer's usage, this one's included. */
  quotaPeers(): Promise<Record<string, PeerQuotaUsage>> {
    return quotaPeers(this.peerId, this.options.quota, this.view.peers, this.p2pClient);
  }

  /** Stops in the reverse order of the start; each part bounded. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.p2pServer.stop().catch(() => {});
    this.joinHandler?.stop();
    await this.loop?.stop();
    await this.liveness?.stop();
    this.etcd.close();
    await this.p2pClient.close();
    await this.member?.stop();
  }
}
