// The node's collections and aliases: creation, lookup by name or alias, configuration
// changes, deletion. Metadata lives in the MetaStore; point data in the shard workers.

import { v4 as randomUUID } from 'uuid';
import { join } from 'node:path';
import { BadInput, BadRequest } from '../errors.js';
import { aliasNotFound, collectionAlreadyExists, collectionNameIsAlias, collectionNotFound } from '../api/messages.js';
import type { IndexSpec } from '../shard/shard.js';
import { MetaStore } from '../storage/meta-store.js';
import { ShardWorkers } from '../worker/pool.js';
import { Collection } from './collection.js';
import { WriteQueue } from './write-queue.js';
import { optimizerSpecOf, shardCountOf, vectorSpecsOf, type CollectionConfig } from './config-model.js';
import type { ShardKey, ShardKeyEntry, ShardPlacement } from './shard-keys.js';

export interface CollectionRecord {
  name: string;
  /** Directory name of the collection's shards: names may hold characters paths cannot. */
  storageId: string;
  config: CollectionConfig;
  indexes: IndexSpec[];
  /** The keys of a custom-sharded collection and their shard ids (absent with automatic sharding). */
  shardKeys?: ShardKeyEntry[];
}

export type AliasAction =
  | { create_alias: { collection_name: string; alias_name: string } }
  | { delete_alias: { alias_name: string } }
  | { rename_alias: { old_alias_name: string; new_alias_name: string } };

export class CollectionManager {
  private readonly records = new Map<string, CollectionRecord>();
  private readonly live = new Map<string, Collection>();
  private aliases = new Map<string, string>();
  private readonly recordWrites = new WriteQueue();

  private constructor(private readonly storagePath: string, readonly meta: MetaStore<CollectionRecord>, readonly workers: ShardWorkers) {}

  static async open(storagePath: string, workerCount: number): Promise<CollectionManager> {
    const meta = (await MetaStore.open(storagePath)).typed<CollectionRecord>();
    const manager = new CollectionManager(storagePath, meta, new ShardWorkers(workerCount));
    for (const record of await meta.collections()) {
      manager.records.set(record.name, record);
      manager.live.set(record.name, await manager.start(record));
    }
    manager.aliases = await meta.aliases();
    return manager;
  }

  private async start(record: CollectionRecord): Promise<Collection> {
    const collection = this.instantiate(record);
    await collection.open();
    return collection;
  }

  /** Where shard `id` of a collection lives: its directory, and the worker that owns it. */
  private placement(storageId: string, id: number, shardKey?: ShardKey): ShardPlacement {
    const place = { id, key: `${storageId}/${id}`, worker: id % this.workers.count, path: join(this.storagePath, 'collections', storageId, String(id)) };
    return shardKey === undefined ? place : { ...place, shardKey };
  }

  /** The collection a record describes, its shards placed but not opened. */
  private instantiate(record: CollectionRecord): Collection {
    const custom = record.config.params.shardingMethod === 'custom';
    const keys = custom ? record.shardKeys ?? [] : null;
    const shards = keys
      ? keys.flatMap((entry) => entry.shards.map((id) => this.placement(record.storageId, id, entry.key)))
      : Array.from({ length: shardCountOf(record.config) }, (_, i) => this.placement(record.storageId, i));
    return new Collection(record.name, this.workers, { keys, shards }, vectorSpecsOf(record.config), record.indexes, optimizerSpecOf(record.config));
  }

  /**
   * Creates or replaces collection `name` with restored data (snapshot recovery). `fill` opens the
   * new collection's shards under a fresh storage id while the current collection keeps serving;
   * one synced metadata write then switches to them, and the old shards are dropped. If `fill`
   * fails, what it built is removed and nothing changed. Aliases of the name stay.
   */
  async replace(name: string, config: CollectionConfig, indexes: IndexSpec[], shardKeys: ShardKeyEntry[] | undefined, fill: (collection: Collection) => Promise<void>): Promise<void> {
    if (!this.records.has(name) && this.aliases.has(name)) throw collectionNameIsAlias(name);
    const record: CollectionRecord = { name, storageId: randomUUID(), config, indexes, ...(shardKeys ? { shardKeys } : {}) };
    const collection = this.instantiate(record);
    try {
      await fill(collection);
    } catch (err) {
      await collection.drop();
      throw err;
    }
    await this.meta.putCollection(name, record);
    const previous = this.live.get(name);
    this.records.set(name, record);
    this.live.set(name, collection);
    await previous?.drop();
  }

  names(): string[] {
    return [...this.records.keys()];
  }

