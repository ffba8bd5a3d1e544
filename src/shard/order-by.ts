// Scroll's and the query API's order_by: a key with a range-capable payload index, a direction,
// a start value; checked against the indexes where it runs (a collection's, before any shard is
// asked, or the shard's own when a whole query tree runs there).

import { BadInput } from '../errors.js';
import { missingRangeIndexForOrderBy } from '../messages.js';
import { parseDatetime } from './filter/index.js';
import type { OrderBy } from './reads.js';
import type { IndexSpec } from './shard.js';

/** order_by as asked: the start may be a number (an integer past 2^53 a bigint) or a datetime (RFC 3339 text). */
export interface OrderByRequest {
  key: string;
  direction: OrderBy['direction'] | null;
  startFrom: number | bigint | string | null;
}

const ORDERED_TYPES = new Set(['integer', 'float', 'datetime']);

function indexType(spec: IndexSpec): string {
  return typeof spec.schema === 'string' ? spec.schema : spec.schema.type;
}

export function orderByOf(request: OrderByRequest, indexes: readonly IndexSpec[]): OrderBy {
  const index = indexes.find((i) => i.key === request.key);
  if (!index || !ORDERED_TYPES.has(indexType(index))) throw missingRangeIndexForOrderBy(request.key);
  let startFrom: number | bigint | null = null;
  if (typeof request.startFrom === 'string') {
    const micros = parseDatetime(request.startFrom);
    if (micros === undefined) throw new BadInput(`Invalid datetime in order_by.start_from: ${request.startFrom}`);
    startFrom = micros;
  } else {
    startFrom = request.startFrom;
  }
  return { key: request.key, direction: request.direction ?? 'asc', startFrom };
}
