// Commit timeouts of collection and alias operations. No Quiver operation can be made to outlast
// Qdrant's smallest timeout (1 s) deterministically, so the helper is checked as a unit with
// promises the test controls; the routes are checked for accepting and validating `timeout`.

import t from 'tap';
import { ServiceError } from '../src/errors.js';
import { withCommitTimeout } from '../src/server/deadline.js';
import { assertError, call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { startServer } from './helpers/server.js';

/** A promise the test settles by hand. */
function controlled<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

t.test('an operation committed in time answers with its result', async (t) => {
  const op = controlled<string>();
  const answer = withCommitTimeout(op.promise, 5);
  op.resolve('done');
  t.equal(await answer, 'done');
});

t.test('an operation failing in time answers with its own error', async (t) => {
  const op = controlled<string>();
  const answer = withCommitTimeout(op.promise, 5);
  op.reject(new Error('boom'));
  await t.rejects(answer, { message: 'boom' });
});

t.test("past the timeout: Qdrant's service error, and the late outcome is dropped", async (t) => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  t.teardown(() => void process.off('unhandledRejection', onUnhandled));

  const op = controlled<string>();
  const answer = withCommitTimeout(op.promise, 0.05);
  const err = await answer.then(() => null, (e: unknown) => e);
  t.type(err, ServiceError);
  t.equal((err as ServiceError).statusCode, 500);
  t.equal((err as ServiceError).message, 'Service internal error: Waiting for consensus operation commit failed. Timeout set at: 0.05 seconds');

  op.reject(new Error('failed after the caller gave up'));
  // Let the rejection be processed: an unobserved one would be reported on the next turns.
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  t.same(unhandled, [], 'no unhandled rejection from the abandoned operation');
});

t.test('without a timeout the operation is awaited as is', async (t) => {
  const op = controlled<number>();
  const answer = withCommitTimeout(op.promise, undefined);
  t.equal(answer, op.promise, 'the same promise');
  op.resolve(1);
  t.equal(await answer, 1);
});

t.test('collection and alias routes take `timeout`', async (t) => {
  const server = await startServer({ workers: 1 });
  stopAtEnd(t, server);
  t.equal(resultOf(t, await call(server.url, 'PUT', '/collections/c?timeout=1', { vectors: { size: 2, distance: 'Dot' } })), true, 'create');
  t.equal(resultOf(t, await call(server.url, 'PATCH', '/collections/c?timeout=1', { optimizers_config: { indexing_threshold: 100 } })), true, 'update');
  t.equal(resultOf(t, await call(server.url, 'POST', '/collections/aliases?timeout=1', { actions: [{ create_alias: { collection_name: 'c', alias_name: 'a' } }] })), true, 'aliases');
  const zero = 'Deserialize error in query parameters: invalid value: integer `0`, expected a nonzero u64';
  assertError(t, await call(server.url, 'PUT', '/collections/d?timeout=0', { vectors: { size: 2, distance: 'Dot' } }), 400, zero, 'create with timeout 0');
  t.equal(resultOf<{ exists: boolean }>(t, await call(server.url, 'GET', '/collections/d/exists')).exists, false, 'nothing created');
  assertError(t, await call(server.url, 'DELETE', '/collections/c?timeout=0'), 400, zero, 'delete with timeout 0');
  assertError(t, await call(server.url, 'POST', '/collections/aliases?timeout=x', { actions: [] }), 400, 'Deserialize error in query parameters: invalid digit found in string');
  t.equal(resultOf(t, await call(server.url, 'DELETE', '/collections/c?timeout=1')), true, 'delete');
  t.equal(resultOf<{ exists: boolean }>(t, await call(server.url, 'GET', '/collections/c/exists')).exists, false);
});
