// Request validation, by validators compiled ahead (see compiled-validators.ts). A body is judged as Qdrant
// judges it: first its shape, as serde would parse it (failure: 400 "Format error in JSON body:
// <serde's message>"), then the validator-crate rules (failure: 422 "Validation error in JSON
// body: [<path>: <message>; ...]"). Qdrant's messages also carry "at line L column C"; bodies
// arrive here parsed, so positions are not reported.

import type { ErrorObject, SchemaObject } from 'ajv';
import { formatError, invalidJsonPathText, POINTS_OR_FILTER, validationError } from './messages.js';
import { printJson } from '../json/print.js';
import type { PointIdErrorParams } from './point-id-keyword.js';
import { parseQuery, type ParsedQuery, type QueryParamSet, type RawQuery } from './schemas/query.js';
import type { BodyName, BodyTypes, ValidatorSources } from './body-schemas.js';
import { compiledBodies } from './compiled-validators.js';
import type { CompiledBodies } from './validator-module.js';
import { brokenRules, startRules } from './validator-keywords.js';
import { filterSchema } from './filter.js';
import { EXPRESSION_SCHEMA } from './schemas/formula.js';
import { PREFETCH_SCHEMA, QUERY_INTERFACE_SCHEMA } from './schemas/search.js';

export { CLUSTER_TELEMETRY_PARAMS, COMMIT_PARAMS, METADATA_PARAMS, PEER_REMOVAL_PARAMS, METRICS_PARAMS, NO_PARAMS, OPTIMIZATIONS_PARAMS, POINT_READ_PARAMS, QUOTA_PARAMS, READ_PARAMS, SNAPSHOT_PARAMS, SNAPSHOT_UPLOAD_PARAMS, TELEMETRY_PARAMS, WRITE_PARAMS } from './schemas/query.js';

export { BODY_SCHEMAS, type BodyName, type BodyTypes } from './body-schemas.js';

/** The schemas the bodies refer to by `$id` (`{ $ref: 'Filter' }`, 'QueryInterface', 'Prefetch'). */
export const REFERENCED_SCHEMAS: readonly SchemaObject[] = [filterSchema, QUERY_INTERFACE_SCHEMA, PREFETCH_SCHEMA, EXPRESSION_SCHEMA];

/** What the validators are compiled from beside the bodies: the self-nesting query schemas have rules of their own. */
export const VALIDATOR_SOURCES: ValidatorSources = { whole: [filterSchema, EXPRESSION_SCHEMA], split: [QUERY_INTERFACE_SCHEMA, PREFETCH_SCHEMA] };

let compiled: CompiledBodies | null = null;

/**
 * Every body's validators, ready from the first call on: the server bundle has them loaded as it
 * starts; from source they are found (or compiled) on first use (compiled-validators.ts).
 */
function bodies(): CompiledBodies {
  compiled ??= compiledBodies(VALIDATOR_SOURCES);
  return compiled;
}

/** Checks a parsed JSON body against Qdrant's type `name`; throws FormatError or ValidationError. */
export function validateBody<K extends BodyName>(name: K, body: unknown): BodyTypes[K] {
  // What serde_json says of an empty body.
  if (body === undefined) throw formatError('EOF while parsing a value at line 1 column 0');
  const { shape, rules } = bodies()[name];
  if (!shape(body)) throw formatError(describeShapeError(shape.errors ?? []));
  if (rules) {
    startRules();
    rules(body);
    const breaches = brokenRules();
    if (breaches.length > 0) throw validationError([...breaches]);
  }
  return body as BodyTypes[K];
}

/** Reads the parameters of `set` from a parsed query string; throws FormatError on a bad one. */
export function validateQuery<S extends QueryParamSet>(set: S, query: RawQuery): ParsedQuery<S> {
  const parsed = parseQuery(set, query);
  if (!parsed.ok) throw formatError(parsed.error, 'query parameters');
  return parsed.value;
}

// Ajv keywords that only wrap the failure of a subschema.
const WRAPPERS = new Set(['if', 'anyOf', 'allOf', 'oneOf', 'not']);

