// Quiver's internal filter: what src/api/filter.ts makes of Qdrant's wire Filter. Plain data only
// (arrays, Sets, numbers, bigints, strings), because filters travel to shard workers by structured
// clone.
//
// Shapes differ from the wire where the wire is ambiguous or loose: one-or-many lists are always
// lists, keys are parsed paths, UUIDs are canonical, datetimes are microseconds, and each
// condition carries a `kind`. Semantics are Qdrant's; see evaluate.ts and field-check.ts.

import type { PointId } from '../../model.js';
import type { JsonPath } from './json-path.js';

/** All of `must`, at least one of `should`, at least `minCount` of `minShould`, none of `mustNot`. */
export interface Filter {
  must?: Condition[];
  should?: Condition[];
  minShould?: MinShould;
  mustNot?: Condition[];
}

export interface MinShould {
  conditions: Condition[];
  minCount: number;
}

export type Condition =
  | FieldCondition
  | IsEmptyCondition
  | IsNullCondition
  | HasIdCondition
  | HasVectorCondition
  | SliceCondition
  | NestedCondition
  | FilterCondition;

/** A key as given and as parsed; `key` is the canonical text, the name payload indexes go by. */
export interface PayloadKey {
  key: string;
  path: JsonPath;
}

/**
 * Qdrant's FieldCondition, kept whole because its parts interact: on a present value,
 * `valuesCount` wins over `isEmpty`, which wins over `isNull`, which win over the others (match,
 * range and geo parts are OR-ed); on a missing key only `isEmpty`/`isNull` can match.
 */
export interface FieldCondition extends PayloadKey {
  kind: 'field';
  match?: Match;
  range?: Range;
  geoBoundingBox?: GeoBoundingBox;
  geoRadius?: GeoRadius;
  geoPolygon?: GeoPolygon;
  valuesCount?: ValuesCount;
  isEmpty?: boolean;
  isNull?: boolean;
}

/** `is_empty: {key}`: every value at the key is null or [] (a missing key is empty). */
export interface IsEmptyCondition extends PayloadKey {
  kind: 'isEmpty';
}

/** `is_null: {key}`: some value at the key is null itself ([null] is not). */
export interface IsNullCondition extends PayloadKey {
  kind: 'isNull';
}

export interface HasIdCondition {
  kind: 'hasId';
  ids: Set<PointId>;
}

/** The point has the named vector ('' is the unnamed default vector). */
export interface HasVectorCondition {
  kind: 'hasVector';
  name: string;
}

/** SipHash-2-4 of the id bytes, modulo `total`, equals `index`. */
export interface SliceCondition {
  kind: 'slice';
  total: number;
  index: number;
}

/** `filter` holds for one object element of the array at `path` (already ending in `[]`). */
export interface NestedCondition extends PayloadKey {
  kind: 'nested';
  filter: Filter;
}

export interface FilterCondition {
  kind: 'filter';
  filter: Filter;
}

/**
 * A list from `any`/`except`: typed by its elements; an empty list counts as strings, as in Qdrant.
 * Integers (Qdrant's i64) are numbers up to 2^53-1 in magnitude and bigints past it, as payload
 * integers are (src/json/integers.ts), so that equal values are equal Set members.
 */
export type ValueList = { type: 'strings'; values: Set<string> } | { type: 'integers'; values: Set<number | bigint> };

export type Match =
  | { kind: 'value'; value: string | number | bigint | boolean }
  | { kind: 'text'; text: string }
  | { kind: 'textAny'; text: string }
  | { kind: 'phrase'; text: string }
  | { kind: 'prefix'; prefix: string }
  | { kind: 'any'; list: ValueList }
  | { kind: 'except'; list: ValueList };

export interface Bounds {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

/** Numeric bounds, or datetime bounds in microseconds since the epoch. */
export interface Range extends Bounds {
  kind: 'number' | 'datetime';
}

export type ValuesCount = Bounds;

export interface GeoPoint {
  lon: number;
  lat: number;
}

export interface GeoBoundingBox {
  topLeft: GeoPoint;
  bottomRight: GeoPoint;
}

/** Radius in metres. */
export interface GeoRadius {
  center: GeoPoint;
  radius: number;
}

/** Closed rings (first point repeated last); interiors are holes. */
export interface GeoPolygon {
  exterior: GeoPoint[];
  interiors: GeoPoint[][];
}
