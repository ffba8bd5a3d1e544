// Node-level answers: GET / (version info, sent without the envelope), snapshots, issues and
// quotas.

import { bool, seq, str, uint, unitEnum } from '../builders.js';
import { closed, DATE_TIME, nullable } from './shape.js';

export const VERSION_INFO = closed({ title: str(), version: str(), commit: nullable(str()) }, ['title', 'version']);

/** creation_time is a date-time without a zone ("2022-08-04T10:49:10"), as Qdrant writes it. */
export const SNAPSHOT_DESCRIPTION = closed({
  name: str(),
  creation_time: nullable({ type: 'string', pattern: '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?$' }),
  size: uint('u64'),
  checksum: nullable({ type: 'string', pattern: '^[0-9a-f]{64}$' }),
}, ['name', 'size']);

export const SNAPSHOT_LIST = seq(SNAPSHOT_DESCRIPTION);

/**
 * Qdrant's issues report (its OpenAPI leaves it an open object): each issue an id, a
 * description, a solution (here a refactoring advice) and when it was raised.
 */
export const ISSUES_REPORT = closed({
  issues: seq(closed({
    id: str(),
    description: str(),
    solution: { anyOf: [closed({ refactor: str() }, ['refactor']), closed({ immediate: { type: 'object' } }, ['immediate']), closed({ immediate_choice: seq({ type: 'object' }) }, ['immediate_choice']), unitEnum(['none'])] },
    timestamp: DATE_TIME,
  }, ['id', 'description', 'solution', 'timestamp'])),
}, ['issues']);

const PERCENT = nullable({ ...uint('u8'), maximum: 100 });

export const QUOTA_CONFIG = closed({
  enabled: bool(),
  max_resident_memory_percent: PERCENT,
  max_disk_usage_percent: PERCENT,
  release_margin_percent: PERCENT,
});

const QUOTA_USAGE = closed({ resident_memory_percent: nullable(uint('u8')), disk_usage_percent: nullable(uint('u8')) });

export const QUOTA_STATUS = closed({
  config: QUOTA_CONFIG,
  usage: QUOTA_USAGE,
  peers: nullable({ type: 'object', additionalProperties: closed({ exceeded: bool(), ...QUOTA_USAGE.properties }, ['exceeded']) }),
}, ['config', 'usage']);
