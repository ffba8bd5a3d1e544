// Slices of the id space (Qdrant's SliceCondition): a point is in slice `index` of `total` iff
// SipHash-2-4 with a zero key over its id bytes, modulo `total`, equals `index`. Id bytes are the
// 8 little-endian bytes of a numeric id, or the 16 RFC 4122 bytes of a UUID. The same hash for
// every total makes slices nest: slice 0 of 4 lies inside slice 0 of 2.

import siphash from 'siphash';
import type { PointId } from '../../model.js';
import { uuidBytes } from './uuid.js';

const ZERO_KEY = [0, 0, 0, 0];

export function idBytes(id: PointId): Uint8Array {
  if (typeof id === 'string') return uuidBytes(id);
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(id), true);
  return bytes;
}

/** hash(id) mod total, for total in 1..2^32-1. */
export function sliceOf(id: PointId, total: number): number {
  const { h, l } = siphash.hash(ZERO_KEY, idBytes(id));
  // (h * 2^32 + l) mod total in 16-bit steps, so no intermediate passes 2^53.
  let r = (h >>> 0) % total;
  r = (r * 65536 + (l >>> 16)) % total;
  return (r * 65536 + (l & 0xffff)) % total;
}

export function inSlice(id: PointId, total: number, index: number): boolean {
  return sliceOf(id, total) === index;
}
