// The node's collections and aliases: creation, lookup by name or alias, configuration
// changes, deletion. Metadata lives in the MetaStore; point data in the shards' replicas, placed
// on this node by a LocalPlacement.
//
// Every operation that checks the name table (collection records, aliases) and then changes it
// runs in one serial queue, the check and the change in the same job, so no two such operations
// interleave: two creates of one name cannot both succeed, a delete cannot slip between a
// create's check and its registration, alias changes see the collections as they are.
// Lock order: a collection's gate (src/collection/shared-gate.ts), then the name table; a job of
// the name table never waits for a collection's gate (a collection's drop is queued there and
// awaited outside).
// The manager is also where a cluster peer's reconcile (src/cluster/reconcile.ts) changes local
// state: "check" (the name rules, the single node's refusals) is kept apart from "change local
// state" (install, reconfigure, indexes, vector names, shard keys, aliases), which both modes share.
// On disk every change keeps one rule: a collection's folder exists before the record naming it
// is stored, and a record is removed before its folder, so a crash leaves the old or the new state
// plus folders no record names, which the start-up sweep removes.

import { v4 as randomUUID } from 'uuid';
import { BadRequest } from '../errors.js';
import { collectionNameIsAlias, collectionNotFound, distributedModeDisabled, peerDoesNotExist, shardKeysNeedCustomSharding } from '../messages.js';
import type { Catalog, CollectionSnapshotContent, ShardKeyRequest, ShardPart, SnapshotPriority } from './catalog.js';
import { applyAliasActions, checkNewCollectionName, resolveName, type AliasAction } from './name-rules.js';
import type { IndexSpec } from '../shard/shard.js';
import { MetaStore } from '../storage/meta-store.js';
import { ShardWorkers, type ShardWorkerOptions } from '../worker/pool.js';
import { LocalPlacement } from '../replica/local-placement.js';
import type { ReplicaSet } from '../replica/replica-set.js';
import type { ShardPlacement } from '../replica/shard-placement.js';
import type { ShardKey } from '../model.js';
import { Collection, type UpdateResult } from './collection.js';
import { WriteQueue } from '../write-queue.js';
import { optimizerSpecOf, shardCountOf, sparseSpecsOf, vectorSpecsOf, walSpecOf, type CollectionConfig } from './config-model.js';
import type { ShardKeyEntry } from './shard-keys.js';

export interface CollectionRecord {
  name: string;
  /** Directory name of the collection's shards: names may hold characters paths cannot. */
  storageId: string;
  config: CollectionConfig;
  indexes: IndexSpec[];
  /** The keys of a custom-sharded collection and their shard ids (absent with automatic sharding). */
  shardKeys?: ShardKeyEntry[];
}

export type { AliasAction } from './name-rules.js';

export class CollectionManager implements Catalog {
  private readonly records = new Map<string, CollectionRecord>();
  private readonly live = new Map<string, Collection>();
  private aliases = new Map<string, string>();
  /** The one queue of every check-then-change of the name table (see the top of this file). */
  private readonly nameTable = new WriteQueue();

  private constructor(private readonly placement: ShardPlacement, readonly meta: MetaStore<CollectionRecord>) {}

  get workers(): ShardWorkers {
    return this.placement.workers;
  }

  /**
   * Opens every stored collection (each shard settles a recovery a crash interrupted as it
   * opens), then removes the folders under <storage>/collections that no record names: what
   * creates, deletes and recoveries cut short by a crash left.
   */
  static async open(storagePath: string, workerCount: number, workerOptions?: ShardWorkerOptions): Promise<CollectionManager> {
    return CollectionManager.openWith(storagePath, new ShardWorkers(workerCount, workerOptions));
  }

