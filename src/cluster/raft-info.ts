// The body of `GET /cluster` in a cluster (plan 1.2, 3.6), from what stands in for Qdrant's
// Raft: the local etcd member's status, the registered peers, this peer's apply loop (its
// backlog and when it last heard from etcd) and the p2p client's send failures.
// etcd's raft maps onto Qdrant's: term = raftTerm, commit = raftIndex, leader = the peer whose
// etcd member leads, role from who leads, is_voter = not a learner (etcd learners follow).

import type { EtcdStatus } from './etcd-gateway.js';
import type { SendFailures } from '../peer/p2p-client.js';
import type { JsonValue } from '../model.js';
import type { PeerInfo } from './keys.js';

export type ConsensusState =
  | { state: 'working'; lastUpdate: Date }
  | { state: 'stopped' }
  | { state: 'stopped_with_err'; error: string };

export interface RaftInfoInputs {
  peerId: number;
  status: EtcdStatus;
  peers: ReadonlyMap<number, Pick<PeerInfo, 'uri' | 'etcd_member_id'>>;
  /**
   * Whether this peer's own etcd member takes part in etcd's raft. Without one (an external
   * etcd) no peer leads or votes: `leader` is null, `is_voter` false, and the role `Follower`
   * while etcd has a leader (null while it elects one).
   */
  votes: boolean;
  /** Control plane events received and not applied yet. */
  pendingOperations: number;
  consensus: ConsensusState;
  /** By peer URI, as the p2p client counts them (Qdrant's shape already). */
  sendFailures: Readonly<Record<string, SendFailures>>;
}

export type RaftRole = 'Leader' | 'Follower' | 'Candidate';

export interface ClusterStatusBody {
  status: 'enabled';
  peer_id: number;
  peers: Record<string, { uri: string }>;
  raft_info: { term: number; commit: number; pending_operations: number; leader: number | null; role: RaftRole | null; is_voter: boolean };
  consensus_thread_status:
    | { consensus_thread_status: 'working'; last_update: string }
    | { consensus_thread_status: 'stopped' }
    | { consensus_thread_status: 'stopped_with_err'; err: string };
  message_send_failures: Record<string, SendFailures>;
}

/** Qdrant prints peer URIs parsed, hence with a path of `/`. */
export function printedUri(uri: string): string {
  return new URL(uri).href;
}

function roleOf(status: EtcdStatus): RaftRole {
  if (status.leader === '0') return 'Candidate';
  return status.leader === status.memberId ? 'Leader' : 'Follower';
}

export function clusterStatus(inputs: RaftInfoInputs): ClusterStatusBody {
  const { status } = inputs;
  const peers: ClusterStatusBody['peers'] = {};
  let leader: number | null = null;
  for (const [peerId, record] of inputs.peers) {
    peers[String(peerId)] = { uri: printedUri(record.uri) };
    if (record.etcd_member_id === status.leader) leader = peerId;
  }
  return {
    status: 'enabled',
    peer_id: inputs.peerId,
    peers,
    raft_info: {
      term: status.raftTerm,
      commit: status.raftIndex,
      pending_operations: inputs.pendingOperations,
      leader,
      role: inputs.votes ? roleOf(status) : status.leader === '0' ? null : 'Follower',
      is_voter: inputs.votes && !status.isLearner,
    },
    consensus_thread_status: consensusThreadStatus(inputs.consensus),
    message_send_failures: { ...inputs.sendFailures },
  };
}

function consensusThreadStatus(consensus: ConsensusState): ClusterStatusBody['consensus_thread_status'] {
  switch (consensus.state) {
    case 'working':
      return { consensus_thread_status: 'working', last_update: consensus.lastUpdate.toISOString() };
    case 'stopped':
      return { consensus_thread_status: 'stopped' };
    case 'stopped_with_err':
      return { consensus_thread_status: 'stopped_with_err', err: consensus.error };
  }
}

/** The `cluster` section of `/telemetry` (Qdrant's ClusterTelemetry) for a node-wide caller. */
export interface ClusterTelemetry {
  enabled: boolean;
  status?: {
    number_of_peers: number;
    term: number;
    commit: number;
    pending_operations: number;
    role: RaftRole | null;
    is_voter: boolean;
    peer_id?: number;
    consensus_thread_status: ClusterStatusBody['consensus_thread_status'];
  };
  peers?: ClusterStatusBody['peers'];
  /** Qdrant's PeerMetadata by peer id: the version each peer registered with. */
  peer_metadata?: Record<string, { version: string }>;
  metadata?: Record<string, JsonValue>;
}

/**
 * The section from the peer's `/cluster` body, the registered peers and the metadata keys: the
 * status and the metadata from details level 1 (the metadata only when some key holds a value),
 * the peers from level 2, each peer's version from level 3; anonymized telemetry leaves the peer
 * id out, as Qdrant does.
 */
export function clusterTelemetrySection(
  body: ClusterStatusBody, registered: ReadonlyMap<number, Pick<PeerInfo, 'version'>>, metadata: ReadonlyMap<string, JsonValue>, level: number, anonymize: boolean,
): ClusterTelemetry {
  const { raft_info: raft } = body;
  const held = [...metadata].filter(([, value]) => value !== null);
  return {
    enabled: true,
    ...(level >= 1 ? {
      status: {
        number_of_peers: Object.keys(body.peers).length,
        term: raft.term,
        commit: raft.commit,
        pending_operations: raft.pending_operations,
        role: raft.role,
        is_voter: raft.is_voter,
        ...(anonymize ? {} : { peer_id: body.peer_id }),
        consensus_thread_status: body.consensus_thread_status,
      },
    } : {}),
    ...(level >= 2 ? { peers: body.peers } : {}),
    ...(level >= 3 ? { peer_metadata: Object.fromEntries([...registered].map(([id, peer]) => [String(id), { version: peer.version }])) } : {}),
    ...(level >= 1 && held.length > 0 ? { metadata: Object.fromEntries(held) } : {}),
  };
}
