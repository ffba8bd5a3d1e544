// On-disk form of an operation log entry. Value: a u32 (little-endian) header length, a JSON
// header {seq, opId, clock, ops} in which every vector of an upsert or update_vectors point is
// replaced by its dimension, then the f32 data of those vectors in order (little-endian). Vectors
// are stored as the point records store them (point-codec.ts), so a replay gives the same records.

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

const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Dims = Record<string, number>;

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

/** `op` with each vector replaced by its dimension, the vectors appended to `out`. */
function withoutVectors(op: WriteOp, out: number[][]): WriteOp {
  return mapVectors(op, (vectors) => {
    const dims: Dims = {};
    for (const [name, v] of Object.entries(vectors)) {
      dims[name] = v.length;
      out.push(v);
    }
    return dims as unknown as NamedVectors;
  });
}

/** The inverse of withoutVectors: dimensions replaced by the next vectors of `data`. */
function withVectors(op: WriteOp, data: Float32Array, at: { offset: number }): WriteOp {
  return mapVectors(op, (dims) => {
    const vectors: NamedVectors = {};
    for (const [name, dim] of Object.entries(dims as unknown as Dims)) {
      vectors[name] = Array.from(data.subarray(at.offset, at.offset + dim));
      at.offset += dim;
    }
    return vectors;
  });
}

export function encodeEntry(entry: LogEntry): Uint8Array {
  const vectors: number[][] = [];
  const ops = entry.ops.map((op) => withoutVectors(op, vectors));
  const header = encoder.encode(JSON.stringify({ seq: entry.seq, opId: entry.opId, clock: entry.clock, ops }));
  const floats = vectors.reduce((sum, v) => sum + v.length, 0);
  const dataStart = (4 + header.length + 3) & ~3;
  const bytes = new Uint8Array(dataStart + floats * 4);
  new DataView(bytes.buffer).setUint32(0, header.length, true);
  bytes.set(header, 4);
  const data = new Float32Array(bytes.buffer, dataStart, floats);
  let at = 0;
  for (const v of vectors) {
    data.set(v, at);
    at += v.length;
  }
  return bytes;
}

export function decodeEntry(bytes: Uint8Array): LogEntry {
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  const header = JSON.parse(decoder.decode(bytes.subarray(4, 4 + headerLength))) as LogEntry;
  // A fresh, aligned copy: the store may hand back a Node Buffer, whose slice() shares memory.
  const copy = new Uint8Array(bytes.subarray((4 + headerLength + 3) & ~3));
  const data = new Float32Array(copy.buffer, 0, copy.byteLength >>> 2);
  const at = { offset: 0 };
  return { ...header, ops: header.ops.map((op) => withVectors(op, data, at)) };
}
