// `GET /cluster/telemetry` in a cluster (plan 1.2): Qdrant asks every known peer for its own
// telemetry and merges the answers. Here each peer answers over the p2p port what only it knows:
// its version, its consensus details, and the figures of the replicas it holds. A peer that does
// not answer within the bound (stopped, unreachable, still starting) is reported without them;
// the serving peer's own report is read locally under the same bound.

import type { FastifyInstance } from 'fastify';
import { Timeout } from '../errors.js';
import type { CollectionManager } from '../collection/manager.js';
import type { P2pClient } from '../peer/p2p-client.js';
import { localShardFigures } from '../shard/shard-figures.js';
import type { ClusterView } from './cluster-view.js';
import type { PeerId, PeerInfo } from './keys.js';
import type { ClusterStatusBody, RaftRole } from './raft-info.js';

/** Qdrant's DistributedPeerDetails: the peer's version and its consensus standing as it sees it. */
export interface PeerDetails {
  version: string;
  role: RaftRole | null;
  is_voter: boolean;
  term: number;
  commit: number;
  num_pending_operations: number;
  consensus_thread_status: ClusterStatusBody['consensus_thread_status'];
}

export type ReplicaFigures = ReturnType<typeof localShardFigures>;

/** What one peer reports: its details and its local replicas' figures by collection, then shard id. */
export interface PeerReport {
  details: PeerDetails;
  replicas: Record<string, Record<string, ReplicaFigures>>;
}

/** Every registered peer's report (null: no answer in time), with the view the serving peer places replicas by. */
export interface PeerTelemetry {
  view: ClusterView;
  reports: ReadonlyMap<PeerId, PeerReport | null>;
}

const ROUTE = '/p2p/telemetry';

export function peerDetails(version: string, status: ClusterStatusBody): PeerDetails {
  const raft = status.raft_info;
  return {
    version,
    role: raft.role,
    is_voter: raft.is_voter,
    term: raft.term,
    commit: raft.commit,
    num_pending_operations: raft.pending_operations,
    consensus_thread_status: status.consensus_thread_status,
  };
}

/** The figures of every replica this peer holds, read from that replica itself (never from another peer's copy). */
export async function localReplicaFigures(collections: CollectionManager): Promise<PeerReport['replicas']> {
  const out: PeerReport['replicas'] = {};
  await Promise.all(collections.names().map(async (name) => {
    const shards: Record<string, ReplicaFigures> = {};
    try {
      await Promise.all(collections.get(name).shards.map(async (set) => {
        const local = set.localReplica;
        if (local) shards[String(set.id)] = localShardFigures(await local.run({ type: 'stats' }, null));
      }));
    } catch {
      return; // dropped while being read: reported as holding nothing
    }
    out[name] = shards;
  }));
  return out;
}

/** The p2p route that answers this peer's report (an error until the peer follows the control plane). */
export function peerTelemetryRoute(report: () => Promise<PeerReport>) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get(ROUTE, async () => report());
  };
}

/** `work`, or null once `ms` passed or it failed. */
async function bounded<T>(work: () => Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), ms); });
  try {
    return await Promise.race([work().catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * This peer's own report, read here rather than asked over the network: running out of time is
 * the request's own timeout (Qdrant's 408 for `cluster_telemetry`, as a single node answers),
 * not an unresponsive peer; another failure leaves this peer without details.
 */
async function ownWithin(own: () => Promise<PeerReport>, ms: number): Promise<PeerReport | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(`Operation 'cluster_telemetry' timed out after ${ms / 1000}s`)), ms);
  });
  try {
    return await Promise.race([own().catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Asks every registered peer for its report, this one locally; each bounded by `timeoutMs`. */
export async function gatherPeerReports(
  self: PeerId, own: () => Promise<PeerReport>, peers: ReadonlyMap<PeerId, PeerInfo>, client: P2pClient, timeoutMs: number,
): Promise<Map<PeerId, PeerReport | null>> {
  const answers = await Promise.all([...peers.keys()].map(async (id): Promise<[PeerId, PeerReport | null]> => {
    if (id === self) return [id, await ownWithin(own, timeoutMs)];
    return [id, await bounded(async () => {
      const answer = await client.send(peers.get(id)!.uri, { method: 'GET', path: ROUTE, timeoutMs });
      return answer.statusCode === 200 ? (JSON.parse(answer.body.toString('utf8')) as PeerReport) : null;
    }, timeoutMs)];
  }));
  return new Map(answers);
}
