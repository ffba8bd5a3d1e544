// Custom sharding (Qdrant's `sharding_method: custom`): the user names shard keys, each key owns
// its own shards, and every write says which key(s) it goes to. This module holds the selectors
// and the one routing rule both reads and writes follow: which shards a selector reaches.

import { BadInput } from '../errors.js';
import { fallbackShardKeysInactive, fallbackShardKeysNotFound, shardKeyNotFound } from '../messages.js';
import type { ShardKey } from '../model.js';

/** One key, many keys, or a key with a fallback key used while the target key does not exist or does not serve. */
export type ShardKeySelector = ShardKey | ShardKey[] | { target: ShardKey; fallback: ShardKey };

/** A custom-sharded collection's key and the ids of its shards (persisted with the collection). */
export interface ShardKeyEntry {
  key: ShardKey;
  shards: number[];
}

/** What routing needs of a shard: its id and, in a custom-sharded collection, the key it belongs to. */
export interface RoutedShard {
  /** Qdrant's shard id: 0..n-1 with automatic sharding; numbered from 1 as custom keys are created. */
  readonly id: number;
  readonly shardKey?: ShardKey;
  /** Whether one of its replicas is Active (a fallback selector routes to a target key only then). */
  readonly hasActiveReplica: boolean;
}

/**
 * The shards of one collection. With automatic sharding `keys` is null and a point's shard is a
 * hash of its id over all shards; with custom sharding each key has its own shards and the hash
 * picks among the shards of the key the request names.
 */
export interface ShardLayout<S extends RoutedShard = RoutedShard> {
  keys: ShardKeyEntry[] | null;
  shards: readonly S[];
}

/** Keys compare by type and value: the string "1" and the number 1 are different keys. */
function entryOf(layout: ShardLayout, key: ShardKey): ShardKeyEntry | undefined {
  return layout.keys?.find((e) => e.key === key);
}

function shardsOf<S extends RoutedShard>(layout: ShardLayout<S>, entry: ShardKeyEntry): S[] {
  return entry.shards.map((id) => layout.shards.find((s) => s.id === id)!);
}

function isFallback(selector: ShardKeySelector): selector is { target: ShardKey; fallback: ShardKey } {
  return typeof selector === 'object' && !Array.isArray(selector);
}

/**
 * The key a fallback selector routes to (Qdrant's tiered multitenancy): the target key when it
 * has shards and each has an Active replica; else the fallback key, if it exists. A target key
 * still being filled (`replicate_points`, all its replicas Partial) takes no write here: the copy
 * from the fallback key's shard passes on what the fallback key takes (Qdrant writes to both).
 */
function fallbackEntry(layout: ShardLayout, { target, fallback }: { target: ShardKey; fallback: ShardKey }): ShardKeyEntry {
  const targetKey = entryOf(layout, target);
  const fallbackKey = entryOf(layout, fallback);
  if (targetKey && targetKey.shards.length > 0 && shardsOf(layout, targetKey).every((s) => s.hasActiveReplica)) return targetKey;
  if (fallbackKey) return fallbackKey;
  if (targetKey) throw fallbackShardKeysInactive(target, fallback);
  throw fallbackShardKeysNotFound(target, fallback);
}

/** The shards a read reaches: all of them without a selector, else those of the selected keys. */
export function readShards<S extends RoutedShard>(layout: ShardLayout<S>, selector: ShardKeySelector | null | undefined): S[] {
  if (selector === null || selector === undefined) return [...layout.shards];
  if (isFallback(selector)) return shardsOf(layout, fallbackEntry(layout, selector));
  const keys = Array.isArray(selector) ? selector : [selector];
  const out: S[] = [];
  for (const key of keys) {
    const entry = entryOf(layout, key);
    if (!entry) throw shardKeyNotFound(key);
    for (const shard of shardsOf(layout, entry)) if (!out.includes(shard)) out.push(shard);
  }
  return out;
}

/**
 * The shard groups a write goes to: one group per selected key (a point is written under each
 * key it names), or all shards as one group with automatic sharding. Within a group a point's
 * shard is the hash of its id.
 */
export function writeGroups<S extends RoutedShard>(layout: ShardLayout<S>, selector: ShardKeySelector | null | undefined): S[][] {
  if (selector === null || selector === undefined) {
    if (layout.keys !== null) throw new BadInput('Shard key not specified');
    return [[...layout.shards]];
  }
  if (isFallback(selector)) return [shardsOf(layout, fallbackEntry(layout, selector))];
  const keys = Array.isArray(selector) ? selector : [selector];
  if (keys.length === 0) throw new BadInput('Empty shard keys selection');
  const groups: S[][] = [];
  const seen: ShardKeyEntry[] = [];
  for (const key of keys) {
    const entry = entryOf(layout, key);
    if (!entry) throw new BadInput(`Shard key ${key} not found`);
    if (seen.includes(entry)) continue;
    seen.push(entry);
    groups.push(shardsOf(layout, entry));
  }
  return groups;
}

/** A shard's position in the group that routes to it: which of how many (snapshot parts are checked against it). */
export function routeOf<S extends RoutedShard>(layout: ShardLayout<S>, shard: S): { index: number; count: number } {
  const group = shard.shardKey === undefined ? layout.shards : shardsOf(layout, entryOf(layout, shard.shardKey)!);
  return { index: group.indexOf(shard), count: group.length };
}