  /**
   * open() on workers already started (the server spawns them before it loads its own modules,
   * so that both start at once). The collections open side by side, each on its shards' workers.
   */
  static async openWith(storagePath: string, workers: ShardWorkers, placement: ShardPlacement = new LocalPlacement(storagePath, workers), store?: MetaStore<unknown>): Promise<CollectionManager> {
    // A cluster peer opened the store first: its identity decides where the collections are.
    const meta = (store ?? (await MetaStore.open(storagePath))).typed<CollectionRecord>();
    const manager = new CollectionManager(placement, meta);
    const records = await meta.collections();
    const opened = await Promise.all(records.map((record) => manager.start(record)));
    records.forEach((record, i) => manager.register(record, opened[i]));
    manager.aliases = await meta.aliases();
    await manager.placement.removeOrphans(new Map([...manager.records.values()].map((r) => [r.storageId, manager.live.get(r.name)!.shards.map((s) => s.id)])));
    return manager;
  }

  private async start(record: CollectionRecord): Promise<Collection> {
    const collection = this.instantiate(record);
    await collection.open();
    return collection;
  }

  /** Shard `id` of a collection: its replica set, as the placement puts it. */
  private replicaSet(record: CollectionRecord, id: number, shardKey?: ShardKey): ReplicaSet {
    // The parameters as the collection's record holds them when a request comes (they can be updated).
    const params = () => (this.records.get(record.name) ?? record).config.params;
    return this.placement.replicaSet({ collection: record.name, shard: id }, record.storageId, params, shardKey);
  }

  /** The collection a record describes, its shards placed but not opened. */
  private instantiate(record: CollectionRecord): Collection {
    const custom = record.config.params.shardingMethod === 'custom';
    const keys = custom ? record.shardKeys ?? [] : null;
    const shards = keys
      ? keys.flatMap((entry) => entry.shards.map((id) => this.replicaSet(record, id, entry.key)))
      : Array.from({ length: shardCountOf(record.config) }, (_, i) => this.replicaSet(record, i));
    return new Collection(record.name, { keys, shards }, vectorSpecsOf(record.config), sparseSpecsOf(record.config), record.indexes, optimizerSpecOf(record.config), walSpecOf(record.config), record.config.strictMode, this.placement.newClock());
  }

  /** Drops a collection no record names any more (after the jobs queued on it) and removes its folder. */
  private async discard(record: CollectionRecord, collection: Collection): Promise<void> {
    await collection.drop();
    await this.placement.removeCollection(record.storageId);
  }

  private register(record: CollectionRecord, collection: Collection): void {
    this.records.set(record.name, record);
    this.live.set(record.name, collection);
  }

  /** A new collection may not take the name of an alias. */
  private checkNotAlias(name: string): void {
    if (!this.records.has(name) && this.aliases.has(name)) throw collectionNameIsAlias(name);
  }

  /**
   * Creates or replaces collection `name` with a snapshot's configuration and data. The new
   * collection's shards are restored under a fresh storage id while the current collection keeps
   * serving (outside the name table's queue: it may take long); one synced metadata write then
   * switches to them, and the old collection is dropped once the writes queued on it are done. If
   * the restore fails, what it built is removed and nothing changed. Aliases of the name stay.
   * Every replica is this node's, so `priority` has nothing to synchronize.
   */
  async recoverCollection(name: string, snapshot: CollectionSnapshotContent, _priority: SnapshotPriority): Promise<void> {
    await this.nameTable.enqueue(async () => this.checkNotAlias(name));
    const { config, indexes, shardKeys } = snapshot;
    const record: CollectionRecord = { name, storageId: randomUUID(), config, indexes, ...(shardKeys ? { shardKeys } : {}) };
    const collection = this.instantiate(record);
    let replaced: Retired | null;
    try {
      await collection.restoreShards(snapshot.parts);
      replaced = await this.nameTable.enqueue(async () => {
        this.checkNotAlias(name); // an alias of this name may have appeared while the restore ran
        await this.meta.putCollection(name, record);
        const previous = this.retire(name);
        this.register(record, collection);
        return previous;
      });
    } catch (err) {
      await this.discard(record, collection);
      throw err;
    }
    await replaced?.dropped;
  }

