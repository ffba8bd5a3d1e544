// Integer index: integer values -> points (match value/any/except, facet), plus the sorted numbers
// of numeric.ts for ranges. Ranges look at every number, as payload checks do, so a stray float
// still matches; order_by and facets see integers only (i64, as Qdrant's integer index holds),
// exactly: an integer past 2^53 is a bigint here as in payloads (src/json/integers.ts), and where
// the sorted doubles cannot tell such integers apart, their exact values order them.

import type { Bitset } from '../../engine/bitset.js';
import { compareNumeric, isI64 } from '../../json/integers.js';
import type { JsonValue } from '../../model.js';
import { numberOf } from '../filter/field-check.js';
import type { SoleTest } from './base.js';
import { NumericIndex } from './numeric.js';
import { Postings } from './postings.js';
import type { IntegerIndexParams } from './schema.js';
import type { Direction, FacetIndex, FacetValue, OrderedEntry } from './types.js';

export class IntegerIndex extends NumericIndex implements FacetIndex {
  private readonly integers = new Postings<number | bigint>();
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

  /**
   * The integers in order. Past 2^53 the sorted doubles come in runs of one double for several
   * integers (and for u64 values an i64 does not hold): each run is replaced by the exact integers
   * of its points that round to it, in order. Rounding keeps order, so the run of any integer at
   * or past `startFrom` starts at or past the double of `startFrom`.
   */
  override *ordered(direction: Direction, startFrom?: number | bigint): Iterable<OrderedEntry> {
    const sign = direction === 'asc' ? 1 : -1;
    const reached = (value: number | bigint) => startFrom === undefined || sign * compareNumeric(value, startFrom) >= 0;
    let run: { value: number; offsets: Set<number> } | null = null;
    for (const entry of super.ordered(direction, startFrom)) {
      if (run !== null && entry.value !== run.value) {
        yield* this.exactRun(run.value, run.offsets, sign, reached);
        run = null;
      }
      if (Number.isSafeInteger(entry.value)) yield entry;
      else if (Number.isInteger(entry.value)) (run ??= { value: entry.value as number, offsets: new Set() }).offsets.add(entry.offset);
    }
    if (run !== null) yield* this.exactRun(run.value, run.offsets, sign, reached);
  }

  /** The (integer, point) pairs of `offsets` whose integer rounds to the double `value`, in the direction's order. */
  private exactRun(value: number, offsets: Set<number>, sign: number, reached: (value: number | bigint) => boolean): OrderedEntry[] {
    const pairs: OrderedEntry[] = [];
    for (const offset of offsets) {
      for (const v of this.integers.valuesOf(offset)) {
        if (Number(v) === value && reached(v)) pairs.push({ value: v, offset });
      }
    }
    return pairs.sort((a, b) => sign * (compareNumeric(a.value, b.value) || a.offset - b.offset));
  }

  protected override insert(offset: number, elements: JsonValue[]): void {
    super.insert(offset, elements);
    this.integers.set(offset, elements.filter(isI64));
    if (elements.some((e) => e !== null && !isI64(e))) this.others.add(offset);
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
        return isI64(match.value) ? this.integers.select([match.value], size) : undefined;
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
