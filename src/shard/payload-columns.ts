// Top-level payload values by offset, one dense array per key, for filters that check a key on
// every point of a shard (a condition no payload index answers). Reading the key from each
// point's payload object touches one scattered heap object per point: about 80-100 ns a check in
// a busy shard worker (25,000 points a query), against a few ns from a dense array. A column is
// made the first time a check asks for its key and kept up to date by every write after that;
// past MAX_COLUMNS keys, the one asked for least recently is dropped (each costs 8 bytes a point).

import type { JsonValue, Payload } from '../model.js';
import { ownValue } from './filter/json-path.js';

/** Columns kept at once. */
const MAX_COLUMNS = 4;

export type PayloadColumn = readonly (JsonValue | undefined)[];

export class PayloadColumns {
  /** By key, in the order they were last asked for (a Map iterates in insertion order). */
  private readonly columns = new Map<string, (JsonValue | undefined)[]>();

  /** `payloads` is the shard's own array of payloads by offset (undefined: no point there). */
  constructor(private readonly payloads: readonly (Payload | undefined)[]) {}

  /** The value of top-level `key` at each offset (undefined where the key or the point is missing). */
  column(key: string): PayloadColumn {
    const kept = this.columns.get(key);
    if (kept) {
      this.columns.delete(key);
      this.columns.set(key, kept);
      return kept;
    }
    const column: (JsonValue | undefined)[] = [];
    // push() keeps the array packed (no holes), which keeps reads from it fast.
    for (const payload of this.payloads) column.push(payload === undefined ? undefined : ownValue(payload, key));
    this.columns.set(key, column);
    if (this.columns.size > MAX_COLUMNS) this.columns.delete(this.columns.keys().next().value!);
    return column;
  }

  /** Records the payload now at `offset` (undefined when its point is removed). */
  set(offset: number, payload: Payload | undefined): void {
    for (const [key, column] of this.columns) {
      const value = payload === undefined ? undefined : ownValue(payload, key);
      // Offsets past the end (a shard opening its stored points may place them out of order)
      // leave undefined below them, pushed rather than holes.
      while (column.length < offset) column.push(undefined);
      column[offset] = value;
    }
  }
}
