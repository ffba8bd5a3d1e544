// Qdrant's Filter on the wire: its TypeScript shape, a JSON schema that rejects malformed filters
// before any work (Ajv 8, draft-07, registered as `Filter`), and the conversion to Quiver's
// internal filter (src/shard/filter/types.ts).
//
// Deliberate differences from Qdrant's parser: unknown fields are rejected in every object
// (Qdrant denies them in Filter only and ignores them elsewhere), and duplicate ids or list
// values are accepted (Qdrant reads them into sets). What the schema cannot express is checked
// by toFilter: key syntax, closed polygon rings, datetimes, a field condition with no test, and
// a slice index below its total.

import type { SchemaObject } from 'ajv';
import { parseDatetime } from '../shard/filter/datetime.js';
import { arrayPath, formatJsonPath, parseJsonPath } from '../shard/filter/json-path.js';
import type {
  Bounds,
  Condition,
  FieldCondition,
  Filter,
  GeoPoint,
  GeoPolygon,
  Match,
  PayloadKey,
  Range,
  ValueList,
} from '../shard/filter/types.js';
import { formatError, validationError } from './messages.js';
import { toPointId } from './point-id.js';
import type { WirePointId } from './types.js';

type Opt<T> = T | null | undefined;

export type { WirePointId };

export interface WireFilter {
  should?: Opt<WireCondition | WireCondition[]>;
  min_should?: Opt<WireMinShould>;
  must?: Opt<WireCondition | WireCondition[]>;
  must_not?: Opt<WireCondition | WireCondition[]>;
}

export interface WireMinShould {
  conditions: WireCondition[];
  min_count: number;
}

export type WireCondition =
  | WireFieldCondition
  | WireIsEmptyCondition
  | WireIsNullCondition
  | WireHasIdCondition
  | WireHasVectorCondition
  | WireSliceCondition
  | WireNestedCondition
  | WireFilter;

export interface WireFieldCondition {
  key: string;
  match?: Opt<WireMatch>;
  range?: Opt<WireRange>;
  geo_bounding_box?: Opt<WireGeoBoundingBox>;
  geo_radius?: Opt<WireGeoRadius>;
  geo_polygon?: Opt<WireGeoPolygon>;
  values_count?: Opt<WireValuesCount>;
  is_empty?: Opt<boolean>;
  is_null?: Opt<boolean>;
}

/** Integers past 2^53 are bigints once validated (the i64 keyword), as in payloads. */
export type WireMatch =
  | { value: string | number | bigint | boolean }
  | { text: string }
  | { text_any: string }
  | { phrase: string }
  | { prefix: string }
  | { any: string[] | (number | bigint)[] }
  | { except: string[] | (number | bigint)[] };

/** Numbers, or RFC 3339 datetimes (a DatetimeRange); never a mix. */
export interface WireRange {
  lt?: Opt<number | string>;
  gt?: Opt<number | string>;
  gte?: Opt<number | string>;
  lte?: Opt<number | string>;
}

export interface WireValuesCount {
  lt?: Opt<number>;
  gt?: Opt<number>;
  gte?: Opt<number>;
  lte?: Opt<number>;
}

export interface WireGeoPoint {
  lon: number;
  lat: number;
}

export interface WireGeoBoundingBox {
  top_left: WireGeoPoint;
  bottom_right: WireGeoPoint;
}

export interface WireGeoRadius {
  center: WireGeoPoint;
  /** Metres. */
  radius: number;
}

export interface WireGeoLineString {
  points: WireGeoPoint[];
}

export interface WireGeoPolygon {
  exterior: WireGeoLineString;
  interiors?: Opt<WireGeoLineString[]>;
}

export interface WireIsEmptyCondition {
  is_empty: { key: string };
}

export interface WireIsNullCondition {
  is_null: { key: string };
}

export interface WireHasIdCondition {
  has_id: WirePointId[];
}

