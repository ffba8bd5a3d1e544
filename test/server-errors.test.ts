// Failures through the real server, over raw HTTP: for each, the status code, the error body
// `{"status":{"error":...},"time":...}` and Qdrant's message; and for every rejected write,
// proof (count, retrieve) that nothing of it was applied, on multi-shard collections too.

import t, { type Test } from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { startServer } from './helpers/server.js';
import { assertError, call, formatErrorMessage, type RawResponse, stopAtEnd } from './helpers/api-http.js';
import { uniqueName, uuidOf, vectorOf } from './helpers/api-data.js';

const server = await startServer({ workers: 2 });
stopAtEnd(t, server);
const client = new QdrantClient({ url: server.url, checkCompatibility: false });

const send = (method: string, path: string, body?: unknown): Promise<RawResponse> => call(server.url, method, path, body);

/** A collection with one unnamed 4-d vector and points 1..n with payload {n: id}. */
async function plainCollection(n: number, shards: number): Promise<string> {
  const name = uniqueName('errs');
  await client.createCollection(name, { vectors: { size: 4, distance: 'Euclid' }, shard_number: shards });
  await client.upsert(name, { wait: true, points: Array.from({ length: n }, (_, i) => ({ id: i + 1, vector: vectorOf(i + 1, 4), payload: { n: i + 1 } })) });
  return name;
}

/** Everything a collection holds, to compare before and after a rejected write. */
async function snapshot(name: string): Promise<unknown[]> {
  const page = await client.scroll(name, { limit: 10000, with_payload: true, with_vector: true });
  return page.points;
}

async function unchanged(t: Test, name: string, before: unknown[], what: string): Promise<void> {
  t.same(await snapshot(name), before, `${what}: the collection is exactly as before`);
}

const MISSING = 'no_such_collection';
const MISSING_MESSAGE = `Not found: Collection \`${MISSING}\` doesn't exist!`;

t.test('an unknown collection is a 404 on every endpoint', async (t) => {
  const cases: [string, string, unknown?][] = [
    ['GET', ''],
    ['PATCH', '', { optimizers_config: { indexing_threshold: 100 } }],
    ['DELETE', '/index/x'],
    ['PUT', '/index', { field_name: 'x', field_schema: 'keyword' }],
    ['PUT', '/points', { points: [{ id: 1, vector: [1, 2, 3, 4] }] }],
    ['POST', '/points', { ids: [1] }],
    ['GET', '/points/1'],
    ['POST', '/points/delete', { points: [1] }],
    ['PUT', '/points/vectors', { points: [{ id: 1, vector: [1, 2, 3, 4] }] }],
    ['POST', '/points/vectors/delete', { points: [1], vector: [''] }],
    ['POST', '/points/payload', { points: [1], payload: { a: 1 } }],
    ['PUT', '/points/payload', { points: [1], payload: { a: 1 } }],
    ['POST', '/points/payload/delete', { points: [1], keys: ['a'] }],
    ['POST', '/points/payload/clear', { points: [1] }],
    ['POST', '/points/batch', { operations: [{ delete: { points: [1] } }] }],
    ['POST', '/points/scroll', {}],
    ['POST', '/points/count', {}],
  ];
  for (const [method, path, body] of cases) {
    assertError(t, await send(method, `/collections/${MISSING}${path}`, body), 404, MISSING_MESSAGE, `${method} ${path || '/'}`);
  }
  t.same(await client.collectionExists(MISSING), { exists: false }, 'and nothing created it');
});

