// Point updates as the shards apply them: one list of operations, applied in order, whether
// they came from a single endpoint or from POST /points/batch.

import type { Filter } from './filter/types.js';
import type { NamedVectors, Payload, PointId } from '../model.js';

export interface PointRecord {
  id: PointId;
  vectors: NamedVectors;
  payload: Payload | null;
  /** Id of the operation that last changed the point (Qdrant's point version); set by the shard. */
  version?: number;
}

/** Which points an operation touches: listed ids, or every point matching a filter. */
export type Target = { ids: PointId[] } | { filter: Filter };

/** Qdrant's update_mode: insert or replace, only insert new ids, or only replace existing ones. */
export type UpsertMode = 'upsert' | 'insert_only' | 'update_only';

export type WriteOp =
  | { kind: 'upsert'; points: PointRecord[]; mode: UpsertMode; updateFilter: Filter | null }
  | { kind: 'delete'; target: Target }
  | { kind: 'set_payload'; target: Target; payload: Payload; key: string | null }
  | { kind: 'overwrite_payload'; target: Target; payload: Payload }
  | { kind: 'delete_payload'; target: Target; keys: string[] }
  | { kind: 'clear_payload'; target: Target }
  /** updateFilter: existing points that do not match it are left as they are (optional: older log entries lack it). */
  | { kind: 'update_vectors'; points: { id: PointId; vectors: NamedVectors }[]; updateFilter?: Filter | null }
  | { kind: 'delete_vectors'; target: Target; names: string[] };

/** The ids an operation names explicitly (routing by id), or null when it selects by filter. */
export function namedIds(op: WriteOp): PointId[] | null {
  switch (op.kind) {
    case 'upsert':
    case 'update_vectors':
      return op.points.map((p) => p.id);
    default:
      return 'ids' in op.target ? op.target.ids : null;
  }
}

/**
 * `op` split over `count` shards: part i concerns the ids `route` sends to shard i (null when it
 * names none). Each id is routed once, whatever the number of shards. Filter targets go whole to
 * every shard.
 */
export function splitOp(op: WriteOp, count: number, route: (id: PointId) => number): (WriteOp | null)[] {
  const split = <T>(items: T[], idOf: (item: T) => PointId): T[][] => {
    const parts: T[][] = Array.from({ length: count }, () => []);
    for (const item of items) parts[route(idOf(item))].push(item);
    return parts;
  };
  switch (op.kind) {
    case 'upsert':
      return split(op.points, (p) => p.id).map((points) => (points.length ? { ...op, points } : null));
    case 'update_vectors':
      return split(op.points, (p) => p.id).map((points) => (points.length ? { ...op, points } : null));
    default: {
      if (!('ids' in op.target)) return Array.from({ length: count }, () => op);
      return split(op.target.ids, (id) => id).map((ids) => (ids.length ? { ...op, target: { ids } } : null));
    }
  }
}
