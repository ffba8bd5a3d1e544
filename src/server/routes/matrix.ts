// Distance matrix over a random sample: POST .../points/search/matrix/pairs and /offsets. A
// sample of the points matching the filter (and holding the vector) is drawn, then each sampled
// point's nearest neighbours among the other sampled points are found by exact search, all
// searches in one batch (one task per shard).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { toFilter } from '../../api/filter.js';
import { validateBody } from '../../api/validator.js';
import type { Collection } from '../../collection/collection.js';
import { DEFAULT_VECTOR, type PointId } from '../../model.js';
import type { Filter } from '../../shard/filter/index.js';
import type { ScoredView } from '../../shard/search.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { collectionName, read } from './params.js';

const DEFAULT_SAMPLE = 10;
const DEFAULT_NEIGHBOURS = 3;
const ALL = 2 ** 31;

interface Matrix {
  ids: PointId[];
  neighbours: ScoredView[][];
}

/** Fisher-Yates on a copy, keeping the first `n`. */
function sampleOf<T>(items: T[], n: number): T[] {
  const copy = [...items];
  for (let i = 0; i < Math.min(n, copy.length); i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, n);
}

async function matrix(collection: Collection, request: FastifyRequest): Promise<Matrix> {
  const body = validateBody('SearchMatrixRequest', request.body ?? {});
  const using = body.using ?? DEFAULT_VECTOR;
  const hasVector: Filter = { must: [{ kind: 'hasVector', name: using }] };
  const filter: Filter = body.filter ? { must: [{ kind: 'filter', filter: toFilter(body.filter) }, ...hasVector.must!] } : hasVector;
  const reader = collection.reader(body.shard_key);
  const all = await reader.scroll(filter, null, ALL, { withPayload: { all: false }, withVector: false }, null);
  const ids = sampleOf(all.points.map((p) => p.id), body.sample ?? DEFAULT_SAMPLE);
  const points = await reader.retrieve(ids, { withPayload: { all: false }, withVector: [using] });
  const searches = points.map((p) => ({
    spec: {
      using,
      query: { kind: 'nearest' as const, vector: p.vectors![using] },
      filter: { must: [{ kind: 'hasId' as const, ids: new Set(ids) }], mustNot: [{ kind: 'hasId' as const, ids: new Set([p.id]) }] },
      params: { hnswEf: null, exact: true, quantization: null, indexedOnly: false },
      scoreThreshold: null,
      withPayload: { all: false },
      withVector: false,
    },
    limit: body.limit ?? DEFAULT_NEIGHBOURS,
    offset: 0,
  }));
  return { ids: points.map((p) => p.id), neighbours: await reader.search(searches) };
}

export function registerMatrixRoutes(app: FastifyInstance, { collections }: ServerContext): void {
  app.post('/collections/:name/points/search/matrix/pairs', (request) => read(request, 'Search', async () => {
    const { ids, neighbours } = await matrix(collections.get(collectionName(request)), request);
    return ok(request, { pairs: ids.flatMap((a, i) => neighbours[i].map((hit) => ({ a, b: hit.id, score: hit.score }))) });
  }));

  app.post('/collections/:name/points/search/matrix/offsets', (request) => read(request, 'Search', async () => {
    const { ids, neighbours } = await matrix(collections.get(collectionName(request)), request);
    const position = new Map(ids.map((id, i) => [id, i]));
    const rows: number[] = [];
    const cols: number[] = [];
    const scores: number[] = [];
    neighbours.forEach((hits, i) => hits.forEach((hit) => {
      rows.push(i);
      cols.push(position.get(hit.id)!);
      scores.push(hit.score);
    }));
    return ok(request, { offsets_row: rows, offsets_col: cols, scores, ids });
  }));
}
