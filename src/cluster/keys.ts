// The cluster's shared state as it is kept in etcd: one key per thing that changes on its own
// (a collection's record, a shard's replica states, the alias table, ...), under the prefix
// `quiver/`, each holding JSON. Keys here are relative to that prefix: the control plane and the
// apply loop work on `clusterNamespace(client)`, which adds it, so `peers/7` here is the key
// `quiver/peers/7` in etcd. Names a user chooses (collections, metadata keys) are written with
// encodeURIComponent: a collection name may hold `/`, which would otherwise split a key.

import { isTransferMethod, type TransferMethod } from '../replica/transfer-method.js';
import type { Etcd3, Namespace } from 'etcd3';
import type { CollectionRecord } from '../collection/manager.js';
import { longIntegerLiterals, mayHoldLongIntegers } from '../json/integer-literals.js';
import { withExactIntegers } from '../json/integers.js';
import { printJson } from '../json/print.js';
import type { JsonValue, ShardKey } from '../model.js';
import type { QuotaConfig } from '../quota/config.js';
import { REPLICA_STATES, type ReplicaState } from '../replica/replica.js';

export const CLUSTER_PREFIX = 'quiver/';

/** A Quiver peer id: a whole number below 2^53, written in decimal in keys. */
export type PeerId = number;

/** The client seen through the cluster's prefix: every key below is relative to it. */
export function clusterNamespace(client: Etcd3): Namespace {
  return client.namespace(CLUSTER_PREFIX);
}

export const CLUSTER_KEY = 'cluster';
export const ALIASES_KEY = 'aliases';
export const QUOTA_KEY = 'quota';
export const PEERS_PREFIX = 'peers/';
export const LIVE_PREFIX = 'live/';
export const COLLECTIONS_PREFIX = 'collections/';
export const SHARDS_PREFIX = 'shards/';
export const METADATA_PREFIX = 'metadata/';
/** Shard transfers: `transfers/<name>/<shard>/<from>-<to>`, `<from>-<to>-<to shard>` into another shard. */
export const TRANSFERS_PREFIX = 'transfers/';

export function peerKey(id: PeerId): string {
  return PEERS_PREFIX + String(id);
}

export function liveKey(id: PeerId): string {
  return LIVE_PREFIX + String(id);
}

export function collectionKey(name: string): string {
  return COLLECTIONS_PREFIX + encodeURIComponent(name);
}

/** The prefix of every shard key of collection `name` (the trailing `/` keeps `a` from matching `ab`). */
export function collectionShardsPrefix(name: string): string {
  return `${SHARDS_PREFIX}${encodeURIComponent(name)}/`;
}

export function shardEntryKey(name: string, shard: number): string {
  return collectionShardsPrefix(name) + String(shard);
}

/** The prefix of every transfer of collection `name`. */
export function collectionTransfersPrefix(name: string): string {
  return `${TRANSFERS_PREFIX}${encodeURIComponent(name)}/`;
}

/** The prefix of every transfer of one shard (the trailing `/` keeps shard 1 from matching 12). */
export function shardTransfersPrefix(name: string, shard: number): string {
  return `${collectionTransfersPrefix(name)}${shard}/`;
}

/** Which replica of which shard feeds which: what names a transfer. */
export interface TransferRef {
  collection: string;
  shard: number;
  from: PeerId;
  to: PeerId;
  /**
   * The shard the receiver's replica belongs to when it is another shard than the source's
   * (Qdrant's `to_shard_id`: `replicate_points` copies points between shard keys); absent when
   * the receiver is a replica of the same shard.
   */
  toShard?: number;
}

/** The shard whose replica on `ref.to` a transfer feeds. */
export function receiverShard(ref: TransferRef): number {
  return ref.toShard ?? ref.shard;
}

export function transferKey(ref: TransferRef): string {
  const into = ref.toShard === undefined ? '' : `-${ref.toShard}`;
  return `${shardTransfersPrefix(ref.collection, ref.shard)}${ref.from}-${ref.to}${into}`;
}

export function metadataKey(key: string): string {
  return METADATA_PREFIX + encodeURIComponent(key);
}

/** `quiver/cluster`: the deployment, written once by its first peer. */
export interface ClusterInfo {
  uuid: string;
  created_at: string;
}

