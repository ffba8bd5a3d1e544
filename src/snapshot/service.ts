// Creating and recovering snapshots of collections, shards and the whole storage. Each shard
// writes its own part inside its worker (between two writes of its collection); the main thread
// only packs parts into archives and unpacks archives into parts, streaming files, never points.
// Recovery checks the checksum, then the whole archive, before any live data is touched, then
// hands the snapshot to the Catalog: a single node replaces its collection, a cluster peer goes
// through the control plane (src/cluster/cluster-catalog.ts).

import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { collectionNotFound, shardNotFound } from '../messages.js';
import { DEFAULT_SNAPSHOT_PRIORITY, type Catalog, type CollectionSnapshotContent, type SnapshotPriority } from '../collection/catalog.js';
import type { Collection } from '../collection/collection.js';
import type { CollectionManager } from '../collection/manager.js';
import { describeVectors } from '../collection/snapshot-compatibility.js';
import { BadInput } from '../errors.js';
import {
  collectionEntry,
  openArchive,
  SHARD_PART_ENTRY,
  shardPartEntry,
  writeArchive,
  type CollectionManifest,
  type OpenedArchive,
  type ShardManifest,
} from './archive.js';
import { SnapshotActivity } from './activity.js';
import { safeName, snapshotTimestamp, SnapshotFiles, type SnapshotDescription } from './files.js';
import { release, verifyChecksum, type LocalSnapshot } from './location.js';
import type { FileSlice } from '../storage/tar.js';

async function wholeFile(path: string): Promise<FileSlice> {
  return { path, offset: 0, size: (await stat(path)).size };
}

export class Snapshots {
  constructor(
    private readonly collections: CollectionManager,
    readonly files: SnapshotFiles,
    /** This node's peer id, part of collection snapshot names as in Qdrant. */
    private readonly peerId: number,
    private readonly activity: SnapshotActivity = new SnapshotActivity(),
    /** Where recoveries change collections: the CollectionManager on a single node, the cluster catalogue on a peer. */
    private readonly catalog: Catalog = collections,
  ) {}

  /** The collection's own name (aliases followed) and the position of its shard with id `shard`, which must exist. */
  shardOf(nameOrAlias: string, shard: number): { name: string; collection: Collection; index: number } {
    const name = this.collections.resolve(nameOrAlias);
    const collection = this.collections.get(name);
    const index = collection.shards.findIndex((s) => s.id === shard);
    if (index < 0) throw shardNotFound(shard);
    return { name, collection, index };
  }

