// What the cluster tests ask of a peer's REST API: a result that must be 200, the cluster formed
// (every peer listing every peer, one leader agreed), and where a collection's replicas are.

import { call } from './api-http.js';
import { until, type ClusterPeer } from './cluster.js';

type Envelope<T> = { result: T; status: unknown };

/** The envelope's result of a request that must answer 200 (else throws with the answer). */
export async function result<T>(peer: ClusterPeer, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await call(peer.url, method, path, body);
  if (answer.status !== 200) throw new Error(`${method} ${path} through ${peer.url}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return (answer.body as Envelope<T>).result;
}

interface ClusterBody {
  peer_id: number;
  peers: Record<string, unknown>;
  raft_info: { leader: number | null };
}

/**
 * Waits (bounded) until every peer lists all of `peers` and they agree on one leader; answers
 * each peer's id, in the peers' order, and the leader's.
 */
export async function formed(peers: readonly ClusterPeer[], ms = 60_000): Promise<{ ids: number[]; leader: number }> {
  const bodies = await until(`${peers.length} peers with one leader`, async () => {
    const all = await Promise.all(peers.map((p) => result<ClusterBody>(p, 'GET', '/cluster')));
    const leaders = new Set(all.map((b) => b.raft_info.leader));
    return all.every((b) => Object.keys(b.peers).length === peers.length && b.raft_info.leader !== null) && leaders.size === 1 && all;
  }, ms);
  return { ids: bodies.map((b) => b.peer_id), leader: bodies[0].raft_info.leader! };
}

export interface ShardTransferInfo {
  shard_id: number;
  from: number;
  to: number;
  sync: boolean;
  method: string;
  comment?: string;
}

export interface CollectionClusterInfo {
  peer_id: number;
  local_shards: { shard_id: number; state: string; points_count: number }[];
  remote_shards: { shard_id: number; peer_id: number; state: string }[];
  shard_transfers: ShardTransferInfo[];
}

/** Every replica's state as `peer` sees the collection, keyed `<shard>@<peer id>` in key order, and the transfers under way. */
export async function replicaStates(peer: ClusterPeer, collection: string): Promise<{ states: Map<string, string>; transfers: ShardTransferInfo[] }> {
  const info = await result<CollectionClusterInfo>(peer, 'GET', `/collections/${collection}/cluster`);
  const entries: [string, string][] = [
    ...info.local_shards.map((s): [string, string] => [`${s.shard_id}@${info.peer_id}`, s.state]),
    ...info.remote_shards.map((s): [string, string] => [`${s.shard_id}@${s.peer_id}`, s.state]),
  ];
  return { states: new Map(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), transfers: info.shard_transfers };
}

/**
 * Whether every peer sees every replica of the collection Active and no transfer under way;
 * when not, `lastSeen` (if given) keeps what each peer saw, for the message of a wait that timed out.
 */
export async function allActive(peers: readonly ClusterPeer[], collection: string, lastSeen?: { text: string }): Promise<boolean> {
  const seen = await Promise.all(peers.map((p) => replicaStates(p, collection)));
  const active = seen.every(({ states, transfers }) => transfers.length === 0 && states.size > 0 && [...states.values()].every((s) => s === 'Active'));
  if (!active && lastSeen) lastSeen.text = seen.map(({ states, transfers }, i) => `${peers[i].url}: ${JSON.stringify([...states])} transfers ${JSON.stringify(transfers)}`).join('\n');
  return active;
}
