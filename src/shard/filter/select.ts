// Selecting every live offset that matches a filter, with bitset algebra: `must` narrows the
// candidates condition by condition, `should` unites, `mustNot` subtracts. A condition is
// answered by the payload index on its key when that index can (and the candidates are not
// few); otherwise by checking the payloads of the current candidates only. Id conditions go
// through the id map. Results never depend on whether an index answered: the indexes that
// define how a match compares (full-text tokenization, UUID comparison) lend that rule to the
// payload checks too; such a key still matches differently once it has no such index.

import { Bitset } from '../../engine/bitset.js';
import type { JsonValue, Payload, PointId } from '../../model.js';
import { hasMatchSemantics, type PayloadIndex } from '../payload-index/types.js';
import type { SemanticsLookup } from './evaluate.js';
import { PointCheck } from './point-check.js';
import type { Condition, Filter } from './types.js';
import { charge, OFFSET_BYTES } from '../hardware.js';

export interface FilterSource {
  /** Offsets are 0..size-1. */
  readonly size: number;
  /** A new set of every live offset (the caller may change it): deleted or empty offsets never match. */
  liveOffsets(): Bitset;
  payload(offset: number): Payload | undefined;
  /**
   * The value of top-level `key` at every offset (undefined where it or the point is missing), as
   * payload(offset)[key] would read it: a source that keeps such columns spares a check on every
   * point one scattered payload object per point. Read it within one synchronous pass of checks:
   * a column the source stops keeping (it keeps a few) no longer follows later writes.
   */
  column?(key: string): readonly (JsonValue | undefined)[];
  /** Bytes of the stored payload at `offset`, for hardware usage; computed from the payload when absent. */
  payloadBytes?(offset: number): number;
  pointId(offset: number): PointId;
  hasVector(offset: number, name: string): boolean;
  offsetOf(id: PointId): number | undefined;
  /** The index created on exactly this (canonical) key. */
  index(key: string): PayloadIndex | undefined;
}

/** The exact set of live offsets matching `filter`. */
export function selectMatching(filter: Filter, src: FilterSource): Bitset {
  return selectFilter(filter, src.liveOffsets(), src);
}

/**
 * A filter as a search applies it (Qdrant's query planning): `candidates` are the live offsets
 * meeting the conditions of `must` that id lookups and payload indexes answer; `rest`, when not
 * null, is what a candidate must also meet, checked on its payload, which `check` does for one
 * offset. A search asks `check` only of the candidates it reaches (or of all, when it scans them
 * all), rather than checking every point before it starts.
 */
export interface FilterPlan {
  candidates: Bitset;
  rest: Filter | null;
  check: PointCheck;
}

export function planFilter(filter: Filter, src: FilterSource): FilterPlan {
  const answered: Condition[] = [];
  const checked: Condition[] = [];
  for (const cond of mustConditions(filter.must ?? [])) (cost(cond, src) < PAYLOAD_CHECK ? answered : checked).push(cond);
  const candidates = selectFilter({ must: answered }, src.liveOffsets(), src);
  const { should, minShould, mustNot } = filter;
  const rest: Filter = {
    ...(checked.length ? { must: checked } : {}), ...(should ? { should } : {}), ...(minShould ? { minShould } : {}), ...(mustNot ? { mustNot } : {}),
  };
  return { candidates, rest: Object.keys(rest).length ? rest : null, check: new PointCheck(src, indexSemantics(src)) };
}

/**
 * `must` conditions with each sub-filter of `must` conditions only opened into them (it holds
 * exactly when they all do), so that indexes answer the conditions of filters combined with
 * allOf (a prefetch's filter under its parent's) as they answer a flat filter's.
 */
function mustConditions(conditions: readonly Condition[]): Condition[] {
  return conditions.flatMap((c) => (c.kind === 'filter' && !c.filter.should && !c.filter.minShould && !c.filter.mustNot ? mustConditions(c.filter.must ?? []) : [c]));
}

/** The members of `candidates` matching `filter`, as a new bitset. */
function selectFilter(filter: Filter, candidates: Bitset, src: FilterSource): Bitset {
  const result = candidates.clone();
  for (const cond of byCost(filter.must ?? [], src)) {
    if (result.isEmpty()) return result;
    result.and(selectCondition(cond, result, src));
  }
  if (filter.should) {
    const any = new Bitset(src.size);
    for (const cond of byCost(filter.should, src)) {
      const open = result.clone().andNot(any);
      if (open.isEmpty()) break;
      any.or(selectCondition(cond, open, src));
    }
    result.and(any);
  }
  if (filter.minShould) {
    const { conditions, minCount } = filter.minShould;
    const hits = new Uint32Array(src.size);
    for (const cond of conditions) selectCondition(cond, result, src).forEach((offset) => hits[offset]++);
    result.forEach((offset) => {
      if (hits[offset] < minCount) result.delete(offset);
    });
  }
  for (const cond of filter.mustNot ?? []) {
    if (result.isEmpty()) return result;
    result.andNot(selectCondition(cond, result, src));
  }
  return result;
}

/** Id lookups first, then conditions an index may answer, then payload checks. */
function byCost(conditions: Condition[], src: FilterSource): Condition[] {
  return [...conditions].sort((a, b) => cost(a, src) - cost(b, src));
}

/** The cost rank of a condition that only payload checks answer. */
const PAYLOAD_CHECK = 2;

function cost(c: Condition, src: FilterSource): number {
  if (c.kind === 'hasId') return 0;
  if ((c.kind === 'field' || c.kind === 'isEmpty' || c.kind === 'isNull') && src.index(c.key)) return 1;
  return PAYLOAD_CHECK;
}

/** The members of `candidates` matching `cond`. */
function selectCondition(cond: Condition, candidates: Bitset, src: FilterSource): Bitset {
  switch (cond.kind) {
    case 'hasId': {
      const out = new Bitset(src.size);
      for (const id of cond.ids) {
        const offset = src.offsetOf(id);
        if (offset !== undefined && candidates.has(offset)) out.add(offset);
      }
      return out;
    }
    case 'filter':
      return selectFilter(cond.filter, candidates, src);
    case 'field':
    case 'isEmpty':
    case 'isNull': {
      // A few candidates are cheaper to check one by one than the index's whole answer.
      if (candidates.count() * FEW_CANDIDATES < src.size) break;
      const answer = src.index(cond.key)?.select(cond, src.size);
      if (answer) {
        charge('payload_index_io_read', answer.count() * OFFSET_BYTES);
        return answer.and(candidates);
      }
      break;
    }
  }
  const check = new PointCheck(src, indexSemantics(src));
  const out = new Bitset(src.size);
  candidates.forEach((offset) => {
    if (check.condition(cond, offset)) out.add(offset);
  });
  check.chargeReads();
  return out;
}

/** Candidates below 1/FEW_CANDIDATES of all offsets are checked on payloads, indexes or not. */
const FEW_CANDIDATES = 32;

/** The match semantics of the source's indexes, for matchesPayload and payload checks. */
export function indexSemantics(src: Pick<FilterSource, 'index'>): SemanticsLookup {
  return (key) => {
    const index = src.index(key);
    return index && hasMatchSemantics(index) ? index : undefined;
  };
}