  /** Replaces one shard's data in place (its worker swaps the restored store in); nothing to synchronize on one node. */
  recoverShard(collection: Collection, part: ShardPart, _priority: SnapshotPriority): Promise<void> {
    return collection.restoreShards([part]);
  }

  /**
   * Takes collection `name` out of the tables (its record is already gone from or replaced in the
   * store) and queues its drop behind the jobs already queued on it; the caller awaits the drop
   * outside the name table's queue.
   */
  private retire(name: string): Retired | null {
    const record = this.records.get(name);
    const collection = this.live.get(name);
    if (!record || !collection) return null;
    this.records.delete(name);
    this.live.delete(name);
    return { dropped: this.discard(record, collection) };
  }

  names(): string[] {
    return [...this.records.keys()];
  }

  /** The collection's own name, following an alias. */
  resolve(nameOrAlias: string): string {
    return resolveName(nameOrAlias, this.records, this.aliases);
  }

  exists(nameOrAlias: string): boolean {
    return this.records.has(nameOrAlias) || this.records.has(this.aliases.get(nameOrAlias) ?? '');
  }

  get(nameOrAlias: string): Collection {
    return this.live.get(this.resolve(nameOrAlias))!;
  }

  record(nameOrAlias: string): CollectionRecord {
    return this.records.get(this.resolve(nameOrAlias))!;
  }

  /** The current record of `collection`; 404 once it is no longer registered (deleted or replaced). */
  recordOf(collection: Collection): CollectionRecord {
    const record = this.records.get(collection.name);
    if (!record || this.live.get(collection.name) !== collection) throw collectionNotFound(collection.name);
    return record;
  }

  /** The collection and its record, read together (a later replacement does not mix them). */
  entry(nameOrAlias: string): { record: CollectionRecord; collection: Collection } {
    const name = this.resolve(nameOrAlias);
    return { record: this.records.get(name)!, collection: this.live.get(name)! };
  }

  /** A single node's default shard_number: one shard per shard worker. */
  defaultShardNumber(): number {
    return this.workers.count;
  }

  /** Creates a collection: its shards (and folder) first, then its record; a name taken is a 409. */
  create(name: string, config: CollectionConfig): Promise<void> {
    return this.nameTable.enqueue(async () => {
      checkNewCollectionName(name, this.records, this.aliases);
      await this.install({ name, storageId: randomUUID(), config, indexes: [] });
    });
  }

  /** Opens a new collection's shards, then stores its record and registers it; on failure nothing stays. */
  private async install(record: CollectionRecord): Promise<void> {
    const collection = this.instantiate(record);
    try {
      await collection.open();
      await this.meta.putCollection(record.name, record);
    } catch (err) {
      await this.discard(record, collection);
      throw err;
    }
    this.register(record, collection);
  }

  /** The collection registered under `name` itself (an alias is not followed), if any: what a peer serves to others. */
  collectionNamed(name: string): Collection | undefined {
    return this.live.get(name);
  }

  /** The record this node holds under exactly `name` (no alias), if any. */
  held(name: string): CollectionRecord | undefined {
    return this.records.get(name);
  }

  /**
   * Takes a collection's record as the control plane holds it (a cluster peer's reconcile): a
   * collection this node does not hold is opened and stored; one held under another storage id
   * (deleted and created again meanwhile) is dropped first; `reopen` closes and opens one held
   * already, so its shards are placed again (its replica sets rebuilt from the placement).
   */
  async adopt(record: CollectionRecord, reopen = false): Promise<void> {
    const held = this.records.get(record.name);
    if (held && held.storageId === record.storageId) {
      if (reopen) await this.reopen(held);
      return;
    }
    if (held) await this.delete(record.name);
    await this.nameTable.enqueue(() => this.install(record));
  }

