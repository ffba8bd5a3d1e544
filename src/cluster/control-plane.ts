// The changes a peer proposes to the cluster's shared state, each one etcd transaction.
//
// Every change reads the whole state (a linearizable range: it sees every change committed
// before it), checks it with the same rules a single node uses (src/collection/name-rules.ts,
// the shard-key checks), computes the new values, and commits them only if every key the check
// consulted is still as it was read (compare-and-swap on the keys' revisions). If another peer
// changed one meanwhile, the change is read, checked and computed again (a bounded number of
// times), so two peers can never both win, and the loser gets the answer Qdrant gives for the
// state that won (409 for a name just taken, 404 for a collection just deleted, ...).
//
// A change answers the revision it committed at; a request waits until its peer has applied
// that revision (ApplyLoop.waitApplied) before answering, so it reads its own change.
// Nothing here touches a peer's local collections: only the apply loop does (plan 3.3, risk R5).

import { v4 as randomUUID } from 'uuid';
import type { Namespace } from 'etcd3';
import type { CollectionRecord } from '../collection/manager.js';
import { shardCountOf, type CollectionConfig } from '../collection/config-model.js';
import { applyAliasActions, checkNewCollectionName, resolveName, type AliasAction, type CollectionNames } from '../collection/name-rules.js';
import { ServiceError } from '../errors.js';
import {
  collectionNotFound, filterNeedsStreaming, lastActiveReplica, pointsCopyNeedsStreaming, noReplicaOn, peerDoesNotExist, peerHoldsShards, shardDoesNotExist, shardInTransfer, shardKeyAlreadyExists, shardKeyDoesNotExist,
  replicateFromManyShards, replicateIntoItself, replicateToManyReplicas, shardKeyNotFound, shardKeysNeedCustomSharding, shardNotActiveOn, shardNotFound,
} from '../messages.js';
import type { JsonValue, ShardKey } from '../model.js';
import type { QuotaConfig } from '../quota/config.js';
import { FED_BY_TRANSFER, type ReplicaState } from '../replica/replica.js';
import { receiverState, type TransferMethod } from '../replica/transfer-method.js';
import { CALL_TIMEOUT_MS, callDeadline, readClusterView, sameTransfer, type ClusterView, type ShardTransfer } from './cluster-view.js';
import {
  ALIASES_KEY, QUOTA_KEY, collectionKey, collectionShardsPrefix, collectionTransfersPrefix, encodeValue, metadataKey, peerKey, receiverShard, shardEntryKey, shardTransfersPrefix, transferKey,
  type AliasTable, type PeerId, type PeerInfo, type ShardEntry, type TransferRecord, type TransferRef,
} from './keys.js';
import { distributeShards, type RandomSource, type ShardPlacement } from './placement.js';

/** A change committed (or found already made): the revision to wait for. */
export interface Committed {
  revision: number;
}

export interface ControlPlaneOptions {
  /** Tries of one change against concurrent changes before giving up (default 20). */
  maxTries?: number;
  /** Placement's random bias (default Math.random). */
  random?: RandomSource;
  /** Bound of each etcd call (default 5 s). */
  callTimeoutMs?: number;
}

export interface ShardKeyOptions {
  /** Shards of the key; default: the collection's shard_number. */
  shardsNumber?: number | null;
  /** Replicas per shard; default: the collection's replication_factor. */
  replicationFactor?: number | null;
  /** The peers allowed to hold the key's replicas; default: every peer. */
  placement?: readonly PeerId[] | null;
  /** The replicas' first state; default Active (Qdrant's default for a new shard key). */
  initialState?: ReplicaState | null;
}

/** A replica state change: `changed` is false when the replica was not in an expected state (nothing was written). */
export interface ReplicaStateChange extends Committed {
  changed: boolean;
  /** The replica's state before the change (null: the peer holds no replica of the shard). */
  previous: ReplicaState | null;
  /** The revision of the last change of the shard's entry, as read. */
  read: number;
}

/** Qdrant's `storage.performance` transfer limits, per peer (null: no limit). */
export interface TransferLimits {
  incoming: number | null;
  outgoing: number | null;
}

/** Whether a transfer started, and if not why (the receiver is not Dead, a limit is reached, ...). */
export interface TransferStart extends Committed {
  started: boolean;
  reason: string | null;
}

/** Whether a transfer's end was written: false when the transfer was no longer under way. */
export interface TransferEnd extends Committed {
  ended: boolean;
}

const DEFAULT_MAX_TRIES = 20;

type Compare = { key: string; target: 'Create' | 'Mod'; value: number };
type Operation = { put: string; text: string } | { delete: string } | { deletePrefix: string };

/**
 * What one try of a change consulted and wants written. Each key the check read is noted with
 * the revision it had, and the transaction commits only if all still have it.
 */
class Proposal {
  readonly compares = new Map<string, Compare>();
  readonly operations: Operation[] = [];

  constructor(readonly view: ClusterView) {}

