// The query API's score boosting formulas (FormulaQuery and its Expression tree). Expression
// nests itself, so it is registered on its own under the id "Expression" and referred to.

import type { SchemaObject } from 'ajv';
import { float, jsonObject, jsonPath, opt, seq, str, struct, untagged } from './builders.js';

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

/** A struct of one required field holding `schema`: most expression variants. */
function wrapper(name: string, field: string, schema: SchemaObject): SchemaObject {
  return struct(name, { [field]: schema }, { required: [field] });
}

/** Qdrant's untagged Expression, its variants in serde's order of trial. */
export const EXPRESSION_SCHEMA: SchemaObject = {
  ...untagged('Expression', [
    float('f32'),
    str(),
    { $ref: 'Filter#/definitions/Condition' },
    wrapper('GeoDistance', 'geo_distance', struct('GeoDistanceParams', { origin: GEO_POINT, to: PAYLOAD_KEY }, { required: ['origin', 'to'] })),
    wrapper('DatetimeExpression', 'datetime', str()),
    wrapper('DatetimeKeyExpression', 'datetime_key', PAYLOAD_KEY),
    wrapper('MultExpression', 'mult', seq(EXPRESSION)),
    wrapper('SumExpression', 'sum', seq(EXPRESSION)),
    wrapper('NegExpression', 'neg', EXPRESSION),
    wrapper('AbsExpression', 'abs', EXPRESSION),
    wrapper('DivExpression', 'div', struct('DivParams', { left: EXPRESSION, right: EXPRESSION, by_zero_default: opt(float('f32')) }, { required: ['left', 'right'] })),
    wrapper('SqrtExpression', 'sqrt', EXPRESSION),
    wrapper('PowExpression', 'pow', struct('PowParams', { base: EXPRESSION, exponent: EXPRESSION }, { required: ['base', 'exponent'] })),
    wrapper('ExpExpression', 'exp', EXPRESSION),
    wrapper('Log10Expression', 'log10', EXPRESSION),
    wrapper('LnExpression', 'ln', EXPRESSION),
    wrapper('LinDecayExpression', 'lin_decay', DECAY_PARAMS),
    wrapper('ExpDecayExpression', 'exp_decay', DECAY_PARAMS),
    wrapper('GaussDecayExpression', 'gauss_decay', DECAY_PARAMS),
  ]),
  $id: 'Expression',
};

export const FORMULA_QUERY = struct('FormulaQuery', { formula: EXPRESSION, defaults: jsonObject() }, { required: ['formula'] });
