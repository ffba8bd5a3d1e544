// Quiver's snapshot archives: a tar file whose `manifest.json` says what it holds, plus data
// entries. A collection snapshot holds the collection's configuration, payload index specs and
// one part per shard (`shards/<i>.points`); a shard snapshot one part (`shard.points`) and the
// vector parameters it was taken under; a full-storage snapshot the aliases and one embedded
// collection snapshot per collection (`collections/<i>.snapshot`). Opening an archive checks the
// whole tar structure and the manifest before anything is restored from it.

import type { CollectionConfig } from '../collection/config-model.js';
import type { ShardKeyEntry } from '../collection/shard-keys.js';
import { vectorSpecsOf } from '../collection/config-model.js';
import { isQuiverError } from '../errors.js';
import type { IndexSpec, VectorSpec } from '../shard/shard.js';
import { InvalidArchive, readEntry, readTar, TarWriter, type FileSlice, type TarEntry } from '../storage/tar.js';

const FORMAT = 'quiver-snapshot';
const VERSION = 1;
const MANIFEST = 'manifest.json';

/** What one shard part holds. */
export interface PartInfo {
  points: number;
  lastOp: number;
}

export interface CollectionManifest {
  kind: 'collection';
  name: string;
  config: CollectionConfig;
  indexes: IndexSpec[];
  /** A custom-sharded collection's keys; its parts follow the keys' shards in this order. */
  shardKeys?: ShardKeyEntry[];
  shards: PartInfo[];
}

export interface ShardManifest {
  kind: 'shard';
  collection: string;
  shard: number;
  shardCount: number;
  vectors: Pick<VectorSpec, 'name' | 'size' | 'distance'>[];
  part: PartInfo;
}

export interface FullManifest {
  kind: 'full';
  aliases: { alias_name: string; collection_name: string }[];
  collections: string[];
}

export type Manifest = CollectionManifest | ShardManifest | FullManifest;
type Kind = Manifest['kind'];

export const shardPartEntry = (index: number): string => `shards/${index}.points`;
export const SHARD_PART_ENTRY = 'shard.points';
export const collectionEntry = (index: number): string => `collections/${index}.snapshot`;

/** Writes an archive at `path` (a new file): the manifest, then each data entry copied in. */
export async function writeArchive(path: string, manifest: Manifest, entries: { name: string; source: FileSlice }[]): Promise<void> {
  const writer = await TarWriter.create(path);
  try {
    await writer.addBytes(MANIFEST, new TextEncoder().encode(JSON.stringify({ format: FORMAT, version: VERSION, ...manifest })));
    for (const entry of entries) await writer.addFile(entry.name, entry.source);
    await writer.finish();
  } catch (err) {
    await writer.abandon().catch(() => undefined);
    throw err;
  }
}

export interface OpenedArchive<M extends Manifest> {
  manifest: M;
  entry(name: string): FileSlice;
}

const KIND_NAMES: Record<Kind, string> = { collection: 'a collection snapshot', shard: 'a shard snapshot', full: 'a full-storage snapshot' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isPart = (value: unknown): value is PartInfo => isObject(value) && isCount(value.points) && isCount(value.lastOp);
const isKeyEntry = (value: unknown): value is ShardKeyEntry =>
  isObject(value) && (typeof value.key === 'string' || isCount(value.key)) && Array.isArray(value.shards) && value.shards.every(isCount);

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new InvalidArchive(`malformed manifest (${what})`);
}

function checkCollection(m: Record<string, unknown>): void {
  check(typeof m.name === 'string', 'name');
  check(Array.isArray(m.indexes) && m.indexes.every((i) => isObject(i) && typeof i.key === 'string' && i.schema !== undefined), 'indexes');
  const config = m.config as CollectionConfig;
  check(isObject(config) && isObject(config.params) && isObject(config.params.vectors) && isObject(config.params.vectors.byName), 'config');
  check(Number.isSafeInteger(config.params.shardNumber) && config.params.shardNumber >= 1, 'shard number');
  let partCount = config.params.shardNumber;
  if (config.params.shardingMethod === 'custom') {
    const keys = m.shardKeys;
    check(Array.isArray(keys) && keys.every(isKeyEntry), 'shard keys');
    partCount = keys.reduce((n: number, e: ShardKeyEntry) => n + e.shards.length, 0);
  }
  check(Array.isArray(m.shards) && m.shards.length === partCount && m.shards.every(isPart), 'shards');
  try {
    for (const v of vectorSpecsOf(config)) check(Number.isSafeInteger(v.size) && v.size >= 1 && typeof v.distance === 'string', `vector ${v.name}`);
  } catch (err) {
    if (isQuiverError(err)) throw err;
    throw new InvalidArchive('malformed manifest (vector parameters)');
  }
}

function checkShard(m: Record<string, unknown>): void {
  check(typeof m.collection === 'string', 'collection');
  check(isCount(m.shard) && isCount(m.shardCount) && (m.shardCount as number) >= 1, 'shard');
  check(Array.isArray(m.vectors) && m.vectors.every((v) => isObject(v) && typeof v.name === 'string' && isCount(v.size) && typeof v.distance === 'string'), 'vectors');
  check(isPart(m.part), 'part');
}

function checkFull(m: Record<string, unknown>): void {
  check(Array.isArray(m.collections) && m.collections.every((c) => typeof c === 'string'), 'collections');
  check(Array.isArray(m.aliases) && m.aliases.every((a) => isObject(a) && typeof a.alias_name === 'string' && typeof a.collection_name === 'string'), 'aliases');
}

function requiredEntries(manifest: Manifest): string[] {
  switch (manifest.kind) {
    case 'collection':
      return manifest.shards.map((_, i) => shardPartEntry(i));
    case 'shard':
      return [SHARD_PART_ENTRY];
    case 'full':
      return manifest.collections.map((_, i) => collectionEntry(i));
  }
}

/** Reads and checks an archive of the given kind: its tar structure, manifest and entries. */
export async function openArchive<K extends Kind>(source: FileSlice, kind: K): Promise<OpenedArchive<Extract<Manifest, { kind: K }>>> {
  const entries = new Map<string, TarEntry>((await readTar(source)).map((e) => [e.name, e]));
  const manifestEntry = entries.get(MANIFEST);
  if (!manifestEntry) throw new InvalidArchive('it holds no manifest.json (not a Quiver snapshot)');
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(await readEntry(manifestEntry)));
  } catch {
    throw new InvalidArchive('manifest.json is not JSON');
  }
  if (!isObject(parsed) || parsed.format !== FORMAT) throw new InvalidArchive('not a Quiver snapshot');
  if (parsed.version !== VERSION) throw new InvalidArchive(`snapshot format version ${String(parsed.version)} is not supported (expected ${VERSION})`);
  if (parsed.kind !== kind) {
    const actual = KIND_NAMES[parsed.kind as Kind] ?? 'an unknown kind of snapshot';
    throw new InvalidArchive(`it is ${actual}, not ${KIND_NAMES[kind]}`);
  }
  if (kind === 'collection') checkCollection(parsed);
  else if (kind === 'shard') checkShard(parsed);
  else checkFull(parsed);
  const manifest = parsed as unknown as Extract<Manifest, { kind: K }>;
  for (const name of requiredEntries(manifest)) if (!entries.has(name)) throw new InvalidArchive(`entry ${name} is missing`);
  return {
    manifest,
    entry: (name) => {
      const found = entries.get(name)!;
      return { path: found.path, offset: found.offset, size: found.size };
    },
  };
}