  /** The key must still hold the value read (none, if it had none). */
  unchanged(key: string): void {
    this.compares.set(`${key}\0mod`, { key, target: 'Mod', value: this.view.revisionsOf(key).mod });
  }

  /** The key must still exist as read, or still be absent: its value may change meanwhile. */
  sameIncarnation(key: string): void {
    this.compares.set(`${key}\0create`, { key, target: 'Create', value: this.view.revisionsOf(key).create });
  }

  /** The view's collection names, noting each name a rule looks up. */
  collectionNames(): CollectionNames {
    return {
      has: (name: string) => {
        this.sameIncarnation(collectionKey(name));
        return this.view.collections.has(name);
      },
    };
  }

  /** The view's aliases, noting that the rule read them. */
  aliases(): ReadonlyMap<string, string> {
    this.unchanged(ALIASES_KEY);
    return this.view.aliases;
  }

  /** Resolves a name or alias to a collection and its record, noting what was read. */
  collection(nameOrAlias: string): { name: string; record: CollectionRecord } {
    const name = resolveName(nameOrAlias, this.collectionNames(), this.aliases());
    this.unchanged(collectionKey(name));
    return { name, record: this.view.collections.get(name)! };
  }

  /** A shard's entry key and its entry (undefined: none), noting the key as read. */
  readEntry(collection: string, shard: number): { key: string; entry: ShardEntry | undefined } {
    const key = shardEntryKey(collection, shard);
    this.unchanged(key);
    return { key, entry: this.view.shards.get(collection)?.get(shard) };
  }

  put(key: string, value: unknown): void {
    this.operations.push({ put: key, text: encodeValue(value) });
  }

  delete(key: string): void {
    this.operations.push({ delete: key });
  }

  deletePrefix(prefix: string): void {
    this.operations.push({ deletePrefix: prefix });
  }
}

export class ControlPlane {
  private readonly maxTries: number;
  private readonly random: RandomSource;
  private readonly callTimeoutMs: number;

  /** `namespace`: the client under the cluster prefix (keys.ts `clusterNamespace`). */
  constructor(private readonly namespace: Namespace, options: ControlPlaneOptions = {}) {
    this.maxTries = options.maxTries ?? DEFAULT_MAX_TRIES;
    this.random = options.random ?? Math.random;
    this.callTimeoutMs = options.callTimeoutMs ?? CALL_TIMEOUT_MS;
  }

  /** The whole state, read linearizably (every change committed before the call is in it). */
  read(): Promise<ClusterView> {
    return readClusterView(this.namespace, this.callTimeoutMs);
  }

  /**
   * Reads, lets `plan` check and compute the change, and commits it if nothing it read changed;
   * else reads again. `plan` throws to refuse; a plan with no operation commits nothing and
   * answers the revision read (the state already is what was asked).
   */
  private async change<T>(plan: (proposal: Proposal) => T): Promise<T & Committed> {
    for (let attempt = 0; attempt < this.maxTries; attempt++) {
      const proposal = new Proposal(await this.read());
      const result = plan(proposal);
      if (proposal.operations.length === 0) return { ...result, revision: proposal.view.revision };
      const compares = [...proposal.compares.values()];
      const [first, ...rest] = compares;
      if (!first) throw new Error('a cluster change must compare what it read'); // a bug in a plan below
      let txn = this.namespace.if(first.key, first.target, '==', first.value);
      for (const c of rest) txn = txn.and(c.key, c.target, '==', c.value);
      const answer = await txn.then(...proposal.operations.map((op) => this.operation(op))).options(callDeadline(this.callTimeoutMs)).commit();
      if (answer.succeeded) return { ...result, revision: Number(answer.header.revision) };
    }
    throw new ServiceError(`the cluster state changed concurrently ${this.maxTries} times; the change was not made, please retry`);
  }

  private operation(op: Operation) {
    if ('put' in op) return this.namespace.put(op.put).value(op.text);
    if ('delete' in op) return this.namespace.delete().key(op.delete);
    return this.namespace.delete().prefix(op.deletePrefix);
  }

  /**
   * Creates collection `name` (409 if the name is taken, 400 if it is an alias's): its record and,
   * with automatic sharding, its shards placed over every known peer with Initializing replicas
   * (each peer activates its own once it has opened it). Custom sharding creates no shard.
   * `config.params.shardNumber` is the caller's: `defaultShardNumber(view.peers.size)` when the
   * request gave none.
   */
  createCollection(name: string, config: CollectionConfig, storageId: string = randomUUID()): Promise<Committed & { record: CollectionRecord; placement: ShardPlacement }> {
    return this.change((p) => {
      checkNewCollectionName(name, p.collectionNames(), p.aliases());
      const record: CollectionRecord = { name, storageId, config, indexes: [] };
      return { record, placement: this.putNewCollection(p, record) };
    });
  }

