// A formula query as sent -> the formula the shards evaluate, with the checks Qdrant makes when it
// parses one (lib/shard/src/query/formula.rs, parsed_formula.rs): variable names, datetime
// constants, decay parameters, defaults. Its conditions become filters of one condition each.

import type { BadInput } from '../errors.js';
import { displayF64, formulaInvalid } from '../messages.js';
import type { JsonValue } from '../model.js';
import { formatJsonPath, parseDatetime, parseJsonPath } from '../shard/filter/index.js';
import { DATETIME_UNREADABLE, type DecayKind, type Expression, type Formula, type PayloadVariable } from '../shard/formula.js';
import { toFilter, type WireCondition } from './filter.js';
import type { WireDecayParams, WireExpression, WireFormulaQuery } from './types.js';

const DEFAULT_DECAY_MIDPOINT = 0.5;
const DEFAULT_DECAY_SCALE = 1;

/** A formula variable: a prefetch's score (`$score`, `$score[n]`) or a payload key. */
type Variable = { score: number } | PayloadVariable;

function failedToParse(what: string, value: string, message: string): BadInput {
  return formulaInvalid(`failed to parse ${what} ${value}: ${message}`);
}

function toVariable(text: string): Variable {
  const fail = (message: string) => failedToParse('variable ID', text, message);
  if (text.startsWith('$')) {
    const path = parseJsonPath(text.slice(1));
    if (!path) throw fail(`Invalid reserved variable: ${text}`);
    const [first, ...rest] = path;
    if (!('key' in first) || first.key !== 'score') throw fail(`Invalid reserved word: ${text}`);
    if (rest.length === 0) return { score: 0 };
    if (rest.length === 1 && 'index' in rest[0]) return { score: rest[0].index };
    throw fail(`Invalid reserved variable: ${text}`);
  }
  const path = parseJsonPath(text);
  if (!path) throw fail(`Invalid payload variable: ${text}`);
  return { key: formatJsonPath(path), path };
}

/** A key the schema already checked (geo_distance's `to`, datetime_key). */
function payloadVariable(key: string): PayloadVariable {
  const path = parseJsonPath(key)!;
  return { key: formatJsonPath(path), path };
}

/** Qdrant folds a decay's midpoint and scale into one constant, checking both first. */
function decayLambda(kind: DecayKind, params: WireDecayParams): number {
  const midpoint = Math.fround(params.midpoint ?? DEFAULT_DECAY_MIDPOINT);
  const scale = Math.fround(params.scale ?? DEFAULT_DECAY_SCALE);
  if (kind === 'lin' && !(midpoint >= 0 && midpoint <= 1)) {
    throw formulaInvalid(`Linear decay midpoint should be in the range [0.0, 1.0], got ${displayF64(midpoint)}.`);
  }
  if (kind !== 'lin' && !(midpoint > 0 && midpoint < 1)) {
    throw formulaInvalid(`Decay midpoint should be in the range (0.0, 1.0), got ${displayF64(midpoint)}.`);
  }
  if (!(scale > 0)) throw formulaInvalid(`Decay scale should be non-zero positive, got ${displayF64(scale)}.`);
  if (kind === 'lin') return (1 - midpoint) / scale;
  return kind === 'exp' ? Math.log(midpoint) / scale : Math.log(midpoint) / (scale * scale);
}

const UNARY = ['neg', 'abs', 'sqrt', 'exp', 'log10', 'ln'] as const;
const DECAYS = { lin_decay: 'lin', exp_decay: 'exp', gauss_decay: 'gauss' } as const;

/** Converts depth first, left to right, so the first error Qdrant meets is the one reported. */
class FormulaBuilder {
  readonly conditions: Formula['conditions'] = [];

  expression(wire: WireExpression): Expression {
    if (typeof wire === 'number') return { op: 'constant', value: Math.fround(wire) };
    if (typeof wire === 'string') {
      const v = toVariable(wire);
      return 'score' in v ? { op: 'score', prefetch: v.score } : { op: 'payload', ...v };
    }
    if ('geo_distance' in wire) {
      const { origin, to } = wire.geo_distance;
      return { op: 'geo_distance', origin: { lon: origin.lon, lat: origin.lat }, ...payloadVariable(to) };
    }
    if ('datetime' in wire) {
      const micros = parseDatetime(wire.datetime);
      if (micros === undefined) throw failedToParse('date-time', wire.datetime, DATETIME_UNREADABLE);
      return { op: 'datetime', seconds: micros / 1_000_000 };
    }
    if ('datetime_key' in wire) return { op: 'datetime_key', ...payloadVariable(wire.datetime_key) };
    if ('mult' in wire) return { op: 'mult', args: wire.mult.map((e) => this.expression(e)) };
    if ('sum' in wire) return { op: 'sum', args: wire.sum.map((e) => this.expression(e)) };
    if ('div' in wire) {
      const { left, right, by_zero_default } = wire.div;
      const byZeroDefault = by_zero_default === null || by_zero_default === undefined ? null : Math.fround(by_zero_default);
      return { op: 'div', left: this.expression(left), right: this.expression(right), byZeroDefault };
    }
    if ('pow' in wire) return { op: 'pow', base: this.expression(wire.pow.base), exponent: this.expression(wire.pow.exponent) };
    for (const op of UNARY) {
      if (op in wire) return { op, arg: this.expression((wire as Record<typeof op, WireExpression>)[op]) };
    }
    for (const [field, kind] of Object.entries(DECAYS) as [keyof typeof DECAYS, DecayKind][]) {
      if (!(field in wire)) continue;
      const params = (wire as Record<typeof field, WireDecayParams>)[field];
      const lambda = decayLambda(kind, params);
      const x = this.expression(params.x);
      const target = params.target === null || params.target === undefined ? null : this.expression(params.target);
      return { op: 'decay', kind, x, target, lambda };
    }
    // Anything else passed the schema as a filter condition.
    this.conditions.push(toFilter({ must: [wire as WireCondition] }, 'query.formula'));
    return { op: 'condition', index: this.conditions.length - 1 };
  }
}

export function toFormula(wire: WireFormulaQuery): Formula {
  const builder = new FormulaBuilder();
  const expression = builder.expression(wire.formula);
  const scoreDefaults = new Map<number, JsonValue>();
  const payloadDefaults = new Map<string, JsonValue>();
  for (const [key, value] of Object.entries(wire.defaults ?? {})) {
    const v = toVariable(key);
    if ('score' in v) scoreDefaults.set(v.score, value);
    else payloadDefaults.set(v.key, value);
  }
  return { expression, conditions: builder.conditions, scoreDefaults, payloadDefaults };
}
