// Distance matrix over a random sample: POST .../points/search/matrix/pairs and /offsets, two
// renderings of the same sampled neighbours (src/collection/matrix.ts).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { toMatrixRequest } from '../../api/search-convert.js';
import { shortF32 } from '../../api/f32-number.js';
import { validateBody } from '../../api/validator.js';
import { searchMatrix, type Matrix } from '../../collection/matrix.js';
import type { CollectionManager } from '../../collection/manager.js';
import { collectionScope } from '../../collection/query-planner.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { matrixRead } from '../../collection/strict-reads.js';
import { admitRead, collectionName, read } from './params.js';

/** As in Qdrant, an unknown collection is reported before a malformed body. */
function matrix(collections: CollectionManager, request: FastifyRequest): Promise<Matrix> {
  const name = collectionName(request);
  const scope = collectionScope(collections, name);
  const body = validateBody('SearchMatrixRequest', request.body ?? {});
  const matrixRequest = toMatrixRequest(body);
  // Strict mode bounds what the request asks, not the defaults that fill what it leaves out.
  admitRead(collections.get(name), request, matrixRead(matrixRequest.shardKey, matrixRequest.filter, body.sample ?? null, body.limit ?? null));
  return searchMatrix(scope, matrixRequest);
}

export function registerMatrixRoutes(app: FastifyInstance, { collections }: ServerContext): void {
  app.post('/collections/:name/points/search/matrix/pairs', (request) => read(request, 'Search', async () => {
    const { ids, neighbours } = await matrix(collections, request);
    return ok(request, { pairs: ids.flatMap((a, i) => neighbours[i].map((hit) => ({ a, b: hit.id, score: shortF32(hit.score) }))) });
  }));

  app.post('/collections/:name/points/search/matrix/offsets', (request) => read(request, 'Search', async () => {
    const { ids, neighbours } = await matrix(collections, request);
    const position = new Map(ids.map((id, i) => [id, i]));
    const rows: number[] = [];
    const cols: number[] = [];
    const scores: number[] = [];
    neighbours.forEach((hits, i) => hits.forEach((hit) => {
      rows.push(i);
      cols.push(position.get(hit.id)!);
      scores.push(shortF32(hit.score));
    }));
    return ok(request, { offsets_row: rows, offsets_col: cols, scores, ids });
  }));
}
