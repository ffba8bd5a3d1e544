// The update queue Qdrant reports (collection info `update_queue.length`, telemetry's shard
// `update_queue`, `collection_update_queue_length`) counts point updates sent to the shards and
// not answered yet. An update held in its worker (test fault injection: QUIVER_TEST_FAULTS=1, a
// payload carrying "quiver-fault:hang", cut by a 2 s task bound) is in the queue while a read of
// the collection's info is asked; once it failed, the queue is empty again.

import t from 'tap';
import { call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { startServer } from './helpers/server.js';

const server = await startServer({ workers: 1, env: { QUIVER_TEST_FAULTS: '1', QDRANT__WORKER_LIMITS__TASK_TIMEOUT_SEC: '2' } });
stopAtEnd(t, server);

type Info = { update_queue: { length: number } };

t.test('a held update is in the queue; a failed one leaves it', async (t) => {
  resultOf(t, await call(server.url, 'PUT', '/collections/q', { vectors: { size: 2, distance: 'Dot' }, shard_number: 1 }));
  resultOf(t, await call(server.url, 'PUT', '/collections/q/points?wait=true', { points: [{ id: 1, vector: [1, 0] }] }));
  // The info request may reach the route before the update reaches its shard: ask again with a
  // new held update, a few times at most.
  let seen: number | null = null;
  for (let attempt = 0; attempt < 5 && seen !== 1; attempt++) {
    const held = call(server.url, 'PUT', '/collections/q/points?wait=true', { points: [{ id: 2, vector: [0, 1], payload: { note: 'quiver-fault:hang' } }] });
    seen = resultOf<Info>(t, await call(server.url, 'GET', '/collections/q')).update_queue.length;
    t.equal((await held).status, 500, 'the held update is cut by the task bound');
  }
  t.equal(seen, 1, 'the held update was counted in the queue');
  t.same(resultOf<Info>(t, await call(server.url, 'GET', '/collections/q')).update_queue, { length: 0 }, 'nothing in flight once it failed');
});
