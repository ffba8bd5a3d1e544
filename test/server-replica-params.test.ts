// `consistency` and `ordering` through the real server on one node: each shard has one Active
// replica, which meets every read consistency and leads every write ordering, so every value
// gives the same answers, equal to what was written.

import t from 'tap';
import { call, resultOf } from './helpers/api-http.js';
import { startServer } from './helpers/server.js';

const CONSISTENCIES = ['', 'all', 'majority', 'quorum', '1', '3'];
const ORDERINGS = ['weak', 'medium', 'strong'];

t.test('every consistency and ordering on one node', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const base = server.url;
  t.equal((await call(base, 'PUT', '/collections/c', { vectors: { size: 2, distance: 'Dot' }, shard_number: 3, replication_factor: 2, write_consistency_factor: 2 })).status, 200);
  t.equal((await call(base, 'PUT', '/collections/c/index?wait=true&ordering=strong', { field_name: 'o', field_schema: 'keyword' })).status, 200, 'a keyword index to facet on');
  const expected = new Map<number, { v: number; o: string }>();
  for (const [i, ordering] of ORDERINGS.entries()) {
    const points = Array.from({ length: 10 }, (_, j) => ({ id: i * 10 + j, vector: [1, j], payload: { v: j, o: ordering } }));
    const written = await call(base, 'PUT', `/collections/c/points?wait=true&ordering=${ordering}`, { points });
    t.equal(resultOf<{ status: string }>(t, written).status, 'completed', `upsert with ordering=${ordering}`);
    for (const p of points) expected.set(p.id, p.payload);
  }
  const batch = await call(base, 'POST', '/collections/c/points/batch?wait=true&ordering=strong', { operations: [{ delete: { points: [0] } }] });
  t.equal(batch.status, 200, 'a batch with ordering=strong');
  expected.delete(0);

  const ids = [...expected.keys()].sort((a, b) => a - b);
  for (const consistency of CONSISTENCIES) {
    const q = consistency ? `?consistency=${consistency}` : '';
    const records = resultOf<{ id: number; payload: unknown }[]>(t, await call(base, 'POST', `/collections/c/points${q}`, { ids: [0, ...ids], with_payload: true }));
    t.same(records.map((r) => [r.id, r.payload]), ids.map((id) => [id, expected.get(id)]), `retrieve, consistency=${consistency || 'default'}`);
    const page = resultOf<{ points: { id: number }[] }>(t, await call(base, 'POST', `/collections/c/points/scroll${q}`, { limit: 100 }));
    t.same(page.points.map((p) => p.id), ids, 'scroll');
    t.same(resultOf(t, await call(base, 'POST', `/collections/c/points/count${q}`, {})), { count: ids.length }, 'count');
    const hits = resultOf<{ id: number; score: number }[]>(t, await call(base, 'POST', `/collections/c/points/search${q}`, { vector: [0, 1], limit: 3 }));
    t.same(hits.map((h) => h.score), [9, 9, 9], 'search: the three points with the largest dot product');
    const facet = resultOf<{ hits: { value: string; count: number }[] }>(t, await call(base, 'POST', `/collections/c/facet${q}`, { key: 'o' }));
    t.same(facet.hits, [{ value: 'medium', count: 10 }, { value: 'strong', count: 10 }, { value: 'weak', count: 9 }], 'facet');
    const one = resultOf<{ id: number; payload: unknown }>(t, await call(base, 'GET', `/collections/c/points/5${q}`));
    t.same([one.id, one.payload], [5, expected.get(5)], 'GET one point');
  }
});
