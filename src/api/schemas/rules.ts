// Validator-crate rules of Qdrant's request types, and how Qdrant words a broken one
// (lib/collection/src/operations/validation.rs describe_error): "value 0 invalid, must be 1 or
// larger". Values print as serde_json prints them: a float field shows 2 as "2.0", and an f32
// field shows the f32 nearest to what was sent, widened to f64 (0.2 as 0.20000000298023224).

import { parseJsonPath } from '../../shard/filter/json-path.js';
import { nameViolations } from '../collection-name.js';

export type RuleSpec = (
  | { range: { min?: number; max?: number }; float?: 'f32' | 'f64' }
  /** validator's length(min) on a list; Qdrant's wording says "characters" for lists too. */
  | { minLength: number }
  /** Every number of a list is within the f32 range (rounds to a finite f32). Quiver's rule. */
  | { f32Components: true }
  /** A vector struct must name at least one vector (PointVectors.vector). */
  | { vectorNotEmpty: true }
  /** A sparse vector has one value per index (reported under `values`). */
  | { sparseLengths: true }
  /** A sparse vector names each index once (reported under `indices`). */
  | { sparseUnique: true }
  /** A multivector's vectors are non-empty and of one length (reported under `data`). */
  | { multiDense: true }
  /** A Batch's ids, vectors and payloads must line up. */
  | { batchLengths: true }
  /**
   * A name that a request brings into existence and that is then resolved like a collection name
   * (a new alias): it must be a valid collection name. Quiver's rule; Qdrant checks no alias name.
   */
  | { newName: string }
  /**
   * A payload key path that writes create objects along (set_payload's `key`): at most this many
   * steps, so a stored payload stays within a few times the nesting a body may have. Quiver's rule.
   */
  | { maxPathSteps: number }
  /** A shard transfer's two peers differ (validate_shard_different_peers), unless it goes to another shard. */
  | { differentPeers: true }
  /** A memory placement the storage cannot serve: `pinned` (Qdrant's unsupported_memory_placement). */
  | { notPinned: string }
) & {
  /** Qdrant reports some custom checks under a field of their own inside the checked value. */
  field?: string;
};

/** Returns the description of the violation, or null when the value keeps the rule. */
export function violation(rule: RuleSpec, value: unknown): string | null {
  if ('range' in rule) return rangeViolation(rule.range, rule.float, value);
  if ('minLength' in rule) {
    if (!Array.isArray(value) || value.length >= rule.minLength) return null;
    return `value ${JSON.stringify(value)} invalid, must be at least ${rule.minLength} characters`;
  }
  if ('f32Components' in rule) return f32ComponentsViolation(value);
  if ('vectorNotEmpty' in rule) return isEmptyVector(value) ? 'must specify vectors to update for point' : null;
  // Qdrant's sparse checks carry a code and no message, which the validator crate prints this way.
  if ('sparseLengths' in rule) {
    const sparse = sparseOf(value);
    return sparse && sparse.indices.length !== sparse.values.length ? 'Validation error: must be the same length as indices [{}]' : null;
  }
  if ('sparseUnique' in rule) {
    const indices = sparseOf(value)?.indices;
    return indices && new Set(indices).size !== indices.length ? 'Validation error: must be unique [{}]' : null;
  }
  if ('multiDense' in rule) return multiDenseViolation(value);
  if ('maxPathSteps' in rule) {
    const steps = typeof value === 'string' ? (parseJsonPath(value)?.length ?? 0) : 0;
    return steps > rule.maxPathSteps ? `key path of ${steps} steps invalid, must be at most ${rule.maxPathSteps} steps` : null;
  }
  if ('notPinned' in rule) return value === 'pinned' ? `\`pinned\` memory placement is not supported for ${rule.notPinned}` : null;
  if ('differentPeers' in rule) return differentPeersViolation(value);
  if ('newName' in rule) return typeof value === 'string' ? (nameViolations(value, 'create', rule.newName)[0] ?? null) : null;
  return batchLengthViolation(value);
}

