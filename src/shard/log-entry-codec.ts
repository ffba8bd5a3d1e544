// On-disk form of an operation log entry: V8's structured serialization of {seq, opId, clock,
// ops}, which keeps what JSON would lose in filters (Sets of ids and values, infinite bounds),
// with every vector of an upsert or update_vectors point as a Float32Array: stored as the point
// records store vectors (point-codec.ts), so a replay gives the same records, and compact.

import { deserialize, serialize } from 'node:v8';
import type { NamedVectors } from '../model.js';
import type { ClockTag } from './clock-map.js';
import type { WriteOp } from './write-ops.js';

export interface LogEntry {
  /** Position in the shard's log: 1, 2, 3, ... with no gaps. */
  seq: number;
  /** The collection's operation id, which becomes the version of the points it writes. */
  opId: number;
  clock: ClockTag;
  ops: WriteOp[];
}

/** `op` with the vectors of each of its points passed through `f` (operations without vectors as they are). */
function mapVectors(op: WriteOp, f: (vectors: NamedVectors) => NamedVectors): WriteOp {
  switch (op.kind) {
    case 'upsert':
      return { ...op, points: op.points.map((p) => ({ ...p, vectors: f(p.vectors) })) };
    case 'update_vectors':
      return { ...op, points: op.points.map((p) => ({ ...p, vectors: f(p.vectors) })) };
    default:
      return op;
  }
}

// In the stored form a vector is a Float32Array where the type says number[].
const toF32 = (vectors: NamedVectors): NamedVectors =>
  Object.fromEntries(Object.entries(vectors).map(([name, v]) => [name, new Float32Array(v) as unknown as number[]]));
const fromF32 = (vectors: NamedVectors): NamedVectors =>
  Object.fromEntries(Object.entries(vectors).map(([name, v]) => [name, Array.from(v as unknown as Float32Array)]));

export function encodeEntry(entry: LogEntry): Uint8Array {
  return serialize({ ...entry, ops: entry.ops.map((op) => mapVectors(op, toF32)) });
}

export function decodeEntry(bytes: Uint8Array): LogEntry {
  const entry = deserialize(bytes) as LogEntry;
  return { ...entry, ops: entry.ops.map((op) => mapVectors(op, fromF32)) };
}
