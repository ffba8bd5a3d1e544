// The quota configuration: limits on this node's resident memory and storage disk, as Qdrant
// defines them (`storage.quotas` in the configuration file, or `PUT /quotas`).

export interface QuotaConfig {
  enabled: boolean;
  /** Percent (1-100) of the memory available to the process; null leaves memory uncapped. */
  max_resident_memory_percent: number | null;
  /** Percent (1-100) of the storage filesystem's capacity; null leaves disk uncapped. */
  max_disk_usage_percent: number | null;
  /** Points below a tripped limit a resource must fall before writes resume; null: the default. */
  release_margin_percent: number | null;
}

/** Qdrant's built-in release margin, used while the configuration leaves it unset. */
export const DEFAULT_RELEASE_MARGIN_PERCENT = 5;

/** The configuration as sent in `PUT /quotas` (every field optional). */
export interface WireQuotaConfig {
  enabled?: boolean;
  max_resident_memory_percent?: number | null;
  max_disk_usage_percent?: number | null;
  release_margin_percent?: number | null;
}

/** A whole configuration from a (validated) body: `PUT /quotas` replaces every field. */
export function fromWire(body: WireQuotaConfig): QuotaConfig {
  return {
    enabled: body.enabled ?? false,
    max_resident_memory_percent: body.max_resident_memory_percent ?? null,
    max_disk_usage_percent: body.max_disk_usage_percent ?? null,
    release_margin_percent: body.release_margin_percent ?? null,
  };
}

/** Qdrant's JSON of a QuotaConfig: unset limits are left out. */
export function renderQuotaConfig(config: QuotaConfig): WireQuotaConfig {
  const out: WireQuotaConfig = { enabled: config.enabled };
  if (config.max_resident_memory_percent !== null) out.max_resident_memory_percent = config.max_resident_memory_percent;
  if (config.max_disk_usage_percent !== null) out.max_disk_usage_percent = config.max_disk_usage_percent;
  if (config.release_margin_percent !== null) out.release_margin_percent = config.release_margin_percent;
  return out;
}

/**
 * Checks a configuration read from the configuration file or environment, where no request
 * validation applies; the server refuses to start on a limit outside Qdrant's ranges.
 */
export function checkFileQuota(config: QuotaConfig): QuotaConfig {
  const ranges: [keyof QuotaConfig, number][] = [
    ['max_resident_memory_percent', 1],
    ['max_disk_usage_percent', 1],
    ['release_margin_percent', 0],
  ];
  for (const [field, min] of ranges) {
    const value = config[field];
    if (value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > 100) {
      throw new Error(`invalid storage.quotas.${field}: ${String(value)} (an integer from ${min} to 100)`);
    }
  }
  if (typeof config.enabled !== 'boolean') throw new Error(`invalid storage.quotas.enabled: ${String(config.enabled)}`);
  return config;
}