  /** Closes a held collection and opens it again from its record (its data stays if the open fails). */
  private async reopen(record: CollectionRecord): Promise<void> {
    await this.closeOne(record.name);
    const collection = this.instantiate(record);
    try {
      await collection.open();
    } catch (err) {
      await collection.close();
      throw err;
    }
    await this.nameTable.enqueue(async () => this.register(record, collection));
  }

  /** Closes a collection and takes it out of the tables, its record and data kept (it opens again). */
  private async closeOne(name: string): Promise<void> {
    const collection = await this.nameTable.enqueue(async () => {
      const live = this.live.get(name);
      this.records.delete(name);
      this.live.delete(name);
      return live;
    });
    await collection?.close();
  }

  /**
   * Brings a held collection to `target`, a later record of it (a cluster peer's reconcile): the
   * configuration (named vectors created or deleted, optimizer, strict mode), the payload indexes
   * and the shard keys, each with the same Collection method a single node's request uses, each
   * storing the record as it then is. A deleted named vector leaves this peer's own replicas
   * (each peer purges its own, Collection.changeVectors) before they reopen without it.
   */
  async applyRecord(target: CollectionRecord): Promise<void> {
    const collection = this.get(target.name);
    const held = () => this.recordOf(collection);
    const names = (params: CollectionConfig['params']) => [...Object.keys(params.vectors.byName), ...Object.keys(params.sparseVectors ?? {})];
    const kept = new Set(names(target.config.params));
    const removed = names(held().config.params).filter((name) => !kept.has(name));
    if (removed.length > 0) {
      const { vectors, sparseVectors } = target.config.params;
      await this.changeVectors(collection, (config) => ({ ...config, params: { ...config.params, vectors, sparseVectors } }), removed, 'local');
    }
    if (JSON.stringify(held().config) !== JSON.stringify(target.config)) await this.updateConfig(target.name, () => target.config);
    const wanted = new Map(target.indexes.map((i) => [i.key, i]));
    // Checked against strict mode where they were asked, before they were committed.
    const persist = (indexes: IndexSpec[]) => this.saveIndexes(collection, indexes);
    for (const index of held().indexes) if (!wanted.has(index.key)) await collection.dropIndex(index.key, persist, 'committed');
    for (const index of target.indexes) {
      const current = held().indexes.find((i) => i.key === index.key);
      if (JSON.stringify(current) !== JSON.stringify(index)) await collection.createIndex(index, persist, 'committed');
    }
    await this.applyShardKeys(target.name, target.shardKeys ?? []);
  }

  /** Drops the keys `wanted` lacks, creates those it adds, with the shard ids it gives them. */
  private async applyShardKeys(name: string, wanted: readonly ShardKeyEntry[]): Promise<void> {
    const { record, collection } = this.entry(name);
    const held = record.shardKeys ?? [];
    for (const entry of held) if (!wanted.some((e) => e.key === entry.key)) await this.dropShardKey(name, entry.key);
    for (const entry of wanted) {
      if (held.some((e) => e.key === entry.key)) continue;
      await collection.createShardKey(entry.key, entry.shards.length, (id, key) => {
        // The collection numbers new shards as the control plane did (after the highest id held).
        if (!entry.shards.includes(id)) throw new Error(`shard key ${String(entry.key)} of ${name}: shard ${id} is not one of ${entry.shards.join(', ')}`);
        return this.replicaSet(record, id, key);
      }, (shardKeys) => this.updateRecord(collection, (r) => ({ ...r, shardKeys })).then(() => undefined));
    }
  }

