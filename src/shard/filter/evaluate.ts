// Checking a filter against one point, as Qdrant's check_payload does. Inside a nested
// condition the "point" is one object element of the array: keys are relative to it, and id and
// vector conditions never match there (Qdrant gives nested checks no id tracker and no vectors).

import type { Payload, PointId } from '../../model.js';
import { checkField, checkOneValue, isEmptyShape, isNullShape, shapeOf, type MatchSemantics } from './field-check.js';
import { formatJsonPath, isJsonObject, ownValue, valuesAt, type JsonPath } from './json-path.js';
import { inSlice } from './slice.js';
import type { Condition, FieldCondition, Filter } from './types.js';

/** Indexes that define match semantics, by canonical key (see MatchSemantics). */
export type SemanticsLookup = (key: string) => MatchSemantics | undefined;

export interface PointScope {
  payload: Payload;
  /** Absent inside nested conditions. */
  id?: PointId;
  hasVector(name: string): boolean;
  /** Path of the nested array element the payload is, from the point's root; [] at the root. */
  prefix: JsonPath;
  semantics?: SemanticsLookup;
}

// Plain loops, no closures: this runs once per point checked, and a closure made per call costs
// more than the check of a simple condition.
export function checkFilter(filter: Filter, scope: PointScope): boolean {
  if (filter.should && !anyHolds(filter.should, scope)) return false;
  if (filter.minShould) {
    let hits = 0;
    for (const c of filter.minShould.conditions) if (checkCondition(c, scope) && ++hits >= filter.minShould.minCount) break;
    if (hits < filter.minShould.minCount) return false;
  }
  if (filter.must) for (const c of filter.must) if (!checkCondition(c, scope)) return false;
  return !filter.mustNot || !anyHolds(filter.mustNot, scope);
}

function anyHolds(conditions: readonly Condition[], scope: PointScope): boolean {
  for (const c of conditions) if (checkCondition(c, scope)) return true;
  return false;
}

export function checkCondition(cond: Condition, scope: PointScope): boolean {
  switch (cond.kind) {
    case 'field': {
      const semantics = semanticsFor(cond, scope);
      const top = cond.path.length === 1 ? cond.path[0] : undefined;
      // A top-level key holds at most one value: judged without collecting values (the hot case).
      if (!semantics && top && 'key' in top) return checkOneValue(cond, ownValue(scope.payload, top.key));
      return checkField(cond, valuesAt(cond.path, scope.payload), semantics);
    }
    case 'isEmpty':
      for (const v of valuesAt(cond.path, scope.payload)) if (!isEmptyShape(shapeOf(v))) return false;
      return true;
    case 'isNull':
      for (const v of valuesAt(cond.path, scope.payload)) if (isNullShape(shapeOf(v))) return true;
      return false;
    case 'hasId':
      return scope.id !== undefined && cond.ids.has(scope.id);
    case 'hasVector':
      return scope.hasVector(cond.name);
    case 'slice':
      return scope.id !== undefined && inSlice(scope.id, cond.total, cond.index);
    case 'nested': {
      const prefix = [...scope.prefix, ...cond.path];
      for (const element of valuesAt(cond.path, scope.payload)) {
        if (isJsonObject(element) && checkFilter(cond.filter, { payload: element, hasVector: noVector, prefix, semantics: scope.semantics })) return true;
      }
      return false;
    }
    case 'filter':
      return checkFilter(cond.filter, scope);
  }
}

function noVector(): boolean {
  return false;
}

/** The index on the condition's full key (nested prefix included), if it defines semantics. */
function semanticsFor(cond: FieldCondition, scope: PointScope): MatchSemantics | undefined {
  if (!scope.semantics || !cond.match) return undefined;
  const key = scope.prefix.length === 0 ? cond.key : formatJsonPath([...scope.prefix, ...cond.path]);
  return scope.semantics(key);
}

/** A point for matchesPayload: its id, payload and the names of the vectors it has. */
export interface PointData {
  id: PointId;
  payload: Payload;
  vectors: ReadonlySet<string>;
}

/**
 * Whether one point matches `filter`. Pass `semantics` (see indexSemantics) where the point's
 * collection has text or uuid indexes, so the check agrees with selectMatching.
 */
export function matchesPayload(filter: Filter, point: PointData, semantics?: SemanticsLookup): boolean {
  return checkFilter(filter, {
    payload: point.payload, id: point.id, hasVector: (name) => point.vectors.has(name), prefix: [], semantics,
  });
}
