// The joiner's side of membership when the control plane is in an external etcd
// (`cluster.etcd.endpoints`, Quiver's own setting): the peer runs no member of its own, and
// entering the cluster is being registered in the one that etcd holds. The starts are the ones
// membership.ts plans, with "etcd data present" read as "this peer recorded a cluster":
// - first peer: records the cluster in etcd (create-only). One etcd holds one Quiver cluster's
//   control plane, so an etcd that holds another cluster refuses the peer;
// - join: the bootstrap peer registers the joiner (deriving its URI when it gave none, as with
//   members) if the cluster in the joiner's etcd is its own: peers given different endpoints
//   would otherwise each follow a control plane of their own;
// - restart: the cluster in etcd must still be the one this peer recorded;
// - `--reinit` with a bootstrap peer joins again; alone it is refused. In Qdrant it makes the peer
//   the only voter of its consensus, to recover a cluster that lost a quorum of peers; here the
//   consensus is etcd's, which peers going away cannot break: peers that are gone for good are
//   removed with `DELETE /cluster/peer`.

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Etcd3 } from 'etcd3';
import { EtcdGateway, type EtcdStatus } from './etcd-gateway.js';
import { localPeerVersion, type JoinBody } from './join-protocol.js';
import { askUntilAccepted, MembershipError, NO_URI, type MembershipOptions } from './membership.js';
import { forgetMembership, recordClusterMember, recordJoined } from './node-identity.js';
import { readCluster, registerCluster, registerPeer } from './peer-registry.js';

/** A peer's hold on an external etcd: the endpoints `/cluster` reads etcd's status from. */
export interface ExternalMembership {
  endpoints: EtcdGateway[];
  clusterToken: string;
}

export type ExternalMembershipOptions = Pick<MembershipOptions, 'plan' | 'identity' | 'meta' | 'uri' | 'p2pPort' | 'grpcPort' | 'sendJoin' | 'version' | 'joinTimeoutMs'> & {
  /** A client of the external etcd. */
  etcd: Etcd3;
  /** Its client URLs (`cluster.etcd.endpoints`). */
  endpoints: string[];
  /** Bound of a restart's wait for the etcd to answer; 120 s by default. */
  reachTimeoutMs?: number;
};

const JOIN_TIMEOUT_MS = 60_000;
const REACH_TIMEOUT_MS = 120_000;
const READ_RETRY_MS = 250;

const REINIT_ALONE = '--reinit without --bootstrap makes a peer the only voter of its consensus; with cluster.etcd.endpoints the consensus is the external etcd\'s, which peers leaving does not break: start the peer without --reinit, and remove peers that are gone with DELETE /cluster/peer';

/** Registers this peer in the cluster the external etcd holds, as `options.plan` says. */
export async function startExternalMembership(options: ExternalMembershipOptions): Promise<ExternalMembership> {
  const endpoints = options.endpoints.map((url) => new EtcdGateway(url.replace(/\/+$/, '')));
  const { plan, identity, meta } = options;
  switch (plan.kind) {
    case 'first-peer': {
      if (options.uri === undefined) throw new MembershipError(NO_URI);
      // Recorded before etcd sees it: a first start cut short restarts as this cluster's first peer.
      const token = randomUUID();
      await recordClusterMember(meta, token, '');
      await enter(options, token, options.uri);
      return { endpoints, clusterToken: token };
    }
    case 'join':
      return { endpoints, clusterToken: await join(options, plan.bootstrap, plan.wipe) };
    case 'restart': {
      const token = identity.clusterToken!;
      if (!identity.joined) {
        // A first peer whose start stopped before it was registered finishes that.
        if (options.uri === undefined) throw new MembershipError(NO_URI);
        await enter(options, token, options.uri);
      } else {
        await checkSameCluster(options, token);
      }
      return { endpoints, clusterToken: token };
    }
    case 'reinit-alone':
      throw new MembershipError(REINIT_ALONE);
  }
}

function endpointList(options: ExternalMembershipOptions): string {
  return options.endpoints.join(', ');
}

/** Records the cluster (create-only) and this peer in it. */
async function enter(options: ExternalMembershipOptions, token: string, uri: string): Promise<void> {
  const stored = await registerCluster(options.etcd, { uuid: token, created_at: new Date().toISOString() });
  if (stored.uuid !== token) {
    throw new MembershipError(`the etcd at ${endpointList(options)} already holds another Quiver cluster (${stored.uuid}): start this peer with --bootstrap <URI of one of its peers> to join it, or give it an etcd of its own`);
  }
  await registerPeer(options.etcd, options.identity.peerId, { uri: uri.replace(/\/+$/, ''), etcd_member_id: '', etcd_peer_url: '', version: (options.version ?? localPeerVersion()).quiver });
  await recordJoined(options.meta);
}

async function join(options: ExternalMembershipOptions, bootstrap: string, wipe: boolean): Promise<string> {
  if (!options.sendJoin) throw new MembershipError('joining a cluster needs a way to reach the bootstrap peer');
  if (wipe) await forgetMembership(options.meta);
  const version = options.version ?? localPeerVersion();
  // The asked peer compares it with its own before registering this one (external-join-handler.ts).
  const stored = await readCluster(options.etcd);
  const body: JoinBody = {
    peer_id: options.identity.peerId, p2p_port: options.p2pPort, grpc_port: options.grpcPort, version, external_etcd: { cluster: stored?.uuid ?? null },
    ...(options.uri === undefined ? {} : { uri: options.uri }),
  };
  const answer = await askUntilAccepted(options.sendJoin, bootstrap, body, options.joinTimeoutMs ?? JOIN_TIMEOUT_MS);
  await recordClusterMember(options.meta, answer.cluster_token, '');
  await recordJoined(options.meta);
  return answer.cluster_token;
}

/** A restarted peer's etcd must still hold its cluster (waiting, bounded, for the etcd to answer). */
async function checkSameCluster(options: ExternalMembershipOptions, token: string): Promise<void> {
  const until = Date.now() + (options.reachTimeoutMs ?? REACH_TIMEOUT_MS);
  for (;;) {
    let stored: Awaited<ReturnType<typeof readCluster>>;
    try {
      stored = await readCluster(options.etcd);
    } catch (err) {
      if (Date.now() > until) throw err;
      await sleep(READ_RETRY_MS);
      continue;
    }
    if (stored?.uuid === token) return;
    throw new MembershipError(`this peer belongs to cluster ${token}, but the etcd at ${endpointList(options)} holds ${stored === null ? 'no cluster' : `cluster ${stored.uuid}`}: start it with the cluster's cluster.etcd.endpoints, or with --reinit --bootstrap <URI of a peer> to join the cluster that etcd holds`);
  }
}

/** etcd's status from the first endpoint that answers (`/cluster`'s raft_info). */
export async function externalStatus(membership: ExternalMembership): Promise<EtcdStatus> {
  let last: unknown;
  for (const endpoint of membership.endpoints) {
    try {
      return await endpoint.status();
    } catch (err) {
      last = err;
    }
  }
  throw last;
}
