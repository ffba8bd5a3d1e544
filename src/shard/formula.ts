// Score boosting formulas (the query API's `formula` query) and their value for one point, as
// Qdrant's formula scorer computes it (lib/segment/src/index/query_optimization/rescore_formula):
// in f64, every step that can leave the finite numbers checked, the result narrowed to an f32.

import { displayF64, formulaVariableError, nonFiniteNumber } from '../messages.js';
import type { JsonValue, Payload } from '../model.js';
import { numberOf } from './filter/field-check.js';
import { haversine } from './filter/geo.js';
import { flatten, parseDatetime, valuesAt, type Filter, type JsonPath } from './filter/index.js';
import { isJsonObject } from './filter/json-path.js';
import type { GeoPoint } from './filter/types.js';

export type DecayKind = 'lin' | 'exp' | 'gauss';

/** A payload key as written in the formula, and parsed. */
export interface PayloadVariable {
  key: string;
  path: JsonPath;
}

export type Expression =
  | { op: 'constant'; value: number }
  /** The point's score in the n-th prefetch. */
  | { op: 'score'; prefetch: number }
  | ({ op: 'payload' } & PayloadVariable)
  /** 1 when the point matches the formula's n-th condition, else 0. */
  | { op: 'condition'; index: number }
  | ({ op: 'geo_distance'; origin: GeoPoint } & PayloadVariable)
  /** A datetime constant, in seconds since the epoch. */
  | { op: 'datetime'; seconds: number }
  | ({ op: 'datetime_key' } & PayloadVariable)
  | { op: 'sum' | 'mult'; args: Expression[] }
  | { op: 'div'; left: Expression; right: Expression; byZeroDefault: number | null }
  | { op: 'neg' | 'abs' | 'sqrt' | 'exp' | 'log10' | 'ln'; arg: Expression }
  | { op: 'pow'; base: Expression; exponent: Expression }
  /** `lambda` folds midpoint and scale in, as Qdrant does when it parses the formula. */
  | { op: 'decay'; kind: DecayKind; x: Expression; target: Expression | null; lambda: number };

export interface Formula {
  expression: Expression;
  /** The conditions the expression names by index, each as a filter of that one condition. */
  conditions: Filter[];
  /** Values used when a prefetch did not score the point (else 0). */
  scoreDefaults: Map<number, JsonValue>;
  /** Values used when the payload has none, by canonical key. */
  payloadDefaults: Map<string, JsonValue>;
}

/** What a formula reads of one point. */
export interface PointVariables {
  payload: Payload;
  /** The point's score in each prefetch (undefined: not among that prefetch's hits). */
  scores: (number | undefined)[];
  /** Whether the point matches each condition. */
  matches: boolean[];
}

/** The point's score under the formula, an f32; Qdrant's errors for missing values and non-finite steps. */
export function formulaScore(formula: Formula, point: PointVariables): number {
  const score = evaluate(formula.expression, formula, point);
  const narrowed = Math.fround(score);
  if (!Number.isFinite(narrowed)) throw nonFiniteNumber(`${displayF64(score)} as f32 = ${displayF64(narrowed)}`);
  return narrowed;
}

function evaluate(e: Expression, formula: Formula, point: PointVariables): number {
  const at = (sub: Expression) => evaluate(sub, formula, point);
  switch (e.op) {
    case 'constant':
      return e.value;
    case 'score':
      return point.scores[e.prefetch] ?? asNumber(formula.scoreDefaults.get(e.prefetch)) ?? 0;
    case 'payload':
      return variable(e, 'number', formula, point, (v) => asNumber(v) ?? refused('Value is not a number'));
    case 'condition':
      return point.matches[e.index] ? 1 : 0;
    case 'geo_distance':
      return haversine(e.origin, variable(e, 'geo point', formula, point, readGeoPoint));
    case 'datetime':
      return e.seconds;
    case 'datetime_key':
      return variable(e, 'datetime', formula, point, (v) => {
        if (typeof v !== 'string') return refused('Value is not a string');
        const micros = parseDatetime(v);
        return micros === undefined ? refused(DATETIME_UNREADABLE) : micros / 1_000_000;
      });
    case 'sum':
      return e.args.reduce((acc, sub) => acc + at(sub), 0);
    case 'mult': {
      let product = 1;
      for (const sub of e.args) {
        const value = at(sub);
        // Qdrant stops at a zero factor: the rest is not evaluated (nor can it fail).
        if (value === 0) return 0;
        product *= value;
      }
      return product;
    }
    case 'div': {
      const left = at(e.left);
      // A zero numerator is 0 without evaluating the denominator, as in Qdrant.
      if (left === 0) return 0;
      const right = at(e.right);
      if (right === 0 && e.byZeroDefault !== null) return e.byZeroDefault;
      return finite(left / right, (v) => `${displayF64(left)}/${displayF64(right)} = ${v}`);
    }
    case 'neg':
      return -at(e.arg);
    case 'abs':
      return Math.abs(at(e.arg));
    case 'sqrt': {
      const value = at(e.arg);
      return finite(Math.sqrt(value), (v) => `√${displayF64(value)} = ${v}`);
    }
    case 'pow': {
      const base = at(e.base);
      const exponent = at(e.exponent);
      return finite(powf(base, exponent), (v) => `${displayF64(base)}^${displayF64(exponent)} = ${v}`);
    }
    case 'exp': {
      const value = at(e.arg);
      return finite(Math.exp(value), (v) => `exp(${displayF64(value)}) = ${v}`);
    }
    case 'log10': {
      const value = at(e.arg);
      return finite(Math.log10(value), (v) => `log10(${displayF64(value)}) = ${v}`);
    }
    case 'ln': {
      const value = at(e.arg);
      return finite(Math.log(value), (v) => `ln(${displayF64(value)}) = ${v}`);
    }
    case 'decay': {
      const x = at(e.x);
      const target = e.target === null ? 0 : at(e.target);
      return decay(e.kind, x, target, e.lambda);
    }
  }
}

