// QuotaConfig, the body of PUT /quotas: every field optional (`{}` is valid), limits are u8
// percentages checked by range rules (HTTP 422 outside them).

import { bool, opt, struct, uint, withRule } from './builders.js';

const percent = (min: number) => opt(withRule(uint('u8'), { range: { min, max: 100 } }));

export const QUOTA_CONFIG = struct('QuotaConfig', {
  enabled: bool(),
  max_resident_memory_percent: percent(1),
  max_disk_usage_percent: percent(1),
  release_margin_percent: percent(0),
});