  /**
   * A collection snapshot's collection, for its recovery on a peer: created as `createCollection`
   * does if the cluster has no collection `name` (with the snapshot's payload indexes and shard
   * keys, each key's shards placed with their snapshot ids), else the existing record, which
   * `fits` may refuse by throwing (nothing is then written). `created` says which.
   */
  recoverCollection(
    name: string,
    snapshot: Pick<CollectionRecord, 'config' | 'indexes' | 'shardKeys'>,
    fits: (existing: CollectionRecord) => void,
    storageId: string = randomUUID(),
  ): Promise<Committed & { record: CollectionRecord; created: boolean }> {
    return this.change((p) => {
      if (p.collectionNames().has(name)) {
        const { record } = p.collection(name);
        fits(record);
        return { record, created: false };
      }
      checkNewCollectionName(name, p.collectionNames(), p.aliases());
      const { config, indexes, shardKeys } = snapshot;
      const record: CollectionRecord = { name, storageId, config, indexes, ...(shardKeys ? { shardKeys } : {}) };
      this.putNewCollection(p, record);
      return { record, created: true };
    });
  }

  /**
   * Writes a new collection's record and its shards with Initializing replicas (each peer
   * activates its own once it has opened it): with automatic sharding shards 0..n-1, with custom
   * sharding the shards of the keys the record has (none for a new empty one).
   */
  private putNewCollection(p: Proposal, record: CollectionRecord): ShardPlacement {
    const { config } = record;
    p.put(collectionKey(record.name), record);
    const keyed: { key?: ShardKey; shards: number[] }[] = config.params.shardingMethod === 'custom'
      ? record.shardKeys ?? []
      : [{ shards: Array.from({ length: shardCountOf(config) }, (_, i) => i) }];
    const placement: ShardPlacement = new Map();
    for (const { key, shards } of keyed) {
      for (const [shard, peers] of this.place(p.view, shards, config.params.replicationFactor, null)) {
        placement.set(shard, peers);
        p.put(shardEntryKey(record.name, shard), { ...(key === undefined ? {} : { shard_key: key }), ...shardEntry(peers, 'Initializing') } satisfies ShardEntry);
      }
    }
    return placement;
  }

  /**
   * A Listener peer's replica leaves the readers (`storage.node_type: Listener`): Active ->
   * Listener, only while another replica of the shard is Active, checked in the same transaction
   * (two Listener peers converting at once cannot leave a shard without an Active replica).
   */
  becomeListener(collection: string, shard: number, peer: PeerId): Promise<Committed & { changed: boolean }> {
    return this.change((p) => {
      if (!p.collectionNames().has(collection)) return { changed: false };
      const { key, entry } = p.readEntry(collection, shard);
      if (!entry || entry.replicas[String(peer)] !== 'Active' || lastActive(entry, peer)) return { changed: false };
      p.put(key, withState(entry, peer, 'Listener'));
      return { changed: true };
    });
  }

  /**
   * Rewrites the replica states of a shard of collection `collection` as created under
   * `storageId`: `change` answers the new states from the current ones (null: no change, nothing
   * written). 404 if the collection (that incarnation of it) or the shard does not exist.
   */
  changeReplicaStates(collection: string, storageId: string, shard: number, change: (replicas: Readonly<Record<string, ReplicaState>>) => Record<string, ReplicaState> | null): Promise<Committed & { changed: boolean }> {
    return this.change((p) => {
      if (!p.collectionNames().has(collection) || p.view.collections.get(collection)?.storageId !== storageId) throw collectionNotFound(collection);
      const { key, entry } = p.readEntry(collection, shard);
      if (!entry) throw shardNotFound(shard);
      const replicas = change(entry.replicas);
      if (replicas === null) return { changed: false };
      p.put(key, { ...entry, replicas } satisfies ShardEntry);
      return { changed: true };
    });
  }

  private place(view: ClusterView, shardIds: number[], replicationFactor: number, allowed: readonly PeerId[] | null): ShardPlacement {
    const peers = allowed ?? [...view.peers.keys()];
    // Only a registered peer proposes changes, so an empty peer table is a broken cluster state.
    if (peers.length === 0) throw new ServiceError('no peer is registered in the cluster');
    return distributeShards(shardIds, replicationFactor, peers, this.random);
  }

  /** A shard's entry, noted as read; 404 if the collection or the shard does not exist. */
  private existingEntry(p: Proposal, collection: string, shard: number): { key: string; entry: ShardEntry } {
    if (!p.collectionNames().has(collection)) throw collectionNotFound(collection);
    const { key, entry } = p.readEntry(collection, shard);
    if (!entry) throw shardNotFound(shard);
    return { key, entry };
  }

  /**
   * Sets `peer`'s replica of a shard to `state` if it is now in one of `from` (any state if null):
   * Initializing -> Active once a peer opened its replica, Active/Initializing -> Dead after a
   * failed update. 404 if the collection or the shard does not exist.
   */
  setReplicaState(collection: string, shard: number, peer: PeerId, state: ReplicaState, from: readonly ReplicaState[] | null): Promise<ReplicaStateChange> {
    return this.change((p) => {
      const { key, entry } = this.existingEntry(p, collection, shard);
      const previous = entry.replicas[String(peer)] ?? null;
      const read = p.view.revisionsOf(key).mod;
      if (previous === null || previous === state || (from !== null && !from.includes(previous))) return { changed: false, previous, read };
      if (state === 'Dead' && lastActive(entry, peer)) return { changed: false, previous, read };
      p.put(key, { ...entry, replicas: { ...entry.replicas, [String(peer)]: state } } satisfies ShardEntry);
      return { changed: true, previous, read };
    });
  }

