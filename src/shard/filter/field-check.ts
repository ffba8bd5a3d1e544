// How one FieldCondition judges the values found at its key, following Qdrant's
// check_field_condition and ValueChecker (lib/segment payload_storage):
// - no value at the key: `valuesCount` counts it as 0 values, else only `isEmpty` (matches if
//   true) or `isNull` (matches if false) can hold;
// - otherwise the condition holds if it holds for any one of the values, where a value is judged
//   by `valuesCount` if given, else by `isEmpty`, else by `isNull`, else by match/range/geo
//   (OR-ed), those looking inside an array value one level deep (any element).
// Type mismatches never match: a string range, a numeric match on "1", a float against an
// integer match. JSON numbers arrive as JS numbers, so 1.0 in a payload counts as the integer 1.
// Integers past 2^53 are bigints (src/json/integers.ts): a match compares them exactly, as
// Qdrant compares i64s, and a range as the doubles they round to, as Qdrant's as_f64 does.

import { isI64 } from '../../json/integers.js';
import type { JsonValue } from '../../model.js';
import { parseDatetime } from './datetime.js';
import { inBoundingBox, inPolygon, inRadius } from './geo.js';
import { isJsonObject, ownValue } from './json-path.js';
import type { Bounds, FieldCondition, GeoPoint, Match, Range } from './types.js';

/**
 * An index that defines how a match compares (a text index tokenizes, a uuid index compares
 * UUIDs as UUIDs) also judges single points by the same rule, so that results never depend on
 * whether the index or a payload check answered. Undefined: it does not define this match.
 */
export interface MatchSemantics {
  matchValues(values: readonly JsonValue[], match: Match): boolean | undefined;
}

export type TextMatch = Extract<Match, { kind: 'text' | 'textAny' | 'phrase' }>;

export function isTextMatch(match: Match | undefined): match is TextMatch {
  return match !== undefined && (match.kind === 'text' || match.kind === 'textAny' || match.kind === 'phrase');
}

export function checkField(cond: FieldCondition, values: readonly JsonValue[], semantics?: MatchSemantics): boolean {
  if (values.length === 0) return checkMissing(cond);
  // Loops rather than closures: this runs once per point a filter checks.
  if (judgedByShape(cond)) {
    for (const v of values) if (judgeShape(cond, shapeOf(v))) return true;
    return false;
  }
  const indexed = cond.match && semantics?.matchValues(values, cond.match);
  if (indexed === true) return true;
  // The index judged the match part (over all values at once); the other parts remain.
  const rest = indexed === false ? { ...cond, match: undefined } : cond;
  for (const v of values) if (valueHolds(rest, v)) return true;
  return false;
}

/**
 * checkField for a key that holds at most one value (`undefined`: none), as a top-level key does,
 * judged without index semantics: the same answer without a list of values to build.
 */
export function checkOneValue(cond: FieldCondition, value: JsonValue | undefined): boolean {
  if (value === undefined) return checkMissing(cond);
  if (judgedByShape(cond)) return judgeShape(cond, shapeOf(value));
  return valueHolds(cond, value);
}

/** Whether a match, range or geo part holds for a value, or for an element of an array value. */
function valueHolds(cond: FieldCondition, v: JsonValue): boolean {
  if (!Array.isArray(v)) return checkElement(cond, v);
  for (const e of v) if (checkElement(cond, e)) return true;
  return false;
}

/** Qdrant's check_empty: what a condition says about a key with no value at all. */
export function checkMissing(cond: FieldCondition): boolean {
  // A missing key holds no values, so `values_count: {lt: 1}` selects it.
  if (cond.valuesCount) return inBounds(cond.valuesCount, 0);
  if (cond.isEmpty !== undefined) return cond.isEmpty;
  if (cond.isNull !== undefined) return !cond.isNull;
  return false;
}

/**
 * What values_count, is_empty and is_null see of one value: how many values it counts as (null
 * 0, an array its length, anything else 1) and whether it is null, an array (holding a null or
 * not) or anything else. Packed in one number so indexes can keep it per value cheaply.
 */
export type ValueShape = number;

const NULL = 0;
const ARRAY = 1;
const ARRAY_WITH_NULL = 2;
const OTHER = 3;

export function shapeOf(value: JsonValue): ValueShape {
  if (value === null) return NULL;
  if (Array.isArray(value)) return value.length * 4 + (value.includes(null) ? ARRAY_WITH_NULL : ARRAY);
  return 4 + OTHER;
}