t.test('vector dimension and name errors', async (t) => {
  const plain = await plainCollection(3, 2);
  const named = uniqueName('errs_named');
  await client.createCollection(named, { vectors: { a: { size: 3, distance: 'Cosine' }, b: { size: 2, distance: 'Dot' } } });
  await client.upsert(named, { wait: true, points: [{ id: 1, vector: { a: [1, 2, 3], b: [1, 2] } }] });
  const plainBefore = await snapshot(plain);
  const namedBefore = await snapshot(named);
  const dim = (expected: number, got: number) => `Wrong input: Vector dimension error: expected dim: ${expected}, got ${got}`;

  assertError(t, await send('PUT', `/collections/${plain}/points?wait=true`, { points: [{ id: 9, vector: [1, 2, 3] }] }), 400, dim(4, 3), 'upsert list');
  assertError(t, await send('PUT', `/collections/${plain}/points?wait=true`, { batch: { ids: [9, 10], vectors: [[1, 2, 3, 4], [1, 2, 3, 4, 5]] } }), 400, dim(4, 5), 'upsert batch');
  assertError(t, await send('PUT', `/collections/${plain}/points/vectors?wait=true`, { points: [{ id: 1, vector: [1] }] }), 400, dim(4, 1), 'update_vectors');
  assertError(t, await send('PUT', `/collections/${named}/points?wait=true`, { points: [{ id: 9, vector: { a: [1, 2, 3], b: [1, 2, 3] } }] }), 400, dim(2, 3), 'named vector b');
  assertError(t, await send('PUT', `/collections/${named}/points?wait=true`, { points: [{ id: 9, vector: { c: [1, 2] } }] }), 400, 'Wrong input: Not existing vector name error: c', 'upsert, unknown name');
  assertError(t, await send('PUT', `/collections/${named}/points/vectors?wait=true`, { points: [{ id: 1, vector: { zz: [1, 2] } }] }), 400, 'Wrong input: Not existing vector name error: zz', 'update_vectors, unknown name');
  assertError(t, await send('POST', `/collections/${named}/points/vectors/delete?wait=true`, { points: [1], vector: ['nope'] }), 400, 'Wrong input: Not existing vector name error: nope', 'delete_vectors, unknown name');
  await unchanged(t, plain, plainBefore, 'plain');
  await unchanged(t, named, namedBefore, 'named');
});

t.test('malformed JSON, wrong types, missing fields: 400 Format error', async (t) => {
  const name = await plainCollection(3, 1);
  const before = await snapshot(name);
  // serde_json's own words for syntax errors.
  assertError(t, await send('POST', `/collections/${name}/points/count`, '{bad'), 400, formatErrorMessage('key must be a string'), 'not JSON');
  assertError(t, await send('PUT', `/collections/${name}/points?wait=true`, '{"points": ['), 400, formatErrorMessage('EOF while parsing a list'), 'truncated JSON');
  assertError(t, await send('POST', `/collections/${name}/points/count`, '{"exact": true} x'), 400, formatErrorMessage('trailing characters'), 'trailing characters');
  assertError(t, await send('POST', `/collections/${name}/points`, ''), 400, formatErrorMessage('EOF while parsing a value'), 'empty body');

  assertError(t, await send('POST', `/collections/${name}/points/scroll`, { limit: 'ten' }), 400, formatErrorMessage('invalid type: string "ten", expected usize'), 'string for a number');
  assertError(t, await send('POST', `/collections/${name}/points/count`, { exact: 'yes' }), 400, formatErrorMessage('invalid type: string "yes", expected a boolean'), 'string for a boolean');
  assertError(
    t,
    await send('PUT', `/collections/${name}/points?wait=true`, { points: [{ id: 5, vector: [1, 2, 3, 4] }, { id: 'not-a-uuid', vector: [1, 2, 3, 4] }] }),
    400,
    formatErrorMessage('value not-a-uuid is not a valid point ID, valid values are either an unsigned integer or a UUID'),
    'bad point id',
  );
  assertError(t, await send('POST', `/collections/${name}/points`, {}), 400, formatErrorMessage('missing field `ids`'), 'retrieve without ids');
  assertError(t, await send('PUT', `/collections/${name}/index`, { field_schema: 'keyword' }), 400, formatErrorMessage('missing field `field_name`'), 'index without field_name');
  assertError(t, await send('PUT', `/collections/${name}/points/vectors`, {}), 400, formatErrorMessage('missing field `points`'), 'update_vectors without points');
  assertError(t, await send('PUT', `/collections/${uniqueName('never')}`, { vectors: { size: 4, distance: 'Cosinus' } }), 400, /^Format error in JSON body: /, 'unknown distance');
  assertError(t, await send('PUT', `/collections/${name}/points?wait=maybe`, { points: [] }), 400, 'Deserialize error in query parameters: provided string was not `true` or `false`', 'bad wait parameter');
  await unchanged(t, name, before, 'after the format errors');
});

