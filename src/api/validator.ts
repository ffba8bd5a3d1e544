// Request validation, compiled once at startup on one Ajv instance. A body is judged as Qdrant
// judges it: first its shape, as serde would parse it (failure: 400 "Format error in JSON body:
// <serde's message>"), then the validator-crate rules (failure: 422 "Validation error in JSON
// body: [<path>: <message>; ...]"). Qdrant's messages also carry "at line L column C"; bodies
// arrive here parsed, so positions are not reported.

import { Ajv, type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv';
import { filterSchema } from './filter.js';
import { formatError, invalidJsonPathText, POINTS_OR_FILTER, validationError, type RuleBreach } from './messages.js';
import { parseDatetime } from '../shard/filter/datetime.js';
import { printJson } from '../json/print.js';
import { EXACT_INTEGERS_KEYWORD, I64_KEYWORD } from './exact-integer-keywords.js';
import { POINT_ID_KEYWORD, type PointIdErrorParams } from './point-id-keyword.js';
import { CHANGE_ALIASES } from './schemas/aliases.js';
import { CREATE_COLLECTION, UPDATE_COLLECTION, VECTOR_NAME_CONFIG } from './schemas/collection.js';
import { rulesOf, shapeOf, type PathStep, type PlacedRule } from './schemas/derive.js';
import { CREATE_FIELD_INDEX } from './schemas/payload-index.js';
import {
  COUNT_REQUEST,
  DELETE_PAYLOAD,
  DELETE_VECTORS,
  POINT_INSERT_OPERATIONS,
  POINT_REQUEST,
  POINTS_SELECTOR,
  SCROLL_REQUEST,
  SET_PAYLOAD,
  UPDATE_OPERATIONS,
  UPDATE_VECTORS,
} from './schemas/points.js';
import { QUOTA_CONFIG } from './schemas/quota.js';
import { CREATE_SHARDING_KEY, DROP_SHARDING_KEY } from './schemas/shard-keys.js';
import type { WireQuotaConfig } from '../quota/config.js';
import { parseQuery, type ParsedQuery, type QueryParamSet, type RawQuery } from './schemas/query.js';
import { SHARD_SNAPSHOT_RECOVER, SNAPSHOT_RECOVER, type WireSnapshotRecover } from './schemas/snapshots.js';
import { violation } from './schemas/rules.js';
import type {
  WireChangeAliases,
  WireCountRequest,
  WireCreateCollection,
  WireCreateFieldIndex,
  WireCreateShardingKey,
  WireDropShardingKey,
  WireVectorNameConfig,
  WireDeletePayload,
  WireDeleteVectors,
  WirePointInsertOperations,
  WirePointRequest,
  WirePointsSelector,
  WireScrollRequest,
  WireSetPayload,
  WireUpdateCollection,
  WireUpdateOperations,
  WireUpdateVectors,
  WireSearchRequest,
  WireSearchRequestBatch,
  WireQueryRequest,
  WireQueryRequestBatch,
  WireFacetRequest,
  WireRecommendRequest,
  WireRecommendRequestBatch,
  WireSearchGroupsRequest,
  WireRecommendGroupsRequest,
  WireQueryGroupsRequest,
  WireDiscoverRequest,
  WireDiscoverRequestBatch,
  WireSearchMatrixRequest,
} from './types.js';
import { EXPRESSION_SCHEMA } from './schemas/formula.js';
import { parseJsonPath } from '../shard/filter/json-path.js';
import { PREFETCH_SCHEMA, QUERY_INTERFACE_SCHEMA, SEARCH_MATRIX_REQUEST, DISCOVER_REQUEST, DISCOVER_REQUEST_BATCH, FACET_REQUEST, QUERY_REQUEST, QUERY_REQUEST_BATCH, RECOMMEND_REQUEST, RECOMMEND_REQUEST_BATCH, RECOMMEND_GROUPS_REQUEST, QUERY_GROUPS_REQUEST, SEARCH_GROUPS_REQUEST, SEARCH_REQUEST, SEARCH_REQUEST_BATCH } from './schemas/search.js';

export { CLUSTER_TELEMETRY_PARAMS, COMMIT_PARAMS, METRICS_PARAMS, NO_PARAMS, OPTIMIZATIONS_PARAMS, POINT_READ_PARAMS, QUOTA_PARAMS, READ_PARAMS, SNAPSHOT_PARAMS, SNAPSHOT_UPLOAD_PARAMS, TELEMETRY_PARAMS, WRITE_PARAMS } from './schemas/query.js';

/** Each request body Quiver validates, by the name of its Qdrant type. */
export interface BodyTypes {
  CreateCollection: WireCreateCollection;
  UpdateCollection: WireUpdateCollection;
  PointInsertOperations: WirePointInsertOperations;
  PointRequest: WirePointRequest;
  PointsSelector: WirePointsSelector;
  UpdateVectors: WireUpdateVectors;
  DeleteVectors: WireDeleteVectors;
  SetPayload: WireSetPayload;
  DeletePayload: WireDeletePayload;
  UpdateOperations: WireUpdateOperations;
  ScrollRequest: WireScrollRequest;
  CountRequest: WireCountRequest;
  CreateFieldIndex: WireCreateFieldIndex;
  ChangeAliasesOperation: WireChangeAliases;
  SearchRequest: WireSearchRequest;
  SearchRequestBatch: WireSearchRequestBatch;
  QueryRequest: WireQueryRequest;
  QueryRequestBatch: WireQueryRequestBatch;
  FacetRequest: WireFacetRequest;
  RecommendRequest: WireRecommendRequest;
  RecommendRequestBatch: WireRecommendRequestBatch;
  SearchGroupsRequest: WireSearchGroupsRequest;
  RecommendGroupsRequest: WireRecommendGroupsRequest;
  QueryGroupsRequest: WireQueryGroupsRequest;
  DiscoverRequest: WireDiscoverRequest;
  DiscoverRequestBatch: WireDiscoverRequestBatch;
  SearchMatrixRequest: WireSearchMatrixRequest;
  SnapshotRecover: WireSnapshotRecover;
  ShardSnapshotRecover: WireSnapshotRecover;
  QuotaConfig: WireQuotaConfig;
  CreateShardingKey: WireCreateShardingKey;
  DropShardingKey: WireDropShardingKey;
  VectorNameConfig: WireVectorNameConfig;
}

export type BodyName = keyof BodyTypes;

/** Each body's schema, rules inline (src/api/schemas/derive.ts splits them). */
export const BODY_SCHEMAS: Readonly<Record<BodyName, SchemaObject>> = {
  CreateCollection: CREATE_COLLECTION,
  UpdateCollection: UPDATE_COLLECTION,
  PointInsertOperations: POINT_INSERT_OPERATIONS,
  PointRequest: POINT_REQUEST,
  PointsSelector: POINTS_SELECTOR,
  UpdateVectors: UPDATE_VECTORS,
  DeleteVectors: DELETE_VECTORS,
  SetPayload: SET_PAYLOAD,
  DeletePayload: DELETE_PAYLOAD,
  UpdateOperations: UPDATE_OPERATIONS,
  ScrollRequest: SCROLL_REQUEST,
  CountRequest: COUNT_REQUEST,
  CreateFieldIndex: CREATE_FIELD_INDEX,
  ChangeAliasesOperation: CHANGE_ALIASES,
  SearchRequest: SEARCH_REQUEST,
  SearchRequestBatch: SEARCH_REQUEST_BATCH,
  QueryRequest: QUERY_REQUEST,
  QueryRequestBatch: QUERY_REQUEST_BATCH,
  FacetRequest: FACET_REQUEST,
  RecommendRequest: RECOMMEND_REQUEST,
  RecommendRequestBatch: RECOMMEND_REQUEST_BATCH,
  SearchGroupsRequest: SEARCH_GROUPS_REQUEST,
  RecommendGroupsRequest: RECOMMEND_GROUPS_REQUEST,
  QueryGroupsRequest: QUERY_GROUPS_REQUEST,
  DiscoverRequest: DISCOVER_REQUEST,
  DiscoverRequestBatch: DISCOVER_REQUEST_BATCH,
  SearchMatrixRequest: SEARCH_MATRIX_REQUEST,
  SnapshotRecover: SNAPSHOT_RECOVER,
  ShardSnapshotRecover: SHARD_SNAPSHOT_RECOVER,
  QuotaConfig: QUOTA_CONFIG,
  CreateShardingKey: CREATE_SHARDING_KEY,
  DropShardingKey: DROP_SHARDING_KEY,
  VectorNameConfig: VECTOR_NAME_CONFIG,
};

// Rules never fail validation: each broken one is noted here (Ajv runs synchronously, so one
// list serves every call) and all are reported together, as the validator crate does.
let breaches: RuleBreach[] = [];

// References stay calls (inlineRefs: false): a self-nesting schema (prefetch) is validated by
// recursion, and inlined references would make every level's frame big enough to overflow the
// stack before the 127 levels a body may nest.
const ajv = new Ajv({ strict: true, allowUnionTypes: true, verbose: true, inlineRefs: false });
ajv.addKeyword({ keyword: 'serde', schemaType: 'string' });
ajv.addKeyword({ keyword: 'untagged', schemaType: 'string' });
// serde's `expecting` text of an untagged enum, reported instead of the generic one.
ajv.addKeyword({ keyword: 'expecting', schemaType: 'string' });
ajv.addKeyword(POINT_ID_KEYWORD);
ajv.addKeyword(EXACT_INTEGERS_KEYWORD);
ajv.addKeyword(I64_KEYWORD);
ajv.addKeyword({ keyword: 'f32Items', schemaType: 'boolean', type: 'array', errors: true, validate: f32Items });
// A JsonPath or a datetime is a string that must parse; JsonPath's deserializer reports its own message.
ajv.addKeyword({ keyword: 'jsonPath', schemaType: 'boolean', type: 'string', validate: (_: boolean, data: string) => parseJsonPath(data) !== undefined });
ajv.addKeyword({ keyword: 'datetime', schemaType: 'boolean', type: 'string', validate: (_: boolean, data: string) => parseDatetime(data) !== undefined });
ajv.addKeyword({
  keyword: 'pointsOrFilter',
  schemaType: 'boolean',
  validate: (_: boolean, data: unknown) => {
    if (typeof data !== 'object' || data === null) return true;
    const { points, filter } = data as { points?: unknown; filter?: unknown };
    return (points ?? null) !== null || (filter ?? null) !== null;
  },
});
// serde's aliases: a field sent under another of its names is moved to its own name before the
// struct is checked (so `required` and the field's schema see it); both names at once are one
// field given twice.
ajv.addKeyword({
  keyword: 'aliases',
  type: 'object',
  schemaType: 'object',
  modifying: true,
  errors: true,
  before: 'required',
  validate: renameAliases,
});
ajv.addKeyword({
  keyword: 'rule',
  schemaType: 'object',
  validate: (rule: PlacedRule, data: unknown, _parent?: unknown, cxt?: { instancePath: string; rootData: unknown }) => {
    const message = violation(rule, data);
    if (message !== null) breaches.push({ path: qdrantPath(rule, cxt?.instancePath ?? '', cxt?.rootData), message });
    return true;
  },
});
/** The schemas the bodies refer to by `$id` (`{ $ref: 'Filter' }`, 'QueryInterface', 'Prefetch'). */
export const REFERENCED_SCHEMAS: readonly SchemaObject[] = [filterSchema, QUERY_INTERFACE_SCHEMA, PREFETCH_SCHEMA, EXPRESSION_SCHEMA];

ajv.addSchema(filterSchema);
ajv.addSchema(EXPRESSION_SCHEMA);
ajv.addSchema(shapeOf(QUERY_INTERFACE_SCHEMA) as SchemaObject);
ajv.addSchema({ ...(rulesOf(QUERY_INTERFACE_SCHEMA) as SchemaObject), $id: 'QueryInterfaceRules' });
ajv.addSchema(shapeOf(PREFETCH_SCHEMA) as SchemaObject);
ajv.addSchema({ ...(rulesOf(PREFETCH_SCHEMA) as SchemaObject), $id: 'PrefetchRules' });

function renameAliases(aliases: Record<string, string>, data: Record<string, unknown>, _parent?: unknown, cxt?: { instancePath: string }): boolean {
  for (const [alias, field] of Object.entries(aliases)) {
    if (!Object.hasOwn(data, alias)) continue;
    if (Object.hasOwn(data, field)) {
      renameAliases.errors = [{ keyword: 'aliases', instancePath: cxt?.instancePath ?? '', schemaPath: '', params: { field } }];
      return false;
    }
    data[field] = data[alias];
    delete data[alias];
  }
  return true;
}
renameAliases.errors = undefined as Partial<ErrorObject>[] | undefined;

/** Every item of a list (known to be one) is a number; the first that is not is reported as serde reports it. */
function f32Items(_: boolean, data: unknown[], _parent?: unknown, cxt?: { instancePath: string }): boolean {
  for (let i = 0; i < data.length; i++) {
    if (typeof data[i] !== 'number') {
      f32Items.errors = [{ keyword: 'f32Items', instancePath: `${cxt?.instancePath ?? ''}/${i}`, schemaPath: '', params: { item: data[i] } }];
      return false;
    }
  }
  return true;
}
f32Items.errors = undefined as Partial<ErrorObject>[] | undefined;

interface CompiledBody {
  shape: ValidateFunction;
  rules: ValidateFunction | null;
}

const COMPILED = Object.fromEntries(
  Object.entries(BODY_SCHEMAS).map(([name, schema]) => {
    const rules = rulesOf(schema);
    const compiled: CompiledBody = {
      shape: ajv.compile(shapeOf(schema) as SchemaObject),
      rules: rules === true ? null : ajv.compile(rules as SchemaObject),
    };
    return [name, compiled];
  }),
) as Record<BodyName, CompiledBody>;

/** Checks a parsed JSON body against Qdrant's type `name`; throws FormatError or ValidationError. */
export function validateBody<K extends BodyName>(name: K, body: unknown): BodyTypes[K] {
  // What serde_json says of an empty body.
  if (body === undefined) throw formatError('EOF while parsing a value at line 1 column 0');
  const { shape, rules } = COMPILED[name];
  if (!shape(body)) throw formatError(describeShapeError(shape.errors ?? []));
  if (rules) {
    breaches = [];
    rules(body);
    if (breaches.length > 0) throw validationError(breaches);
  }
  return body as BodyTypes[K];
}

/** Reads the parameters of `set` from a parsed query string; throws FormatError on a bad one. */
export function validateQuery<S extends QueryParamSet>(set: S, query: RawQuery): ParsedQuery<S> {
  const parsed = parseQuery(set, query);
  if (!parsed.ok) throw formatError(parsed.error, 'query parameters');
  return parsed.value;
}

// Qdrant's field paths (actix-web-validator's flatten_errors): fields joined by dots, list
// items as [i], map entries as "?" (Qdrant validates map values as an anonymous list).
// A rule of a referenced schema (a nested prefetch) has its steps from that schema's root; the
// steps before it, through nested prefetches, are fields and list items, told apart by the data.
function qdrantPath(rule: PlacedRule, instancePath: string, root: unknown): string {
  const segments = instancePath.split('/').slice(1).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  const lead = segments.length - rule.path.length;
  let path = '';
  let node = root;
  for (const segment of segments.slice(0, lead)) {
    path += Array.isArray(node) ? `[${segment}]` : (path ? '.' : '') + segment;
    node = (node as Record<string, unknown>)[segment];
  }
  rule.path.forEach((step: PathStep, i) => {
    if (step === 'index') path += `[${segments[lead + i]}]`;
    else path += (path ? '.' : '') + (step === 'key' ? '?' : segments[lead + i]);
  });
  if (rule.field) path += (path ? '.' : '') + rule.field;
  return path;
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