export interface WireHasVectorCondition {
  has_vector: string;
}

export interface WireSliceCondition {
  slice: { total: number; index: number };
}

export interface WireNestedCondition {
  nested: { key: string; filter: WireFilter };
}

// ---- JSON schema ----

const UINT32_MAX = 4_294_967_295;

function nullable(schema: SchemaObject): SchemaObject {
  return { anyOf: [schema, { type: 'null' }] };
}

function object(properties: Record<string, SchemaObject>, required: string[] = []): SchemaObject {
  const schema: SchemaObject = { type: 'object', properties, additionalProperties: false };
  if (required.length > 0) schema.required = required;
  return schema;
}

const STRING: SchemaObject = { type: 'string' };
const NUMBER: SchemaObject = { type: 'number' };
/** Qdrant's IntPayloadType (i64), exact past 2^53 (the i64 keyword, exact-integer-keywords.ts). */
const I64: SchemaObject = { type: 'integer', i64: true };

function bounds(value: SchemaObject): SchemaObject {
  return object({ lt: nullable(value), gt: nullable(value), gte: nullable(value), lte: nullable(value) });
}

const VALUE_LIST: SchemaObject = { anyOf: [{ type: 'array', items: STRING }, { type: 'array', items: I64 }] };

const GEO_POINT = object({
  lon: { type: 'number', minimum: -180, maximum: 180 },
  lat: { type: 'number', minimum: -90, maximum: 90 },
}, ['lon', 'lat']);

/** A polygon ring: at least 4 points (that it is closed is checked by toFilter). */
const RING = object({ points: { type: 'array', items: GEO_POINT, minItems: 4 } }, ['points']);

const FIELD_CONDITION = object({
  key: STRING,
  match: nullable({
    anyOf: [
      object({ value: { anyOf: [STRING, I64, { type: 'boolean' }] } }, ['value']),
      object({ text: STRING }, ['text']),
      object({ text_any: STRING }, ['text_any']),
      object({ phrase: STRING }, ['phrase']),
      object({ prefix: STRING }, ['prefix']),
      object({ any: VALUE_LIST }, ['any']),
      object({ except: VALUE_LIST }, ['except']),
    ],
  }),
  range: nullable({ anyOf: [bounds(NUMBER), bounds(STRING)] }),
  geo_bounding_box: nullable(object({ top_left: GEO_POINT, bottom_right: GEO_POINT }, ['top_left', 'bottom_right'])),
  geo_radius: nullable(object({ center: GEO_POINT, radius: NUMBER }, ['center', 'radius'])),
  geo_polygon: nullable(object({ exterior: RING, interiors: nullable({ type: 'array', items: RING }) }, ['exterior'])),
  values_count: nullable(bounds({ type: 'integer', minimum: 0 })),
  is_empty: nullable({ type: 'boolean' }),
  is_null: nullable({ type: 'boolean' }),
}, ['key']);

const CONDITION_REF: SchemaObject = { $ref: '#/definitions/Condition' };
const ONE_OR_MANY = nullable({ anyOf: [CONDITION_REF, { type: 'array', items: CONDITION_REF }] });