  /**
   * Marks several replicas of a shard Dead in one transaction, each only if it is still in its
   * expected state (`from`: peer -> state, null for any): the replicas that missed one update
   * while etcd had no quorum, so that none of them is recovered from another that missed it too.
   */
  markDead(collection: string, shard: number, from: ReadonlyMap<PeerId, ReplicaState | null>): Promise<Committed & { changed: PeerId[] }> {
    return this.change((p) => {
      const existing = this.existingEntry(p, collection, shard);
      let entry = existing.entry;
      const changed: PeerId[] = [];
      for (const [peer, expected] of from) {
        const state = entry.replicas[String(peer)];
        if (state === undefined || state === 'Dead' || (expected !== null && state !== expected) || lastActive(entry, peer)) continue;
        entry = withState(entry, peer, 'Dead');
        changed.push(peer);
      }
      if (changed.length > 0) p.put(existing.key, entry);
      return { changed };
    });
  }

  /**
   * Stores a collection's record as `change` makes it from the current one (configuration,
   * payload indexes, vector names); `change` may refuse by throwing. The name, storage id and
   * shard keys stay (shard keys change through createShardKey/dropShardKey, with their shards).
   */
  updateCollection(nameOrAlias: string, change: (record: CollectionRecord) => CollectionRecord): Promise<Committed & { record: CollectionRecord }> {
    return this.change((p) => {
      const { name, record } = p.collection(nameOrAlias);
      const { shardKeys: _ignored, ...changed } = change(record);
      const updated: CollectionRecord = { ...changed, name, storageId: record.storageId, ...(record.shardKeys ? { shardKeys: record.shardKeys } : {}) };
      p.put(collectionKey(name), updated);
      return { record: updated };
    });
  }

  /** Deletes collection `name` (its own name, not an alias), its shards and the aliases naming it; `deleted` false if there was none. */
  deleteCollection(name: string): Promise<Committed & { deleted: boolean }> {
    return this.change((p) => {
      if (!p.collectionNames().has(name)) return { deleted: false };
      const aliases = p.aliases();
      p.delete(collectionKey(name));
      p.deletePrefix(collectionShardsPrefix(name));
      p.deletePrefix(collectionTransfersPrefix(name));
      if ([...aliases.values()].includes(name)) p.put(ALIASES_KEY, aliasTable(new Map([...aliases].filter(([, target]) => target !== name))));
      return { deleted: true };
    });
  }

  /** Applies alias actions in order, all or nothing, with a single node's checks. */
  changeAliases(actions: readonly AliasAction[]): Promise<Committed> {
    return this.change((p) => {
      p.put(ALIASES_KEY, aliasTable(applyAliasActions(p.aliases(), p.collectionNames(), actions)));
      return {};
    });
  }

  /**
   * Creates shard key `key` of a custom-sharded collection: its shards, numbered after the
   * highest shard id, placed over `placement` (or every peer), and the key in the record.
   */
  createShardKey(nameOrAlias: string, key: ShardKey, options: ShardKeyOptions = {}): Promise<Committed & { shards: number[]; placement: ShardPlacement }> {
    return this.change((p) => {
      const { name, record } = p.collection(nameOrAlias);
      if (record.config.params.shardingMethod !== 'custom') throw shardKeysNeedCustomSharding();
      const keys = record.shardKeys ?? [];
      if (keys.some((e) => e.key === key)) throw shardKeyAlreadyExists(key, name);
      const allowed = options.placement ?? null;
      for (const peer of allowed ?? []) if (!p.view.peers.has(peer)) throw peerDoesNotExist(peer);
      const count = options.shardsNumber ?? shardCountOf(record.config);
      // After every id the record or a leftover shard entry uses: an id is never reused.
      const used = [...keys.flatMap((e) => e.shards), ...(p.view.shards.get(name)?.keys() ?? [])];
      const next = Math.max(0, ...used) + 1;
      const shards = Array.from({ length: count }, (_, i) => next + i);
      const placement = this.place(p.view, shards, options.replicationFactor ?? record.config.params.replicationFactor, allowed);
      p.put(collectionKey(name), { ...record, shardKeys: [...keys, { key, shards }] } satisfies CollectionRecord);
      for (const [shard, peers] of placement) p.put(shardEntryKey(name, shard), { shard_key: key, ...shardEntry(peers, options.initialState ?? 'Active') } satisfies ShardEntry);
      return { shards, placement };
    });
  }

