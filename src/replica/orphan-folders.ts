// The start-up sweep of <storage>/collections: a create, delete or recovery cut short by a crash
// leaves a collection folder no record names (the record is stored after the folder is made and
// removed before the folder is), and a shard-key creation cut short leaves a shard folder no key
// names. Run once every stored collection is open (its shards have settled any interrupted swap),
// before anything else can touch the storage.

import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * Removes every entry of `collectionsDir` that is not the folder of a kept collection, and every
 * entry of a kept collection's folder that is not one of its shards. `kept` maps a collection's
 * storage id to its shard folder names. Answers the paths removed.
 */
export async function removeOrphanFolders(collectionsDir: string, kept: ReadonlyMap<string, readonly string[]>): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await entries(collectionsDir)) {
    const path = join(collectionsDir, name);
    const shards = kept.get(name);
    if (shards === undefined) {
      removed.push(path);
      continue;
    }
    for (const shard of await entries(path)) if (!shards.includes(shard)) removed.push(join(path, shard));
  }
  await Promise.all(removed.map((path) => rm(path, { recursive: true, force: true })));
  return removed;
}
