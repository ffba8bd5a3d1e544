// ClusterOperations (POST /collections/{name}/cluster): an untagged enum of one-key objects, each
// naming an operator's change of the collection's shards and replicas.

import { FILTER, opt, struct, uint, unitEnum, untagged, withRule } from './builders.js';
import { SHARD_KEY } from './common.js';
import { CREATE_SHARDING_KEY, DROP_SHARDING_KEY } from './shard-keys.js';

export const SHARD_TRANSFER_METHODS = ['stream_records', 'snapshot', 'wal_delta', 'resharding_stream_records'] as const;

const METHOD = unitEnum(SHARD_TRANSFER_METHODS);

function operation(name: string, key: string, body: ReturnType<typeof struct>) {
  return struct(`${name}Operation`, { [key]: body }, { required: [key] });
}

function transfer(name: string, withMethod: 'optional' | 'required' | 'none') {
  const fields = { shard_id: uint('u32'), to_shard_id: opt(uint('u32')), to_peer_id: uint('u64'), from_peer_id: uint('u64') };
  const required = ['shard_id', 'to_peer_id', 'from_peer_id'];
  const body = withMethod === 'none'
    ? struct(name, fields, { required })
    : struct(name, { ...fields, method: withMethod === 'optional' ? opt(METHOD) : METHOD }, { required: withMethod === 'required' ? [...required, 'method'] : required });
  return withRule(body, { differentPeers: true, field: 'to_peer_id' });
}

export const CLUSTER_OPERATIONS = untagged('ClusterOperations', [
  operation('MoveShard', 'move_shard', transfer('MoveShard', 'optional')),
  operation('ReplicateShard', 'replicate_shard', transfer('ReplicateShard', 'optional')),
  operation('AbortTransfer', 'abort_transfer', transfer('AbortShardTransfer', 'none')),
  operation('DropReplica', 'drop_replica', struct('Replica', { shard_id: uint('u32'), peer_id: uint('u64') }, { required: ['shard_id', 'peer_id'] })),
  operation('CreateShardingKey', 'create_sharding_key', CREATE_SHARDING_KEY),
  operation('DropShardingKey', 'drop_sharding_key', DROP_SHARDING_KEY),
  operation('RestartTransfer', 'restart_transfer', transfer('RestartTransfer', 'required')),
  operation('StartResharding', 'start_resharding', struct('StartResharding', { direction: unitEnum(['up', 'down']), peer_id: opt(uint('u64')), shard_key: opt(SHARD_KEY) }, { required: ['direction'] })),
  operation('AbortResharding', 'abort_resharding', struct('AbortResharding', {})),
  operation('ReplicatePoints', 'replicate_points', struct('ReplicatePoints', { filter: opt(FILTER), from_shard_key: SHARD_KEY, to_shard_key: SHARD_KEY }, { required: ['from_shard_key', 'to_shard_key'] })),
]);