t.test('validation rules: 422', async (t) => {
  const name = await plainCollection(3, 1);
  assertError(t, await send('POST', `/collections/${name}/points/scroll`, { limit: 0 }), 422, 'Validation error in JSON body: [limit: value 0 invalid, must be 1 or larger]', 'scroll limit 0');
  const fresh = uniqueName('never');
  assertError(
    t,
    await send('PUT', `/collections/${fresh}`, { vectors: { size: 4, distance: 'Dot' }, hnsw_config: { ef_construct: 3 } }),
    422,
    'Validation error in JSON body: [hnsw_config.ef_construct: value 3 invalid, must be 4 or larger]',
    'ef_construct below 4',
  );
  t.same(await client.collectionExists(fresh), { exists: false }, 'the rejected collection was not created');
  assertError(
    t,
    await send('PATCH', `/collections/${name}`, { optimizers_config: { deleted_threshold: 1.5 } }),
    422,
    'Validation error in JSON body: [optimizers_config.deleted_threshold: value 1.5 invalid, must be from 0.0 to 1.0]',
    'deleted_threshold above 1',
  );
  t.equal((await client.getCollection(name)).config.optimizer_config.deleted_threshold, 0.2, 'config unchanged');
  const before = await snapshot(name);
  assertError(
    t,
    await send('PUT', `/collections/${name}/points?wait=true`, { batch: { ids: [10, 11, 12], vectors: [[1, 2, 3, 4], [1, 2, 3, 4]] } }),
    422,
    // Batch's own check files its error under `batch`, nested in the body's `batch` field.
    'Validation error in JSON body: [batch.batch: number of ids and vectors must be equal (3 != 2)]',
    'batch columns of different lengths',
  );
  await unchanged(t, name, before, 'after the rejected batch upsert');
});

t.test('points that do not exist: 404', async (t) => {
  const name = await plainCollection(20, 3);
  const before = await snapshot(name);
  const uuid = uuidOf(77);
  // GET of one point has its own wording; the update endpoints report CollectionError::PointNotFound.
  assertError(t, await send('GET', `/collections/${name}/points/999`), 404, 'Not found: Point with id 999 does not exists!', 'GET numeric');
  assertError(t, await send('GET', `/collections/${name}/points/${uuid.toUpperCase()}`), 404, `Not found: Point with id ${uuid} does not exists!`, 'GET uuid');
  assertError(t, await send('GET', `/collections/${name}/points/abc`), 400, 'Wrong input: Can not recognize "abc" as point id', 'GET of an id that is neither a number nor a UUID');
  assertError(t, await send('GET', `/collections/${name}/points/-3`), 400, 'Wrong input: Can not recognize "-3" as point id', 'GET of a negative id');
  assertError(t, await send('GET', `/collections/${MISSING}/points/abc`), 404, MISSING_MESSAGE, 'an unknown collection is reported first');
  const cases: [string, string, unknown][] = [
    ['update_vectors', 'PUT /points/vectors', { points: [{ id: 2, vector: [9, 9, 9, 9] }, { id: 999, vector: [1, 1, 1, 1] }] }],
    ['set_payload', 'POST /points/payload', { points: [1, 2, 3, 999], payload: { touched: true } }],
    ['overwrite_payload', 'PUT /points/payload', { points: [4, 999], payload: { touched: true } }],
    ['delete_payload', 'POST /points/payload/delete', { points: [5, 999], keys: ['n'] }],
    ['clear_payload', 'POST /points/payload/clear', { points: [6, 999] }],
  ];
  for (const [what, route, body] of cases) {
    const [method, path] = route.split(' ');
    assertError(t, await send(method, `/collections/${name}${path}?wait=true`, body), 404, 'Not found: No point with id 999 found', what);
  }
  await unchanged(t, name, before, 'the existing points named with the missing one');
  const deleted = await client.delete(name, { wait: true, points: [999] });
  t.equal(deleted.status, 'completed', 'deleting a missing point is not an error');
});

