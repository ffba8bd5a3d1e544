// The asked peer's side of a join (plan 2.3), without transport: the p2p route hands it the
// request and sends back its answer.
// It adds the joiner's etcd member as a learner (a learner is outside the quorum, so a joiner
// that never starts cannot stop the cluster from committing), answers the members the joiner
// starts with, then promotes the learner once it has caught up and registers the peer.
// etcd 3.4 holds one learner at a time: a second joiner is told to retry. A joiner that asks
// again (its answer was lost, it crashed) finds its member: unstarted, it is answered again;
// started although the joiner has no data (it lost it, or `--reinit`), it is removed and added
// anew. A learner that never catches up within the promotion bound is removed, so it does not
// block later joins.

import { setTimeout as sleep } from 'node:timers/promises';
import type { Etcd3 } from 'etcd3';
import {
  EtcdGateway, isAlreadyVoter, isMemberExists, isMemberNotFound, isLearnerRefusal, isNotEnoughStartedMembers, isTooManyLearners, isUnhealthyCluster, type EtcdMemberInfo,
} from './etcd-gateway.js';
import { etcdPeerUrl, joinerUri, joinMismatch, type JoinAdmission, type JoinAnswer, type JoinMember, type JoinRequest, type PeerVersion } from './join-protocol.js';
import type { PeerInfo } from './keys.js';
import { registerPeer } from './peer-registry.js';

export interface JoinHandlerOptions {
  /** The local member's gateway; the local member must be a voter. */
  gateway: EtcdGateway;
  etcd: Etcd3;
  clusterToken: string;
  version: PeerVersion;
  /** How long a learner may take to catch up before it is removed; 30 s by default. */
  promoteTimeoutMs?: number;
  /** Told about promotions that failed (the join itself has been answered by then). */
  onPromoteFailure?: (peerId: number, reason: string) => void;
}

const PROMOTE_TIMEOUT_MS = 30_000;
/** Between promote attempts: a learner catches up in a few hundred ms on loopback. */
const PROMOTE_EVERY_MS = 75;
const RETRY_AFTER_MS = 250;

function retry(reason: string): JoinAnswer {
  return { status: 'retry', reason, retry_after_ms: RETRY_AFTER_MS };
}

export class JoinHandler implements JoinAdmission {
  private readonly promotions = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(private readonly options: JoinHandlerOptions) {}

  async handle(request: JoinRequest): Promise<JoinAnswer> {
    const mismatch = joinMismatch(this.options.version, false, request);
    if (mismatch) return { status: 'refused', reason: mismatch };
    try {
      return await this.admit(request);
    } catch (err) {
      // A learner serves no membership calls, not even the list.
      if (isLearnerRefusal(err)) return retry('the asked peer is still joining the cluster itself');
      throw err;
    }
  }

  private async admit(request: JoinRequest): Promise<JoinAnswer> {
    const uri = joinerUri(request);
    const peerUrl = etcdPeerUrl(uri, request.grpc_port);
    const name = String(request.peer_id);
    const { gateway } = this.options;

    let members = await gateway.memberList();
    const holder = members.find((member) => member.peerURLs.includes(peerUrl));
    if (holder && holder.name !== '' && holder.name !== name) {
      return { status: 'refused', reason: `etcd peer URL ${peerUrl} belongs to peer ${holder.name}; peer ${name} needs its own address or gRPC port` };
    }
    // The joiner has no etcd data (else it would restart, not join): a started member of the
    // same peer is a previous life of it, and would count in the quorum without ever answering.
    for (const stale of members.filter((member) => member.name === name)) {
      try {
        await gateway.memberRemove(stale.id);
      } catch (err) {
        if (!isMemberNotFound(err)) throw err;
      }
    }
    let learner: EtcdMemberInfo;
    if (holder && holder.name === '') {
      learner = holder;
    } else {
      try {
        ({ member: learner, members } = await gateway.memberAdd([peerUrl], { isLearner: true }));
      } catch (err) {
        if (isTooManyLearners(err)) return retry('another peer is joining the cluster');
        if (isMemberExists(err)) return retry('the cluster is changing its members');
        if (isNotEnoughStartedMembers(err)) return retry('too few members of the cluster are running');
        if (isUnhealthyCluster(err)) return retry('a member of the cluster joined or restarted less than 5 s ago');
        throw err;
      }
    }
    this.promoteInBackground(learner.id, request.peer_id, { uri, etcd_member_id: learner.id, etcd_peer_url: peerUrl, version: request.version.quiver });
    return { status: 'accepted', members: initialCluster(members, learner.id, name), cluster_token: this.options.clusterToken, uri, peer_url: peerUrl };
  }

  /** Stops promoting (the peer shuts down) and waits for the promotions to end. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all(this.promotions.values());
  }

  private promoteInBackground(memberId: string, peerId: number, record: PeerInfo): void {
    if (this.promotions.has(memberId) || this.stopping.signal.aborted) return;
    const promotion = this.promote(memberId, peerId, record)
      .catch((err: Error) => this.options.onPromoteFailure?.(peerId, err.message))
      .finally(() => this.promotions.delete(memberId));
    this.promotions.set(memberId, promotion);
  }

  private async promote(memberId: string, peerId: number, record: PeerInfo): Promise<void> {
    const { gateway } = this.options;
    const until = Date.now() + (this.options.promoteTimeoutMs ?? PROMOTE_TIMEOUT_MS);
    let lastError = 'no attempt';
    while (!this.stopping.signal.aborted) {
      try {
        await gateway.memberPromote(memberId);
        break;
      } catch (err) {
        if (isAlreadyVoter(err)) break;
        if (isMemberNotFound(err)) return; // removed meanwhile: a newer join of the peer owns it now
        lastError = (err as Error).message;
      }
      if (Date.now() >= until) {
        await this.removeLearner(memberId);
        throw new Error(`peer ${peerId} did not catch up with the cluster within the promotion bound (${lastError}); its learner member was removed`);
      }
      // An abort ends the pause early; the loop's condition then ends the promotion.
      await sleep(PROMOTE_EVERY_MS, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    }
    if (this.stopping.signal.aborted) return;
    await registerPeer(this.options.etcd, peerId, record);
  }

  private async removeLearner(memberId: string): Promise<void> {
    const member = (await this.options.gateway.memberList()).find((candidate) => candidate.id === memberId);
    if (member?.isLearner) await this.options.gateway.memberRemove(memberId);
  }
}

/** Every member as `--initial-cluster` lists it (etcd checks the joiner's list against its own), the joiner named. */
function initialCluster(members: EtcdMemberInfo[], joinerId: string, joinerName: string): JoinMember[] {
  return members.map((member) => ({ name: member.id === joinerId ? joinerName : member.name, peerURLs: member.peerURLs }));
}
