// The cluster's shared state at one etcd revision, as a peer has applied it: built from a full
// read of the prefix, then carried forward by the watch's events, one revision at a time. A view
// never changes; each revision makes a new one (the state is metadata: small). Every value is
// decoded when the view is made, so a value of the wrong shape is found before it is applied.
//
// `changesBetween` tells a peer what to reconcile when it moves from one view to the next.

import { transferClockId } from '../replica/transfer-proxy.js';
import type { IKeyValue, Namespace } from 'etcd3';
import type { CollectionRecord } from '../collection/manager.js';
import type { JsonValue } from '../model.js';
import type { QuotaConfig } from '../quota/config.js';
import {
  decodeAliasTable, decodeClusterInfo, decodeCollectionRecord, decodeLiveInfo, decodePeerInfo, decodeQuota, decodeShardEntry, decodeTransferRecord, parseKey, parseValue, receiverShard,
  type ClusterInfo, type LiveInfo, type PeerId, type PeerInfo, type ShardEntry, type TransferRecord, type TransferRef,
} from './keys.js';

/** One key as etcd holds it: its JSON text and the revisions that created and last changed it. */
export interface StoredValue {
  text: string;
  createRevision: number;
  modRevision: number;
}

/** Bound of one etcd call (etcd itself gives up on a request without quorum, but later). */
export const CALL_TIMEOUT_MS = 5_000;

export function callDeadline(timeoutMs: number): { deadline: Date } {
  return { deadline: new Date(Date.now() + timeoutMs) };
}

/** A key as etcd answered it, with its revisions. */
export function storedValue(kv: IKeyValue): StoredValue {
  return { text: kv.value.toString(), createRevision: Number(kv.create_revision), modRevision: Number(kv.mod_revision) };
}

/** The whole state under the prefix, read linearizably: every change committed before the call is in it. */
export async function readClusterView(namespace: Namespace, timeoutMs = CALL_TIMEOUT_MS): Promise<ClusterView> {
  const answer = await namespace.getAll().prefix('').options(callDeadline(timeoutMs)).exec();
  return new ClusterView(Number(answer.header.revision), new Map(answer.kvs.map((kv) => [kv.key.toString(), storedValue(kv)])));
}

/** A change of one key at one revision (a watch event). */
export type KeyEvent = { type: 'put'; key: string; value: StoredValue } | { type: 'delete'; key: string };

export interface ShardRef {
  collection: string;
  shard: number;
}

/** A transfer under way, as the view holds it: its key's parts, its record, and when its key was created. */
export interface ShardTransfer extends TransferRef {
  record: TransferRecord;
  /** The revision that started it: unique to this transfer (a restarted one has another). */
  createRevision: number;
}

/** The clock of a transfer's current run (src/replica/transfer-proxy.ts). */
export function transferClockOf(transfer: ShardTransfer): number {
  return transferClockId(transfer.createRevision, transfer.record.run);
}

/** Whether `a` and `b` name the same transfer (the same shard, source and receiver). */
export function sameTransfer(a: TransferRef, b: TransferRef): boolean {
  return a.collection === b.collection && a.shard === b.shard && a.from === b.from && a.to === b.to && a.toShard === b.toShard;
}

export class ClusterView {
  readonly cluster: ClusterInfo | null = null;
  readonly peers: ReadonlyMap<PeerId, PeerInfo>;
  readonly live: ReadonlyMap<PeerId, LiveInfo>;
  readonly collections: ReadonlyMap<string, CollectionRecord>;
  /** Shard entries by collection, then shard id (ascending). */
  readonly shards: ReadonlyMap<string, ReadonlyMap<number, ShardEntry>>;
  readonly aliases: ReadonlyMap<string, string>;
  readonly quota: QuotaConfig | null = null;
  /** Cluster metadata keys; a deleted key holds null (Qdrant's DELETE stores null). */
  readonly metadata: ReadonlyMap<string, JsonValue>;
  /** Transfers under way, by collection, shard, source and receiver. */
  readonly transfers: readonly ShardTransfer[];

  /** `entries`: every key under the prefix (relative to it) at `revision`. */
  constructor(readonly revision: number, readonly entries: ReadonlyMap<string, StoredValue>) {
    const peers = new Map<PeerId, PeerInfo>();
    const live = new Map<PeerId, LiveInfo>();
    const collections = new Map<string, CollectionRecord>();
    const shards = new Map<string, [number, ShardEntry][]>();
    const aliases = new Map<string, string>();
    const metadata = new Map<string, JsonValue>();
    const transfers: ShardTransfer[] = [];
    for (const [key, { text, createRevision }] of entries) {
      const parsed = parseKey(key);
      switch (parsed.kind) {
        case 'cluster': this.cluster = decodeClusterInfo(key, text); break;
        case 'peer': peers.set(parsed.peer, decodePeerInfo(key, text)); break;
        case 'live': live.set(parsed.peer, decodeLiveInfo(key, text)); break;
        case 'collection': collections.set(parsed.name, decodeCollectionRecord(key, text)); break;
        case 'shard': {
          const list = shards.get(parsed.collection) ?? [];
          list.push([parsed.shard, decodeShardEntry(key, text)]);
          shards.set(parsed.collection, list);
          break;
        }
        case 'aliases': for (const [alias, target] of Object.entries(decodeAliasTable(key, text))) aliases.set(alias, target); break;
        case 'quota': this.quota = decodeQuota(key, text); break;
        case 'metadata': metadata.set(parsed.key, parseValue(text)); break;
        case 'transfer': {
          const { kind: _kind, ...ref } = parsed;
          transfers.push({ ...ref, record: decodeTransferRecord(key, text), createRevision });
          break;
        }
        case 'unknown': break; // kept in `entries`, not interpreted by this version
      }
    }
    this.peers = sortedMap(peers, (a, b) => a - b);
    this.live = sortedMap(live, (a, b) => a - b);
    this.collections = sortedMap(collections, byText);
    this.shards = new Map([...shards].sort(([a], [b]) => byText(a, b)).map(([name, list]) => [name, new Map(list.sort(([a], [b]) => a - b))]));
    this.aliases = sortedMap(aliases, byText);
    this.metadata = sortedMap(metadata, byText);
    this.transfers = transfers.sort((a, b) => byText(a.collection, b.collection) || a.shard - b.shard || a.from - b.from || a.to - b.to || receiverShard(a) - receiverShard(b));
  }

