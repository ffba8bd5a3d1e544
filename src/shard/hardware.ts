// Qdrant's hardware usage measures, counted in the shard worker as the work happens:
//   cpu                     bytes of vector data compared while scoring (dim * 4 per f32
//                           comparison, dim per int8 one, per row pair for multivectors; for a
//                           sparse vector, one per pair of values multiplied)
//   payload_io_read         bytes (JSON) of the payloads read: to return them, or to check a
//                           filter condition on them
//   payload_io_write        bytes (JSON) of the payloads written by an applied update
//   payload_index_io_read   bytes of point offsets (4 each) a payload index answered a condition with
//   payload_index_io_write  bytes (JSON) of the values an applied update put in payload indexes
//   vector_io_read          bytes of stored vectors read to return them (scoring reads vectors
//                           kept in memory, which Qdrant counts as no I/O either)
//   vector_io_write         bytes of the vectors an applied update stored (4 per dense
//                           component, 8 per sparse index/value pair)
// Reads are counted into the running task's usage, which the shard worker finds through an async
// context (src/worker/task-usage.ts) and installs here, so this module stays free of Node's APIs
// for the browser demo, which filters with the same code and measures nothing; an applied update
// is counted into its own usage, carried with it, since a wait=false update is applied after its
// task answered.

import { printJson } from '../json/print.js';
import { isMulti, isSparse, type NamedVectors, type Payload, type Vector } from '../model.js';
import { parseJsonPath, valuesAt } from './filter/json-path.js';

export interface HardwareUsage {
  cpu: number;
  payload_io_read: number;
  payload_io_write: number;
  payload_index_io_read: number;
  payload_index_io_write: number;
  vector_io_read: number;
  vector_io_write: number;
}

export type HardwareMeasure = keyof HardwareUsage;

export function emptyUsage(): HardwareUsage {
  return { cpu: 0, payload_io_read: 0, payload_io_write: 0, payload_index_io_read: 0, payload_index_io_write: 0, vector_io_read: 0, vector_io_write: 0 };
}

export function addUsage(into: HardwareUsage, from: HardwareUsage): void {
  for (const key of Object.keys(into) as HardwareMeasure[]) into[key] += from[key];
}

/** The usage of the task running now, if one is measured; none until a worker installs its lookup. */
let currentUsage: () => HardwareUsage | undefined = () => undefined;

/** Installs how the running task's usage is found (the shard worker's async context). */
export function findUsageWith(lookup: () => HardwareUsage | undefined): void {
  currentUsage = lookup;
}

/** Adds to the running task's usage (nothing outside a measured task, e.g. the optimizer). */
export function charge(measure: HardwareMeasure, amount: number): void {
  const usage = currentUsage();
  if (usage) usage[measure] += amount;
}

const F32_BYTES = 4;
/** A sparse vector stores a u32 index and an f32 value per element. */
const SPARSE_ELEMENT_BYTES = 8;

/** Bytes of a vector's stored components. */
export function vectorBytes(vector: Vector): number {
  if (isSparse(vector)) return vector.indices.length * SPARSE_ELEMENT_BYTES;
  if (isMulti(vector)) return vector.data.length * F32_BYTES;
  return vector.length * F32_BYTES;
}

export function namedVectorsBytes(vectors: NamedVectors): number {
  return Object.values(vectors).reduce((n, v) => n + vectorBytes(v), 0);
}

/** Bytes of a JSON value as stored (integers past 2^53, bigints, with all their digits). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(printJson(value ?? null));
}

/** A stored payload is never changed in place (an update stores a new object), so its size is kept. */
const payloadSizes = new WeakMap<Payload, number>();

/** Bytes of a stored payload, computed once per payload object. */
export function storedPayloadBytes(payload: Payload): number {
  let size = payloadSizes.get(payload);
  if (size === undefined) payloadSizes.set(payload, (size = jsonBytes(payload)));
  return size;
}

/** Whether a task is being measured: loops check once, not per item. */
export function measuring(): boolean {
  return currentUsage() !== undefined;
}

/** Counts reading a stored payload. */
export function chargePayloadRead(payload: Payload): void {
  if (measuring()) charge('payload_io_read', storedPayloadBytes(payload));
}

/** Bytes of a point offset in a payload index's answer. */
export const OFFSET_BYTES = 4;

/** What storing `record` writes: its vectors, its payload, and its values under indexed keys. */
export function chargeWrite(usage: HardwareUsage, record: { vectors: NamedVectors; payload: Payload | null }, indexedKeys: Iterable<string>): void {
  const payload = record.payload ?? {};
  usage.vector_io_write += namedVectorsBytes(record.vectors);
  usage.payload_io_write += jsonBytes(payload);
  for (const key of indexedKeys) {
    const path = parseJsonPath(key);
    if (path) for (const value of valuesAt(path, payload)) usage.payload_index_io_write += jsonBytes(value);
  }
}