t.test('order_by needs a range index on its key', async (t) => {
  const name = await plainCollection(5, 1);
  await client.setPayload(name, { wait: true, points: [1, 2], payload: { word: 'x' } });
  const message = (key: string) =>
    `Wrong input: No range index for \`order_by\` key: \`${key}\`. Please create one to use \`order_by\`. ` +
    'Check https://qdrant.tech/documentation/concepts/indexing/#payload-index to see which payload schemas support Range conditions';
  assertError(t, await send('POST', `/collections/${name}/points/scroll`, { order_by: 'n' }), 400, message('n'), 'no index');
  await client.createPayloadIndex(name, { field_name: 'word', field_schema: 'keyword', wait: true });
  assertError(t, await send('POST', `/collections/${name}/points/scroll`, { order_by: { key: 'word' } }), 400, message('word'), 'a keyword index has no range');
  await client.createPayloadIndex(name, { field_name: 'n', field_schema: 'integer', wait: true });
  const page = await client.scroll(name, { order_by: { key: 'n', direction: 'desc' }, limit: 2 });
  t.same(page.points.map((p) => p.id), [5, 4], 'with the index it works');
  assertError(t, await send('POST', `/collections/${name}/points/scroll`, { order_by: 'n', offset: 2 }), 400,
    'Bad request: Cannot use an `offset` when using `order_by`. The alternative for paging is to use `order_by.start_from` ' +
    "and a filter to exclude the IDs that you've already seen for the `order_by.start_from` value", 'no offset with order_by');
});

t.test('a rejected write applies nothing, on any shard', async (t) => {
  const name = await plainCollection(60, 4);
  const before = await snapshot(name);
  const fresh = Array.from({ length: 40 }, (_, i) => 1000 + i);
  const good = (id: number) => ({ id, vector: vectorOf(id, 4), payload: { fresh: true } });

  // One bad point among forty new ones, which hash to every shard.
  const cases: [string, string, string, unknown, number, string | RegExp][] = [
    ['wrong dimension in an upsert', 'PUT', '/points', { points: fresh.map((id, i) => (i === 23 ? { id, vector: [1, 2] } : good(id))) }, 400, 'Wrong input: Vector dimension error: expected dim: 4, got 2'],
    ['wrong dimension in a batch upsert', 'PUT', '/points', { batch: { ids: fresh, vectors: fresh.map((_, i) => (i === 31 ? [1, 2, 3, 4, 5, 6] : [1, 2, 3, 4])) } }, 400, 'Wrong input: Vector dimension error: expected dim: 4, got 6'],
    ['bad id in an upsert', 'PUT', '/points', { points: fresh.map((id, i) => (i === 7 ? { ...good(id), id: -5 } : good(id))) }, 400, formatErrorMessage('value -5 is not a valid point ID, valid values are either an unsigned integer or a UUID')],
    ['named vector in an unnamed collection', 'PUT', '/points', { points: fresh.map((id, i) => (i === 39 ? { id, vector: { x: [1, 2, 3, 4] } } : good(id))) }, 400, 'Wrong input: Not existing vector name error: x'],
    [
      'batch whose last operation names a missing point',
      'POST',
      '/points/batch',
      { operations: [{ upsert: { points: fresh.map(good) } }, { delete: { points: [1, 2, 3] } }, { set_payload: { points: [10, 11, 12], payload: { v: 1 } } }, { set_payload: { points: [20, 99999], payload: { v: 2 } } }] },
      404,
      'Not found: No point with id 99999 found',
    ],
    [
      'batch whose last operation has a wrong dimension',
      'POST',
      '/points/batch',
      { operations: [{ delete: { filter: { must: [{ key: 'n', range: { lte: 30 } }] } } }, { overwrite_payload: { filter: { must: [{ key: 'n', range: { gt: 30 } }] }, payload: {} } }, { update_vectors: { points: [{ id: 45, vector: [1, 2, 3] }] } }] },
      400,
      'Wrong input: Vector dimension error: expected dim: 4, got 3',
    ],
    [
      'batch whose update_vectors names a missing point after deletes by filter',
      'POST',
      '/points/batch',
      { operations: [{ delete: { filter: { must: [{ key: 'n', range: { gte: 1 } }] } } }, { update_vectors: { points: [{ id: 12345, vector: [1, 2, 3, 4] }] } }] },
      404,
      'Not found: No point with id 12345 found',
    ],
  ];
  for (const [what, method, path, body, status, message] of cases) {
    assertError(t, await send(method, `/collections/${name}${path}?wait=true`, body), status, message, what);
    t.equal((await client.count(name)).count, 60, `${what}: count unchanged`);
    t.same(await client.retrieve(name, { ids: fresh }), [], `${what}: none of the new points exists`);
  }
  await unchanged(t, name, before, 'after all the rejected writes');

  // The collection still takes writes afterwards, and ids continue.
  const r = await client.upsert(name, { wait: true, points: fresh.map(good) });
  t.equal(r.status, 'completed');
  t.equal((await client.count(name)).count, 100, 'a valid write afterwards applies whole');
});

