// The joiner's side of membership (plan 2.3): what this start is (first peer of a new cluster,
// a join, a restart, Qdrant's `--reinit`), and doing it until this peer's etcd member runs.
// As in Qdrant, stored state wins over flags: a peer with its etcd data restarts as the member
// it was, whatever `--bootstrap` says; `--reinit` is the way to make it join again.
// The transport of the join is the caller's (`sendJoin`): this module speaks in messages.

import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Etcd3 } from 'etcd3';
import type { MetaStore } from '../storage/meta-store.js';
import { EtcdGateway, type EtcdStatus } from './etcd-gateway.js';
import { EtcdMember, type EtcdMemberOptions } from './etcd-process.js';
import { etcdPeerUrl, localPeerVersion, type JoinAnswer, type JoinBody, type JoinMember, type PeerVersion } from './join-protocol.js';
import { forgetMembership, recordClusterMember, recordJoined, type NodeIdentity } from './node-identity.js';
import { registerCluster, registerPeer } from './peer-registry.js';

/** The start can not go on as asked (flags against stored state, a join that did not finish in time). */
export class MembershipError extends Error {
  override readonly name = 'MembershipError';
}

/** The asked peer refused this peer for good (another version, a taken address). */
export class JoinRefused extends Error {
  override readonly name = 'JoinRefused';
  constructor(readonly reason: string) {
    super(`cannot join the cluster: ${reason}`);
  }
}

export const NO_URI = 'the first peer of a cluster needs its own address: start it with --uri http://<host>:<p2p port>';

export interface StartFlags {
  /** `--bootstrap`: a peer of the cluster to join. */
  bootstrap?: string;
  /** `--uri`: this peer's p2p URI. */
  uri?: string;
  reinit: boolean;
}

export type StartPlan =
  /** The first peer of a new cluster (or one whose first start stopped before it was registered). */
  | { kind: 'first-peer' }
  /** Ask `bootstrap` to be added; `wipe`: drop the etcd data of a previous membership first. */
  | { kind: 'join'; bootstrap: string; wipe: boolean }
  /** Start the member from its data, as it was. */
  | { kind: 'restart' }
  /** `--reinit` alone: the member becomes the only one of its cluster, keeping its data. */
  | { kind: 'reinit-alone' };

/**
 * What this start is, from the flags, the stored identity and whether the etcd data folder
 * exists. Throws `MembershipError` for starts that would split a cluster or cannot be done.
 */
export function planStart(flags: StartFlags, identity: Pick<NodeIdentity, 'joined'>, etcdDataPresent: boolean): StartPlan {
  if (flags.reinit && flags.bootstrap !== undefined) return { kind: 'join', bootstrap: flags.bootstrap, wipe: etcdDataPresent };
  if (flags.reinit && etcdDataPresent) return { kind: 'reinit-alone' };
  if (etcdDataPresent) {
    // A member that never finished joining has no place to restart in: with a bootstrap peer
    // it joins again from scratch.
    if (!identity.joined && flags.bootstrap !== undefined) return { kind: 'join', bootstrap: flags.bootstrap, wipe: true };
    return { kind: 'restart' };
  }
  if (flags.bootstrap !== undefined) return { kind: 'join', bootstrap: flags.bootstrap, wipe: false };
  if (identity.joined) {
    throw new MembershipError('this peer was a member of a cluster but its etcd data is gone; start it with --bootstrap <URI of a peer> to join the cluster again');
  }
  if (flags.uri === undefined) throw new MembershipError(NO_URI);
  return { kind: 'first-peer' };
}

/** What of the member's command line is this peer's own, whatever the plan. */
export type LocalMemberOptions = Pick<EtcdMemberOptions, 'dataDir' | 'clientPort' | 'clientPortHold' | 'tickMs' | 'binary'>;

export interface MembershipOptions {
  plan: StartPlan;
  identity: NodeIdentity;
  meta: MetaStore<unknown>;
  /** `--uri`; required for a first peer, else derived as the bootstrap peer derives it. */
  uri?: string;
  p2pPort: number;
  /** The port the other members reach this one's on (`cluster.etcd.advertise_port`, else `service.grpc_port`). */
  grpcPort: number;
  /** The port this peer's member listens on for the other members, when not `grpcPort` (a proxy in between). */
  listenPort?: number;
  member: LocalMemberOptions;
  /** A client of the local member (`http://127.0.0.1:<clientPort>`); it connects lazily. */
  etcd: Etcd3;
  /** Sends a join to the plan's bootstrap peer; a throw is a transport failure, retried. */
  sendJoin?: (bootstrap: string, body: JoinBody) => Promise<JoinAnswer>;
  version?: PeerVersion;
  /** Bound of the whole join, retries included; 60 s by default. */
  joinTimeoutMs?: number;
  /** Bound of the wait until the member is a voter with a known leader; 40 s by default. */
  voterTimeoutMs?: number;
}