  /** Drops shard key `key`: out of the record, its shards' entries deleted. */
  dropShardKey(nameOrAlias: string, key: ShardKey): Promise<Committed> {
    return this.change((p) => {
      const { name, record } = p.collection(nameOrAlias);
      if (record.config.params.shardingMethod !== 'custom') throw shardKeysNeedCustomSharding();
      const keys = record.shardKeys ?? [];
      const dropped = keys.find((e) => e.key === key);
      if (!dropped) throw shardKeyDoesNotExist(key, name);
      p.put(collectionKey(name), { ...record, shardKeys: keys.filter((e) => e !== dropped) } satisfies CollectionRecord);
      for (const shard of dropped.shards) {
        p.delete(shardEntryKey(name, shard));
        p.deletePrefix(shardTransfersPrefix(name, shard));
      }
      return {};
    });
  }

  /**
   * Starts a transfer of a shard by `method` into `ref.to`'s Dead replica from `ref.from`'s
   * Active one, as one transaction: the receiver's state Dead -> Partial (Recovery for a
   * `wal_delta`; the shard entry as read) and the transfer key created (it must not exist). Not started, with the reason, when the
   * states are not so, a transfer already feeds the receiver, or a peer is at its limit (the
   * proposing peer's `storage.performance` limits, counted in the view read, as Qdrant counts
   * them before it proposes).
   */
  startTransfer(ref: TransferRef, sync: boolean, limits: TransferLimits, method: TransferMethod): Promise<TransferStart> {
    return this.change((p) => {
      const refused = (reason: string) => ({ started: false, reason });
      if (!p.collectionNames().has(ref.collection)) return refused('the collection does not exist');
      const { key: entryKey, entry } = p.readEntry(ref.collection, ref.shard);
      if (!entry) return refused('the shard does not exist');
      if (entry.replicas[String(ref.to)] !== 'Dead') return refused(`the receiver's replica is ${entry.replicas[String(ref.to)] ?? 'absent'}`);
      if (entry.replicas[String(ref.from)] !== 'Active') return refused(`the source's replica is ${entry.replicas[String(ref.from)] ?? 'absent'}`);
      const key = transferKey(ref);
      p.sameIncarnation(key);
      if (p.view.transferTo(ref.collection, ref.shard, ref.to)) return refused('a transfer already feeds the receiver');
      const incoming = p.view.transfers.filter((t) => t.to === ref.to).length;
      const outgoing = p.view.transfers.filter((t) => t.from === ref.from).length;
      if (limits.incoming !== null && incoming >= limits.incoming) return refused(`peer ${ref.to} has ${incoming} incoming transfers (limit ${limits.incoming})`);
      if (limits.outgoing !== null && outgoing >= limits.outgoing) return refused(`peer ${ref.from} has ${outgoing} outgoing transfers (limit ${limits.outgoing})`);
      p.put(entryKey, withState(entry, ref.to, receiverState(method)));
      p.put(key, { method, sync, started_at: new Date().toISOString() } satisfies TransferRecord);
      return { started: true, reason: null };
    });
  }

  /**
   * Starts a transfer an operator asked for (`replicate_shard`; `move_shard` with `sync` false):
   * a new replica of the shard on `ref.to`, Partial (Recovery for a `wal_delta`), and the
   * transfer key, in one transaction; `ref.from`'s Active replica feeds it (transfer-runner.ts);
   * a replica the receiver already held is transferred into anew, as Qdrant does. Refused as Qdrant refuses it,
   * in its order: an unknown collection, shard or peer (the receiver first), a source without an
   * Active replica, a shard already in a transfer with either peer. Operator transfers are not
   * bound by the `storage.performance` limits (Qdrant counts those for automatic ones only).
   */
  startOperatorTransfer(ref: TransferRef, sync: boolean, method: TransferMethod): Promise<Committed> {
    return this.change((p) => {
      const { name } = p.collection(ref.collection);
      const { key: entryKey, entry } = p.readEntry(name, ref.shard);
      if (!entry) throw shardDoesNotExist(ref.shard, name);
      this.peersExist(p, [ref.to, ref.from]);
      if (entry.replicas[String(ref.from)] !== 'Active') throw shardNotActiveOn(ref.shard, ref.from);
      const under = p.view.transfers.find((t) => t.collection === name && t.shard === ref.shard && [t.from, t.to].some((peer) => peer === ref.from || peer === ref.to));
      if (under) throw shardInTransfer(ref.shard, under.from, under.to);
      const key = transferKey({ ...ref, collection: name });
      p.sameIncarnation(key);
      for (const t of p.view.transfers) if (t.collection === name && t.shard === ref.shard) p.sameIncarnation(transferKey(t));
      p.put(entryKey, withState(entry, ref.to, receiverState(method)));
      p.put(key, { method, sync, started_at: new Date().toISOString() } satisfies TransferRecord);
      return {};
    });
  }

