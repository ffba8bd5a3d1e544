// Query trees run inside a shard worker over that one shard: the whole tree in one task, ranked
// and paged exactly as the main thread ranks and pages what one shard answers.

import type { RankedList } from './fusion.js';
import { checkDeadline } from './deadline.js';
import { evaluateQueries, type QueryBackend, type ShardQuery } from './query-plan.js';
import { orderByOf } from './order-by.js';
import { compareOrdered, samplePoints, scrollPoints } from './reads.js';
import { mergeHits, ranksLargerFirst, searchShard } from './search.js';
import type { Shard } from './shard.js';
import { vectorNameNotFound } from '../messages.js';
import { formulaHits } from './formula-rescore.js';
import { maximalMarginalRelevance } from './mmr.js';

function backendOf(shard: Shard): QueryBackend {
  const distance = (using: string) => {
    const index = shard.vectorIndex(using);
    if (index) return index.config.distance;
    if (shard.sparseIndex(using)) return null;
    throw vectorNameNotFound(using);
  };
  return {
    distance,
    storedVectors: async (ids, using) => new Map(ids.flatMap((id) => {
      const record = shard.record(id);
      return record ? [[id, record.vectors[using]] as const] : [];
    })),
    search: async (searches) => searches.map(({ spec, limit, offset }) => {
      checkDeadline();
      const hits = searchShard(shard, { ...spec, top: offset + limit });
      return mergeHits([hits], ranksLargerFirst(spec.query, distance(spec.using))).slice(offset, offset + limit);
    }),
    read: async (order, filter, limit, shape) => {
      if (order.kind === 'sample') return samplePoints(shard, filter, limit, shape).points;
      if (order.kind === 'id') return scrollPoints(shard, filter, null, limit, shape, null);
      // One more than needed, ranked as shards' pages merge, so ties fall as they do on the main thread.
      const orderBy = orderByOf(order.orderBy, shard.describe().indexes);
      const page = scrollPoints(shard, filter, null, limit + 1, shape, orderBy);
      return page.sort(compareOrdered(orderBy.direction)).slice(0, limit);
    },
    formula: async (step, prefetches, limit) => formulaHits(shard, step, prefetches, limit),
    mmr: async (candidates, using, lambda, limit) => maximalMarginalRelevance(candidates, using, distance(using), lambda, limit),
  };
}

export function runShardQueries(shard: Shard, queries: ShardQuery[]): Promise<RankedList[]> {
  return evaluateQueries(queries, backendOf(shard));
}
