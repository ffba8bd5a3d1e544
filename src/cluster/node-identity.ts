// What a cluster peer keeps about itself in node metadata, so a restart is the same peer:
// - the peer id (the one telemetry reports too, storage/peer-id.ts), taken from
//   `cluster.peer_id` at the first start (a stored id wins, as in Qdrant);
// - the cluster token (the cluster's uuid; etcd's `--initial-cluster-token` derives from it),
//   drawn by the first peer before its etcd starts, learnt by the others in the join answer,
//   kept with the member's peer URL (a restarted member must listen where the cluster knows it);
// - whether the peer has joined (its member is a voter and it is registered): a data folder of a
//   peer that never finished joining is not a member to restart;
// - the incarnation: counted up and synced at every start before etcd starts. It is the clock id
//   of the peer's write tags, so a restarted peer never reuses a tag a replica already holds
//   (replicas skip a tag they have seen: a reused one would be a lost write);
// - the control plane revision this peer has applied.
// Every value is its own node setting: the apply loop writes the revision often, the rest
// changes once per start or join, and none needs another's read-modify-write.

import type { MetaStore } from '../storage/meta-store.js';
import { loadPeerId } from '../storage/peer-id.js';

const MEMBER = 'cluster_member';
const JOINED = 'cluster_joined';
const INCARNATION = 'cluster_incarnation';
const APPLIED_REVISION = 'cluster_applied_revision';

export interface NodeIdentity {
  peerId: number;
  /** The cluster's uuid; null until this peer bootstraps or is answered a join. */
  clusterToken: string | null;
  /** The etcd peer URL the cluster knows this peer's member by; null with the token. */
  peerUrl: string | null;
  joined: boolean;
  /** This start's incarnation: 1 at the first start, one more at each. */
  incarnation: number;
  /** The control plane revision applied last; 0 when none. */
  appliedRevision: number;
}

type Meta = MetaStore<unknown>;

/**
 * Opens this start's identity: counts the incarnation up and syncs it before answering, so the
 * caller may start etcd (and tag writes) only afterwards. `configuredPeerId` (`cluster.peer_id`)
 * names the peer at its first start only: as in Qdrant, a stored id wins (storage/peer-id.ts).
 */
export async function openNodeIdentity(meta: Meta, configuredPeerId?: number): Promise<NodeIdentity> {
  const joined = (await meta.nodeSetting<boolean>(JOINED)) === true;
  const peerId = await loadPeerId(meta, configuredPeerId ?? null);
  const incarnation = ((await meta.nodeSetting<number>(INCARNATION)) ?? 0) + 1;
  await meta.putNodeSetting(INCARNATION, incarnation);
  const member = await meta.nodeSetting<ClusterMember>(MEMBER);
  return {
    peerId,
    clusterToken: member?.token ?? null,
    peerUrl: member?.peer_url ?? null,
    joined,
    incarnation,
    appliedRevision: (await meta.nodeSetting<number>(APPLIED_REVISION)) ?? 0,
  };
}

interface ClusterMember {
  token: string;
  peer_url: string;
}

/** Keeps the cluster's token and the member's peer URL; written before the member starts with them. */
export async function recordClusterMember(meta: Meta, token: string, peerUrl: string): Promise<void> {
  await meta.putNodeSetting(MEMBER, { token, peer_url: peerUrl } satisfies ClusterMember);
}

/** Marks the peer a full member: its etcd member is a voter and it is registered. */
export async function recordJoined(meta: Meta): Promise<void> {
  await meta.putNodeSetting(JOINED, true);
}

export async function recordAppliedRevision(meta: Meta, revision: number): Promise<void> {
  await meta.putNodeSetting(APPLIED_REVISION, revision);
}

/**
 * Forgets the membership before joining again (`--reinit`, or a join that never finished): the
 * peer keeps its id and incarnation, and will learn the token and the state from the cluster.
 */
export async function forgetMembership(meta: Meta): Promise<void> {
  await meta.putNodeSetting(JOINED, false);
  await meta.putNodeSetting(APPLIED_REVISION, 0);
}
