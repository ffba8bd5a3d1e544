// Integer index: integer values -> points (match value/any/except, facet), plus the sorted numbers
// of numeric.ts for ranges. Ranges look at every number, as payload checks do, so a stray float
// still matches; order_by and facets see integers only, as Qdrant's integer index holds.

import type { Bitset } from '../../engine/bitset.js';
import type { JsonValue } from '../../model.js';
import { isInteger } from '../filter/field-check.js';
import type { SoleTest } from './base.js';
import { NumericIndex, numberOf } from './numeric.js';
import { Postings } from './postings.js';
import type { IntegerIndexParams } from './schema.js';
import type { Direction, FacetIndex, FacetValue, OrderedEntry } from './types.js';

export class IntegerIndex extends NumericIndex implements FacetIndex {
  private readonly integers = new Postings<number>();
  /** Points with a value that is neither an integer nor null: `except` always passes them. */
  private readonly others = new Set<number>();

  constructor(key: string, private readonly integerParams: IntegerIndexParams) {
    super(key, integerParams, 'number', numberOf);
  }

  override indexedPoints(): number {
    return this.integers.points;
  }

  facet(allowed: Bitset | null): Map<FacetValue, number> {
    return this.integers.facet(allowed);
  }

  override *ordered(direction: Direction, startFrom?: number): Iterable<OrderedEntry> {
    for (const entry of super.ordered(direction, startFrom)) if (Number.isInteger(entry.value)) yield entry;
  }

  protected override insert(offset: number, elements: JsonValue[]): void {
    super.insert(offset, elements);
    this.integers.set(offset, elements.filter(isInteger));
    if (elements.some((e) => e !== null && !isInteger(e))) this.others.add(offset);
  }

  protected override erase(offset: number): void {
    super.erase(offset);
    this.integers.delete(offset);
    this.others.delete(offset);
  }

  protected override selectValues(test: SoleTest, size: number): Bitset | undefined {
    if ('range' in test) return this.integerParams.range === false ? undefined : super.selectValues(test, size);
    if (!('match' in test) || this.integerParams.lookup === false) return undefined;
    const match = test.match;
    switch (match.kind) {
      case 'value':
        return typeof match.value === 'number' ? this.integers.select([match.value], size) : undefined;
      case 'any':
        return match.list.type === 'integers' ? this.integers.select(match.list.values, size) : undefined;
      case 'except': {
        if (match.list.type !== 'integers') return undefined;
        const listed = match.list.values;
        const out = this.integers.selectWhere((values) => values.some((v) => !listed.has(v)), size);
        for (const offset of this.others) if (offset < size) out.add(offset);
        return out;
      }
      default:
        return undefined;
    }
  }
}
