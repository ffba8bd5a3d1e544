// /collections/{name}/points...: writes (each a list of WriteOps for the collection), retrieval,
// scroll and count.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { toFilter } from '../../api/filter.js';
import { pointDoesNotExist, unrecognizedPointId } from '../../api/messages.js';
import { renderRecord, toPayloadSelection, toVectorSelection } from '../../api/point-convert.js';
import { pointIdFromPath, toPointId } from '../../api/point-id.js';
import { POINT_READ_PARAMS, WRITE_PARAMS, validateBody } from '../../api/validator.js';
import { batchOps, clearPayloadOp, deleteOp, deletePayloadOp, deleteVectorsOp, setPayloadOp, updateVectorsOp, upsertOp } from '../../api/write-convert.js';
import type { RoutedOp } from '../../collection/collection.js';
import { toOrderByRequest } from '../../api/search-convert.js';
import { plainRead, retrieveRead } from '../../collection/strict-reads.js';
import { withReadScope } from '../../replica/request-scope.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { admitRead, collectionName, ordered, query, read, type Params } from './params.js';

const DEFAULT_SCROLL_LIMIT = 10;

async function write({ collections, node }: ServerContext, request: FastifyRequest, ops: (body: unknown) => RoutedOp[]) {
  const { wait } = query(request, WRITE_PARAMS);
  const collection = collections.get(collectionName(request));
  const writeOps = ops(request.body);
  node.quota.checkWrite(writeOps.map((r) => r.op));
  const result = await ordered(request, () => collection.write(writeOps, wait === true));
  return ok(request, result[0]);
}

export function registerPointRoutes(app: FastifyInstance, context: ServerContext): void {
  const { collections, node } = context;
  app.put('/collections/:name/points', (request) => write(context, request, (b) => [upsertOp(validateBody('PointInsertOperations', b))]));
  app.post('/collections/:name/points/delete', (request) => write(context, request, (b) => [deleteOp(validateBody('PointsSelector', b))]));
  app.put('/collections/:name/points/vectors', (request) => write(context, request, (b) => [updateVectorsOp(validateBody('UpdateVectors', b))]));
  app.post('/collections/:name/points/vectors/delete', (request) => write(context, request, (b) => [deleteVectorsOp(validateBody('DeleteVectors', b))]));
  app.post('/collections/:name/points/payload', (request) => write(context, request, (b) => [setPayloadOp(validateBody('SetPayload', b), false)]));
  app.put('/collections/:name/points/payload', (request) => write(context, request, (b) => [setPayloadOp(validateBody('SetPayload', b), true)]));
  app.post('/collections/:name/points/payload/delete', (request) => write(context, request, (b) => [deletePayloadOp(validateBody('DeletePayload', b))]));
  app.post('/collections/:name/points/payload/clear', (request) => write(context, request, (b) => [clearPayloadOp(validateBody('PointsSelector', b))]));

  app.post('/collections/:name/points/batch', async (request) => {
    const { wait } = query(request, WRITE_PARAMS);
    const ops = batchOps(validateBody('UpdateOperations', request.body).operations);
    const collection = collections.get(collectionName(request));
    node.quota.checkWrite(ops.map((r) => r.op));
    return ok(request, ops.length ? await ordered(request, () => collection.write(ops, wait === true)) : []);
  });

  app.post('/collections/:name/points', (request) => read(request, 'Retrieve', async () => {
    const body = validateBody('PointRequest', request.body);
    const collection = collections.get(collectionName(request));
    const ids = body.ids.map(toPointId);
    admitRead(collection, request, retrieveRead(body.shard_key ?? null, ids.length));
    const points = await collection.reader(body.shard_key).retrieve(ids, {
      withPayload: toPayloadSelection(body.with_payload),
      withVector: toVectorSelection(body.with_vector),
    });
    return ok(request, points.map(renderRecord));
  }));

  app.get('/collections/:name/points/:id', (request) => withReadScope({ consistency: query(request, POINT_READ_PARAMS).consistency }, 'Retrieve', async () => {
    // As in Qdrant, an unknown collection is reported before a malformed id.
    const collection = collections.get(collectionName(request));
    const raw = (request.params as Params).id!;
    const pointId = pointIdFromPath(raw);
    if (pointId === undefined) throw unrecognizedPointId(raw);
    collection.admitRead(retrieveRead(null, 1), null);
    const [point] = await collection.reader().retrieve([pointId], { withPayload: { all: true }, withVector: true });
    if (!point) throw pointDoesNotExist(pointId);
    return ok(request, renderRecord(point));
  }));

  app.post('/collections/:name/points/scroll', (request) => read(request, 'Scroll', async () => {
    const body = validateBody('ScrollRequest', request.body ?? {});
    const collection = collections.get(collectionName(request));
    const filter = body.filter ? toFilter(body.filter) : null;
    admitRead(collection, request, plainRead(body.shard_key ?? null, filter, body.limit ?? null, null));
    const page = await collection.reader(body.shard_key).scroll(
      filter,
      body.offset === undefined || body.offset === null ? null : toPointId(body.offset),
      body.limit ?? DEFAULT_SCROLL_LIMIT,
      { withPayload: toPayloadSelection(body.with_payload), withVector: toVectorSelection(body.with_vector) },
      body.order_by ? toOrderByRequest(body.order_by) : null,
    );
    return ok(request, { points: page.points.map(renderRecord), next_page_offset: page.next_page_offset });
  }));

  app.post('/collections/:name/points/count', (request) => read(request, 'Count', async () => {
    const body = validateBody('CountRequest', request.body ?? {});
    const collection = collections.get(collectionName(request));
    const filter = body.filter ? toFilter(body.filter) : null;
    // Qdrant counts exactly unless told not to, so strict mode's `search_allow_exact` applies by default.
    admitRead(collection, request, plainRead(body.shard_key ?? null, filter, null, body.exact ?? true));
    const count = await collection.reader(body.shard_key).count(filter);
    return ok(request, { count });
  }));
}
