// Filters built from other filters: what query planning adds to a request's filter (a parent
// node's filter, the candidates a rescoring ranks, the examples a search leaves out).

import type { PointId } from '../../model.js';
import type { Filter } from './types.js';

/** Points matching both; null stands for no filter. */
export function allOf(a: Filter | null, b: Filter | null): Filter | null {
  if (!a) return b;
  if (!b) return a;
  return { must: [{ kind: 'filter', filter: a }, { kind: 'filter', filter: b }] };
}

/**
 * Points matching `filter` whose id is among `ids`. The id condition comes first and unwrapped,
 * so the (usually few) ids narrow the candidates before `filter` checks any payload.
 */
export function onlyIds(filter: Filter | null, ids: PointId[]): Filter {
  return { must: [{ kind: 'hasId', ids: new Set(ids) }, ...(filter ? [{ kind: 'filter' as const, filter }] : [])] };
}

/** Points matching `filter` whose id is not among `ids`. */
export function exceptIds(filter: Filter | null, ids: PointId[]): Filter | null {
  return ids.length ? allOf(filter, { mustNot: [{ kind: 'hasId', ids: new Set(ids) }] }) : filter;
}
