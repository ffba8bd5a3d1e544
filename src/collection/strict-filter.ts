// What strict mode measures in a filter, as Qdrant measures it: how many conditions it holds
// (nested filters counted through), the largest condition's input (values of `any`/`except`,
// ids of `has_id`), and the first key filtered on without a payload index able to serve the
// condition (Qdrant's unindexed-field extractor: which index types serve which condition).

import { canonicalUuid, type Condition, type FieldCondition, type Filter, type Match, type ValueList } from '../shard/filter/index.js';
import type { IndexSpec } from '../shard/shard.js';
import { indexParams, type IndexSchema } from '../shard/payload-index/schema.js';

/** What an index can serve, Qdrant's FieldIndexType. */
type Capability =
  | 'int_match' | 'int_range' | 'keyword_match' | 'keyword_prefix' | 'float_range' | 'text' | 'text_phrase'
  | 'bool_match' | 'uuid_match' | 'uuid_range' | 'datetime_range' | 'geo';

const ALL_CAPABILITIES: Capability[] = [
  'int_match', 'int_range', 'keyword_match', 'keyword_prefix', 'float_range', 'text', 'text_phrase',
  'bool_match', 'uuid_match', 'uuid_range', 'datetime_range', 'geo',
];

/** The schema type an index of a capability is created with, as messages name it. */
const SCHEMA_OF: Record<Capability, string> = {
  int_match: 'integer',
  int_range: 'integer',
  keyword_match: 'keyword',
  keyword_prefix: 'keyword',
  float_range: 'float',
  text: 'text',
  text_phrase: 'text',
  bool_match: 'bool',
  uuid_match: 'uuid',
  uuid_range: 'uuid',
  datetime_range: 'datetime',
  geo: 'geo',
};

function capabilitiesOf(schema: IndexSchema): Set<Capability> {
  const params = indexParams(schema);
  switch (params.type) {
    case 'keyword':
      return new Set<Capability>(params.prefix ? ['keyword_match', 'keyword_prefix'] : ['keyword_match']);
    case 'integer':
      return new Set<Capability>([...(params.lookup !== false ? ['int_match' as const] : []), ...(params.range !== false ? ['int_range' as const] : [])]);
    case 'uuid':
      return new Set<Capability>(['uuid_match', 'uuid_range']);
    case 'bool':
      return new Set<Capability>(['bool_match']);
    case 'float':
      return new Set<Capability>(['float_range']);
    case 'geo':
      return new Set<Capability>(['geo']);
    case 'text':
      return new Set<Capability>(params.phrase_matching ? ['text', 'text_phrase'] : ['text']);
    case 'datetime':
      return new Set<Capability>(['datetime_range']);
  }
}

function listNeeds(list: ValueList): Capability[] {
  // An empty list matches nothing (any) or excludes nothing (except): no index is needed.
  if (list.values.size === 0) return [];
  if (list.type === 'integers') return ['int_match'];
  const uuids = [...list.values].every((v) => canonicalUuid(v) !== undefined);
  return uuids ? ['uuid_match', 'keyword_match'] : ['keyword_match'];
}

function matchNeeds(match: Match): Capability[] {
  switch (match.kind) {
    case 'value':
      if (typeof match.value === 'boolean') return ['bool_match'];
      if (typeof match.value !== 'string') return ['int_match'];
      return canonicalUuid(match.value) !== undefined ? ['uuid_match', 'keyword_match'] : ['keyword_match'];
    case 'text':
    case 'textAny':
      return ['text'];
    case 'phrase':
      return ['text_phrase'];
    case 'prefix':
      return ['keyword_prefix'];
    case 'any':
    case 'except':
      return listNeeds(match.list);
  }
}

/** The capabilities any of which lets an index serve a field condition. */
function fieldNeeds(c: FieldCondition): Capability[] {
  const needs: Capability[] = c.match ? matchNeeds(c.match) : [];
  if (c.range) needs.push(...(c.range.kind === 'datetime' ? ['datetime_range' as const] : ['float_range' as const, 'int_range' as const]));
  if (c.geoBoundingBox || c.geoRadius || c.geoPolygon) needs.push('geo');
  // Any index keeps the null/empty bookkeeping these need.
  if (c.valuesCount || c.isEmpty !== undefined || c.isNull !== undefined) needs.push(...ALL_CAPABILITIES);
  return needs;
}

function conditionsOf(filter: Filter): Condition[] {
  return [...(filter.must ?? []), ...(filter.mustNot ?? []), ...(filter.should ?? []), ...(filter.minShould?.conditions ?? [])];
}

/** Conditions in the filter, each nested or sub-filter counted as the conditions it holds. */
export function conditionCount(filter: Filter): number {
  return conditionsOf(filter).reduce((n, c) => n + (c.kind === 'nested' || c.kind === 'filter' ? conditionCount(c.filter) : 1), 0);
}

function conditionSize(c: Condition): number {
  switch (c.kind) {
    case 'field':
      return c.match && (c.match.kind === 'any' || c.match.kind === 'except') ? c.match.list.values.size : 0;
    case 'hasId':
      return c.ids.size;
    case 'nested':
    case 'filter':
      return maxConditionSize(c.filter);
    default:
      return 0;
  }
}

/** The input size of the filter's largest condition. */
export function maxConditionSize(filter: Filter): number {
  return Math.max(0, ...conditionsOf(filter).map(conditionSize));
}

/** A key the filter needs an index on, and the index types that would serve it (as messages list them). */
export interface UnindexedKey {
  key: string;
  types: string[];
}

function unindexed(key: string, needs: Capability[], indexes: ReadonlyMap<string, Set<Capability>>): UnindexedKey | null {
  if (needs.length === 0) return null;
  const has = indexes.get(key);
  if (has && needs.some((n) => has.has(n))) return null;
  return { key, types: [...new Set(needs.map((n) => SCHEMA_OF[n]))].sort() };
}

function firstIn(filter: Filter, prefix: string | null, indexes: ReadonlyMap<string, Set<Capability>>): UnindexedKey | null {
  const full = (key: string) => (prefix === null ? key : `${prefix}.${key}`);
  for (const c of conditionsOf(filter)) {
    let found: UnindexedKey | null = null;
    if (c.kind === 'field') found = unindexed(full(c.key), fieldNeeds(c), indexes);
    else if (c.kind === 'isEmpty' || c.kind === 'isNull') found = unindexed(full(c.key), ALL_CAPABILITIES, indexes);
    else if (c.kind === 'filter') found = firstIn(c.filter, prefix, indexes);
    else if (c.kind === 'nested') found = firstIn(c.filter, full(c.key), indexes);
    if (found) return found;
  }
  return null;
}

/** The first key (must, must_not, should, min_should; depth first) no index serves, or null. */
export function firstUnindexedKey(filter: Filter, indexes: readonly IndexSpec[]): UnindexedKey | null {
  return firstIn(filter, null, new Map(indexes.map((i) => [i.key, capabilitiesOf(i.schema)])));
}

/** The Rust Debug name of an index's type (`Keyword`, `Float`...), as the group_by check names it. */
export function schemaKind(schema: IndexSchema): string {
  const type = indexParams(schema).type;
  return type[0].toUpperCase() + type.slice(1);
}

/** Whether an index answers `match` conditions (what group_by needs of it). */
export function servesMatch(schema: IndexSchema): boolean {
  const type = indexParams(schema).type;
  return type === 'keyword' || type === 'integer' || type === 'uuid' || type === 'bool';
}
