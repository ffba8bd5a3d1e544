// (value, offset) pairs sorted by value then offset, in two parallel typed arrays: ranges by
// binary search, and ordered iteration for order_by. Writes are buffered and merged in on the
// next read, in one pass (O(n + k log k) for k changes), so bulk loads do not re-sort per point.

import { Bitset } from '../../engine/bitset.js';
import { inBounds } from '../filter/field-check.js';
import type { Bounds } from '../filter/types.js';
import type { Direction } from './types.js';

/** One (value, offset) pair, by the double value. */
export interface SortedEntry {
  value: number;
  offset: number;
}

export class SortedValues {
  private values = new Float64Array(0);
  private offsets = new Uint32Array(0);
  /** Values of offsets set since the last merge. */
  private readonly pending = new Map<number, number[]>();
  /** Offsets whose merged entries are outdated. */
  private readonly stale = new Set<number>();

  set(offset: number, values: number[]): void {
    this.delete(offset);
    if (values.length > 0) this.pending.set(offset, values);
  }

  delete(offset: number): void {
    this.pending.delete(offset);
    this.stale.add(offset);
  }

  /** Offsets with a value within `bounds`. */
  select(bounds: Bounds, size: number): Bitset {
    this.merge();
    const out = new Bitset(size);
    const { values, offsets } = this;
    // Start at the first value that can pass the lower bound; stop past the upper bound.
    const low = bounds.gte ?? bounds.gt;
    for (let i = low === undefined ? 0 : this.lowerBound(low); i < values.length; i++) {
      const v = values[i];
      if ((bounds.lt !== undefined && v >= bounds.lt) || (bounds.lte !== undefined && v > bounds.lte)) break;
      if (inBounds(bounds, v) && offsets[i] < size) out.add(offsets[i]);
    }
    return out;
  }

  *ordered(direction: Direction, startFrom?: number): Iterable<SortedEntry> {
    this.merge();
    const { values, offsets } = this;
    if (direction === 'asc') {
      for (let i = startFrom === undefined ? 0 : this.lowerBound(startFrom); i < values.length; i++) {
        yield { value: values[i], offset: offsets[i] };
      }
    } else {
      for (let i = (startFrom === undefined ? values.length : this.upperBound(startFrom)) - 1; i >= 0; i--) {
        yield { value: values[i], offset: offsets[i] };
      }
    }
  }

  /** First index whose value is >= x. */
  private lowerBound(x: number): number {
    let lo = 0;
    let hi = this.values.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.values[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose value is > x. */
  private upperBound(x: number): number {
    let lo = 0;
    let hi = this.values.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.values[mid] <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private merge(): void {
    if (this.pending.size === 0 && this.stale.size === 0) return;
    const added: SortedEntry[] = [];
    for (const [offset, values] of this.pending) for (const value of values) added.push({ value, offset });
    added.sort(compareEntries);
    let kept = 0;
    for (let i = 0; i < this.offsets.length; i++) if (!this.stale.has(this.offsets[i])) kept++;
    const values = new Float64Array(kept + added.length);
    const offsets = new Uint32Array(kept + added.length);
    let i = 0;
    let j = 0;
    let out = 0;
    while (i < this.values.length || j < added.length) {
      if (i < this.values.length && this.stale.has(this.offsets[i])) {
        i++;
        continue;
      }
      const takeOld = j >= added.length
        || (i < this.values.length && compareEntries({ value: this.values[i], offset: this.offsets[i] }, added[j]) <= 0);
      if (takeOld) {
        values[out] = this.values[i];
        offsets[out++] = this.offsets[i++];
      } else {
        values[out] = added[j].value;
        offsets[out++] = added[j++].offset;
      }
    }
    this.values = values;
    this.offsets = offsets;
    this.pending.clear();
    this.stale.clear();
  }
}

function compareEntries(a: SortedEntry, b: SortedEntry): number {
  return a.value - b.value || a.offset - b.offset;
}
