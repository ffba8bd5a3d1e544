// Checking conditions on the points of a FilterSource one offset at a time, as Qdrant's filter
// context checks the points a search reaches. Nothing is allocated per point: one scope object is
// pointed at each offset in turn (a closure or scope object per point costs more than the check
// of a simple condition), and the payload bytes read are summed and charged once.

import type { Payload, PointId } from '../../model.js';
import { charge, measuring, storedPayloadBytes } from '../hardware.js';
import { pollDeadline } from '../deadline.js';
import { checkCondition, checkFilter, type PointScope, type SemanticsLookup } from './evaluate.js';
import { checkOneValue } from './field-check.js';
import { ownValue, type JsonPath } from './json-path.js';
import type { FilterSource } from './select.js';
import type { Condition, FieldCondition, Filter } from './types.js';

/** Read only: a point without a payload is checked against this. */
const NO_PAYLOAD: Payload = Object.freeze({}) as Payload;
const ROOT: JsonPath = [];

/**
 * `semantics` remembering its last answer: a filter checked point after point asks about the same
 * few keys, each the same string, so one comparison mostly replaces a lookup of the indexes.
 */
function lastKeyCached(semantics: SemanticsLookup): SemanticsLookup {
  let lastKey: string | undefined;
  let last: ReturnType<SemanticsLookup>;
  return (key) => {
    if (key !== lastKey) {
      last = semantics(key);
      lastKey = key;
    }
    return last;
  };
}

/** The conditions of a filter of `must` field conditions on top-level keys without index semantics; null for any other filter. */
function topLevelFields(filter: Filter, semantics: SemanticsLookup): FieldCondition[] | null {
  if (filter.should || filter.minShould || filter.mustNot || !filter.must) return null;
  const fields: FieldCondition[] = [];
  for (const c of filter.must) {
    if (c.kind !== 'field' || c.path.length !== 1 || !('key' in c.path[0]) || c.path[0].key !== c.key) return null;
    if (c.match && semantics(c.key)) return null;
    fields.push(c);
  }
  return fields;
}

/** The scope of whichever offset it was last pointed at. */
class OffsetScope implements PointScope {
  payload: Payload = NO_PAYLOAD;
  id: PointId = 0;
  readonly prefix = ROOT;
  private offset = 0;

  constructor(private readonly src: FilterSource, readonly semantics: SemanticsLookup) {}

  at(offset: number): this {
    this.offset = offset;
    this.payload = this.src.payload(offset) ?? NO_PAYLOAD;
    this.id = this.src.pointId(offset);
    return this;
  }

  hasVector(name: string): boolean {
    return this.src.hasVector(this.offset, name);
  }
}

/**
 * Checks offsets of `src` against a filter or a single condition, counting each payload read
 * (Qdrant's payload_io_read of a condition check); chargeReads() hands the sum to the running
 * task's hardware usage.
 */
export class PointCheck {
  private readonly scope: OffsetScope;
  private readonly sizes: ((offset: number) => number) | null;
  private read = 0;
  /** Points checked so far. */
  checked = 0;

  constructor(private readonly src: FilterSource, semantics: SemanticsLookup) {
    this.scope = new OffsetScope(src, lastKeyCached(semantics));
    this.sizes = measuring() ? (offset) => src.payloadBytes?.(offset) ?? storedPayloadBytes(src.payload(offset) ?? {}) : null;
  }

  /** Whether the point at `offset` matches `filter`. */
  filter(filter: Filter, offset: number): boolean {
    this.reading(offset);
    return checkFilter(filter, this.scope.at(offset));
  }

  /**
   * filter() for one filter, point after point. The common filter left to check, conditions on
   * top-level keys that no index lends semantics to, all of which must hold, reads each key
   * straight from the source's column of it, or from the payload (checkCondition's answer
   * without its walk).
   */
  matcher(filter: Filter): (offset: number) => boolean {
    const fields = topLevelFields(filter, this.scope.semantics);
    if (!fields) return (offset) => this.filter(filter, offset);
    const columns = fields.map((cond) => this.src.column?.(cond.key));
    return (offset) => {
      this.reading(offset);
      for (let i = 0; i < fields.length; i++) {
        const column = columns[i];
        const value = column ? column[offset] : ownValue(this.src.payload(offset) ?? NO_PAYLOAD, fields[i].key);
        if (!checkOneValue(fields[i], value)) return false;
      }
      return true;
    };
  }

  /** Whether the point at `offset` matches `cond`. */
  condition(cond: Condition, offset: number): boolean {
    this.reading(offset);
    return checkCondition(cond, this.scope.at(offset));
  }

  /** Charges the payload bytes read since the last call. */
  chargeReads(): void {
    if (this.read) charge('payload_io_read', this.read);
    this.read = 0;
  }

  private reading(offset: number): void {
    pollDeadline();
    this.checked++;
    if (this.sizes) this.read += this.sizes(offset);
  }
}
