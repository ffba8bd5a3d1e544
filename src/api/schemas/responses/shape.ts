// Constructors for Quiver's response schemas (the shapes Qdrant v1.19 answers with). They reuse
// the request builders' scalars; what differs is that a response struct is closed: Qdrant
// serializes exactly its Rust struct's fields, so a field Quiver adds or misspells is a shape
// regression, and `nullable` marks the Option fields Qdrant writes as null or leaves out.

import type { SchemaObject } from 'ajv';
import { float, opt, uint, unitEnum, type Schema } from '../builders.js';

/** A struct of exactly these fields, those in `required` always present. */
export function closed(properties: Record<string, Schema>, required: string[] = []): SchemaObject {
  const schema: SchemaObject = { type: 'object', properties, additionalProperties: false };
  if (required.length) schema.required = required;
  return schema;
}

/** Option<T> as Qdrant serializes it: null, or skipped when unset. */
export const nullable = opt;

/** One of several shapes (an untagged Rust enum). */
export function anyOf(...branches: Schema[]): SchemaObject {
  return { anyOf: branches };
}

/** A variant holding data, written by serde (externally tagged) as {name: data}. */
export function tagged(name: string, value: Schema): SchemaObject {
  return closed({ [name]: value }, [name]);
}

export const COUNT = uint('usize');
export const F32 = float('f32');
export const F64 = float('f64');
/** RFC 3339 date-times, as chrono writes them. */
export const DATE_TIME: SchemaObject = { type: 'string', pattern: '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?(Z|[+-]\\d\\d:\\d\\d)?$' };
export const UUID: SchemaObject = { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' };

/** Qdrant's Usage: hardware counters (when `service.hardware_reporting` is on) and inference tokens. */
const HARDWARE_USAGE = closed({
  cpu: COUNT,
  payload_io_read: COUNT,
  payload_io_write: COUNT,
  payload_index_io_read: COUNT,
  payload_index_io_write: COUNT,
  vector_io_read: COUNT,
  vector_io_write: COUNT,
}, ['cpu', 'payload_io_read', 'payload_io_write', 'payload_index_io_read', 'payload_index_io_write', 'vector_io_read', 'vector_io_write']);

const INFERENCE_USAGE = closed({ models: { type: 'object', additionalProperties: closed({ tokens: uint('u64') }, ['tokens']) } }, ['models']);

// Qdrant leaves `usage` out when it is empty, never null. Quiver sends none yet (usage.hardware
// is being added on another branch).
const USAGE: SchemaObject = { ...closed({ hardware: HARDWARE_USAGE, inference: INFERENCE_USAGE }), minProperties: 1 };

/** Qdrant's success envelope around a route's `result`. */
export function envelope(result: Schema): SchemaObject {
  return closed({ result, status: unitEnum(['ok']), time: F64, usage: USAGE }, ['result', 'status', 'time']);
}

/** What a job started with `wait=false` answers at once (HTTP 202): no result, not even null. */
export const ACCEPTED_BODY = closed({ status: unitEnum(['accepted']), time: F64, usage: USAGE }, ['status', 'time']);

/** Qdrant's error body, whatever the route. */
export const ERROR_BODY = closed({ status: closed({ error: { type: 'string' } }, ['error']), time: F64 }, ['status', 'time']);
