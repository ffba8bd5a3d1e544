// Distance matrix over a random sample (Qdrant's search/matrix): a uniform sample of the points
// matching the filter (and holding the vector) is drawn and listed by id, then each sampled point's
// nearest neighbours among the other sampled points are found by exact search, all searches in one
// batch (one task per shard).

import type { PointId } from '../model.js';
import type { Filter } from '../shard/filter/index.js';
import type { ScoredView } from '../shard/search.js';
import { queryVectorOf } from '../shard/query-objective.js';
import { compareIds } from '../shard/shard.js';
import type { QueryScope } from './query-planner.js';
import type { ShardKeySelector } from './shard-keys.js';

export interface MatrixRequest {
  shardKey: ShardKeySelector | null;
  filter: Filter | null;
  using: string;
  /** How many points to sample. */
  sample: number;
  /** Neighbours per sampled point. */
  limit: number;
}

/** The sampled ids, and each one's nearest other sampled points, best first. */
export interface Matrix {
  ids: PointId[];
  neighbours: ScoredView[][];
}

export async function searchMatrix(scope: QueryScope, request: MatrixRequest): Promise<Matrix> {
  const { using } = request;
  const hasVector: Filter = { must: [{ kind: 'hasVector', name: using }] };
  const filter: Filter = request.filter ? { must: [{ kind: 'filter', filter: request.filter }, ...hasVector.must!] } : hasVector;
  const reader = scope.reader(request.shardKey);
  const drawn = await reader.sample(filter, request.sample, { withPayload: { all: false }, withVector: [using] });
  // As in Qdrant: fewer than two points make no matrix, and the sample is listed by id.
  if (drawn.length < 2) return { ids: [], neighbours: [] };
  const points = drawn.sort((a, b) => compareIds(a.id, b.id));
  const ids = points.map((p) => p.id);
  const searches = points.map((p) => ({
    spec: {
      using,
      query: { kind: 'nearest' as const, vector: queryVectorOf(p.vectors![using]) },
      filter: { must: [{ kind: 'hasId' as const, ids: new Set(ids) }], mustNot: [{ kind: 'hasId' as const, ids: new Set([p.id]) }] },
      params: { hnswEf: null, exact: true, quantization: null, indexedOnly: false, idfCorpus: null },
      scoreThreshold: null,
      withPayload: { all: false },
      withVector: false,
    },
    limit: request.limit,
    offset: 0,
  }));
  return { ids, neighbours: await reader.search(searches) };
}
