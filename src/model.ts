// Quiver's internal point model, shared by the API layer (which converts Qdrant's wire JSON
// into it) and the shards (which store it).

/**
 * A payload value. An integer past 2^53 (in magnitude, within -2^63..2^64-1) is always a `bigint`,
 * every other number a `number` (src/json/integers.ts): integers stay exact as Qdrant keeps them.
 */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

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
 * A multivector (Qdrant's multi-dense vector, for `multivector_config`): a list of at least one
 * vector of `dim` numbers, kept as one Float32Array of rows (row i at i*dim), so it is stored,
 * logged and handed to the engine as one block of bytes.
 */
export interface MultiVector {
  dim: number;
  data: Float32Array;
}

/** The number of vectors of a multivector. */
export function multiCount(vector: MultiVector): number {
  return vector.dim === 0 ? 0 : vector.data.length / vector.dim;
}

/** A multivector's rows as lists of numbers (its wire form). */
/**
 * A point's vector: dense (a Float32Array), sparse or multi. Typed arrays from the request's
 * conversion on: they are what the engine, the log and the point records store, so a vector is
 * converted from JSON numbers once, and crosses to a shard worker as a copy of its bytes rather
 * than a structured clone of a thousand numbers.
 */
export type Vector = Float32Array | SparseVector | MultiVector;

export function isDense(vector: Vector): vector is Float32Array {
  return vector instanceof Float32Array;
}

export function isSparse(vector: Vector): vector is SparseVector {
  return !(vector instanceof Float32Array) && 'indices' in vector;
}

export function isMulti(vector: Vector): vector is MultiVector {
  return !(vector instanceof Float32Array) && 'dim' in vector;
}

/** Vectors by name; the unnamed default vector is stored under DEFAULT_VECTOR. */
export type NamedVectors = Record<string, Vector>;

export const DEFAULT_VECTOR = '';