/** Qdrant's Filter; other schemas of the same Ajv instance refer to it as `{ $ref: 'Filter' }`. */
export const filterSchema: SchemaObject = {
  $id: 'Filter',
  ...object({
    should: ONE_OR_MANY,
    min_should: nullable(object({
      conditions: { type: 'array', items: CONDITION_REF },
      min_count: { type: 'integer', minimum: 1 },
    }, ['conditions', 'min_count'])),
    must: ONE_OR_MANY,
    must_not: ONE_OR_MANY,
  }),
  definitions: {
    // Qdrant's untagged enum, in its order of trial.
    Condition: {
      anyOf: [
        FIELD_CONDITION,
        object({ is_empty: object({ key: STRING }, ['key']) }, ['is_empty']),
        object({ is_null: object({ key: STRING }, ['key']) }, ['is_null']),
        object({
          // The id keyword (point-id-keyword.ts): it puts in the exact value of an id past 2^53.
          has_id: { type: 'array', items: { pointId: true } },
        }, ['has_id']),
        object({ has_vector: STRING }, ['has_vector']),
        object({
          slice: object({
            total: { type: 'integer', minimum: 1, maximum: UINT32_MAX },
            index: { type: 'integer', minimum: 0, maximum: UINT32_MAX },
          }, ['total', 'index']),
        }, ['slice']),
        object({ nested: object({ key: STRING, filter: { $ref: '#' } }, ['key', 'filter']) }, ['nested']),
        { $ref: '#' },
      ],
    },
  },
};

// ---- conversion ----

/**
 * What Qdrant says of any condition it cannot read: Condition is an untagged enum with this
 * `expecting` text, and serde reports only that, whatever went wrong inside.
 */
export const CONDITION_EXPECTED = 'Expected some form of condition, which can be a field condition (like {"key": ..., "match": ... }), '
  + 'or some other mentioned in the documentation: https://qdrant.tech/documentation/concepts/filtering/#filtering-conditions';

/**
 * The internal form of a filter that passed filterSchema. `path` names the filter in 422 errors
 * (as Qdrant prints request field paths). Throws FormatError (400) or ValidationError (422).
 */
export function toFilter(wire: WireFilter, path = 'filter'): Filter {
  const filter: Filter = {};
  const list = (name: 'must' | 'should' | 'must_not'): Condition[] | undefined => {
    const value = wire[name];
    if (value === null || value === undefined) return undefined;
    const items = Array.isArray(value) ? value : [value];
    return items.map((c, i) => toCondition(c, Array.isArray(value) ? `${path}.${name}[${i}]` : `${path}.${name}`));
  };
  const must = list('must');
  const should = list('should');
  const mustNot = list('must_not');
  if (must) filter.must = must;
  if (should) filter.should = should;
  if (wire.min_should) {
    const { conditions, min_count } = wire.min_should;
    filter.minShould = {
      conditions: conditions.map((c, i) => toCondition(c, `${path}.min_should.conditions[${i}]`)),
      minCount: min_count,
    };
  }
  if (mustNot) filter.mustNot = mustNot;
  return filter;
}

// Variants are told apart by their one required key, in the order serde tries them.
function toCondition(wire: WireCondition, path: string): Condition {
  if ('key' in wire) return toFieldCondition(wire, path);
  if ('is_empty' in wire) return { kind: 'isEmpty', ...payloadKey(wire.is_empty.key) };
  if ('is_null' in wire) return { kind: 'isNull', ...payloadKey(wire.is_null.key) };
  if ('has_id' in wire) return { kind: 'hasId', ids: new Set(wire.has_id.map(toPointId)) };
  if ('has_vector' in wire) return { kind: 'hasVector', name: wire.has_vector };
  if ('slice' in wire) {
    const { total, index } = wire.slice;
    if (index >= total) throw validationError([{ path: `${path}.slice.index`, message: `must be less than total (${total})` }]);
    return { kind: 'slice', total, index };
  }
  if ('nested' in wire) {
    const key = payloadKey(wire.nested.key);
    const nestedPath = arrayPath(key.path);
    return { kind: 'nested', key: formatJsonPath(nestedPath), path: nestedPath, filter: toFilter(wire.nested.filter, `${path}.nested.filter`) };
  }
  return { kind: 'filter', filter: toFilter(wire, path) };
}

