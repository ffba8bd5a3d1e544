// Query-string parameter sets and how each kind of value parses. Qdrant reads query strings with
// serde_urlencoded, where every value is a string parsed by the field's type, so these are small
// parsers with serde_urlencoded's wording rather than JSON schemas. Unknown parameters are ignored.

import { SNAPSHOT_PRIORITIES, type SnapshotPriority } from './snapshots.js';

import type { ReadConsistency } from '../../replica/request-scope.js';

const U64_MAX = 18_446_744_073_709_551_615n;

/** Parses one raw value or throws the text serde_urlencoded would report. */
type Parser<T> = (raw: string) => T | undefined;

class QueryValueError extends Error {}

const parseBool: Parser<boolean> = (raw) => {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new QueryValueError('provided string was not `true` or `false`');
};

// Rust's u64::from_str: an optional plus sign, then ASCII digits only.
const parseNonZeroU64: Parser<number> = (raw) => {
  if (raw === '') throw new QueryValueError('cannot parse integer from empty string');
  if (!/^\+?[0-9]+$/.test(raw)) throw new QueryValueError('invalid digit found in string');
  const value = BigInt(raw);
  if (value > U64_MAX) throw new QueryValueError('number too large to fit in target type');
  if (value === 0n) throw new QueryValueError('invalid value: integer `0`, expected a nonzero u64');
  return Number(value);
};

// usize::from_str, zero allowed.
const parseU64: Parser<number> = (raw) => {
  if (raw === '') throw new QueryValueError('cannot parse integer from empty string');
  if (!/^\+?[0-9]+$/.test(raw)) throw new QueryValueError('invalid digit found in string');
  const value = BigInt(raw);
  if (value > U64_MAX) throw new QueryValueError('number too large to fit in target type');
  return Number(value);
};

const ORDERINGS = ['weak', 'medium', 'strong'] as const;
const parseOrdering: Parser<(typeof ORDERINGS)[number]> = (raw) => {
  const ordering = ORDERINGS.find((o) => o === raw);
  if (ordering) return ordering;
  throw new QueryValueError(`unknown variant \`${raw}\`, expected one of \`weak\`, \`medium\`, \`strong\``);
};

// src/actix/api/read_params.rs: an empty value means "not given"; anything unreadable, zero
// included, gets one fixed message.
const parseConsistency: Parser<ReadConsistency> = (raw) => {
  if (raw === '') return undefined;
  if (raw === 'majority' || raw === 'quorum' || raw === 'all') return raw;
  if (/^\+?[0-9]+$/.test(raw) && BigInt(raw) > 0n && BigInt(raw) <= U64_MAX) return Number(raw);
  throw new QueryValueError('failed to deserialize read consistency query parameter value');
};

export const WRITE_PARAMS = { wait: parseBool, ordering: parseOrdering, timeout: parseNonZeroU64 };
export const READ_PARAMS = { consistency: parseConsistency, timeout: parseNonZeroU64 };
export const COMMIT_PARAMS = { timeout: parseNonZeroU64 };
/** GET /telemetry. */
export const TELEMETRY_PARAMS = { anonymize: parseBool, details_level: parseU64, per_collection: parseBool, timeout: parseNonZeroU64 };
/** GET /metrics has no `details_level` (ignored there, as every unknown parameter). */
export const METRICS_PARAMS = { anonymize: parseBool, per_collection: parseBool, timeout: parseNonZeroU64 };
export const CLUSTER_TELEMETRY_PARAMS = { details_level: parseU64, timeout: parseNonZeroU64 };
export const QUOTA_PARAMS = { wait: parseBool };
/** PUT and DELETE /cluster/metadata/keys/{key}. */
export const METADATA_PARAMS = { wait: parseBool };
/** DELETE /cluster/peer/{id}. */
export const PEER_REMOVAL_PARAMS = { timeout: parseNonZeroU64, force: parseBool };
export const SNAPSHOT_PARAMS = { wait: parseBool };
const parsePriority: Parser<SnapshotPriority> = (raw) => {
  const priority = SNAPSHOT_PRIORITIES.find((p) => p === raw);
  if (priority) return priority;
  throw new QueryValueError(`unknown variant \`${raw}\`, expected one of ${SNAPSHOT_PRIORITIES.map((p) => `\`${p}\``).join(', ')}`);
};
/** POST .../snapshots/upload. */
export const SNAPSHOT_UPLOAD_PARAMS = { wait: parseBool, priority: parsePriority, checksum: (raw: string) => raw };
const OPTIMIZATIONS_FIELDS = ['queued', 'completed', 'idle_segments'] as const;
// A comma-separated list of the optional parts of GET /collections/{name}/optimizations.
const parseOptimizationsFields: Parser<Set<(typeof OPTIMIZATIONS_FIELDS)[number]>> = (raw) => {
  const fields = new Set<(typeof OPTIMIZATIONS_FIELDS)[number]>();
  for (const item of raw.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const field = OPTIMIZATIONS_FIELDS.find((f) => f === item);
    if (!field) throw new QueryValueError(`unknown variant \`${item}\`, expected one of ${OPTIMIZATIONS_FIELDS.map((f) => `\`${f}\``).join(', ')}`);
    fields.add(field);
  }
  return fields;
};
export const OPTIMIZATIONS_PARAMS = { with: parseOptimizationsFields, completed_limit: parseU64 };
/** GET /collections/{name}/points/{id} takes consistency only. */
export const POINT_READ_PARAMS = { consistency: parseConsistency };
/** Endpoints that read no query parameter: whatever is sent is ignored, as serde ignores unknown fields. */
export const NO_PARAMS = {};

export type QueryParamSet = Record<string, Parser<unknown>>;

export type ParsedQuery<S extends QueryParamSet> = {
  [K in keyof S]?: S[K] extends Parser<infer T> ? T : never;
};

export type RawQuery = Record<string, string | string[] | undefined>;

export type QueryParseResult<S extends QueryParamSet> = { ok: true; value: ParsedQuery<S> } | { ok: false; error: string };

/** Parses the parameters of `set` found in `query`; fails with the message of the first bad one. */
export function parseQuery<S extends QueryParamSet>(set: S, query: RawQuery): QueryParseResult<S> {
  const parsed: Record<string, unknown> = {};
  for (const [name, parse] of Object.entries(set)) {
    const raw = query[name];
    if (raw === undefined) continue;
    if (Array.isArray(raw)) return { ok: false, error: `duplicate field \`${name}\`` };
    try {
      const value = parse(raw);
      if (value !== undefined) parsed[name] = value;
    } catch (err) {
      if (err instanceof QueryValueError) return { ok: false, error: err.message };
      throw err;
    }
  }
  return { ok: true, value: parsed as ParsedQuery<S> };
}
