// On-disk form of a point in a shard's classic-level store. Key: "p" + a key that sorts numeric
// ids before UUIDs and numerically among themselves (as Qdrant orders ids). Value: a u32 header
// length, a JSON header {id, version, payload, vectors: [[name, dim], ...], sparse: [[name, nnz],
// ...]}, then, 4-byte aligned and little-endian, the f32 data of each dense vector in header
// order, then for each sparse vector its nnz u32 indices and its nnz f32 values, so vectors never
// round-trip through decimal text. Multivectors are listed in `multi: [[name, dim, count], ...]`
// and their count × dim f32 rows follow the sparse data. Records written before sparse vectors or
// multivectors existed have no `sparse` or `multi` field and read the same.
// Payload integers past 2^53 (bigints, src/json/integers.ts) are written with all their digits
// and read back exactly from the header's text, which is scanned only when it holds a run of 16
// digits (an integer of fewer is exact as a double).

import { longIntegerLiterals, mayHoldLongIntegers } from '../json/integer-literals.js';
import { withExactIntegers } from '../json/integers.js';
import { printJson } from '../json/print.js';
import { isMulti, isSparse, multiCount, type MultiVector, type NamedVectors, type Payload, type PointId, type SparseVector } from '../model.js';
import { fromStoredId, toStoredId, type StoredId } from './stored-id.js';
import type { PointRecord } from './write-ops.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const POINT_PREFIX = 'p';

interface Header {
  id: StoredId;
  version?: number;
  payload: Payload | null;
  vectors: [string, number][];
  sparse?: [string, number][];
  multi?: [string, number, number][];
}

/** u64::MAX has 20 digits, so zero-padding to 20 sorts every numeric id by value, bigints too. */
export function pointKey(id: PointId): string {
  return typeof id === 'string' ? `${POINT_PREFIX}u${id}` : `${POINT_PREFIX}n${id.toString().padStart(20, '0')}`;
}

export function encodePoint(record: PointRecord): Uint8Array {
  const dense: [string, Float32Array][] = [];
  const sparse: [string, SparseVector][] = [];
  const multi: [string, MultiVector][] = [];
  for (const [name, v] of Object.entries(record.vectors)) {
    if (isSparse(v)) sparse.push([name, v]);
    else if (isMulti(v)) multi.push([name, v]);
    else dense.push([name, v]);
  }
  const header: Header = { id: toStoredId(record.id), version: record.version ?? 0, payload: record.payload, vectors: dense.map(([n, v]) => [n, v.length]) };
  if (sparse.length > 0) header.sparse = sparse.map(([n, v]) => [n, v.indices.length]);
  if (multi.length > 0) header.multi = multi.map(([n, v]) => [n, v.dim, multiCount(v)]);
  const headerBytes = encoder.encode(printJson(header));
  const words = dense.reduce((sum, [, v]) => sum + v.length, 0) + sparse.reduce((sum, [, v]) => sum + 2 * v.indices.length, 0)
    + multi.reduce((sum, [, v]) => sum + v.data.length, 0);
  const dataStart = (4 + headerBytes.length + 3) & ~3;
  const bytes = new Uint8Array(dataStart + words * 4);
  new DataView(bytes.buffer).setUint32(0, headerBytes.length, true);
  bytes.set(headerBytes, 4);
  const f32 = new Float32Array(bytes.buffer, dataStart, words);
  const u32 = new Uint32Array(bytes.buffer, dataStart, words);
  let at = 0;
  for (const [, v] of dense) {
    f32.set(v, at);
    at += v.length;
  }
  for (const [, v] of sparse) {
    u32.set(v.indices, at);
    f32.set(v.values, at + v.indices.length);
    at += 2 * v.indices.length;
  }
  for (const [, v] of multi) {
    f32.set(v.data, at);
    at += v.data.length;
  }
  return bytes;
}

export function decodePoint(bytes: Uint8Array): PointRecord {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true);
  const header = parseHeader(decoder.decode(bytes.subarray(4, 4 + headerLength)));
  const dataStart = (4 + headerLength + 3) & ~3;
  // The store may hand back an unaligned Node Buffer: one aligned copy, then each vector its own
  // slice of it (a view would take the whole record along wherever it is posted).
  const copy = new Uint8Array(bytes.subarray(dataStart));
  const f32 = new Float32Array(copy.buffer, 0, copy.byteLength >>> 2);
  const u32 = new Uint32Array(copy.buffer, 0, copy.byteLength >>> 2);
  const vectors: NamedVectors = {};
  let at = 0;
  for (const [name, dim] of header.vectors) {
    vectors[name] = f32.slice(at, at + dim);
    at += dim;
  }
  for (const [name, nnz] of header.sparse ?? []) {
    vectors[name] = { indices: u32.slice(at, at + nnz), values: f32.slice(at + nnz, at + 2 * nnz) };
    at += 2 * nnz;
  }
  for (const [name, dim, count] of header.multi ?? []) {
    vectors[name] = { dim, data: f32.slice(at, at + dim * count) };
    at += dim * count;
  }
  return { id: fromStoredId(header.id), payload: header.payload, vectors, version: header.version ?? 0 };
}

function parseHeader(text: string): Header {
  const header = JSON.parse(text) as Header;
  if (header.payload !== null && mayHoldLongIntegers(text)) {
    let literals: Map<string, bigint> | undefined;
    withExactIntegers(header.payload, '/payload', (pointer) => (literals ??= longIntegerLiterals(text)).get(pointer));
  }
  return header;
}
