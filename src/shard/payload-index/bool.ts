// Bool index: true -> points, false -> points. Serves match on a boolean value, and facets.

import type { Bitset } from '../../engine/bitset.js';
import type { JsonValue } from '../../model.js';
import { BaseIndex, type SoleTest } from './base.js';
import { Postings } from './postings.js';
import type { BoolIndexParams } from './schema.js';
import type { FacetIndex, FacetValue } from './types.js';

export class BoolIndex extends BaseIndex implements FacetIndex {
  private readonly bools = new Postings<boolean>();

  constructor(key: string, params: BoolIndexParams) {
    super(key, params);
  }

  indexedPoints(): number {
    return this.bools.points;
  }

  facet(allowed: Bitset | null): Map<FacetValue, number> {
    return this.bools.facet(allowed);
  }

  protected insert(offset: number, elements: JsonValue[]): void {
    this.bools.set(offset, elements.filter((e): e is boolean => typeof e === 'boolean'));
  }

  protected erase(offset: number): void {
    this.bools.delete(offset);
  }

  protected selectValues(test: SoleTest, size: number): Bitset | undefined {
    if (!('match' in test) || test.match.kind !== 'value' || typeof test.match.value !== 'boolean') return undefined;
    return this.bools.select([test.match.value], size);
  }
}
