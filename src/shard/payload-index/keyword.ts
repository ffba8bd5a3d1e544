// Keyword index: string values -> points. Serves match value/any/except on strings and prefix
// (over the distinct values kept sorted), and facet counts.

import type { Bitset } from '../../engine/bitset.js';
import type { JsonValue } from '../../model.js';
import { BaseIndex, type SoleTest } from './base.js';
import { Postings } from './postings.js';
import type { KeywordIndexParams } from './schema.js';
import type { FacetIndex, FacetValue } from './types.js';

export class KeywordIndex extends BaseIndex implements FacetIndex {
  private readonly strings = new Postings<string>();
  /** Points with a value that is neither a string nor null: `except` on strings always passes them. */
  private readonly others = new Set<number>();
  private sorted: string[] | null = null;

  constructor(key: string, params: KeywordIndexParams) {
    super(key, params);
  }

  indexedPoints(): number {
    return this.strings.points;
  }

  facet(allowed: Bitset | null): Map<FacetValue, number> {
    return this.strings.facet(allowed);
  }

  protected insert(offset: number, elements: JsonValue[]): void {
    const strings = elements.filter((e): e is string => typeof e === 'string');
    this.strings.set(offset, strings);
    if (elements.some((e) => e !== null && typeof e !== 'string')) this.others.add(offset);
    this.sorted = null;
  }

  protected erase(offset: number): void {
    this.strings.delete(offset);
    this.others.delete(offset);
    this.sorted = null;
  }

  protected selectValues(test: SoleTest, size: number): Bitset | undefined {
    if (!('match' in test)) return undefined;
    const match = test.match;
    switch (match.kind) {
      case 'value':
        return typeof match.value === 'string' ? this.strings.select([match.value], size) : undefined;
      case 'any':
        return match.list.type === 'strings' ? this.strings.select(match.list.values, size) : undefined;
      case 'except': {
        if (match.list.type !== 'strings') return undefined;
        const listed = match.list.values;
        const out = this.strings.selectWhere((values) => values.some((v) => !listed.has(v)), size);
        for (const offset of this.others) if (offset < size) out.add(offset);
        return out;
      }
      case 'prefix':
        return this.strings.select(this.withPrefix(match.prefix), size);
      default:
        return undefined;
    }
  }

  /** Distinct values starting with `prefix`: a contiguous run of the sorted values. */
  private *withPrefix(prefix: string): Iterable<string> {
    this.sorted ??= [...this.strings.values()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const sorted = this.sorted;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid] < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < sorted.length && sorted[i].startsWith(prefix); i++) yield sorted[i];
  }
}
