// A collection's shards as Qdrant answers about them (GET /collections/{name}/cluster and
// /shards), and the node's cluster status (GET /cluster).

import { bool, seq, str, uint, unitEnum } from '../builders.js';
import { REPLICA_STATES } from '../../../replica/replica.js';
import { SHARD_KEY } from './points.js';
import { closed, COUNT, DATE_TIME, nullable } from './shape.js';

export const REPLICA_STATE = unitEnum(REPLICA_STATES);
const SHARD_ID = uint('u32');
const PEER_ID = uint('u64');

export const SHARD_TRANSFER_INFO = closed({
  shard_id: SHARD_ID,
  to_shard_id: nullable(SHARD_ID),
  from: PEER_ID,
  to: PEER_ID,
  sync: bool(),
  method: nullable(unitEnum(['stream_records', 'snapshot', 'wal_delta', 'resharding_stream_records'])),
  comment: nullable(str()),
}, ['shard_id', 'from', 'to', 'sync']);

export const RESHARDING_INFO = closed({
  direction: unitEnum(['up', 'down']),
  shard_id: SHARD_ID,
  peer_id: PEER_ID,
  shard_key: nullable(SHARD_KEY),
}, ['direction', 'shard_id', 'peer_id']);

export const COLLECTION_CLUSTER_INFO = closed({
  peer_id: PEER_ID,
  shard_count: COUNT,
  local_shards: seq(closed({ shard_id: SHARD_ID, shard_key: nullable(SHARD_KEY), points_count: COUNT, state: REPLICA_STATE }, ['shard_id', 'points_count', 'state'])),
  remote_shards: seq(closed({ shard_id: SHARD_ID, shard_key: nullable(SHARD_KEY), peer_id: PEER_ID, state: REPLICA_STATE }, ['shard_id', 'peer_id', 'state'])),
  shard_transfers: seq(SHARD_TRANSFER_INFO),
  resharding_operations: nullable(seq(RESHARDING_INFO)),
}, ['peer_id', 'shard_count', 'local_shards', 'remote_shards', 'shard_transfers']);

export const SHARD_KEYS_RESPONSE = closed({ shard_keys: nullable(seq(closed({ key: SHARD_KEY }, ['key']))) });

/** ConsensusThreadStatus, tagged by its `consensus_thread_status` field. */
export const CONSENSUS_THREAD_STATUS = {
  oneOf: [
    closed({ consensus_thread_status: unitEnum(['working']), last_update: DATE_TIME }, ['consensus_thread_status', 'last_update']),
    closed({ consensus_thread_status: unitEnum(['stopped']) }, ['consensus_thread_status']),
    closed({ consensus_thread_status: unitEnum(['stopped_with_err']), err: str() }, ['consensus_thread_status', 'err']),
  ],
};

export const STATE_ROLE = unitEnum(['Follower', 'Candidate', 'Leader', 'PreCandidate']);

/** ClusterStatus: `disabled` without consensus (as on Quiver's single node), or the raft state. */
export const CLUSTER_STATUS = {
  oneOf: [
    closed({ status: unitEnum(['disabled']) }, ['status']),
    closed({
      status: unitEnum(['enabled']),
      peer_id: PEER_ID,
      peers: { type: 'object', additionalProperties: closed({ uri: str() }, ['uri']) },
      raft_info: closed({
        term: uint('u64'), commit: uint('u64'), pending_operations: COUNT, leader: nullable(PEER_ID), role: nullable(STATE_ROLE), is_voter: bool(),
      }, ['term', 'commit', 'pending_operations', 'is_voter']),
      consensus_thread_status: CONSENSUS_THREAD_STATUS,
      message_send_failures: {
        type: 'object',
        additionalProperties: closed({ count: COUNT, latest_error: nullable(str()), latest_error_timestamp: nullable(DATE_TIME) }, ['count']),
      },
    }, ['status', 'peer_id', 'peers', 'raft_info', 'consensus_thread_status', 'message_send_failures']),
  ],
};
