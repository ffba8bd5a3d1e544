// A formula query as sent -> the formula the shards evaluate, with the checks Qdrant makes when it
// parses one (lib/shard/src/query/formula.rs, parsed_formula.rs): variable names, datetime
// constants, decay parameters, defaults. Its conditions become filters of one condition each.

import type { BadInput } from '../errors.js';
import { displayF64, validationFailed } from '../messages.js';
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
  return validationFailed(`failed to parse ${what} ${value}: ${message}`);
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
    throw validationFailed(`Linear decay midpoint should be in the range [0.0, 1.0], got ${displayF64(midpoint)}.`);
  }
  if (kind !== 'lin' && !(midpoint > 0 && midpoint < 1)) {
    throw validationFailed(`Decay midpoint should be in the range (0.0, 1.0), got ${displayF64(midpoint)}.`);
  }
  if (!(scale > 0)) throw validationFailed(`Decay scale should be non-zero positive, got ${displayF64(scale)}.`);
  if (kind === 'lin') return (1 - midpoint) / scale;
  return kind === 'exp' ? Math.log(midpoint) / scale : Math.log(midpoint) / (scale * scale);
}

type Unary = Extract<Expression, { arg: Expression }>['op'];
const DECAYS = { lin_decay: 'lin', exp_decay: 'exp', gauss_decay: 'gauss' } as const;

/** The keyed variants, in serde's order of trial (a body holding two keys is read as the first). */
const VARIANTS = ['geo_distance', 'datetime', 'datetime_key', 'mult', 'sum', 'neg', 'abs', 'div', 'sqrt', 'pow', 'exp', 'log10', 'ln', 'lin_decay', 'exp_decay', 'gauss_decay'] as const;
type Variant = (typeof VARIANTS)[number];

/** Converts depth first, left to right, so the first error Qdrant meets is the one reported. */
class FormulaBuilder {
  readonly conditions: Formula['conditions'] = [];

  expression(wire: WireExpression): Expression {
    if (typeof wire === 'number') return { op: 'constant', value: Math.fround(wire) };
    if (typeof wire === 'string') {
      const v = toVariable(wire);
      return 'score' in v ? { op: 'score', prefetch: v.score } : { op: 'payload', ...v };
    }
    const variant = VARIANTS.find((key) => key in wire);
    if (variant) return this.keyed(variant, (wire as Record<Variant, unknown>)[variant]);
    // Anything else passed the schema as a filter condition.
    this.conditions.push(toFilter({ must: [wire as WireCondition] }, 'query.formula'));
    return { op: 'condition', index: this.conditions.length - 1 };
  }

  private keyed(variant: Variant, value: unknown): Expression {
    switch (variant) {
      case 'geo_distance': {
        const { origin, to } = value as { origin: { lon: number; lat: number }; to: string };
        return { op: 'geo_distance', origin: { lon: origin.lon, lat: origin.lat }, ...payloadVariable(to) };
      }
      case 'datetime': {
        const micros = parseDatetime(value as string);
        if (micros === undefined) throw failedToParse('date-time', value as string, DATETIME_UNREADABLE);
        return { op: 'datetime', seconds: micros / 1_000_000 };
      }
      case 'datetime_key':
        return { op: 'datetime_key', ...payloadVariable(value as string) };
      case 'mult':
      case 'sum':
        return { op: variant, args: (value as WireExpression[]).map((e) => this.expression(e)) };
      case 'div': {
        const { left, right, by_zero_default } = value as { left: WireExpression; right: WireExpression; by_zero_default?: number | null };
        const byZeroDefault = by_zero_default === null || by_zero_default === undefined ? null : Math.fround(by_zero_default);
        return { op: 'div', left: this.expression(left), right: this.expression(right), byZeroDefault };
      }
      case 'pow': {
        const { base, exponent } = value as { base: WireExpression; exponent: WireExpression };
        return { op: 'pow', base: this.expression(base), exponent: this.expression(exponent) };
      }
      case 'lin_decay':
      case 'exp_decay':
      case 'gauss_decay': {
        const params = value as WireDecayParams;
        const kind = DECAYS[variant];
        // Qdrant checks the decay's constants before converting its expressions.
        const lambda = decayLambda(kind, params);
        const x = this.expression(params.x);
        const target = params.target === null || params.target === undefined ? null : this.expression(params.target);
        return { op: 'decay', kind, x, target, lambda };
      }
      default:
        return { op: variant satisfies Unary, arg: this.expression(value as WireExpression) };
    }
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
