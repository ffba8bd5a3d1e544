// Whether a resource is over its limit, with the release margin's hysteresis: a limit trips as
// soon as usage reaches it, and clears only once usage falls `margin` points below it.

export type QuotaResource = 'resident_memory' | 'disk_usage';

export interface Verdict {
  exceeded: boolean;
  /** What the reading was compared against: the limit, or limit minus margin while tripped. */
  threshold: number;
}

export function judge(wasExceeded: boolean, usedPercent: number, limit: number, margin: number): Verdict {
  const threshold = wasExceeded ? Math.max(0, limit - margin) : limit;
  return { exceeded: usedPercent >= threshold, threshold };
}

const WORDING: Record<QuotaResource, { description: string; total: string; remedy: string; parameter: string }> = {
  resident_memory: {
    description: 'Resident memory usage',
    total: 'total memory',
    remedy: 'Reduce memory usage (e.g. delete points or drop collections)',
    parameter: 'max_resident_memory_percent',
  },
  disk_usage: {
    description: 'Disk usage',
    total: 'total capacity',
    remedy: 'Reduce disk usage (e.g. delete points or drop collections)',
    parameter: 'max_disk_usage_percent',
  },
};

/**
 * Qdrant's rejection text: the tripped condition, then what to do about it. `configuredIn` names
 * where the limit is set (a collection's strict mode may set a tighter memory limit of its own).
 */
export function rejectionMessage(resource: QuotaResource, usedPercent: number, limit: number, threshold: number, configuredIn = 'the global quota config'): string {
  const { description, total, remedy, parameter } = WORDING[resource];
  const condition = usedPercent >= limit
    ? `${description} is at ${usedPercent}% of ${total}, exceeding the configured limit of ${limit}%`
    : `${description} is at ${usedPercent}% of ${total}. It reached the configured limit of ${limit}% and has to fall below ${threshold}% before this node takes writes again`;
  return `${condition}. Help: ${remedy}, or raise \`${parameter}\` in ${configuredIn}.`;
}
