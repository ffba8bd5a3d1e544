// Shard key bodies of a custom-sharded collection: CreateShardingKey (PUT /collections/{name}/shards)
// and DropShardingKey (POST /collections/{name}/shards/delete).

import { nonZero, opt, seq, struct, uint, unitEnum, withRule } from './builders.js';
import { MAX_SHARD_NUMBER } from './collection.js';
import { SHARD_KEY } from './common.js';
import { REPLICA_STATES } from '../../replica/replica.js';

export const CREATE_SHARDING_KEY = struct('CreateShardingKey', {
  shard_key: SHARD_KEY,
  shards_number: opt(withRule(nonZero('u32'), { range: { max: MAX_SHARD_NUMBER } })),
  replication_factor: opt(nonZero('u32')),
  placement: opt(seq(uint('u64'))),
  initial_state: opt(unitEnum(REPLICA_STATES)),
}, { required: ['shard_key'] });

export const DROP_SHARDING_KEY = struct('DropShardingKey', { shard_key: SHARD_KEY }, { required: ['shard_key'] });
