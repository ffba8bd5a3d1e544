// Quiver's internal point model, shared by the API layer (which converts Qdrant's wire JSON
// into it) and the shards (which store it).

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type Payload = { [key: string]: JsonValue };

/**
 * A numeric id (0 to 2^64-1) or a UUID in canonical lowercase hyphenated form. A numeric id up to
 * Number.MAX_SAFE_INTEGER is always a `number`, one above it always a `bigint`: one form per
 * value, so ids compare with === and key Maps and Sets by value, and the common ids keep the
 * speed of plain numbers.
 */
export type PointId = number | bigint | string;

/** A shard key of a custom-sharded collection as Qdrant's API spells it: a string, or a non-negative integer (distinct from its text). */
export type ShardKey = string | number;

/** A sparse vector as Quiver holds it: indices ascending and distinct (u32), one value each. */
export interface SparseVector {
  indices: Uint32Array;
  values: Float32Array;
}

/**
 * A point's vector: dense (a Float32Array) or sparse. Typed arrays from the request's conversion
 * on: they are what the engine, the log and the point records store, so a vector is converted
 * from JSON numbers once, and crosses to a shard worker as a copy of its bytes rather than a
 * structured clone of a thousand numbers.
 */
export type Vector = Float32Array | SparseVector;

export function isSparse(vector: Vector): vector is SparseVector {
  return !(vector instanceof Float32Array);
}

/** Vectors by name; the unnamed default vector is stored under DEFAULT_VECTOR. */
export type NamedVectors = Record<string, Vector>;

export const DEFAULT_VECTOR = '';