/** `quiver/peers/<id>`: a peer of the cluster, registered (create-only) when it joins. */
export interface PeerInfo {
  /** Its p2p URI, as `/cluster` lists it. */
  uri: string;
  /** Its etcd member's id (a uint64, in decimal). */
  etcd_member_id: string;
  etcd_peer_url: string;
  version: string;
}

/** `quiver/live/<id>`: present while the peer's lease is kept alive. */
export interface LiveInfo {
  /** The process's id as telemetry reports it (a uuid drawn at each start). */
  process_id: string;
  started_at: string;
}

/** `quiver/shards/<name>/<shard id>`: where a shard's replicas are and in which state. */
export interface ShardEntry {
  shard_key?: ShardKey;
  /** Replica state by peer id (decimal, as JSON object keys are). */
  replicas: Record<string, ReplicaState>;
}

export type { TransferMethod };

/** `quiver/transfers/<name>/<shard>/<from>-<to>`: a shard transfer under way (Qdrant's ShardTransfer). */
export interface TransferRecord {
  method: TransferMethod;
  /** Whether the source keeps its replica (a synchronisation); false would be a move. */
  sync: boolean;
  /** Progress as the source reports it (Qdrant's `comment`), updated at a bounded rate. */
  comment?: string;
  started_at: string;
  /** How often it was restarted with another method (absent: never); each run has its own clock. */
  run?: number;
  /**
   * The points a transfer into another shard copies (`replicate_points`'s filter, as the request
   * gave it; absent: every point). Kept in its wire form: each source peer reads it as its REST
   * layer reads a filter.
   */
  filter?: JsonValue;
}

/** `quiver/aliases`: every alias and its collection, in one key so alias actions are all or nothing. */
export type AliasTable = Record<string, string>;

/** What a key of the layout names. */
export type ClusterKey =
  | { kind: 'cluster' }
  | { kind: 'peer'; peer: PeerId }
  | { kind: 'live'; peer: PeerId }
  | { kind: 'collection'; name: string }
  | { kind: 'shard'; collection: string; shard: number }
  | { kind: 'aliases' }
  | { kind: 'quota' }
  | { kind: 'metadata'; key: string }
  | ({ kind: 'transfer' } & TransferRef)
  | { kind: 'unknown' };

/** Reads a key of the layout (relative to the prefix); keys this version does not know are `unknown`. */
export function parseKey(key: string): ClusterKey {
  if (key === CLUSTER_KEY) return { kind: 'cluster' };
  if (key === ALIASES_KEY) return { kind: 'aliases' };
  if (key === QUOTA_KEY) return { kind: 'quota' };
  if (key.startsWith(PEERS_PREFIX)) return peerOf(key.slice(PEERS_PREFIX.length), 'peer');
  if (key.startsWith(LIVE_PREFIX)) return peerOf(key.slice(LIVE_PREFIX.length), 'live');
  if (key.startsWith(COLLECTIONS_PREFIX)) return { kind: 'collection', name: decodeURIComponent(key.slice(COLLECTIONS_PREFIX.length)) };
  if (key.startsWith(METADATA_PREFIX)) return { kind: 'metadata', key: decodeURIComponent(key.slice(METADATA_PREFIX.length)) };
  if (key.startsWith(TRANSFERS_PREFIX)) return transferOf(key.slice(TRANSFERS_PREFIX.length));
  if (key.startsWith(SHARDS_PREFIX)) {
    const [name, shard, ...rest] = key.slice(SHARDS_PREFIX.length).split('/');
    if (rest.length === 0 && shard !== undefined && /^\d+$/.test(shard)) return { kind: 'shard', collection: decodeURIComponent(name!), shard: Number(shard) };
  }
  return { kind: 'unknown' };
}

function transferOf(rest: string): ClusterKey {
  const [name, shard, peers, ...more] = rest.split('/');
  const pair = /^(\d+)-(\d+)(?:-(\d+))?$/.exec(peers ?? '');
  if (more.length > 0 || name === undefined || shard === undefined || !/^\d+$/.test(shard) || !pair) return { kind: 'unknown' };
  const ref: TransferRef = { collection: decodeURIComponent(name), shard: Number(shard), from: Number(pair[1]), to: Number(pair[2]) };
  return { kind: 'transfer', ...ref, ...(pair[3] === undefined ? {} : { toShard: Number(pair[3]) }) };
}

