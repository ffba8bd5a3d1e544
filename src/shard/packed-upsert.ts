// An upsert as it crosses to a shard's worker: its points' vectors as one Float32Array per vector
// name, ids and payloads as lists, instead of an object, a vectors object and a buffer per point.
// Structured cloning copies a typed array as one block of bytes but walks objects one field at a
// time, and an upsert of 256 points was about 1,000 objects each way: on the main thread, the
// part of an upsert's time that is not HTTP or JSON. The worker unpacks it into points whose
// vectors are views of those arrays (no copy), and logs and applies them as any upsert.
// Only upserts of dense vectors, every point with the same names and lengths, are packed.

import { isDense, type Payload, type PointId } from '../model.js';
import { setOwnField } from '../own-fields.js';
import type { PointRecord, WriteOp } from './write-ops.js';

type Upsert = Extract<WriteOp, { kind: 'upsert' }>;

export interface PackedUpsert extends Omit<Upsert, 'kind' | 'points'> {
  kind: 'packed_upsert';
  ids: PointId[];
  /** Vector names, each with its length and every point's vector of that name in point order. */
  names: string[];
  dims: number[];
  data: Float32Array[];
  /** Each point's payload; null when every one is empty. */
  payloads: (Payload | null)[] | null;
}

/** A write operation as a task carries it to a worker. */
export type SentWriteOp = WriteOp | PackedUpsert;

function emptyPayload(payload: Payload | null): boolean {
  if (payload === null) return false;
  for (const key in payload) if (Object.hasOwn(payload, key)) return false;
  return true;
}

/** The dense vectors of every point under `names`, `dims` long, in one array per name; null if a point differs. */
function columns(points: PointRecord[], names: string[], dims: number[]): Float32Array[] | null {
  const data = dims.map((dim) => new Float32Array(points.length * dim));
  for (let i = 0; i < points.length; i++) {
    const vectors = points[i].vectors;
    if (Object.keys(vectors).length !== names.length) return null;
    for (let k = 0; k < names.length; k++) {
      const vector = Object.hasOwn(vectors, names[k]) ? vectors[names[k]] : undefined;
      if (vector === undefined || !isDense(vector) || vector.length !== dims[k]) return null;
      data[k].set(vector, i * dims[k]);
    }
  }
  return data;
}

/** `op` packed when it is an upsert that packs (see the head of this file), as it is otherwise. */
export function packOp(op: WriteOp): SentWriteOp {
  if (op.kind !== 'upsert' || op.points.length < 2) return op;
  const { points, ...rest } = op;
  const first = points[0].vectors;
  const names = Object.keys(first);
  const dims: number[] = [];
  for (const name of names) {
    const vector = first[name];
    if (!isDense(vector)) return op;
    dims.push(vector.length);
  }
  const data = columns(points, names, dims);
  if (data === null) return op;
  const payloads = points.every((p) => emptyPayload(p.payload)) ? null : points.map((p) => p.payload);
  return { ...rest, kind: 'packed_upsert', ids: points.map((p) => p.id), names, dims, data, payloads };
}

/** The operation `sent` stands for. */
export function unpackOp(sent: SentWriteOp): WriteOp {
  if (sent.kind !== 'packed_upsert') return sent;
  const { ids, names, dims, data, payloads, ...rest } = sent;
  const points = ids.map((id, i): PointRecord => {
    const vectors = {};
    for (let k = 0; k < names.length; k++) setOwnField(vectors, names[k], data[k].subarray(i * dims[k], (i + 1) * dims[k]));
    return { id, vectors, payload: payloads ? payloads[i] : {} };
  });
  return { ...rest, kind: 'upsert', points };
}