  /**
   * `replicate_points`: a transfer copying the points of shard key `fromKey`'s shard that match
   * `filter` into shard key `toKey`'s replica, from the source shard's first Active replica, by
   * streaming records (src/cluster/transfer-runner.ts), in one transaction with the receiver's
   * state set to Partial (whatever it was: Qdrant's `start_shard_transfer`), until the transfer
   * ends. Refused as Qdrant refuses it: a key that does not exist, a source key of more than one
   * shard, a target key of more than one replica, a source without an Active replica, a
   * transfer already feeding the receiver or under way in the source shard with either peer, a
   * `method` (the configured one) other than a stream.
   */
  startPointsTransfer(nameOrAlias: string, fromKey: ShardKey, toKey: ShardKey, filter: JsonValue | null, method: TransferMethod): Promise<Committed & { ref: TransferRef }> {
    return this.change((p) => {
      const { name, record } = p.collection(nameOrAlias);
      const keys = record.shardKeys ?? [];
      const shardsOf = (key: ShardKey) => {
        const entry = keys.find((e) => e.key === key);
        if (!entry) throw shardKeyNotFound(key);
        return entry.shards;
      };
      const fromShards = shardsOf(fromKey);
      if (fromShards.length !== 1) throw replicateFromManyShards(fromKey, fromShards.length);
      const targets = shardsOf(toKey).flatMap((shard) => Object.keys(p.readEntry(name, shard).entry?.replicas ?? {}).map((peer) => ({ shard, peer: Number(peer) })));
      if (targets.length !== 1) throw replicateToManyReplicas(toKey, targets.length);
      const [{ shard: toShard, peer: to }] = targets as [{ shard: number; peer: PeerId }];
      const shard = fromShards[0]!;
      // The same key: its one replica would be the copy's source and its Partial receiver at once.
      if (toShard === shard) throw replicateIntoItself(fromKey);
      const source = p.readEntry(name, shard).entry;
      const peers = Object.keys(source?.replicas ?? {}).map(Number).sort((a, b) => a - b);
      const from = peers.find((peer) => source!.replicas[String(peer)] === 'Active');
      if (from === undefined) throw shardNotActiveOn(shard, peers[0] ?? 0);
      this.peersExist(p, [to, from]);
      // The collection's method (Qdrant's check): only a stream copies some points into a shard that keeps its own.
      if (method !== 'stream_records') throw filter === null ? pointsCopyNeedsStreaming(method) : filterNeedsStreaming(method);
      const ref: TransferRef = { collection: name, shard, from, to, toShard };
      const under = p.view.transfers.find((t) => t.collection === name && ((t.shard === shard && [t.from, t.to].some((peer) => peer === from || peer === to)) || (receiverShard(t) === toShard && t.to === to)));
      if (under) throw shardInTransfer(under.shard, under.from, under.to);
      for (const t of p.view.transfers) if (t.collection === name) p.sameIncarnation(transferKey(t));
      const key = transferKey(ref);
      p.sameIncarnation(key);
      const { key: entryKey, entry } = p.readEntry(name, toShard);
      p.put(entryKey, withState(entry!, to, 'Partial'));
      p.put(key, { method: 'stream_records', sync: true, started_at: new Date().toISOString(), ...(filter === null ? {} : { filter }) } satisfies TransferRecord);
      return { ref };
    });
  }

  /** Refuses the first of `peers` the cluster does not know, noting each one looked up. */
  private peersExist(p: Proposal, peers: readonly PeerId[]): void {
    for (const peer of peers) {
      p.sameIncarnation(peerKey(peer));
      if (!p.view.peers.has(peer)) throw peerDoesNotExist(peer);
    }
  }

  /**
   * The second half of a move, once its receiver is Active: the source's replica leaves the
   * shard (its peer drops its copy when it applies that). Not in the finish's transaction, so
   * that a peer still routing by the view before the finish, which sends to the source alone,
   * finds it there until every replica is Active. Nothing is written unless the receiver is Active
   * and the source still holds a replica (`removed` says whether it left).
   */
  completeMove(ref: TransferRef): Promise<Committed & { removed: boolean }> {
    return this.change((p) => {
      if (!p.collectionNames().has(ref.collection)) return { removed: false };
      const { key: entryKey, entry } = p.readEntry(ref.collection, ref.shard);
      if (entry?.replicas[String(ref.to)] !== 'Active' || entry.replicas[String(ref.from)] === undefined) return { removed: false };
      p.put(entryKey, withoutPeer(entry, ref.from));
      return { removed: true };
    });
  }