function peerOf(id: string, kind: 'peer' | 'live'): ClusterKey {
  return /^\d+$/.test(id) ? { kind, peer: Number(id) } : { kind: 'unknown' };
}

/** A stored value that does not have the shape its key promises: a bug or a foreign writer. */
export class ClusterValueError extends Error {
  constructor(key: string, what: string) {
    super(`cluster state key ${CLUSTER_PREFIX}${key}: ${what}`);
  }
}

/** A value's JSON text; integers past 2^53 (bigints in payload-like values) stay exact. */
export function encodeValue(value: unknown): string {
  return printJson(value);
}

/** JSON.parse, keeping integers past 2^53 exact (as bigints) as the rest of Quiver does. */
export function parseValue(text: string): JsonValue {
  const value = JSON.parse(text) as JsonValue;
  if (!mayHoldLongIntegers(text)) return value;
  let literals: Map<string, bigint> | undefined;
  return withExactIntegers(value, '', (pointer) => (literals ??= longIntegerLiterals(text)).get(pointer));
}

type Shape = Record<string, 'string' | 'number' | 'object' | 'boolean'>;

/** The value of `key`, refused unless it is an object with these members of these types. */
function objectValue<T>(key: string, text: string, shape: Shape): T {
  const value = parseValue(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ClusterValueError(key, 'not an object');
  for (const [member, type] of Object.entries(shape)) {
    const v = (value as Record<string, unknown>)[member];
    if (typeof v !== type || v === null) throw new ClusterValueError(key, `member ${member} is not a ${type}`);
  }
  return value as T;
}

export function decodeClusterInfo(key: string, text: string): ClusterInfo {
  return objectValue<ClusterInfo>(key, text, { uuid: 'string', created_at: 'string' });
}

export function decodePeerInfo(key: string, text: string): PeerInfo {
  return objectValue<PeerInfo>(key, text, { uri: 'string', etcd_member_id: 'string', etcd_peer_url: 'string', version: 'string' });
}

export function decodeLiveInfo(key: string, text: string): LiveInfo {
  return objectValue<LiveInfo>(key, text, { process_id: 'string', started_at: 'string' });
}

export function decodeCollectionRecord(key: string, text: string): CollectionRecord {
  return objectValue<CollectionRecord>(key, text, { name: 'string', storageId: 'string', config: 'object', indexes: 'object' });
}

export function decodeShardEntry(key: string, text: string): ShardEntry {
  const entry = objectValue<ShardEntry>(key, text, { replicas: 'object' });
  for (const [peer, state] of Object.entries(entry.replicas)) {
    if (!/^\d+$/.test(peer) || !(REPLICA_STATES as readonly string[]).includes(state)) throw new ClusterValueError(key, `replica ${peer}: ${String(state)}`);
  }
  return entry;
}

export function decodeAliasTable(key: string, text: string): AliasTable {
  const table = objectValue<AliasTable>(key, text, {});
  for (const [alias, target] of Object.entries(table)) {
    if (typeof target !== 'string') throw new ClusterValueError(key, `alias ${alias} names no collection`);
  }
  return table;
}

export function decodeQuota(key: string, text: string): QuotaConfig {
  return objectValue<QuotaConfig>(key, text, { enabled: 'boolean' });
}

export function decodeTransferRecord(key: string, text: string): TransferRecord {
  const record = objectValue<TransferRecord>(key, text, { method: 'string', sync: 'boolean', started_at: 'string' });
  if (!isTransferMethod(record.method)) throw new ClusterValueError(key, `unknown transfer method ${record.method}`);
  if (record.comment !== undefined && typeof record.comment !== 'string') throw new ClusterValueError(key, 'member comment is not a string');
  if (record.run !== undefined && !(Number.isSafeInteger(record.run) && record.run >= 0)) throw new ClusterValueError(key, 'member run is not a whole number');
  if (record.filter !== undefined && (record.filter === null || typeof record.filter !== 'object' || Array.isArray(record.filter))) throw new ClusterValueError(key, 'member filter is not an object');
  return record;
}