  /** Runs `job` with a fresh temporary directory, removed afterwards. */
  private async inWorkDir<T>(job: (dir: string) => Promise<T>): Promise<T> {
    const dir = await this.files.tempPath('parts');
    await mkdir(dir);
    try {
      return await job(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Packs listed shards' parts of one collection into a new temporary archive. */
  private async packShards(collection: Collection, shards: number[], manifestOf: (parts: { points: number; lastOp: number }[]) => CollectionManifest | ShardManifest, entryOf: (shard: number) => string): Promise<string> {
    return this.inWorkDir(async (dir) => {
      const targets = shards.map((index) => ({ index, path: join(dir, `${index}.points`) }));
      const parts = await collection.snapshotShards(targets);
      const archive = await this.files.tempPath('archive');
      const entries = await Promise.all(targets.map(async (t) => ({ name: entryOf(t.index), source: await wholeFile(t.path) })));
      try {
        await writeArchive(archive, manifestOf(parts), entries);
      } catch (err) {
        await rm(archive, { force: true });
        throw err;
      }
      return archive;
    });
  }

  private packCollection(name: string): Promise<string> {
    // The record as the parts are written: the same collection (a replacement would mix a new
    // configuration with old points), its configuration as it is then.
    const collection = this.collections.get(name);
    return this.activity.creating(name, () => this.packShards(collection, collection.shards.map((_, i) => i), (shards) => {
      const record = this.collections.recordOf(collection);
      return { kind: 'collection', name, config: record.config, indexes: record.indexes, shardKeys: collection.layout.keys ?? undefined, shards };
    }, shardPartEntry));
  }

  async createCollectionSnapshot(nameOrAlias: string): Promise<SnapshotDescription> {
    const name = this.collections.resolve(nameOrAlias);
    const archive = await this.packCollection(name);
    return this.files.store(this.files.collectionDir(name), `${safeName(name)}-${this.peerId}-${snapshotTimestamp()}.snapshot`, archive);
  }

  /** A shard snapshot as a temporary archive (for storing, or for streaming once). */
  async packShard(nameOrAlias: string, shard: number): Promise<string> {
    const { name, collection, index } = this.shardOf(nameOrAlias, shard);
    return this.packShards(collection, [index], ([part]) => ({
      kind: 'shard',
      collection: name,
      shard,
      shardCount: collection.shards.length,
      vectors: collection.vectors.map(({ name: vector, size, distance }) => ({ name: vector, size, distance })),
      part,
    }), () => SHARD_PART_ENTRY);
  }

  async createShardSnapshot(nameOrAlias: string, shard: number): Promise<SnapshotDescription> {
    const { name } = this.shardOf(nameOrAlias, shard);
    const archive = await this.packShard(name, shard);
    return this.files.store(this.files.shardDir(name, shard), `${safeName(name)}-shard-${shard}-${snapshotTimestamp()}.snapshot`, archive);
  }

  /** Every collection (each its own embedded collection snapshot) and the aliases among them. */
  async createFullSnapshot(): Promise<SnapshotDescription> {
    const names: string[] = [];
    const packed: string[] = [];
    try {
      for (const name of this.collections.names()) {
        try {
          packed.push(await this.packCollection(name));
          names.push(name);
        } catch (err) {
          // A collection deleted while the snapshot is taken is simply not in it.
          if (this.collections.exists(name)) throw err;
        }
      }
      const aliases = this.collections.aliasList().filter((a) => names.includes(a.collection_name));
      const archive = await this.files.tempPath('archive');
      const entries = await Promise.all(packed.map(async (path, i) => ({ name: collectionEntry(i), source: await wholeFile(path) })));
      try {
        await writeArchive(archive, { kind: 'full', aliases, collections: names }, entries);
      } catch (err) {
        await rm(archive, { force: true });
        throw err;
      }
      return await this.files.store(this.files.root, `full-snapshot-${snapshotTimestamp()}.snapshot`, archive);
    } finally {
      await Promise.all(packed.map((path) => rm(path, { force: true })));
    }
  }

  /** What a collection snapshot already checked by openArchive restores. */
  private static contentOf({ manifest, entry }: OpenedArchive<CollectionManifest>): CollectionSnapshotContent {
    return {
      config: manifest.config,
      indexes: manifest.indexes,
      ...(manifest.shardKeys ? { shardKeys: manifest.shardKeys } : {}),
      parts: manifest.shards.map((part, index) => ({ index, part: entry(shardPartEntry(index)), lastOp: part.lastOp })),
    };
  }

  /** Recovers collection `name` (created if missing) from a snapshot file, which is released afterwards. */
  async recoverCollection(name: string, snapshot: LocalSnapshot, checksum: string | null | undefined, priority: SnapshotPriority = DEFAULT_SNAPSHOT_PRIORITY): Promise<void> {
    try {
      await verifyChecksum(snapshot.path, checksum);
      const archive = await openArchive(await wholeFile(snapshot.path), 'collection');
      await this.activity.recovering(name, () => this.catalog.recoverCollection(name, Snapshots.contentOf(archive), priority));
    } finally {
      await release(snapshot);
    }
  }

  /** Replaces one shard's data from a shard snapshot whose vectors match the collection's. */
  async recoverShard(nameOrAlias: string, shard: number, snapshot: LocalSnapshot, checksum: string | null | undefined, priority: SnapshotPriority = DEFAULT_SNAPSHOT_PRIORITY): Promise<void> {
    try {
      const { name, collection, index } = this.shardOf(nameOrAlias, shard);
      await verifyChecksum(snapshot.path, checksum);
      const { manifest, entry } = await openArchive(await wholeFile(snapshot.path), 'shard');
      const theirs = describeVectors(manifest.vectors);
      const ours = describeVectors(collection.vectors);
      if (theirs !== ours) throw new BadInput(`Snapshot is not compatible with existing collection ${name}: its vectors are ${theirs}, the collection's are ${ours}`);
      await this.activity.recovering(name, () => this.catalog.recoverShard(collection, { index, part: entry(SHARD_PART_ENTRY), lastOp: manifest.part.lastOp }, priority));
    } finally {
      await release(snapshot);
    }
  }

  /**
   * Recovers a full-storage snapshot (at start-up, as Qdrant's --storage-snapshot): every
   * collection in it, then its aliases. Every embedded archive is checked first. Existing
   * collections of the same names are replaced only with `force`.
   */
  async recoverStorage(path: string, force: boolean): Promise<string[]> {
    const { manifest, entry } = await openArchive(await wholeFile(path), 'full');
    const archives = [];
    for (let i = 0; i < manifest.collections.length; i++) archives.push(await openArchive(entry(collectionEntry(i)), 'collection'));
    if (!force) {
      const existing = manifest.collections.filter((name) => this.collections.exists(name));
      if (existing.length > 0) throw new BadInput(`collections ${existing.join(', ')} already exist; recover with --force-snapshot to replace them`);
    }
    // A single node's start-up only (a cluster peer refuses --storage-snapshot): its own manager recovers.
    for (let i = 0; i < archives.length; i++) await this.collections.recoverCollection(manifest.collections[i], Snapshots.contentOf(archives[i]), DEFAULT_SNAPSHOT_PRIORITY);
    await this.collections.changeAliases(manifest.aliases.map((a) => ({ create_alias: a })));
    return manifest.collections;
  }

  /** Snapshot listings are per collection: an unknown collection is a 404, as in Qdrant. */
  collectionDir(nameOrAlias: string): string {
    if (!this.collections.exists(nameOrAlias)) throw collectionNotFound(nameOrAlias);
    return this.files.collectionDir(this.collections.resolve(nameOrAlias));
  }
}
