// The query API's score boosting formulas (FormulaQuery and its Expression tree). Expression
// nests itself, so it is registered on its own under the id "Expression" and referred to.

import type { SchemaObject } from 'ajv';
import { exactObject, float, jsonPath, opt, seq, str, struct, tagged, untagged } from './builders.js';

const EXPRESSION: SchemaObject = { $ref: 'Expression' };

/** A payload key, which serde reads as a JsonPath (a bad one fails the enclosing untagged enum). */
const PAYLOAD_KEY: SchemaObject = jsonPath();

const GEO_POINT = struct('GeoPoint', {
  lon: { ...float('f64'), minimum: -180, maximum: 180 },
  lat: { ...float('f64'), minimum: -90, maximum: 90 },
}, { required: ['lon', 'lat'] });

const DECAY_PARAMS = struct('DecayParamsExpression', {
  x: EXPRESSION,
  target: opt(EXPRESSION),
  scale: opt(float('f32')),
  midpoint: opt(float('f32')),
}, { required: ['x'] });

/** Qdrant's untagged Expression, its variants in serde's order of trial. */
export const EXPRESSION_SCHEMA: SchemaObject = {
  ...untagged('Expression', [
    float('f32'),
    str(),
    { $ref: 'Filter#/definitions/Condition' },
    tagged('GeoDistance', 'geo_distance', struct('GeoDistanceParams', { origin: GEO_POINT, to: PAYLOAD_KEY }, { required: ['origin', 'to'] })),
    tagged('DatetimeExpression', 'datetime', str()),
    tagged('DatetimeKeyExpression', 'datetime_key', PAYLOAD_KEY),
    tagged('MultExpression', 'mult', seq(EXPRESSION)),
    tagged('SumExpression', 'sum', seq(EXPRESSION)),
    tagged('NegExpression', 'neg', EXPRESSION),
    tagged('AbsExpression', 'abs', EXPRESSION),
    tagged('DivExpression', 'div', struct('DivParams', { left: EXPRESSION, right: EXPRESSION, by_zero_default: opt(float('f32')) }, { required: ['left', 'right'] })),
    tagged('SqrtExpression', 'sqrt', EXPRESSION),
    tagged('PowExpression', 'pow', struct('PowParams', { base: EXPRESSION, exponent: EXPRESSION }, { required: ['base', 'exponent'] })),
    tagged('ExpExpression', 'exp', EXPRESSION),
    tagged('Log10Expression', 'log10', EXPRESSION),
    tagged('LnExpression', 'ln', EXPRESSION),
    tagged('LinDecayExpression', 'lin_decay', DECAY_PARAMS),
    tagged('ExpDecayExpression', 'exp_decay', DECAY_PARAMS),
    tagged('GaussDecayExpression', 'gauss_decay', DECAY_PARAMS),
  ]),
  $id: 'Expression',
};

export const FORMULA_QUERY = struct('FormulaQuery', { formula: EXPRESSION, defaults: exactObject() }, { required: ['formula'] });