  /**
   * `drop_replica`: `peer`'s replica leaves the shard, with the transfers it took part in (a
   * receiver it was feeding is then Dead). Refused for an unknown collection or shard, a peer
   * holding no replica of it, and the shard's last replica that can serve (Qdrant keeps one).
   */
  dropReplica(nameOrAlias: string, shard: number, peer: PeerId): Promise<Committed> {
    return this.change((p) => {
      const { name } = p.collection(nameOrAlias);
      const { key: entryKey, entry } = p.readEntry(name, shard);
      if (!entry) throw shardDoesNotExist(shard, name);
      this.peersExist(p, [peer]);
      if (entry.replicas[String(peer)] === undefined) throw noReplicaOn(shard, peer);
      const remaining = withoutPeer(entry, peer);
      if (!Object.values(remaining.replicas).some((state) => state === 'Active')) throw lastActiveReplica(shard, peer);
      const changed = new Map<string, ShardEntry>([[entryKey, remaining]]);
      for (const t of p.view.transfers) {
        const feeds = t.shard === shard && t.from === peer;
        if (t.collection !== name || (!feeds && !(receiverShard(t) === shard && t.to === peer))) continue;
        p.unchanged(transferKey(t));
        p.delete(transferKey(t));
        if (feeds) receiverDead(p, changed, t);
      }
      for (const [key, changedEntry] of changed) p.put(key, changedEntry);
      return {};
    });
  }

  /**
   * Whether `peer` may be removed from `view` (`DELETE /cluster/peer/{id}`): it must be registered
   * and, without `force`, hold no replica (Qdrant's refusal). Answers its record.
   */
  checkPeerRemoval(view: ClusterView, peer: PeerId, force: boolean): PeerInfo {
    const record = view.peers.get(peer);
    if (!record) throw peerDoesNotExist(peer);
    const holds = [...view.shards.values()].some((shards) => [...shards.values()].some((entry) => entry.replicas[String(peer)] !== undefined));
    if (holds && !force) throw peerHoldsShards(peer);
    return record;
  }

  /**
   * The peer's record leaves the control plane, with every replica it holds and every transfer it
   * takes part in (a receiver it was feeding is then Dead), in one transaction checked as
   * `checkPeerRemoval` checks it.
   */
  removePeer(peer: PeerId, force: boolean): Promise<Committed> {
    return this.change((p) => {
      p.unchanged(peerKey(peer));
      this.checkPeerRemoval(p.view, peer, force);
      const changed = new Map<string, ShardEntry>();
      // Every shard entry the check read stays as read (a replica placed on the peer meanwhile is
      // not dropped unseen); a collection created meanwhile places on the peers it read, which
      // may still include this one: the orphan replica then has a peer no view lists, and is never
      // read from or written to.
      for (const [name, shards] of p.view.shards) {
        for (const [shard, entry] of shards) {
          p.unchanged(shardEntryKey(name, shard));
          if (entry.replicas[String(peer)] !== undefined) changed.set(shardEntryKey(name, shard), withoutPeer(entry, peer));
        }
      }
      for (const t of p.view.transfers) {
        if (t.from !== peer && t.to !== peer) continue;
        p.unchanged(transferKey(t));
        p.delete(transferKey(t));
        if (t.from === peer) receiverDead(p, changed, t);
      }
      for (const [key, entry] of changed) p.put(key, entry);
      p.delete(peerKey(peer));
      return {};
    });
  }

  /**
   * Ends a transfer that streamed everything: the receiver Partial -> Active and the key deleted,
   * in one transaction; not ended while the source's replica is not Active (it is aborted then).
   * `createRevision`: only that run of the transfer (not one started again since).
   */
  finishTransfer(ref: TransferRef, createRevision?: number): Promise<TransferEnd> {
    return this.endTransfer(ref, 'Active', createRevision);
  }

  /**
   * Ends a transfer that failed or was aborted: the receiver (still Partial) -> Dead, or out of
   * the shard for a move, and the key deleted; a Dead receiver's recovery starts another later.
   */
  abortTransfer(ref: TransferRef, createRevision?: number): Promise<TransferEnd> {
    return this.endTransfer(ref, 'Dead', createRevision);
  }

  private endTransfer(ref: TransferRef, state: ReplicaState, createRevision: number | undefined): Promise<TransferEnd> {
    return this.change((p) => {
      const key = transferKey(ref);
      p.unchanged(key);
      const created = p.view.revisionsOf(key).create;
      if (created === 0 || (createRevision !== undefined && created !== createRevision)) return { ended: false };
      const { key: entryKey, entry } = p.readEntry(ref.collection, receiverShard(ref));
      const source = ref.toShard === undefined ? entry : p.readEntry(ref.collection, ref.shard).entry;
      // A source no longer Active may have missed updates the receiver then missed too: no finish.
      if (state === 'Active' && source?.replicas[String(ref.from)] !== 'Active') return { ended: false };
      // The receiver is Partial (or Recovery) while its transfer runs (both change in one transaction), unless
      // a failed update marked it Dead meanwhile: it stays so. An aborted move's receiver leaves
      // the shard instead (Qdrant's abort_shard_transfer): the move never happened.
      const move = p.view.transferTo(ref.collection, receiverShard(ref), ref.to)?.record.sync === false;
      if (entry && state === 'Dead' && move) p.put(entryKey, withoutPeer(entry, ref.to));
      else if (entry && isFed(entry.replicas[String(ref.to)])) p.put(entryKey, withState(entry, ref.to, state));
      p.delete(key);
      return { ended: true };
    });
  }

