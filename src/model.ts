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

/**
 * Dense vectors by name; the unnamed default vector is stored under DEFAULT_VECTOR. Float32Array
 * from the request's conversion on: it is what the engine, the log and the point records store,
 * so a vector is converted from JSON numbers once, and crosses to a shard worker as one copy of
 * its bytes rather than a structured clone of a thousand numbers.
 */
export type NamedVectors = Record<string, Float32Array>;

export const DEFAULT_VECTOR = '';
