// The cluster's peers and the cluster itself as the control plane records them (plan 3.1):
// `quiver/cluster` = `{uuid, created_at}`, written once by the first peer;
// `quiver/peers/<peer id>` = `{uri, etcd_member_id, etcd_peer_url, version}`, written when a
// peer's member becomes a voter. Both are create-only: a second writer with the same value
// succeeds without change (a retried join), a different value for a peer replaces the old one
// only by compare-and-swap (a peer that joined again has a new etcd member).

import type { Etcd3, Namespace } from 'etcd3';
import { ServiceError } from '../errors.js';
import { CLUSTER_KEY, clusterNamespace, peerKey, PEERS_PREFIX, type ClusterInfo, type PeerInfo } from './keys.js';

/** Bound of each etcd call made here. */
const CALL_MS = 5_000;
/** Compare-and-swap attempts before giving up: each failure means another writer won a round. */
const CAS_TRIES = 10;

function deadline(): { deadline: Date } {
  return { deadline: new Date(Date.now() + CALL_MS) };
}

/**
 * Writes `value` at `key` unless the key holds a different value already written by someone
 * else: create-only, then idempotent. Answers the value that is stored afterwards.
 */
async function createOnly<T>(etcd: Namespace, key: string, value: T): Promise<T> {
  const json = JSON.stringify(value);
  const answer = await etcd.if(key, 'Create', '==', 0).then(etcd.put(key).value(json)).else(etcd.get(key)).options(deadline()).commit();
  if (answer.succeeded) return value;
  const stored = answer.responses[0].response_range.kvs[0];
  return JSON.parse(stored.value.toString()) as T;
}

/** Records the cluster once; answers the record that holds (the first writer's). */
export function registerCluster(client: Etcd3, record: ClusterInfo): Promise<ClusterInfo> {
  return createOnly(clusterNamespace(client), CLUSTER_KEY, record);
}

/** The cluster's record, or null when no peer has recorded one in this etcd. */
export async function readCluster(client: Etcd3): Promise<ClusterInfo | null> {
  const text = await clusterNamespace(client).get(CLUSTER_KEY).options(deadline()).string();
  return text === null ? null : (JSON.parse(text) as ClusterInfo);
}

/** Records a peer: creates its key, or replaces a stale record (another etcd member) by CAS. */
export async function registerPeer(client: Etcd3, peerId: number, record: PeerInfo): Promise<void> {
  const etcd = clusterNamespace(client);
  const key = peerKey(peerId);
  const json = JSON.stringify(record);
  for (let attempt = 0; attempt < CAS_TRIES; attempt++) {
    const answer = await etcd.if(key, 'Create', '==', 0).then(etcd.put(key).value(json)).else(etcd.get(key)).options(deadline()).commit();
    if (answer.succeeded) return;
    const stored = answer.responses[0].response_range.kvs[0];
    if (stored === undefined) continue; // deleted between the compare and the read: create again
    if (stored.value.toString() === json) return;
    const swapped = await etcd.if(key, 'Mod', '==', stored.mod_revision).then(etcd.put(key).value(json)).options(deadline()).commit();
    if (swapped.succeeded) return;
  }
  throw new ServiceError(`could not register peer ${peerId}: its record kept changing`);
}

/** Every registered peer, by peer id. */
export async function listPeers(client: Etcd3): Promise<Map<number, PeerInfo>> {
  const stored = await clusterNamespace(client).getAll().prefix(PEERS_PREFIX).options(deadline()).strings();
  const peers = new Map<number, PeerInfo>();
  for (const [key, value] of Object.entries(stored)) peers.set(Number(key.slice(PEERS_PREFIX.length)), JSON.parse(value) as PeerInfo);
  return peers;
}