  /**
   * Runs a transfer on with another method (`restart_transfer`, and a `wal_delta` whose source's
   * log cannot serve it falling back to `stream_records`): the record's method changed and the
   * receiver's state set for it, in one transaction, the transfer keeping its identity (its
   * creation revision, and so the receiver's transfer clock). Not restarted (`restarted` false)
   * when the transfer is gone or another run of it (`createRevision`) is under way.
   */
  restartTransfer(ref: TransferRef, method: TransferMethod, createRevision?: number): Promise<Committed & { restarted: boolean }> {
    return this.change((p) => {
      const key = transferKey(ref);
      p.unchanged(key);
      const transfer = p.view.transferTo(ref.collection, receiverShard(ref), ref.to);
      if (!transfer || !sameTransfer(transfer, ref) || (createRevision !== undefined && transfer.createRevision !== createRevision)) return { restarted: false };
      const { key: entryKey, entry } = p.readEntry(ref.collection, receiverShard(ref));
      if (!entry || !isFed(entry.replicas[String(ref.to)])) return { restarted: false };
      const { comment: _progress, ...record } = transfer.record;
      p.put(key, { ...record, method, started_at: new Date().toISOString(), run: (record.run ?? 0) + 1 } satisfies TransferRecord);
      p.put(entryKey, withState(entry, ref.to, receiverState(method)));
      return { restarted: true };
    });
  }

  /** Stores a transfer's progress comment, if the same transfer (not one started again since) still runs. */
  setTransferComment(ref: TransferRef, createRevision: number, comment: string): Promise<Committed & { stored: boolean }> {
    return this.change((p) => {
      const key = transferKey(ref);
      p.sameIncarnation(key);
      const transfer = p.view.transferTo(ref.collection, receiverShard(ref), ref.to);
      if (!transfer || !sameTransfer(transfer, ref) || transfer.createRevision !== createRevision) return { stored: false };
      p.put(key, { ...transfer.record, comment } satisfies TransferRecord);
      return { stored: true };
    });
  }

  /** Stores the cluster's quota configuration (`PUT /quotas`): the last one written wins. */
  async putQuota(config: QuotaConfig): Promise<Committed> {
    return this.putKey(QUOTA_KEY, config);
  }

  /** Stores a cluster metadata key; Qdrant's DELETE of a key stores null (`deleteMetadata`). */
  async putMetadata(key: string, value: JsonValue): Promise<Committed> {
    return this.putKey(metadataKey(key), value);
  }

  async deleteMetadata(key: string): Promise<Committed> {
    return this.putKey(metadataKey(key), null);
  }

  /**
   * A value that replaces what was there whatever it was: no check, so no compare; the put's own
   * revision is the one to wait for.
   */
  private async putKey(key: string, value: unknown): Promise<Committed> {
    const answer = await this.namespace.put(key).value(encodeValue(value)).options(callDeadline(this.callTimeoutMs)).exec();
    return { revision: Number(answer.header.revision) };
  }
}

/**
 * A transfer whose source leaves ends with its receiver Dead, if it is still fed by it: its
 * shard's entry as `changed` holds it by key (this transaction's changes so far), else as read.
 */
function receiverDead(p: Proposal, changed: Map<string, ShardEntry>, t: ShardTransfer): void {
  const key = shardEntryKey(t.collection, receiverShard(t));
  const entry = changed.get(key) ?? p.readEntry(t.collection, receiverShard(t)).entry;
  if (entry && isFed(entry.replicas[String(t.to)])) changed.set(key, withState(entry, t.to, 'Dead'));
}

function withState(entry: ShardEntry, peer: PeerId, state: ReplicaState): ShardEntry {
  return { ...entry, replicas: { ...entry.replicas, [String(peer)]: state } };
}

/**
 * Whether `peer`'s replica is the shard's last Active one. It is never marked Dead (Qdrant's
 * rule too): a write it missed cannot have been acknowledged (one needs an Active replica's
 * success), and a shard with no Active replica could never recover (a recovery copies an
 * Active replica), e.g. when the source of a transfer fails before its receiver is Active.
 */
function lastActive(entry: ShardEntry, peer: PeerId): boolean {
  return entry.replicas[String(peer)] === 'Active' && !Object.entries(entry.replicas).some(([other, state]) => other !== String(peer) && state === 'Active');
}

function withoutPeer(entry: ShardEntry, peer: PeerId): ShardEntry {
  return { ...entry, replicas: Object.fromEntries(Object.entries(entry.replicas).filter(([p]) => p !== String(peer))) };
}

function shardEntry(peers: readonly PeerId[], state: ReplicaState): ShardEntry {
  return { replicas: Object.fromEntries(peers.map((peer) => [String(peer), state])) };
}

/** The alias table as stored: sorted, so equal tables have equal texts. */
function aliasTable(aliases: ReadonlyMap<string, string>): AliasTable {
  return Object.fromEntries([...aliases].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Whether a replica in `state` is a transfer's receiver, fed through its source. */
function isFed(state: ReplicaState | undefined): boolean {
  return state !== undefined && FED_BY_TRANSFER.has(state);
}
