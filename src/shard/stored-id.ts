// A point id inside the JSON that shards store (point record headers, graph metadata). JSON has
// no bigint, and a number past 2^53 would come back rounded, so an id a number cannot hold is
// stored as its decimal digits wrapped in an object; numbers and UUID strings are stored as they
// are, which keeps every record written before ids went past 2^53 readable unchanged.

import type { PointId } from '../model.js';

export type StoredId = number | string | { u64: string };

export function toStoredId(id: PointId): StoredId {
  return typeof id === 'bigint' ? { u64: id.toString() } : id;
}

export function fromStoredId(stored: StoredId): PointId {
  return typeof stored === 'object' ? BigInt(stored.u64) : stored;
}
