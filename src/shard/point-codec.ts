// On-disk form of a point in a shard's classic-level store. Key: "p" + a key that sorts numeric
// ids before UUIDs and numerically among themselves (as Qdrant orders ids). Value: a u32 header
// length, a JSON header {id, version, payload, vectors: [[name, dim], ...]}, then the f32 data of each
// vector in header order (little-endian), so vectors never round-trip through decimal text.

import type { NamedVectors, Payload, PointId } from '../model.js';
import { fromStoredId, toStoredId, type StoredId } from './stored-id.js';
import type { PointRecord } from './write-ops.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const POINT_PREFIX = 'p';

/** u64::MAX has 20 digits, so zero-padding to 20 sorts every numeric id by value, bigints too. */
export function pointKey(id: PointId): string {
  return typeof id === 'string' ? `${POINT_PREFIX}u${id}` : `${POINT_PREFIX}n${id.toString().padStart(20, '0')}`;
}

export function encodePoint(record: PointRecord): Uint8Array {
  const names = Object.keys(record.vectors);
  const header = encoder.encode(JSON.stringify({ id: toStoredId(record.id), version: record.version ?? 0, payload: record.payload, vectors: names.map((n) => [n, record.vectors[n].length]) }));
  const floats = names.reduce((sum, n) => sum + record.vectors[n].length, 0);
  const headerEnd = 4 + header.length;
  const dataStart = (headerEnd + 3) & ~3;
  const bytes = new Uint8Array(dataStart + floats * 4);
  new DataView(bytes.buffer).setUint32(0, header.length, true);
  bytes.set(header, 4);
  const data = new Float32Array(bytes.buffer, dataStart, floats);
  let at = 0;
  for (const n of names) {
    data.set(record.vectors[n], at);
    at += record.vectors[n].length;
  }
  return bytes;
}

export function decodePoint(bytes: Uint8Array): PointRecord {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true);
  const header = JSON.parse(decoder.decode(bytes.subarray(4, 4 + headerLength))) as { id: StoredId; version?: number; payload: Payload | null; vectors: [string, number][] };
  const dataStart = (4 + headerLength + 3) & ~3;
  // The store may hand back an unaligned Node Buffer: one aligned copy, then each vector its own
  // slice of it (a view would take the whole record along wherever it is posted).
  const copy = new Uint8Array(bytes.subarray(dataStart));
  const data = new Float32Array(copy.buffer, 0, copy.byteLength >>> 2);
  const vectors: NamedVectors = {};
  let at = 0;
  for (const [name, dim] of header.vectors) {
    vectors[name] = data.slice(at, at + dim);
    at += dim;
  }
  return { id: fromStoredId(header.id), payload: header.payload, vectors, version: header.version ?? 0 };
}
