// What a stopped server's storage holds: the collection records and aliases of its metadata
// store, and how the folders under <storage>/collections compare with them (a folder no record
// names is an orphan; a shard folder a record names but the disk lacks is missing).

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { shardCountOf } from '../../src/collection/config-model.js';
import type { CollectionRecord } from '../../src/collection/manager.js';
import { REPLACED } from '../../src/shard/snapshot-part.js';
import { MetaStore } from '../../src/storage/meta-store.js';

export interface StoredState {
  records: CollectionRecord[];
  aliases: Map<string, string>;
}

/** Reads the metadata store of a storage folder no server has open. */
export async function storedState(storage: string): Promise<StoredState> {
  const meta = (await MetaStore.open(storage)).typed<CollectionRecord>();
  try {
    return { records: await meta.collections(), aliases: await meta.aliases() };
  } finally {
    await meta.close();
  }
}

/** The shard folder names a record implies. */
function shardFolders(record: CollectionRecord): string[] {
  const ids = record.config.params.shardingMethod === 'custom'
    ? (record.shardKeys ?? []).flatMap((k) => k.shards)
    : Array.from({ length: shardCountOf(record.config) }, (_, i) => i);
  return ids.map(String).sort();
}

async function list(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => [] as string[]);
}

/** Folders under <storage>/collections that no record names, and shard folders records name that are absent. */
export async function compareFolders(storage: string, records: CollectionRecord[]): Promise<{ orphans: string[]; missing: string[] }> {
  const root = join(storage, 'collections');
  const byId = new Map(records.map((r) => [r.storageId, r]));
  const orphans: string[] = [];
  const missing: string[] = [];
  for (const name of await list(root)) {
    const record = byId.get(name);
    if (!record) {
      orphans.push(name);
      continue;
    }
    const expected = shardFolders(record);
    const present = await list(join(root, name));
    orphans.push(...present.filter((f) => !expected.includes(f)).map((f) => `${name}/${f}`));
  }
  for (const record of records) {
    const present = await list(join(root, record.storageId));
    // A shard whose store a crash caught mid-swap (an in-place recovery) has its old store beside
    // it under the replaced suffix: opening the shard puts it back (settleShardDirectory).
    const held = (f: string) => present.includes(f) || present.some((p) => p.startsWith(f + REPLACED));
    missing.push(...shardFolders(record).filter((f) => !held(f)).map((f) => `${record.storageId}/${f} (${record.name})`));
  }
  return { orphans, missing };
}
