// A shard's identity in the cluster: its collection and its shard id. It says nothing of where
// the shard's replicas live: each peer maps it to a folder and a worker of its own.

export interface ShardId {
  collection: string;
  shard: number;
}
