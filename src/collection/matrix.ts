// Distance matrix over a random sample (Qdrant's search/matrix): a sample of the points matching
// the filter (and holding the vector) is drawn, then each sampled point's nearest neighbours among
// the other sampled points are found by exact search, all searches in one batch (one task per shard).

import type { PointId } from '../model.js';
import type { Filter } from '../shard/filter/index.js';
import type { ScoredView } from '../shard/search.js';
import { queryVectorOf } from '../shard/query-objective.js';
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

const ALL = 2 ** 31;

/** Fisher-Yates on a copy, keeping the first `n`. */
function sampleOf<T>(items: T[], n: number): T[] {
  const copy = [...items];
  for (let i = 0; i < Math.min(n, copy.length); i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, n);
}

export async function searchMatrix(scope: QueryScope, request: MatrixRequest): Promise<Matrix> {
  const { using } = request;
  const hasVector: Filter = { must: [{ kind: 'hasVector', name: using }] };
  const filter: Filter = request.filter ? { must: [{ kind: 'filter', filter: request.filter }, ...hasVector.must!] } : hasVector;
  const reader = scope.reader(request.shardKey);
  const all = await reader.scroll(filter, null, ALL, { withPayload: { all: false }, withVector: false }, null);
  const ids = sampleOf(all.points.map((p) => p.id), request.sample);
  const points = await reader.retrieve(ids, { withPayload: { all: false }, withVector: [using] });
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
  return { ids: points.map((p) => p.id), neighbours: await reader.search(searches) };
}
