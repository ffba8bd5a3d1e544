// Selecting every live offset that matches a filter, with bitset algebra: `must` narrows the
// candidates condition by condition, `should` unites, `mustNot` subtracts. A condition is
// answered by the payload index on its key when that index can (and the candidates are not
// few); otherwise by checking the payloads of the current candidates only. Id conditions go
// through the id map. Results never depend on whether an index answered: the indexes that
// define how a match compares (full-text tokenization, UUID comparison) lend that rule to the
// payload checks too; such a key still matches differently once it has no such index.

import { Bitset } from '../../engine/bitset.js';
import type { Payload, PointId } from '../../model.js';
import { hasMatchSemantics, type PayloadIndex } from '../payload-index/types.js';
import { checkCondition, type PointScope, type SemanticsLookup } from './evaluate.js';
import type { Condition, Filter } from './types.js';
import { pollDeadline } from '../deadline.js';
import { charge, measuring, OFFSET_BYTES, storedPayloadBytes } from '../hardware.js';

export interface FilterSource {
  /** Offsets are 0..size-1. */
  readonly size: number;
  /** Deleted or empty offsets never match. */
  isLive(offset: number): boolean;
  payload(offset: number): Payload | undefined;
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
  const live = new Bitset(src.size);
  for (let offset = 0; offset < src.size; offset++) if (src.isLive(offset)) live.add(offset);
  return selectFilter(filter, live, src);
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
  const cost = (c: Condition): number => {
    if (c.kind === 'hasId') return 0;
    if ((c.kind === 'field' || c.kind === 'isEmpty' || c.kind === 'isNull') && src.index(c.key)) return 1;
    return 2;
  };
  return [...conditions].sort((a, b) => cost(a) - cost(b));
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
  const semantics = indexSemantics(src);
  const out = new Bitset(src.size);
  // Each payload checked is read (counted in one sum: this loop is a filter's hot path).
  const sizeOf = measuring() ? (offset: number) => src.payloadBytes?.(offset) ?? storedPayloadBytes(src.payload(offset) ?? {}) : null;
  let read = 0;
  candidates.forEach((offset) => {
    pollDeadline();
    if (sizeOf) read += sizeOf(offset);
    if (checkCondition(cond, scopeOf(offset, src, semantics))) out.add(offset);
  });
  if (read) charge('payload_io_read', read);
  return out;
}

/** Candidates below 1/FEW_CANDIDATES of all offsets are checked on payloads, indexes or not. */
const FEW_CANDIDATES = 32;

function scopeOf(offset: number, src: FilterSource, semantics: SemanticsLookup): PointScope {
  return {
    payload: src.payload(offset) ?? {},
    id: src.pointId(offset),
    hasVector: (name) => src.hasVector(offset, name),
    prefix: [],
    semantics,
  };
}

/** The match semantics of the source's indexes, for matchesPayload and payload checks. */
export function indexSemantics(src: Pick<FilterSource, 'index'>): SemanticsLookup {
  return (key) => {
    const index = src.index(key);
    return index && hasMatchSemantics(index) ? index : undefined;
  };
}
