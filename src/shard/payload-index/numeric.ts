// Indexes ordered by a number: float (JSON numbers; an integer past 2^53 as the double it rounds
// to, as ranges compare it), datetime (strings Qdrant reads as datetimes, as microseconds) and,
// extended in integer.ts, integer. They serve range conditions of their kind and ordered
// iteration for order_by.

import type { Bitset } from '../../engine/bitset.js';
import type { JsonValue } from '../../model.js';
import { parseDatetime } from '../filter/datetime.js';
import { numberOf } from '../filter/field-check.js';
import type { Range } from '../filter/types.js';
import { BaseIndex, type SoleTest } from './base.js';
import type { DatetimeIndexParams, FloatIndexParams, IntegerIndexParams } from './schema.js';
import { SortedValues } from './sorted-values.js';
import type { Direction, OrderedEntry, OrderedIndex } from './types.js';

export class NumericIndex extends BaseIndex implements OrderedIndex {
  protected readonly sorted = new SortedValues();
  private readonly holders = new Set<number>();

  constructor(
    key: string,
    params: FloatIndexParams | DatetimeIndexParams | IntegerIndexParams,
    private readonly rangeKind: Range['kind'],
    /** The index's number for one element, if it has one. */
    private readonly numberOf: (e: JsonValue) => number | undefined,
  ) {
    super(key, params);
  }

  indexedPoints(): number {
    return this.holders.size;
  }

  ordered(direction: Direction, startFrom?: number | bigint): Iterable<OrderedEntry> {
    return this.sorted.ordered(direction, startFrom === undefined ? undefined : Number(startFrom));
  }

  protected insert(offset: number, elements: JsonValue[]): void {
    const numbers: number[] = [];
    for (const e of elements) {
      const n = this.numberOf(e);
      if (n !== undefined) numbers.push(n);
    }
    if (numbers.length === 0) return;
    this.sorted.set(offset, numbers);
    this.holders.add(offset);
  }

  protected erase(offset: number): void {
    this.sorted.delete(offset);
    this.holders.delete(offset);
  }

  protected selectValues(test: SoleTest, size: number): Bitset | undefined {
    if (!('range' in test) || test.range.kind !== this.rangeKind) return undefined;
    return this.sorted.select(test.range, size);
  }
}

function datetimeOf(e: JsonValue): number | undefined {
  return typeof e === 'string' ? parseDatetime(e) : undefined;
}

export function floatIndex(key: string, params: FloatIndexParams): NumericIndex {
  return new NumericIndex(key, params, 'number', numberOf);
}

export function datetimeIndex(key: string, params: DatetimeIndexParams): NumericIndex {
  return new NumericIndex(key, params, 'datetime', datetimeOf);
}