/** Conditions whose valuesCount, isEmpty or isNull part decides on present values. */
export function judgedByShape(cond: FieldCondition): boolean {
  return cond.valuesCount !== undefined || cond.isEmpty !== undefined || cond.isNull !== undefined;
}

/** For a condition judgedByShape: whether one present value satisfies it. */
export function judgeShape(cond: FieldCondition, shape: ValueShape): boolean {
  const kind = shape & 3;
  if (cond.valuesCount) return inBounds(cond.valuesCount, shape >>> 2);
  if (cond.isEmpty !== undefined) {
    if (kind === NULL) return cond.isEmpty;
    return kind === OTHER ? !cond.isEmpty : (shape >>> 2 === 0) === cond.isEmpty;
  }
  const isNull = cond.isNull === true;
  if (kind === NULL) return isNull;
  return kind === OTHER ? !isNull : (kind === ARRAY_WITH_NULL) === isNull;
}

/** is_empty {key} holds when every value is null or an empty array. */
export function isEmptyShape(shape: ValueShape): boolean {
  return shape === NULL || shape === ARRAY;
}

/** is_null {key} holds when some value is null itself. */
export function isNullShape(shape: ValueShape): boolean {
  return shape === NULL;
}

function checkElement(cond: FieldCondition, e: JsonValue): boolean {
  if (cond.match && matchElement(cond.match, e)) return true;
  if (cond.range && rangeElement(cond.range, e)) return true;
  if (cond.geoRadius || cond.geoBoundingBox || cond.geoPolygon) {
    const p = geoPointOf(e);
    if (!p) return false;
    if (cond.geoRadius && inRadius(cond.geoRadius, p)) return true;
    if (cond.geoBoundingBox && inBoundingBox(cond.geoBoundingBox, p)) return true;
    if (cond.geoPolygon && inPolygon(cond.geoPolygon, p)) return true;
  }
  return false;
}

function matchElement(match: Match, e: JsonValue): boolean {
  switch (match.kind) {
    case 'value':
      return e === match.value;
    case 'text':
    case 'phrase':
      return typeof e === 'string' && e.includes(match.text);
    case 'textAny':
      if (typeof e !== 'string') return false;
      for (const token of whitespaceTokens(match.text)) if (e.includes(token)) return true;
      return false;
    case 'prefix':
      return typeof e === 'string' && e.startsWith(match.prefix);
    case 'any':
      return match.list.type === 'strings'
        ? typeof e === 'string' && match.list.values.has(e)
        : isI64(e) && match.list.values.has(e);
    case 'except':
      // Anything but null passes unless it is a listed value of the list's own type.
      if (e === null) return false;
      if (match.list.type === 'strings') return typeof e !== 'string' || !match.list.values.has(e);
      return !isI64(e) || !match.list.values.has(e);
  }
}

function rangeElement(range: Range, e: JsonValue): boolean {
  if (range.kind === 'number') {
    const x = numberOf(e);
    return x !== undefined && inBounds(range, x);
  }
  if (typeof e !== 'string') return false;
  const micros = parseDatetime(e);
  return micros !== undefined && inBounds(range, micros);
}

export function inBounds(b: Bounds, x: number): boolean {
  return (b.lt === undefined || x < b.lt) && (b.gt === undefined || x > b.gt)
    && (b.lte === undefined || x <= b.lte) && (b.gte === undefined || x >= b.gte);
}

/** A payload geo point: an object with numeric `lon` and `lat` (other keys ignored). */
export function geoPointOf(e: JsonValue): GeoPoint | undefined {
  if (!isJsonObject(e)) return undefined;
  const lon = numberOf(ownValue(e, 'lon') ?? null);
  const lat = numberOf(ownValue(e, 'lat') ?? null);
  return lon !== undefined && lat !== undefined ? { lon, lat } : undefined;
}

/** A numeric payload value as the double Qdrant's as_f64 makes of it (what ranges compare). */
export function numberOf(e: JsonValue): number | undefined {
  if (typeof e === 'number') return e;
  return typeof e === 'bigint' ? Number(e) : undefined;
}

/** Rust's split_whitespace: runs of Unicode White_Space separate tokens. */
function whitespaceTokens(text: string): string[] {
  return text.split(/\p{White_Space}+/u).filter((t) => t.length > 0);
}
