// Scroll's order_by: a key with a range-capable payload index, a direction, a start value.

import { missingRangeIndexForOrderBy } from '../../messages.js';
import type { WireOrderBy } from '../../api/types.js';
import { BadInput } from '../../errors.js';
import { parseDatetime } from '../../shard/filter/index.js';
import type { IndexSpec } from '../../shard/shard.js';
import type { OrderBy } from '../../shard/reads.js';

const ORDERED_TYPES = new Set(['integer', 'float', 'datetime']);

function indexType(spec: IndexSpec): string {
  return typeof spec.schema === 'string' ? spec.schema : spec.schema.type;
}

export function orderByOf(wire: string | WireOrderBy | null | undefined, indexes: readonly IndexSpec[]): OrderBy | null {
  if (wire === null || wire === undefined) return null;
  const spec = typeof wire === 'string' ? { key: wire } : wire;
  const index = indexes.find((i) => i.key === spec.key);
  if (!index || !ORDERED_TYPES.has(indexType(index))) throw missingRangeIndexForOrderBy(spec.key);
  let startFrom: number | null = null;
  if (typeof spec.start_from === 'number') startFrom = spec.start_from;
  else if (typeof spec.start_from === 'string') {
    const micros = parseDatetime(spec.start_from);
    if (micros === undefined) throw new BadInput(`Invalid datetime in order_by.start_from: ${spec.start_from}`);
    startFrom = micros;
  }
  return { key: spec.key, direction: spec.direction ?? 'asc', startFrom };
}