  /** The collection's own name, following an alias. */
  resolve(nameOrAlias: string): string {
    if (this.records.has(nameOrAlias)) return nameOrAlias;
    const target = this.aliases.get(nameOrAlias);
    if (target !== undefined && this.records.has(target)) return target;
    throw collectionNotFound(nameOrAlias);
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

  async create(name: string, config: CollectionConfig): Promise<void> {
    if (this.records.has(name)) throw collectionAlreadyExists(name);
    if (this.aliases.has(name)) throw collectionNameIsAlias(name);
    const record: CollectionRecord = { name, storageId: randomUUID(), config, indexes: [] };
    const collection = await this.start(record);
    await this.meta.putCollection(name, record);
    this.records.set(name, record);
    this.live.set(name, collection);
  }

  /** Stores a changed configuration; changed vector parameters rebuild the collection's graphs. */
  async updateConfig(nameOrAlias: string, config: CollectionConfig): Promise<void> {
    const record = await this.updateRecord(this.resolve(nameOrAlias), (r) => ({ ...r, config }));
    const optimizer = optimizerSpecOf(config);
    if (JSON.stringify(optimizer) !== JSON.stringify(optimizerSpecOf(record.config))) await this.get(record.name).configureOptimizer(optimizer);
    const vectors = vectorSpecsOf(config);
    if (JSON.stringify(vectors) !== JSON.stringify(vectorSpecsOf(record.config))) await this.get(record.name).reconfigure(vectors);
  }

  /** Keys of a custom-sharded collection, in the order they were created; null with automatic sharding. */
  shardKeys(nameOrAlias: string): ShardKey[] | null {
    return this.get(nameOrAlias).layout.keys?.map((e) => e.key) ?? null;
  }

  /** Creates shard key `key` with `shardsNumber` shards (default: the collection's shard_number). */
  async createShardKey(nameOrAlias: string, key: ShardKey, shardsNumber: number | null): Promise<void> {
    const record = this.record(nameOrAlias);
    if (record.config.params.shardingMethod !== 'custom') throw new BadRequest(`Shard Key ${key} cannot be created with Auto sharding method`);
    const collection = this.get(nameOrAlias);
    if (collection.layout.keys?.some((e) => e.key === key)) throw new BadRequest(`Shard key ${key} already exists`);
    const count = shardsNumber ?? shardCountOf(record.config);
    const keys = await collection.createShardKey(key, count, (id, k) => this.placement(record.storageId, id, k));
    await this.saveShardKeys(record.name, keys);
  }

  /** Drops shard key `key` and every point stored under it. */
  async dropShardKey(nameOrAlias: string, key: ShardKey): Promise<void> {
    const record = this.record(nameOrAlias);
    if (record.config.params.shardingMethod !== 'custom') throw new BadRequest(`Shard Key ${key} cannot be removed with Auto sharding method`);
    const collection = this.get(nameOrAlias);
    if (!collection.layout.keys?.some((e) => e.key === key)) throw new BadInput(`Shard key ${key} does not exist for collection ${record.name}`);
    await collection.dropShardKey(key, (keys) => this.saveShardKeys(record.name, keys));
  }

  private async saveShardKeys(name: string, shardKeys: ShardKeyEntry[]): Promise<void> {
    await this.updateRecord(name, (r) => ({ ...r, shardKeys }));
  }

  async saveIndexes(nameOrAlias: string): Promise<void> {
    const name = this.resolve(nameOrAlias);
    await this.updateRecord(name, (r) => ({ ...r, indexes: [...this.get(name).indexes] }));
  }

  /**
   * Stores a changed record of collection `name`. Changes are applied one at a time to the
   * record as the previous change left it, so two concurrent changes (a configuration update and
   * a new shard key) never overwrite each other. Answers the record as it was before.
   */
  private updateRecord(name: string, change: (record: CollectionRecord) => CollectionRecord): Promise<CollectionRecord> {
    return this.recordWrites.enqueue(async () => {
      const previous = this.records.get(name);
      if (!previous) throw collectionNotFound(name);
      const updated = change(previous);
      await this.meta.putCollection(name, updated);
      this.records.set(name, updated);
      return previous;
    });
  }

  /** Deletes a collection (by its name, not an alias) with its aliases; false if there was none. */
  async delete(name: string): Promise<boolean> {
    const collection = this.live.get(name);
    if (!collection) return false;
    const aliases = this.aliasesOf(name);
    await this.meta.deleteCollection(name, aliases);
    for (const alias of aliases) this.aliases.delete(alias);
    this.records.delete(name);
    this.live.delete(name);
    await collection.drop();
    return true;
  }

  aliasList(): { alias_name: string; collection_name: string }[] {
    return [...this.aliases].map(([alias_name, collection_name]) => ({ alias_name, collection_name })).sort((a, b) => a.alias_name.localeCompare(b.alias_name));
  }

  aliasesOf(name: string): string[] {
    return [...this.aliases].filter(([, c]) => c === name).map(([a]) => a);
  }

  /** Applies alias actions in order, all or nothing: checked on a copy, then stored in one batch. */
  async changeAliases(actions: AliasAction[]): Promise<void> {
    const next = new Map(this.aliases);
    for (const action of actions) {
      if ('create_alias' in action) {
        const { collection_name, alias_name } = action.create_alias;
        if (!this.records.has(collection_name)) throw collectionNotFound(collection_name);
        if (this.records.has(alias_name)) throw collectionAlreadyExists(alias_name);
        next.set(alias_name, collection_name);
      } else if ('delete_alias' in action) {
        next.delete(action.delete_alias.alias_name);
      } else {
        const { old_alias_name, new_alias_name } = action.rename_alias;
        const target = next.get(old_alias_name);
        if (target === undefined) throw aliasNotFound(old_alias_name);
        // Qdrant does not check this; an alias named like a collection would never be reached.
        if (this.records.has(new_alias_name)) throw collectionAlreadyExists(new_alias_name);
        next.delete(old_alias_name);
        next.set(new_alias_name, target);
      }
    }
    const removed = [...this.aliases.keys()].filter((a) => next.get(a) !== this.aliases.get(a));
    const added = new Map([...next].filter(([a, c]) => this.aliases.get(a) !== c));
    await this.meta.changeAliases(removed, added);
    this.aliases = next;
  }

  async close(): Promise<void> {
    await Promise.all([...this.live.values()].map((c) => c.close()));
    await this.workers.close();
    await this.meta.close();
  }
}