  static empty(): ClusterView {
    return new ClusterView(0, new Map());
  }

  /** The view after one revision's events (all of them: a transaction changes several keys at once). */
  withEvents(revision: number, events: readonly KeyEvent[]): ClusterView {
    const entries = new Map(this.entries);
    for (const event of events) {
      if (event.type === 'put') entries.set(event.key, event.value);
      else entries.delete(event.key);
    }
    return new ClusterView(revision, entries);
  }

  /** The same state, known to be current at a later revision (a progress notification: nothing changed). */
  at(revision: number): ClusterView {
    return revision === this.revision ? this : new ClusterView(revision, this.entries);
  }

  /** The revisions of `key` (0 and 0 when absent): what a compare-and-swap compares. */
  revisionsOf(key: string): { create: number; mod: number } {
    const value = this.entries.get(key);
    return { create: value?.createRevision ?? 0, mod: value?.modRevision ?? 0 };
  }

  /** The transfer feeding `peer`'s replica of a shard (from a replica of that shard or, copying points, of another), if one runs. */
  transferTo(collection: string, shard: number, peer: PeerId): ShardTransfer | undefined {
    return this.transfers.find((t) => t.collection === collection && receiverShard(t) === shard && t.to === peer);
  }

  /** The replica states of a shard by peer, or null when the shard is not in the view. */
  replicas(collection: string, shard: number): Map<PeerId, ShardEntry['replicas'][string]> | null {
    const entry = this.shards.get(collection)?.get(shard);
    return entry ? new Map(Object.entries(entry.replicas).map(([peer, state]) => [Number(peer), state])) : null;
  }
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `map` with its keys in order (listings built from a view come out the same on every peer). */
function sortedMap<K, V>(map: Map<K, V>, order: (a: K, b: K) => number): Map<K, V> {
  return new Map([...map].sort(([a], [b]) => order(a, b)));
}

/** What differs between two views: what a peer reconciles after applying the later one. */
export interface ClusterChanges {
  /** New collections, and collections deleted and created again under the same name (also in `collectionsRemoved`). */
  collectionsAdded: string[];
  collectionsRemoved: string[];
  /** Same collection, another record (configuration, indexes, vector names, shard keys). */
  collectionsChanged: string[];
  shardsAdded: ShardRef[];
  shardsRemoved: ShardRef[];
  /** Same shard, other replicas, states or shard key. */
  shardsChanged: ShardRef[];
  peersChanged: boolean;
  liveChanged: boolean;
  aliasesChanged: boolean;
  quotaChanged: boolean;
  /** Metadata keys put (a delete puts null) or removed. */
  metadataChanged: string[];
  clusterChanged: boolean;
  /** A transfer started, ended or reported progress. */
  transfersChanged: boolean;
}

/** The changes from `before` to `after` (keys compared by value and creation, so a re-created key is a change). */
export function changesBetween(before: ClusterView, after: ClusterView): ClusterChanges {
  const changes: ClusterChanges = {
    collectionsAdded: [], collectionsRemoved: [], collectionsChanged: [],
    shardsAdded: [], shardsRemoved: [], shardsChanged: [],
    peersChanged: false, liveChanged: false, aliasesChanged: false, quotaChanged: false, metadataChanged: [], clusterChanged: false, transfersChanged: false,
  };
  const keys = new Set([...before.entries.keys(), ...after.entries.keys()]);
  for (const key of [...keys].sort()) {
    const was = before.entries.get(key);
    const is = after.entries.get(key);
    if (was && is && was.text === is.text && was.createRevision === is.createRevision) continue;
    const recreated = !!was && !!is && was.createRevision !== is.createRevision;
    const parsed = parseKey(key);
    switch (parsed.kind) {
      case 'collection':
        if (was && (!is || recreated)) changes.collectionsRemoved.push(parsed.name);
        if (is && (!was || recreated)) changes.collectionsAdded.push(parsed.name);
        if (was && is && !recreated) changes.collectionsChanged.push(parsed.name);
        break;
      case 'shard': {
        const ref = { collection: parsed.collection, shard: parsed.shard };
        if (was && (!is || recreated)) changes.shardsRemoved.push(ref);
        if (is && (!was || recreated)) changes.shardsAdded.push(ref);
        if (was && is && !recreated) changes.shardsChanged.push(ref);
        break;
      }
      case 'peer': changes.peersChanged = true; break;
      case 'live': changes.liveChanged = true; break;
      case 'aliases': changes.aliasesChanged = true; break;
      case 'quota': changes.quotaChanged = true; break;
      case 'metadata': changes.metadataChanged.push(parsed.key); break;
      case 'cluster': changes.clusterChanged = true; break;
      case 'transfer': changes.transfersChanged = true; break;
      case 'unknown': break;
    }
  }
  return changes;
}

/** Whether `changes` holds nothing to reconcile. */
export function isUnchanged(changes: ClusterChanges): boolean {
  return Object.values(changes).every((v) => v === false || (Array.isArray(v) && v.length === 0));
}