t.test('unknown fields: rejected inside filters, ignored elsewhere (as Qdrant deserializes)', async (t) => {
  const name = await plainCollection(3, 2);
  assertError(
    t,
    await send('POST', `/collections/${name}/points/scroll`, { filter: { where: { key: 'n' } } }),
    400,
    formatErrorMessage('unknown field `where`, expected one of `should`, `min_should`, `must`, `must_not`'),
    'unknown filter clause',
  );
  const ignored = await send('POST', `/collections/${name}/points/count`, { exact: true, colour: 'blue' });
  t.equal(ignored.status, 200, 'an unknown top-level field of a request body is ignored');
  t.same((ignored.body as { result: unknown }).result, { count: 3 });
});

t.test('requests that parse but that Qdrant refuses by its own checks', async (t) => {
  const name = await plainCollection(3, 1);
  assertError(t, await send('PUT', `/collections/${name}/index`, { field_name: 'n' }), 400,
    "Bad request: Can't auto-detect field type, please specify `field_schema` in the request", 'an index without field_schema');
  assertError(t, await send('PUT', `/collections/${MISSING}/index`, { field_name: 'n' }), 404, MISSING_MESSAGE,
    'an unknown collection is reported before the missing field_schema');
  assertError(t, await send('PUT', `/collections/${name}/index`, { field_name: 'a..b', field_schema: 'keyword' }), 400,
    formatErrorMessage("Invalid json path: 'a..b'"), 'an index on a key that is no JsonPath');
  const badField = await send('DELETE', `/collections/${name}/index/${encodeURIComponent('a[x]')}`);
  t.equal(badField.status, 400, 'an index key in the path that is no JsonPath: 400');
  t.match(badField.body, { status: { error: "Deserialize error in path parameters: Invalid json path: 'a[x]'" } }, 'worded as a path parameter that does not deserialize');
  assertError(t, await send('POST', `/collections/${name}/points/discover`, { context: [], limit: 3 }), 400,
    'Bad request: target and/or context_pairs must be specified', 'a discover request with neither target nor context');
  assertError(t, await send('POST', `/collections/${name}/points/query/groups`, { query: [1, 2, 3, 4], group_by: 'a..b' }), 400,
    formatErrorMessage("Invalid json path: 'a..b'"), 'group_by that is no JsonPath');
  assertError(t, await send('POST', `/collections/${name}/points/scroll`, { order_by: { key: 'n', start_from: 'yesterday' } }), 400,
    formatErrorMessage('data did not match any variant of untagged enum OrderByInterface'), 'start_from that is neither a number nor a datetime');
  t.same((await client.getCollection(name)).payload_schema, {}, 'no index was made by the refused requests');
});