export interface LocalMembership {
  member: EtcdMember;
  gateway: EtcdGateway;
  clusterToken: string;
}

const JOIN_TIMEOUT_MS = 60_000;
/** Longer than the asked peer's promotion bound, so its verdict comes first. */
const VOTER_TIMEOUT_MS = 40_000;
const STATUS_POLL_MS = 50;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 2_000;

/** Starts this peer's etcd member as `options.plan` says; answers once it runs (and, when it joined or bootstrapped, is a registered voter). */
export async function startMembership(options: MembershipOptions): Promise<LocalMembership> {
  switch (options.plan.kind) {
    case 'first-peer':
      return startFirstPeer(options);
    case 'join':
      return join(options, options.plan.bootstrap, options.plan.wipe);
    case 'restart':
      return restart(options, false);
    case 'reinit-alone':
      return restart(options, true);
  }
}

function memberName(options: MembershipOptions): string {
  return String(options.identity.peerId);
}

function initialClusterOf(members: JoinMember[]): string {
  return members.flatMap((member) => member.peerURLs.map((url) => `${member.name}=${url}`)).join(',');
}

/**
 * etcd binds IPs only: a loopback host binds itself, any other host all interfaces; on `port`,
 * or the advertised one.
 */
export function listenPeerUrl(advertisePeerUrl: string, port?: number): string {
  const url = new URL(advertisePeerUrl);
  const host = url.hostname === 'localhost' ? '127.0.0.1' : url.hostname;
  const loopback = /^127\./.test(host) || host === '[::1]';
  return `http://${loopback ? host : '0.0.0.0'}:${port ?? url.port}`;
}

function startMember(options: MembershipOptions, peerUrl: string, initialCluster: string, state: 'new' | 'existing', token: string, forceNewCluster = false): Promise<EtcdMember> {
  return EtcdMember.start({
    ...options.member,
    name: memberName(options),
    advertisePeerUrl: peerUrl,
    listenPeerUrl: listenPeerUrl(peerUrl, options.listenPort),
    initialCluster,
    initialClusterState: state,
    clusterToken: `quiver-${token}`,
    forceNewCluster,
  });
}

/** What etcd says when a member the cluster removed starts with its old data. */
export const REMOVED_MEMBER = /permanently removed from the cluster/;

/** Why a peer the cluster removed (`DELETE /cluster/peer`) does not start with its old storage. */
export function removedPeerError(peerId: number): MembershipError {
  return new MembershipError(`this peer (id ${peerId}) was removed from the cluster; start it with an empty storage, or with --reinit --bootstrap <URI of a peer> to join again as a new member`);
}

async function startFirstPeer(options: MembershipOptions): Promise<LocalMembership> {
  if (options.uri === undefined) throw new MembershipError(NO_URI);
  const uri = options.uri.replace(/\/+$/, '');
  // A new cluster, a new uuid: a token stored from an earlier membership names another cluster.
  const token = randomUUID();
  const peerUrl = etcdPeerUrl(uri, options.grpcPort);
  await recordClusterMember(options.meta, token, peerUrl);
  const member = await startMember(options, peerUrl, `${memberName(options)}=${peerUrl}`, 'new', token);
  return finishMembership(options, member, token, async (status) => {
    await registerCluster(options.etcd, { uuid: token, created_at: new Date().toISOString() });
    await registerPeer(options.etcd, options.identity.peerId, { uri, etcd_member_id: status.memberId, etcd_peer_url: peerUrl, version: (options.version ?? localPeerVersion()).quiver });
  });
}

async function join(options: MembershipOptions, bootstrap: string, wipe: boolean): Promise<LocalMembership> {
  if (!options.sendJoin) throw new MembershipError('joining a cluster needs a way to reach the bootstrap peer');
  if (wipe) {
    await forgetMembership(options.meta);
    await rm(options.member.dataDir, { recursive: true, force: true });
  }
  const version = options.version ?? localPeerVersion();
  const body: JoinBody = { peer_id: options.identity.peerId, p2p_port: options.p2pPort, grpc_port: options.grpcPort, version, ...(options.uri === undefined ? {} : { uri: options.uri }) };
  const answer = await askUntilAccepted(options.sendJoin, bootstrap, body, options.joinTimeoutMs ?? JOIN_TIMEOUT_MS);
  await recordClusterMember(options.meta, answer.cluster_token, answer.peer_url);
  const member = await startMember(options, answer.peer_url, initialClusterOf(answer.members), 'existing', answer.cluster_token);
  return finishMembership(options, member, answer.cluster_token, (status) =>
    // The asked peer registers this one too; doing it here as well covers its crash in between.
    registerPeer(options.etcd, options.identity.peerId, { uri: answer.uri, etcd_member_id: status.memberId, etcd_peer_url: answer.peer_url, version: version.quiver }));
}

