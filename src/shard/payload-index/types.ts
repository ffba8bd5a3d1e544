// What every payload index offers the filter planner, and the extra abilities some have
// (facet counts, ordered iteration for order_by, match semantics of their own).

import type { Bitset } from '../../engine/bitset.js';
import type { Payload } from '../../model.js';
import type { MatchSemantics } from '../filter/field-check.js';
import type { FieldCondition, IsEmptyCondition, IsNullCondition } from '../filter/types.js';
import type { IndexParams } from './schema.js';

export type IndexableCondition = FieldCondition | IsEmptyCondition | IsNullCondition;

export interface PayloadIndex {
  /** Canonical key (see formatJsonPath); conditions find their index by it. */
  readonly key: string;
  readonly params: IndexParams;
  /** Indexes a point's payload; replaces what the offset had. Call it for every live point. */
  add(offset: number, payload: Payload): void;
  remove(offset: number): void;
  /** Points holding at least one value of the index's type. */
  indexedPoints(): number;
  /**
   * The exact set of indexed offsets (among 0..size-1) matching `condition`, as payload checks
   * would find it; may also hold offsets never added (callers intersect with live points).
   * Undefined when this index cannot answer it.
   */
  select(condition: IndexableCondition, size: number): Bitset | undefined;
}

/** A value facets count: integers past 2^53 are bigints, as in payloads (src/json/integers.ts). */
export type FacetValue = string | number | bigint | boolean;

export interface FacetIndex extends PayloadIndex {
  /** Per distinct value, how many points (of `allowed`, or all) hold it. */
  facet(allowed: Bitset | null): Map<FacetValue, number>;
}

export type Direction = 'asc' | 'desc';

/** One (value, point) pair; a point with several values appears once per value. */
export interface OrderedEntry {
  /** An integer index's integers past 2^53 are bigints, exact as Qdrant's i64 order values. */
  value: number | bigint;
  offset: number;
}

export interface OrderedIndex extends PayloadIndex {
  /**
   * Entries by value (ties by offset), from `startFrom` on (inclusive: at or above it ascending,
   * at or below it descending). Datetime values are microseconds since the epoch.
   */
  ordered(direction: Direction, startFrom?: number | bigint): Iterable<OrderedEntry>;
}

/** An index whose kind defines how some matches compare (text, uuid). */
export interface SemanticIndex extends PayloadIndex, MatchSemantics {}

export function isFacetIndex(index: PayloadIndex): index is FacetIndex {
  return 'facet' in index;
}

export function isOrderedIndex(index: PayloadIndex): index is OrderedIndex {
  return 'ordered' in index;
}

export function hasMatchSemantics(index: PayloadIndex): index is SemanticIndex {
  return 'matchValues' in index;
}