  /**
   * Stores a changed configuration, computed by `change` from the configuration as it is when the
   * change applies (so concurrent updates compose); the shards then take the new optimizer and
   * vector parameters. `change` may refuse by throwing.
   */
  async updateConfig(nameOrAlias: string, change: (config: CollectionConfig) => CollectionConfig): Promise<void> {
    const collection = this.get(nameOrAlias);
    await collection.reconfigure(async () => {
      const { config } = await this.updateRecord(collection, (r) => ({ ...r, config: change(r.config) }));
      return { optimizer: optimizerSpecOf(config), vectors: vectorSpecsOf(config), sparseVectors: sparseSpecsOf(config), strictMode: config.strictMode };
    });
  }

  /**
   * Creates or deletes a named vector: `change` makes the new configuration from the one stored
   * when the change applies (and may refuse by throwing); `removed` names a deleted vector, which
   * every point loses first (Collection.changeVectors).
   */
  changeVectorName(nameOrAlias: string, change: (config: CollectionConfig) => CollectionConfig, removed: string | null): Promise<UpdateResult> {
    return this.changeVectors(this.get(nameOrAlias), change, removed === null ? [] : [removed], 'replicated');
  }

  private changeVectors(collection: Collection, change: (config: CollectionConfig) => CollectionConfig, removed: readonly string[], purge: 'replicated' | 'local'): Promise<UpdateResult> {
    return collection.changeVectors(async () => {
      const { config } = await this.updateRecord(collection, (r) => ({ ...r, config: change(r.config) }));
      return { vectors: vectorSpecsOf(config), sparseVectors: sparseSpecsOf(config) };
    }, removed, purge);
  }

  /** Keys of a custom-sharded collection, in the order they were created; null with automatic sharding. */
  shardKeys(nameOrAlias: string): ShardKey[] | null {
    return this.get(nameOrAlias).layout.keys?.map((e) => e.key) ?? null;
  }

  /**
   * Creates shard key `key` with `shardsNumber` shards (default: the collection's shard_number).
   * A single node's shards are its own and Active: another peer or state is refused.
   */
  async createShardKey(nameOrAlias: string, key: ShardKey, request: ShardKeyRequest): Promise<void> {
    const { record, collection } = this.entry(nameOrAlias);
    const state = request.initialState;
    // Shards of a single node serve as soon as they exist; a Partial shard would wait for a
    // transfer from a peer there is not (a Quiver-only refusal).
    if (state && state !== 'Active') throw new BadRequest(`Sharding key ${key} initial state ${state} is not possible on a single node: its shards are Active`);
    const unknown = request.placement?.find((peer) => peer !== this.placement.peer);
    if (unknown !== undefined) throw peerDoesNotExist(unknown);
    if (record.config.params.shardingMethod !== 'custom') throw shardKeysNeedCustomSharding();
    const count = request.shardsNumber ?? shardCountOf(record.config);
    await collection.createShardKey(key, count, (id, k) => this.replicaSet(record, id, k), (shardKeys) => this.updateRecord(collection, (r) => ({ ...r, shardKeys })).then(() => undefined));
  }

  /** Drops shard key `key` and every point stored under it. */
  async dropShardKey(nameOrAlias: string, key: ShardKey): Promise<void> {
    const { record, collection } = this.entry(nameOrAlias);
    if (record.config.params.shardingMethod !== 'custom') throw shardKeysNeedCustomSharding();
    await collection.dropShardKey(key, (shardKeys) => this.updateRecord(collection, (r) => ({ ...r, shardKeys })).then(() => undefined));
  }

  /** A node outside a cluster has one replica of each shard, which no operator moves (Qdrant's answer). */
  changeReplicas(): Promise<void> {
    return Promise.reject(distributedModeDisabled());
  }

  /** Creates (or replaces) a payload index and stores the collection's new index list. */
  createIndex(nameOrAlias: string, index: IndexSpec): Promise<UpdateResult> {
    const collection = this.get(nameOrAlias);
    return collection.createIndex(index, (indexes) => this.saveIndexes(collection, indexes));
  }