/** Sends the join until the asked peer accepts it (retrying what it asks to retry, and transport failures), within `timeoutMs`. */
export async function askUntilAccepted(sendJoin: NonNullable<MembershipOptions['sendJoin']>, bootstrap: string, body: JoinBody, timeoutMs: number): Promise<Extract<JoinAnswer, { status: 'accepted' }>> {
  const until = Date.now() + timeoutMs;
  let backoff = FIRST_BACKOFF_MS;
  let last = 'no answer yet';
  for (;;) {
    let wait: number;
    try {
      const answer = await sendJoin(bootstrap, body);
      if (answer.status === 'accepted') return answer;
      if (answer.status === 'refused') throw new JoinRefused(answer.reason);
      last = answer.reason;
      wait = answer.retry_after_ms;
    } catch (err) {
      if (err instanceof JoinRefused) throw err;
      last = (err as Error).message;
      wait = backoff;
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
    // Jitter: joiners told to retry together do not come back together.
    wait = Math.round(wait * (0.5 + Math.random()));
    if (Date.now() + wait >= until) throw new MembershipError(`could not join the cluster through ${bootstrap} within ${timeoutMs / 1000} s: ${last}`);
    await sleep(wait);
  }
}

async function restart(options: MembershipOptions, forceNewCluster: boolean): Promise<LocalMembership> {
  const { clusterToken: token, peerUrl } = options.identity;
  if (token === null || peerUrl === null) throw new MembershipError('the etcd data of this peer has no cluster token beside it in the node metadata; start it with --reinit --bootstrap <URI of a peer>');
  // With its data folder present etcd ignores the initial cluster flags, but they must still
  // name this member at the URL it listens on. A member the cluster removed stops at once.
  const member = await startMember(options, peerUrl, `${memberName(options)}=${peerUrl}`, 'existing', token, forceNewCluster).catch((err: Error) => {
    throw REMOVED_MEMBER.test(err.message) ? removedPeerError(options.identity.peerId) : err;
  });
  // A member of a stopped cluster has no quorum until the others are back: a peer that had
  // joined does not wait for it here. One that stopped before it was registered finishes that.
  if (options.identity.joined) return { member, gateway: new EtcdGateway(member.clientUrl), clusterToken: token };
  return finishMembership(options, member, token, async (status) => {
    const uri = (options.uri ?? `http://${new URL(peerUrl).hostname}:${options.p2pPort}`).replace(/\/+$/, '');
    await registerCluster(options.etcd, { uuid: token, created_at: new Date().toISOString() });
    await registerPeer(options.etcd, options.identity.peerId, { uri, etcd_member_id: status.memberId, etcd_peer_url: peerUrl, version: (options.version ?? localPeerVersion()).quiver });
  });
}

/** Waits until the member is a voter that knows its leader, registers, and marks the peer joined; stops the member on failure. */
async function finishMembership(options: MembershipOptions, member: EtcdMember, token: string, register: (status: EtcdStatus) => Promise<void>): Promise<LocalMembership> {
  const gateway = new EtcdGateway(member.clientUrl);
  try {
    const status = await untilVoter(gateway, options.voterTimeoutMs ?? VOTER_TIMEOUT_MS);
    await register(status);
    await recordJoined(options.meta);
  } catch (err) {
    await member.stop();
    throw err;
  }
  return { member, gateway, clusterToken: token };
}

/** Polls the member's status until it is a voter and a leader is known (bounded). */
async function untilVoter(gateway: EtcdGateway, timeoutMs: number): Promise<EtcdStatus> {
  const until = Date.now() + timeoutMs;
  let last = 'no status yet';
  while (Date.now() < until) {
    try {
      const status = await gateway.status();
      if (!status.isLearner && status.leader !== '0') return status;
      last = status.isLearner ? 'the member is still a learner' : 'no leader is elected';
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(STATUS_POLL_MS);
  }
  throw new MembershipError(`the etcd member did not become a voter within ${timeoutMs / 1000} s: ${last}`);
}
