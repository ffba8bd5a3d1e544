// Bodies of the snapshot recovery endpoints: SnapshotRecover (collections) and
// ShardSnapshotRecover (shards, whose location may also be a file name of the shard's snapshots).

import { SNAPSHOT_PRIORITIES, type SnapshotPriority } from '../../collection/catalog.js';
import { opt, str, struct, unitEnum } from './builders.js';

export { SNAPSHOT_PRIORITIES, type SnapshotPriority };

export interface WireSnapshotRecover {
  location: string;
  priority?: SnapshotPriority | null;
  checksum?: string | null;
  api_key?: string | null;
}

const fields = {
  location: str(),
  priority: opt(unitEnum(SNAPSHOT_PRIORITIES)),
  checksum: opt(str()),
  api_key: opt(str()),
};

export const SNAPSHOT_RECOVER = struct('SnapshotRecover', fields, { required: ['location'] });
export const SHARD_SNAPSHOT_RECOVER = struct('ShardSnapshotRecover', fields, { required: ['location'] });
