// Where a new collection's (or shard key's) shards go, as Qdrant distributes them
// (`ShardDistributionProposal`): each shard gets min(replication_factor, peers) replicas, on
// distinct peers, taken least-loaded first. Load counts only the shards placed by this one
// proposal, as in Qdrant. Ties go to a random bias drawn once per peer and proposal (so many
// small collections do not all land on the lowest peer ids), then to the lower peer id.
// Pure: the random source is a parameter, so a test can fix it.

import type { PeerId } from './keys.js';

/** A source of numbers in [0, 1), like Math.random. */
export type RandomSource = () => number;

/** Peer ids by shard id, each list in the order the peers were chosen. */
export type ShardPlacement = Map<number, PeerId[]>;

/**
 * Qdrant's default `shard_number` for automatic sharding in a cluster: `shard_number_per_node`
 * (1 unless configured) times the number of known peers, live or not.
 */
export function defaultShardNumber(peerCount: number, shardNumberPerNode = 1): number {
  return Math.max(1, shardNumberPerNode * peerCount);
}

interface PeerLoad {
  peer: PeerId;
  bias: number;
  shards: number;
}

function lighter(a: PeerLoad, b: PeerLoad): number {
  return a.shards - b.shards || a.bias - b.bias || a.peer - b.peer;
}

/**
 * Replicas for each of `shardIds` among `peers` (at least one). The peer lists are distinct per
 * shard; over the proposal, peers' shard counts differ by at most one.
 */
export function distributeShards(shardIds: readonly number[], replicationFactor: number, peers: readonly PeerId[], random: RandomSource = Math.random): ShardPlacement {
  const distinct = [...new Set(peers)];
  if (distinct.length === 0) throw new RangeError('shards cannot be placed without peers');
  const loads: PeerLoad[] = distinct.map((peer) => ({ peer, bias: random(), shards: 0 }));
  const replicas = Math.max(1, Math.min(replicationFactor, loads.length));
  const placement: ShardPlacement = new Map();
  for (const shard of shardIds) {
    // Peers are few (a heap buys nothing): sort, take the lightest, count them.
    const chosen = [...loads].sort(lighter).slice(0, replicas);
    for (const load of chosen) load.shards++;
    placement.set(shard, chosen.map((l) => l.peer));
  }
  return placement;
}