  /** Drops a payload index (none by that key is no error, as in Qdrant) and stores the new list. */
  dropIndex(nameOrAlias: string, key: string): Promise<UpdateResult> {
    const collection = this.get(nameOrAlias);
    return collection.dropIndex(key, (indexes) => this.saveIndexes(collection, indexes));
  }

  private async saveIndexes(collection: Collection, indexes: IndexSpec[]): Promise<void> {
    await this.updateRecord(collection, (r) => ({ ...r, indexes }));
  }

  /**
   * Stores a changed record of `collection`, computed from the record as the previous change left
   * it, so two concurrent changes (a configuration update and a new shard key) never overwrite
   * each other. Refused (404) once the collection is no longer the one registered under its
   * name: deleted, or replaced by a recovery. Answers the stored record.
   */
  private updateRecord(collection: Collection, change: (record: CollectionRecord) => CollectionRecord): Promise<CollectionRecord> {
    return this.nameTable.enqueue(async () => {
      const previous = this.records.get(collection.name);
      if (!previous || this.live.get(collection.name) !== collection) throw collectionNotFound(collection.name);
      const updated = change(previous);
      await this.meta.putCollection(collection.name, updated);
      this.records.set(collection.name, updated);
      return updated;
    });
  }

  /**
   * Deletes a collection (by its name, not an alias) with its aliases; false if there was none.
   * The record goes first (one synced batch with the aliases), then the data, once the writes
   * already queued on the collection are done; later writes to it are refused.
   */
  async delete(name: string): Promise<boolean> {
    const retired = await this.nameTable.enqueue(async () => {
      if (!this.live.has(name)) return null;
      const aliases = this.aliasesOf(name);
      await this.meta.deleteCollection(name, aliases);
      for (const alias of aliases) this.aliases.delete(alias);
      return this.retire(name);
    });
    if (!retired) return false;
    await retired.dropped;
    return true;
  }

  aliasList(): { alias_name: string; collection_name: string }[] {
    return [...this.aliases].map(([alias_name, collection_name]) => ({ alias_name, collection_name })).sort((a, b) => a.alias_name.localeCompare(b.alias_name));
  }

  aliasesOf(name: string): string[] {
    return [...this.aliases].filter(([, c]) => c === name).map(([a]) => a);
  }

  /** Applies alias actions in order, all or nothing: checked on a copy, then stored in one batch. */
  changeAliases(actions: AliasAction[]): Promise<void> {
    return this.nameTable.enqueue(() => this.storeAliases(applyAliasActions(this.aliases, this.records, actions)));
  }

  /** Takes the alias table the control plane holds (a cluster peer's reconcile). */
  setAliases(table: ReadonlyMap<string, string>): Promise<void> {
    return this.nameTable.enqueue(() => this.storeAliases(new Map(table)));
  }

  /** Stores what differs between the alias table and `next`, in one batch, and keeps `next`. */
  private async storeAliases(next: Map<string, string>): Promise<void> {
    const removed = [...this.aliases.keys()].filter((a) => next.get(a) !== this.aliases.get(a));
    const added = new Map([...next].filter(([a, c]) => this.aliases.get(a) !== c));
    if (removed.length === 0 && added.size === 0) return;
    await this.meta.changeAliases(removed, added);
    this.aliases = next;
  }

  /** Closes every collection once the writes queued on it are done, then the workers and the metadata store. */
  async close(): Promise<void> {
    await Promise.all([...this.live.values()].map((c) => c.close()));
    await this.workers.close();
    await this.meta.close();
  }

  /**
   * Closes without waiting for queued work (a shutdown past its bound): the worker threads end at
   * once, each closing its shards' stores as it exits, and a task cut short fails; every write
   * acknowledged is already on disk.
   */
  async terminate(): Promise<void> {
    await this.workers.close();
    await this.meta.close();
  }
}

/** A collection taken out of the name table; `dropped` settles once its data is gone. */
interface Retired {
  dropped: Promise<void>;
}
