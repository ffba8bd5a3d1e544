// Validated wire bodies of the point-update endpoints -> the shards' WriteOps, each with the
// shard keys its body names.

import type { PointId } from '../model.js';
import type { Target, WriteOp } from '../shard/write-ops.js';
import type { RoutedOp } from '../collection/collection.js';
import { toFilter } from './filter.js';
import { formatError, invalidJsonPath, POINTS_OR_FILTER } from './messages.js';
import { parseJsonPath } from '../shard/filter/json-path.js';
import { toNamedVectors, toPointInputs } from './point-convert.js';
import { toPointId } from './point-id.js';
import type {
  WireDeletePayload, WireDeleteVectors, WirePointId, WirePointInsertOperations, WirePointsSelector,
  WirePayloadFieldSchema, WireSetPayload, WireUpdateOperation, WireUpdateVectors,
} from './types.js';
import type { IndexSchema } from '../shard/payload-index/schema.js';
import type { WireFilter } from './filter.js';

function ids(list: WirePointId[]): PointId[] {
  return list.map(toPointId);
}

function selectorTarget(body: WirePointsSelector): Target {
  return 'points' in body ? { ids: ids(body.points) } : { filter: toFilter(body.filter) };
}

function routed(op: WriteOp, body: { shard_key?: RoutedOp['shardKey'] }): RoutedOp {
  return { op, shardKey: body.shard_key ?? null };
}

export function deleteOp(body: WirePointsSelector): RoutedOp {
  return routed({ kind: 'delete', target: selectorTarget(body) }, body);
}

export function clearPayloadOp(body: WirePointsSelector): RoutedOp {
  return routed({ kind: 'clear_payload', target: selectorTarget(body) }, body);
}

/** Qdrant's "points or filter" bodies: one of the two must be there. */
function eitherTarget(points: WirePointId[] | null | undefined, filter: WireFilter | null | undefined): Target {
  if (points) return { ids: ids(points) };
  if (filter) return { filter: toFilter(filter) };
  // The body schema (pointsOrFilter) already refuses such a body, as Qdrant's deserializer does.
  throw formatError(POINTS_OR_FILTER);
}

export function upsertOp(body: WirePointInsertOperations): RoutedOp {
  return routed({
    kind: 'upsert',
    points: toPointInputs(body),
    mode: body.update_mode ?? 'upsert',
    updateFilter: body.update_filter ? toFilter(body.update_filter, 'update_filter') : null,
  }, body);
}

/** A key path Qdrant reads as a JsonPath: one it cannot parse fails the body's deserialization. */
function keyPath(key: string): string {
  if (!parseJsonPath(key)) throw invalidJsonPath(key);
  return key;
}

export function setPayloadOp(body: WireSetPayload, overwrite: boolean): RoutedOp {
  if (body.key !== undefined && body.key !== null) keyPath(body.key);
  const target = eitherTarget(body.points, body.filter);
  return routed(overwrite ? { kind: 'overwrite_payload', target, payload: body.payload } : { kind: 'set_payload', target, payload: body.payload, key: body.key ?? null }, body);
}

export function deletePayloadOp(body: WireDeletePayload): RoutedOp {
  return routed({ kind: 'delete_payload', target: eitherTarget(body.points, body.filter), keys: body.keys.map(keyPath) }, body);
}

export function updateVectorsOp(body: WireUpdateVectors): RoutedOp {
  return routed({
    kind: 'update_vectors',
    points: body.points.map((p) => ({ id: toPointId(p.id), vectors: toNamedVectors(p.vector) })),
    updateFilter: body.update_filter ? toFilter(body.update_filter, 'update_filter') : null,
  }, body);
}

export function deleteVectorsOp(body: WireDeleteVectors): RoutedOp {
  return routed({ kind: 'delete_vectors', target: eitherTarget(body.points, body.filter), names: body.vector }, body);
}

export function batchOps(operations: WireUpdateOperation[]): RoutedOp[] {
  return operations.map((op): RoutedOp => {
    if ('upsert' in op) return upsertOp(op.upsert);
    if ('delete' in op) return deleteOp(op.delete);
    if ('set_payload' in op) return setPayloadOp(op.set_payload, false);
    if ('overwrite_payload' in op) return setPayloadOp(op.overwrite_payload, true);
    if ('delete_payload' in op) return deletePayloadOp(op.delete_payload);
    if ('clear_payload' in op) return clearPayloadOp(op.clear_payload);
    if ('update_vectors' in op) return updateVectorsOp(op.update_vectors);
    return deleteVectorsOp(op.delete_vectors);
  });
}

/**
 * A validated field_schema as the payload indexes take it. The create-index schema already
 * checked each option's name and type per index type, which is what IndexSchema spells out.
 */
export function toIndexSchema(wire: WirePayloadFieldSchema): IndexSchema {
  return wire as IndexSchema;
}
