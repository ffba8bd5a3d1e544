// An inverted map for exact-value indexes (keyword, integer lookup, bool, uuid, text tokens):
// each distinct value -> the set of offsets holding it, and each offset -> its distinct values.

import { Bitset } from '../../engine/bitset.js';
import type { FacetValue } from './types.js';

export class Postings<V extends FacetValue> {
  private readonly byValue = new Map<V, Set<number>>();
  private readonly byOffset = new Map<number, V[]>();

  /** Records an offset's values (duplicates ignored); an offset without values is not kept. */
  set(offset: number, values: Iterable<V>): void {
    this.delete(offset);
    const distinct = [...new Set(values)];
    if (distinct.length === 0) return;
    this.byOffset.set(offset, distinct);
    for (const v of distinct) {
      let set = this.byValue.get(v);
      if (!set) this.byValue.set(v, (set = new Set()));
      set.add(offset);
    }
  }

  delete(offset: number): void {
    const values = this.byOffset.get(offset);
    if (!values) return;
    this.byOffset.delete(offset);
    for (const v of values) {
      const set = this.byValue.get(v)!;
      set.delete(offset);
      if (set.size === 0) this.byValue.delete(v);
    }
  }

  /** Offsets holding at least one value. */
  get points(): number {
    return this.byOffset.size;
  }

  /** The distinct values of an offset. */
  valuesOf(offset: number): readonly V[] {
    return this.byOffset.get(offset) ?? [];
  }

  values(): IterableIterator<V> {
    return this.byValue.keys();
  }

  offsetsOf(value: V): ReadonlySet<number> {
    return this.byValue.get(value) ?? EMPTY;
  }

  /** Offsets holding any of `values`. */
  select(values: Iterable<V>, size: number): Bitset {
    const out = new Bitset(size);
    for (const v of values) {
      for (const offset of this.offsetsOf(v)) if (offset < size) out.add(offset);
    }
    return out;
  }

  /** Offsets whose distinct values pass `holds`. */
  selectWhere(holds: (values: readonly V[]) => boolean, size: number): Bitset {
    const out = new Bitset(size);
    for (const [offset, values] of this.byOffset) if (offset < size && holds(values)) out.add(offset);
    return out;
  }

  facet(allowed: Bitset | null): Map<V, number> {
    const counts = new Map<V, number>();
    for (const [v, offsets] of this.byValue) {
      let n = 0;
      if (allowed === null) n = offsets.size;
      else for (const offset of offsets) if (allowed.has(offset)) n++;
      if (n > 0) counts.set(v, n);
    }
    return counts;
  }
}

const EMPTY: ReadonlySet<number> = new Set();
