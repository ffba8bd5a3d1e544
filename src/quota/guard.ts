// The node's quota: its configuration (persisted in node metadata once set through the API,
// else taken from `storage.quotas`), the readings it is judged against, and the check that
// refuses memory- or disk-consuming updates while a limit is reached.

import { InsufficientStorage } from '../errors.js';
import type { WriteOp } from '../shard/write-ops.js';
import { DEFAULT_RELEASE_MARGIN_PERCENT, type QuotaConfig } from './config.js';
import { diskUsagePercent, residentMemoryPercent } from './meter.js';
import { judge, rejectionMessage, type QuotaResource, type Verdict } from './verdict.js';

/** Where the API-set configuration is kept; once present it wins over the configuration file. */
export interface QuotaStore {
  load(): Promise<QuotaConfig | undefined>;
  save(config: QuotaConfig): Promise<void>;
}

export interface QuotaUsage {
  resident_memory_percent: number | null;
  disk_usage_percent: number | null;
}

/** Per resource: whether it is refusing work, or null when it is not enforced (disabled, no limit, unmeasurable). */
export type QuotaExceeded = Record<QuotaResource, boolean | null>;

const LIMIT_OF: Record<QuotaResource, 'max_resident_memory_percent' | 'max_disk_usage_percent'> = {
  resident_memory: 'max_resident_memory_percent',
  disk_usage: 'max_disk_usage_percent',
};

type Judged = Verdict & { used: number };

const RESOURCES: QuotaResource[] = ['resident_memory', 'disk_usage'];

export class QuotaGuard {
  private readonly tripped: Record<QuotaResource, boolean> = { resident_memory: false, disk_usage: false };

  private constructor(private current: QuotaConfig, private readonly storagePath: string, private readonly store: QuotaStore) {}

  static async open(store: QuotaStore, fileConfig: QuotaConfig, storagePath: string): Promise<QuotaGuard> {
    return new QuotaGuard((await store.load()) ?? fileConfig, storagePath, store);
  }

  get config(): QuotaConfig {
    return this.current;
  }

  /** Replaces the configuration (persisted first) and forgets tripped limits, so new limits apply at once. */
  async update(config: QuotaConfig): Promise<void> {
    await this.store.save(config);
    this.current = config;
    this.tripped.resident_memory = false;
    this.tripped.disk_usage = false;
  }

  usage(): QuotaUsage {
    return { resident_memory_percent: residentMemoryPercent(), disk_usage_percent: diskUsagePercent(this.storagePath) };
  }

  /** Judges every enforced resource against fresh readings, updating the tripped limits. */
  exceeded(): QuotaExceeded {
    const judged = this.judgeAll();
    return { resident_memory: judged.resident_memory?.exceeded ?? null, disk_usage: judged.disk_usage?.exceeded ?? null };
  }

  /** Throws Qdrant's insufficient-storage error while any enforced limit is reached. */
  check(): void {
    const judged = this.judgeAll();
    for (const resource of RESOURCES) {
      const reached = judged[resource];
      if (reached?.exceeded) {
        throw new InsufficientStorage(rejectionMessage(resource, reached.used, this.current[LIMIT_OF[resource]]!, reached.threshold));
      }
    }
  }

  /**
   * The check for point writes: deleting points is always allowed (on a full node it is the way
   * back under the limit); anything else, payload and vector deletions included (they rewrite
   * the point), is checked.
   */
  checkWrite(ops: readonly Pick<WriteOp, 'kind'>[]): void {
    if (ops.every((op) => op.kind === 'delete')) return;
    this.check();
  }

  private judgeAll(): Record<QuotaResource, Judged | null> {
    const usage = this.usage();
    return {
      resident_memory: this.judgeResource('resident_memory', usage.resident_memory_percent),
      disk_usage: this.judgeResource('disk_usage', usage.disk_usage_percent),
    };
  }

  private judgeResource(resource: QuotaResource, used: number | null): Judged | null {
    const limit = this.current[LIMIT_OF[resource]];
    if (!this.current.enabled || limit === null || used === null) {
      this.tripped[resource] = false;
      return null;
    }
    const verdict = judge(this.tripped[resource], used, limit, this.current.release_margin_percent ?? DEFAULT_RELEASE_MARGIN_PERCENT);
    this.tripped[resource] = verdict.exceeded;
    return { ...verdict, used };
  }
}
