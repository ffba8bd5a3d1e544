// On-disk form of an operation log entry: V8's structured serialization of {seq, opId, clock,
// ops}, which keeps what JSON would lose in filters (Sets of ids and values, infinite bounds),
// and writes each vector (a Float32Array) as its raw bytes, as the point records store them
// (point-codec.ts): a replay gives the same records, and the entry is compact.

import { deserialize, serialize } from 'node:v8';
import type { ClockTag } from './clock-map.js';
import type { WriteOp } from './write-ops.js';

export interface LogEntry {
  /** Position in the shard's log: 1, 2, 3, ... with no gaps. */
  seq: number;
  /** The collection's operation id, which becomes the version of the points it writes. */
  opId: number;
  clock: ClockTag;
  ops: WriteOp[];
  /**
   * The clock map the shard takes on with this entry instead of its own: set on a transfer's
   * clearing of its receiver, which makes the receiver a copy of its source, clocks included.
   */
  adopt?: ClockTag[];
}

export function encodeEntry(entry: LogEntry): Uint8Array {
  return serialize(entry);
}

export function decodeEntry(bytes: Uint8Array): LogEntry {
  return deserialize(bytes) as LogEntry;
}