/** Qdrant's decay functions, each 1 at the target and in [0, 1]. */
function decay(kind: DecayKind, x: number, target: number, lambda: number): number {
  const diff = x - target;
  if (kind === 'exp') return Math.exp(lambda * Math.abs(diff));
  if (kind === 'gauss') return Math.exp(lambda * diff * diff);
  return Math.max(-lambda * Math.abs(diff) + 1, 0);
}

/**
 * Rust's f64::powf, where JavaScript differs: 1 to any power (NaN too) is 1, and -1 to an
 * infinite power is 1.
 */
function powf(base: number, exponent: number): number {
  if (base === 1 || (base === -1 && !Number.isFinite(exponent) && !Number.isNaN(exponent))) return 1;
  return base ** exponent;
}

function finite(value: number, expression: (shown: string) => string): number {
  if (Number.isFinite(value)) return value;
  throw nonFiniteNumber(expression(displayF64(value)));
}

/** serde_json's Value::as_f64 (an integer past 2^53, a bigint, as the nearest double). */
function asNumber(value: JsonValue | undefined): number | undefined {
  return value === undefined ? undefined : numberOf(value);
}

/** Why a value could not be read as the type a formula step needs. */
class Refused {
  constructor(readonly description: string) {}
}

function refused(description: string): Refused {
  return new Refused(description);
}

/** chrono's message for a datetime it cannot read, which Qdrant passes on. */
export const DATETIME_UNREADABLE = 'input contains invalid characters';

/**
 * A payload variable's value: the one value at the key (an array's elements count as values
 * unless the path ends in `[]`), several as one array, else the default; then read as `T`.
 */
function variable<T>(v: PayloadVariable, expected: 'number' | 'geo point' | 'datetime', formula: Formula, point: PointVariables, read: (value: JsonValue) => T | Refused): T {
  const found = valuesAt(v.path, point.payload);
  const last = v.path[v.path.length - 1];
  const values = 'wildcard' in last ? found : flatten(found);
  const value = values.length === 0 ? formula.payloadDefaults.get(v.key) : values.length === 1 ? values[0] : values;
  if (value === undefined) throw formulaVariableError(v.key, expected, 'No value found in a payload nor defaults');
  const out = read(value);
  if (out instanceof Refused) throw formulaVariableError(v.key, expected, out.description);
  return out;
}

/** A payload value read as Qdrant's GeoPoint (through its GeoPointShadow), with serde's and its own messages. */
function readGeoPoint(value: JsonValue): GeoPoint | Refused {
  if (!isJsonObject(value)) return refused(`invalid type: ${serdeUnexpected(value)}, expected struct GeoPointShadow`);
  const coordinates: Partial<GeoPoint> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key !== 'lon' && key !== 'lat') continue;
    const coordinate = numberOf(v);
    if (coordinate === undefined) return refused(`invalid type: ${serdeUnexpected(v)}, expected f64`);
    coordinates[key] = coordinate;
  }
  const { lon, lat } = coordinates;
  if (lon === undefined) return refused('missing field `lon`');
  if (lat === undefined) return refused('missing field `lat`');
  if (Math.abs(lon) > 180 || Math.abs(lat) > 90) {
    return refused(`Wrong format of GeoPoint payload: expected \`lat\` = ${displayF64(lat)} within [-90;90] and \`lon\` = ${displayF64(lon)} within [-180;180]`);
  }
  return { lon, lat };
}

/** How serde names a JSON value it did not expect. */
function serdeUnexpected(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'number') return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  if (typeof value === 'bigint') return `integer \`${value}\``;
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  return Array.isArray(value) ? 'sequence' : 'map';
}