function differentPeersViolation(value: unknown): string | null {
  const { from_peer_id: from, to_peer_id: to, shard_id: shard, to_shard_id: toShard } = value as Record<string, unknown>;
  if (from !== to || (typeof toShard === 'number' && toShard !== shard)) return null;
  return `cannot transfer shard to itself, "to_peer_id" must be different than ${String(from)} in "from_peer_id"`;
}

function rangeViolation(range: { min?: number; max?: number }, float: 'f32' | 'f64' | undefined, value: unknown): string | null {
  if (typeof value !== 'number') return null;
  const { min, max } = range;
  if ((min === undefined || value >= min) && (max === undefined || value <= max)) return null;
  const show = (n: number): string => {
    const stored = float === 'f32' ? Math.fround(n) : n;
    return float && Number.isInteger(stored) ? stored.toFixed(1) : String(stored);
  };
  let bound: string;
  if (min !== undefined && max !== undefined) bound = `must be from ${show(min)} to ${show(max)}`;
  else if (min !== undefined) bound = `must be ${show(min)} or larger`;
  else bound = `must be ${show(max as number)} or smaller`;
  return `value ${show(value)} invalid, ${bound}`;
}

const F32_MAX = 3.4028234663852886e38;

// Runs on every component of every vector sent: a plain loop.
function f32ComponentsViolation(value: unknown): string | null {
  if (!Array.isArray(value)) return null;
  for (let i = 0; i < value.length; i++) {
    if (!Number.isFinite(Math.fround(value[i] as number))) {
      return `value ${value[i]} at index ${i} invalid, must be from ${-F32_MAX} to ${F32_MAX} (the f32 range)`;
    }
  }
  return null;
}

// lib/segment/src/data_types/vectors.rs validate_multi_vector: every row non-empty, then one length.
function multiDenseViolation(value: unknown): string | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const rows = value as unknown[][];
  if (rows.some((row) => row.length === 0)) return 'all vectors must be non-empty';
  const dim = rows[0].length;
  const other = rows.find((row) => row.length !== dim);
  return other ? `all vectors must have the same dimension, found vector with dimension ${other.length}` : null;
}

function isEmptyVector(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value !== 'object' || value === null) return false;
  return Object.values(value).every((v) => (Array.isArray(v) ? v.length === 0 : isEmptySparse(v)));
}

// `value` may be any JSON value: an inference object's fields (`"object": null`) pass through here too.
function isEmptySparse(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const indices = (value as { indices?: unknown }).indices;
  return Array.isArray(indices) && indices.length === 0;
}

// lib/api/src/rest/validate.rs: vectors are checked before payloads, each named column in turn.
function batchLengthViolation(value: unknown): string | null {
  const batch = value as { ids: unknown[]; vectors: unknown; payloads?: unknown[] | null };
  const ids = batch.ids.length;
  // Inference inputs (documents, images, objects) are not counted, as in Qdrant.
  const isInference = Array.isArray(batch.vectors) && batch.vectors.some((v) => !Array.isArray(v));
  if (isInference) return null;
  const columns = Array.isArray(batch.vectors) ? [batch.vectors] : Object.values(batch.vectors as object);
  for (const column of columns) {
    if (Array.isArray(column) && column.length !== ids) {
      return `number of ids and vectors must be equal (${ids} != ${column.length})`;
    }
  }
  if (Array.isArray(batch.payloads) && batch.payloads.length !== ids) {
    return `number of ids and payloads must be equal (${ids} != ${batch.payloads.length})`;
  }
  return null;
}

/** The lists of a value shaped as a sparse vector (the shape step has checked it). */
function sparseOf(value: unknown): { indices: unknown[]; values: unknown[] } | null {
  const v = value as { indices?: unknown; values?: unknown } | null;
  return v && Array.isArray(v.indices) && Array.isArray(v.values) ? { indices: v.indices, values: v.values } : null;
}
