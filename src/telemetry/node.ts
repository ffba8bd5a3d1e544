// What the node knows about itself beyond its collections: identity, start time, quota, request
// statistics and issues. Telemetry, metrics, cluster, quota and issue endpoints read it.

import { v4 as randomUUID } from 'uuid';
import type { QuiverConfig } from '../config/config.js';
import { checkFileQuota, type QuotaConfig } from '../quota/config.js';
import { QuotaGuard } from '../quota/guard.js';
import type { MetaStore } from '../storage/meta-store.js';
import { SnapshotActivity } from '../snapshot/activity.js';
import { IssueBoard } from './issues.js';
import { loadPeerId } from '../storage/peer-id.js';
import { CpuSampler } from './process.js';
import { RequestStats } from './request-stats.js';

export interface NodeState {
  peerId: number;
  /** Identifies this run of the process in telemetry (Qdrant draws one per start). */
  processId: string;
  startedAt: Date;
  quota: QuotaGuard;
  requests: RequestStats;
  issues: IssueBoard;
  snapshots: SnapshotActivity;
  cpu: CpuSampler;
}

const QUOTA_KEY = 'quota';

export async function openNodeState(meta: MetaStore<unknown>, config: QuiverConfig): Promise<NodeState> {
  const quota = await QuotaGuard.open(
    { load: () => meta.nodeSetting<QuotaConfig>(QUOTA_KEY), save: (c) => meta.putNodeSetting(QUOTA_KEY, c) },
    checkFileQuota(config.storage.quotas),
    config.storage.storage_path,
  );
  return { peerId: await loadPeerId(meta, config.cluster.peer_id), processId: randomUUID(), startedAt: new Date(), quota, requests: new RequestStats(), issues: new IssueBoard(), snapshots: new SnapshotActivity(), cpu: new CpuSampler() };
}