function describeShapeError(errors: ErrorObject[]): string {
  // serde tries each variant of an untagged enum on a buffered copy and, when none fits, reports
  // only that; an enclosing untagged enum swallows the report of an inner one.
  const untagged = errors
    .filter((e) => e.keyword === 'anyOf' && (e.parentSchema?.untagged ?? e.parentSchema?.expecting) !== undefined)
    .sort((a, b) => a.instancePath.length - b.instancePath.length || a.schemaPath.length - b.schemaPath.length)[0];
  if (untagged) {
    const { expecting, untagged: name } = untagged.parentSchema as SchemaObject;
    return typeof expecting === 'string' ? expecting : `data did not match any variant of untagged enum ${String(name)}`;
  }
  const cause = errors.find((e) => !WRAPPERS.has(e.keyword)) ?? errors[0];
  return cause ? describeError(cause) : 'invalid body';
}

function describeError(error: ErrorObject): string {
  const schema = (error.parentSchema ?? {}) as SchemaObject;
  switch (error.keyword) {
    case 'type':
      // serde_json reads a unit-variant enum only from a string, and says so this way.
      return schema.serde === 'enum' ? 'expected value' : `invalid type: ${unexpected(error.data)}, expected ${expected(schema)}`;
    case 'required':
      return `missing field \`${error.params.missingProperty}\``;
    case 'additionalProperties':
      return `unknown field \`${error.params.additionalProperty}\`, ${oneOf(Object.keys(schema.properties ?? {}), 'fields')}`;
    case 'enum':
      return `unknown variant \`${String(error.data)}\`, ${oneOf((schema.enum as unknown[]).filter((v) => v !== null).map(String), 'variants')}`;
    case 'minimum':
    case 'maximum':
      // An integer beyond 64 bits is a float to serde_json: a wrong type rather than a wrong value.
      return `invalid ${isSerdeInteger(error.data) ? 'value' : 'type'}: ${unexpected(error.data)}, expected ${expected(schema)}`;
    case 'f32Items':
      return `invalid type: ${unexpected(error.params.item)}, expected f32`;
    case 'pointId':
      return `value ${(error.params as PointIdErrorParams).exact ?? showValue(error.data)} is not a valid point ID, valid values are either an unsigned integer or a UUID`;
    case 'aliases':
      return `duplicate field \`${String(error.params.field)}\``;
    case 'jsonPath':
      return invalidJsonPathText(String(error.data));
    case 'pointsOrFilter':
      return POINTS_OR_FILTER;
    default:
      return error.message ?? 'invalid value';
  }
}

// serde_json reads an integer as i64 or u64; past their range it parses a float instead.
const I64_MIN = -(2 ** 63);
const U64_LIMIT = 2 ** 64;

function isSerdeInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= I64_MIN && value <= U64_LIMIT;
}

// A whole float as Rust prints it: the shortest digits that read back, zeros up to the point,
// then ".0" (1e21 is "1000000000000000000000.0", where JavaScript writes "1e+21").
function wholeFloatText(value: number): string {
  const [mantissa, exponent] = String(Math.abs(value)).split('e+');
  const digits = mantissa.replace('.', '');
  const zeros = exponent === undefined ? 0 : Number(exponent) - (digits.length - mantissa.split('.')[0].length);
  return `${value < 0 ? '-' : ''}${digits}${'0'.repeat(zeros)}.0`;
}

// serde's wording of what it found (serde_json names null "null").
function unexpected(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'number') {
    if (isSerdeInteger(value)) return `integer \`${value}\``;
    return `floating point \`${Number.isInteger(value) ? wholeFloatText(value) : value}\``;
  }
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  return Array.isArray(value) ? 'sequence' : 'map';
}

const EXPECTED_BY_TYPE: Record<string, string> = {
  integer: 'i64',
  number: 'f64',
  boolean: 'a boolean',
  string: 'a string',
  array: 'a sequence',
  object: 'a map',
};

function expected(schema: SchemaObject): string {
  if (typeof schema.serde === 'string') return schema.serde;
  const type = [schema.type].flat().find((t) => t !== 'null');
  return EXPECTED_BY_TYPE[String(type)] ?? 'a value';
}

// serde's list of what it would have accepted.
function oneOf(names: string[], what: 'fields' | 'variants'): string {
  if (names.length === 0) return `there are no ${what}`;
  if (names.length === 1) return `expected \`${names[0]}\``;
  return `expected one of ${names.map((n) => `\`${n}\``).join(', ')}`;
}

// Qdrant prints the rejected id bare: strings without quotes.
function showValue(value: unknown): string {
  return typeof value === 'string' ? value : printJson(value);
}
