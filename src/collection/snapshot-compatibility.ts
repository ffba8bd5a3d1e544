// Whether a snapshot's data fits a collection that already exists, as Qdrant checks before it
// restores a snapshot into one (a cluster peer's collection recovery keeps the collection, and
// a shard recovery keeps everything but that shard's points): the same dense vectors and the
// same shards, so each part lands in a shard of the same layout.

import { BadInput } from '../errors.js';
import type { CollectionConfig } from './config-model.js';
import type { ShardKeyEntry } from './shard-keys.js';

/** A vector's name, size and distance, as a message shows the vectors of each side. */
export function describeVectors(vectors: readonly { name: string; size: number; distance: string }[]): string {
  return `{${vectors.map((v) => `${v.name || '(default)'}: ${v.size} ${v.distance}`).sort().join(', ')}}`;
}

function vectorsOf(config: CollectionConfig): { name: string; size: number; distance: string }[] {
  return Object.entries(config.params.vectors.byName).map(([name, v]) => ({ name, size: v.size, distance: v.distance }));
}

/** Each named vector's whole configuration, in name order (Qdrant compares the whole dense vector configuration). */
function vectorConfigText(config: CollectionConfig): string {
  const { unnamed, byName } = config.params.vectors;
  return JSON.stringify([unnamed, Object.keys(byName).sort().map((name) => [name, byName[name]])]);
}

const incompatible = (detail: string): BadInput => new BadInput(`Snapshot is not compatible with existing collection: ${detail}`);

/**
 * Refuses (400) a collection snapshot whose dense vectors, shard number or shard keys differ from
 * the existing collection's. The shard keys must be the same keys with the same shard ids: a
 * snapshot part is restored into the shard at the same position.
 */
export function checkCollectionSnapshotFits(
  existing: { config: CollectionConfig; shardKeys?: readonly ShardKeyEntry[] },
  snapshot: { config: CollectionConfig; shardKeys?: readonly ShardKeyEntry[] },
): void {
  if (vectorConfigText(existing.config) !== vectorConfigText(snapshot.config)) {
    throw incompatible(`Collection vectors: ${describeVectors(vectorsOf(existing.config))} Snapshot Vectors: ${describeVectors(vectorsOf(snapshot.config))}`);
  }
  if (existing.config.params.shardNumber !== snapshot.config.params.shardNumber) {
    throw incompatible(`Collection shard number: ${existing.config.params.shardNumber} Snapshot shard number: ${snapshot.config.params.shardNumber}`);
  }
  const keys = (entries: readonly ShardKeyEntry[] | undefined) => JSON.stringify((entries ?? []).map((e) => [e.key, e.shards]));
  if (keys(existing.shardKeys) !== keys(snapshot.shardKeys)) {
    throw incompatible(`Collection shard keys: ${keys(existing.shardKeys)} Snapshot shard keys: ${keys(snapshot.shardKeys)}`);
  }
}