function toFieldCondition(wire: WireFieldCondition, path: string): FieldCondition {
  const cond: FieldCondition = { kind: 'field', ...payloadKey(wire.key) };
  if (wire.match) cond.match = toMatch(wire.match);
  if (wire.range) cond.range = toRange(wire.range);
  if (wire.geo_bounding_box) {
    cond.geoBoundingBox = { topLeft: geoPoint(wire.geo_bounding_box.top_left), bottomRight: geoPoint(wire.geo_bounding_box.bottom_right) };
  }
  if (wire.geo_radius) cond.geoRadius = { center: geoPoint(wire.geo_radius.center), radius: wire.geo_radius.radius };
  if (wire.geo_polygon) cond.geoPolygon = toPolygon(wire.geo_polygon);
  if (wire.values_count) cond.valuesCount = toBounds(wire.values_count, (n) => n);
  if (typeof wire.is_empty === 'boolean') cond.isEmpty = wire.is_empty;
  if (typeof wire.is_null === 'boolean') cond.isNull = wire.is_null;
  const tests = [cond.match, cond.range, cond.geoBoundingBox, cond.geoRadius, cond.geoPolygon, cond.valuesCount, cond.isEmpty, cond.isNull];
  if (tests.every((t) => t === undefined)) {
    throw validationError([{ path, message: 'At least one field condition must be specified' }]);
  }
  return cond;
}

function payloadKey(key: string): PayloadKey {
  const path = parseJsonPath(key);
  if (!path) throw formatError(CONDITION_EXPECTED);
  return { key: formatJsonPath(path), path };
}


function toMatch(wire: WireMatch): Match {
  if ('value' in wire) return { kind: 'value', value: wire.value };
  if ('text' in wire) return { kind: 'text', text: wire.text };
  if ('text_any' in wire) return { kind: 'textAny', text: wire.text_any };
  if ('phrase' in wire) return { kind: 'phrase', text: wire.phrase };
  if ('prefix' in wire) return { kind: 'prefix', prefix: wire.prefix };
  if ('any' in wire) return { kind: 'any', list: toValueList(wire.any) };
  return { kind: 'except', list: toValueList(wire.except) };
}

/** An empty list reads as a list of strings, the first variant Qdrant tries. */
function toValueList(values: string[] | (number | bigint)[]): ValueList {
  if (values.length > 0 && typeof values[0] !== 'string') return { type: 'integers', values: new Set(values as (number | bigint)[]) };
  return { type: 'strings', values: new Set(values as string[]) };
}

function toRange(wire: WireRange): Range {
  const isDatetime = [wire.lt, wire.gt, wire.gte, wire.lte].some((v) => typeof v === 'string');
  if (!isDatetime) return { kind: 'number', ...toBounds(wire, (v) => v as number) };
  return {
    kind: 'datetime',
    ...toBounds(wire, (v) => {
      const micros = parseDatetime(v as string);
      if (micros === undefined) throw formatError(CONDITION_EXPECTED);
      return micros;
    }),
  };
}

function toBounds<T>(wire: { lt?: Opt<T>; gt?: Opt<T>; gte?: Opt<T>; lte?: Opt<T> }, convert: (value: T) => number): Bounds {
  const out: Bounds = {};
  for (const name of ['lt', 'gt', 'gte', 'lte'] as const) {
    const value = wire[name];
    if (value !== null && value !== undefined) out[name] = convert(value);
  }
  return out;
}

function geoPoint(wire: WireGeoPoint): GeoPoint {
  return { lon: wire.lon, lat: wire.lat };
}

function toPolygon(wire: WireGeoPolygon): GeoPolygon {
  const ring = (line: WireGeoLineString): GeoPoint[] => {
    const first = line.points[0];
    const last = line.points[line.points.length - 1];
    // Qdrant compares the ends within f64::EPSILON.
    if (Math.abs(first.lat - last.lat) > Number.EPSILON || Math.abs(first.lon - last.lon) > Number.EPSILON) {
      throw formatError(CONDITION_EXPECTED);
    }
    return line.points.map(geoPoint);
  };
  return { exterior: ring(wire.exterior), interiors: (wire.interiors ?? []).map(ring) };
}
