// Read timeouts through the real server: a query that outlives its `timeout` is answered with
// Qdrant's timeout error when the deadline passes, and its shard work stops there (the shard
// workers are free again long before the query would have finished).

import t from 'tap';
import { call } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { startServer } from './helpers/server.js';

const N = 20000;
const DIM = 32;

t.test('timeout aborts a slow read and stops its shard work', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const random = rng(7);
  const vector = () => Array.from({ length: DIM }, random);
  await call(server.url, 'PUT', '/collections/slow', { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 2 });
  for (let start = 0; start < N; start += 2000) {
    const points = Array.from({ length: 2000 }, (_, j) => ({ id: start + j, vector: vector() }));
    t.equal((await call(server.url, 'PUT', '/collections/slow/points?wait=true', { points })).status, 200);
  }
  // A context query scans the whole collection once per example: its cost grows with the pairs.
  // Sized on this machine to take about 4 s.
  const contextQuery = (pairs: number) => ({ query: { context: Array.from({ length: pairs }, () => ({ positive: vector(), negative: vector() })) }, limit: 3 });
  // The first query warms the shards up (and costs more than the next): it is not the measure.
  await call(server.url, 'POST', '/collections/slow/points/query', contextQuery(20));
  let begin = performance.now();
  await call(server.url, 'POST', '/collections/slow/points/query', contextQuery(20));
  const slow = contextQuery(Math.ceil((20 * 4) / Math.max(0.05, (performance.now() - begin) / 1000)));

  begin = performance.now();
  const full = await call(server.url, 'POST', '/collections/slow/points/query', slow);
  const fullSeconds = (performance.now() - begin) / 1000;
  t.equal(full.status, 200, `without a timeout the query completes (${fullSeconds.toFixed(1)} s)`);
  t.ok(fullSeconds > 2, 'the query is slow enough to outlive a 1 s timeout');

  begin = performance.now();
  const cut = await call(server.url, 'POST', '/collections/slow/points/query?timeout=1', slow);
  const cutSeconds = (performance.now() - begin) / 1000;
  t.equal(cut.status, 408, 'past its timeout the query is answered 408');
  t.same((cut.body as { status: unknown }).status, { error: "Timeout: Timeout error: Operation 'Query' timed out after 1s" }, "Qdrant's timeout error");
  t.ok(cutSeconds < fullSeconds, `the answer comes at the deadline (${cutSeconds.toFixed(1)} s)`);

  // Were the shard tasks still running, this count would queue behind them until the slow
  // query's natural end; it is answered as soon as the tasks have noticed their deadline.
  begin = performance.now();
  const count = await call(server.url, 'POST', '/collections/slow/points/count', { exact: true });
  const waited = (performance.now() - begin) / 1000;
  t.same((count.body as { result: unknown }).result, { count: N });
  t.ok(waited < (fullSeconds - cutSeconds) / 2, `the shard workers are free at once (count answered in ${waited.toFixed(2)} s)`);

  const generous = await call(server.url, 'POST', '/collections/slow/points/query?timeout=600', { query: vector(), limit: 5 });
  t.equal(generous.status, 200, 'a request within its timeout is answered normally');
  t.equal((generous.body as { result: { points: unknown[] } }).result.points.length, 5);

  const batch = await call(server.url, 'POST', '/collections/slow/points/search/batch?timeout=1', {
    searches: Array.from({ length: 3 }, () => ({ vector: vector(), limit: 3 })),
  });
  t.equal(batch.status, 200, 'a quick batch within its timeout');

  const bad = await call(server.url, 'POST', '/collections/slow/points/query?timeout=0', { query: vector() });
  t.equal(bad.status, 400, 'timeout=0 is refused as Qdrant refuses it');
});
