// Snapshot work done before the server listens: temporary files left by an interrupted snapshot
// are removed, and a full-storage snapshot given with --storage-snapshot is recovered (Qdrant
// offers full-storage recovery at start-up only, not over REST).

import type { CollectionManager } from '../collection/manager.js';
import type { QuiverConfig } from '../config/config.js';
import { SnapshotFiles } from './files.js';
import { Snapshots } from './service.js';

/** Answers the collections recovered from --storage-snapshot (none without it). */
export async function prepareSnapshots(collections: CollectionManager, config: QuiverConfig, peerId: number): Promise<string[]> {
  const files = new SnapshotFiles(config.storage.snapshots_path);
  await files.clearTemp();
  const path = config.recover.storage_snapshot;
  if (path === null) return [];
  return new Snapshots(collections, files, peerId).recoverStorage(path, config.recover.force_snapshot);
}
