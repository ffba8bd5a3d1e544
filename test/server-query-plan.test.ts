// Query trees through the real server on a one-shard collection (the whole tree goes to the
// shard's worker in one task, stored examples read there) and on a three-shard one (each step
// fans out and merges on the main thread): the same data must give the same answers, byte for
// byte, for every kind of tree, batch, group and refusal.

import t from 'tap';
import { call, resultOf, type RawResponse } from './helpers/api-http.js';
import { startServer } from './helpers/server.js';

const N = 300;
const vectorOf = (i: number) => [Math.cos(i), Math.sin(i * 1.3), (i % 13) / 13, ((i * 7) % 11) / 11];
const payloadOf = (i: number) => ({ price: ((i * 7919) % 1000) + i / 1000, color: ['red', 'green', 'blue'][i % 3], n: i });
const Q = [0.2, -0.4, 0.6, 0.3];
const red = { must: [{ key: 'color', match: { value: 'red' } }] };

/** The envelope's result (or error status) of an answer, without its timing. */
const resultIn = (r: RawResponse) => (r.body as { result?: unknown }).result;
const statusIn = (r: RawResponse) => (r.body as { status?: unknown }).status;

/** Query bodies of every shape the planner handles. */
const QUERIES: Record<string, object> = {
  'nearest, filtered, with offset': { query: Q, filter: red, limit: 7, offset: 2, with_payload: true },
  'nearest by a stored point': { query: 17, limit: 5, with_vector: true },
  'recommend average_vector': { query: { recommend: { positive: [3, 40], negative: [9] } }, limit: 6 },
  'recommend best_score': { query: { recommend: { positive: [3, 40], negative: [9], strategy: 'best_score' } }, limit: 6 },
  'recommend sum_scores with a vector': { query: { recommend: { positive: [Q, 12], strategy: 'sum_scores' } }, limit: 6 },
  discover: { query: { discover: { target: 5, context: [{ positive: 8, negative: 21 }, { positive: Q, negative: 30 }] } }, limit: 6 },
  context: { query: { context: [{ positive: 8, negative: 21 }] }, limit: 6 },
  'rrf over two prefetches': { prefetch: [{ query: Q, limit: 20 }, { query: 44, limit: 20, filter: red }], query: { fusion: 'rrf' }, limit: 8 },
  'dbsf over two prefetches': { prefetch: [{ query: Q, limit: 20 }, { query: { recommend: { positive: [44] } }, limit: 20 }], query: { fusion: 'dbsf' }, limit: 8 },
  'weighted rrf with k': { prefetch: [{ query: Q, limit: 15 }, { query: 60, limit: 15 }], query: { rrf: { k: 5, weights: [2, 0.5] } }, limit: 8 },
  'fusion with score_threshold and offset': { prefetch: [{ query: Q, limit: 15 }, { query: 60, limit: 15 }], query: { fusion: 'rrf' }, score_threshold: 0.4, limit: 5, offset: 1 },
  'rescoring a nested fusion, filter inherited': {
    prefetch: { prefetch: [{ query: Q, limit: 25 }, { query: 71, limit: 25 }], query: { fusion: 'rrf' }, limit: 20 },
    query: 71,
    filter: red,
    limit: 6,
    with_payload: ['price'],
  },
  'rescoring with score_threshold': { prefetch: { query: Q, limit: 30 }, query: 99, score_threshold: 1.2, limit: 10 },
  'no query: points in id order, paged': { filter: red, limit: 5, offset: 3 },
  'a formula over two prefetches': {
    prefetch: [{ query: Q, limit: 20 }, { query: 44, limit: 20 }],
    query: { formula: { sum: ['$score', { mult: ['$score[1]', 0.5] }, { mult: [0.001, 'price'] }] }, defaults: { '$score[1]': 0 } },
    limit: 8,
    offset: 1,
  },
  'nearest with mmr': { query: { nearest: Q, mmr: { diversity: 0.7, candidates_limit: 25 } }, limit: 6, offset: 1 },
  'relevance feedback': { query: { relevance_feedback: { target: Q, feedback: [{ example: 3, score: 1 }, { example: 44, score: 0 }], strategy: { naive: { a: 1, b: 1, c: 1 } } } }, limit: 5 },
  'order_by over prefetched candidates': { prefetch: { query: Q, limit: 40 }, query: { order_by: { key: 'price', direction: 'desc' } }, limit: 9 },
  'order_by with start_from': { query: { order_by: { key: 'price', start_from: 300 } }, filter: red, limit: 6, offset: 1 },
};

const GROUPS: Record<string, object> = {
  'query groups': { query: Q, group_by: 'color', group_size: 2, limit: 3, with_payload: true },
  'recommend groups': { positive: [3], group_by: 'color', group_size: 3, limit: 2 },
};

const REFUSED: Record<string, object> = {
  'a missing stored example': { query: { recommend: { positive: [3, 5000] } } },
  'fusion without prefetches': { query: { fusion: 'rrf' } },
  'several prefetches without a query': { prefetch: [{ query: Q }, { query: 4 }] },
  'a prefetch without a query': { prefetch: { query: Q, limit: 12 }, limit: 5 },
  'an unknown vector name': { query: Q, using: 'nope' },
};

t.test('one shard (one task per tree) and three shards answer alike', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  for (const [name, shards] of [['one', 1], ['three', 3]] as const) {
    resultOf(t, await call(server.url, 'PUT', `/collections/${name}`, { vectors: { size: 4, distance: 'Euclid' }, shard_number: shards }));
    resultOf(t, await call(server.url, 'PUT', `/collections/${name}/index?wait=true`, { field_name: 'price', field_schema: 'float' }));
    const points = Array.from({ length: N }, (_, i) => ({ id: i, vector: vectorOf(i), payload: payloadOf(i) }));
    resultOf(t, await call(server.url, 'PUT', `/collections/${name}/points?wait=true`, { points }));
  }
  const both = async (path: string, body: object) => {
    const [one, three] = await Promise.all(['one', 'three'].map((c) => call(server.url, 'POST', `/collections/${c}${path}`, body)));
    return { one, three };
  };

  for (const [what, body] of Object.entries(QUERIES)) {
    const { one, three } = await both('/points/query', body);
    const hits = resultOf<{ points: { id: number }[] }>(t, one).points;
    t.ok(hits.length > 0, `${what}: hits found`);
    t.same(resultIn(one), resultIn(three), `${what}: the same answer`);
  }

  const batch = await both('/points/query/batch', { searches: Object.values(QUERIES) });
  t.equal(batch.one.status, 200, 'a batch of every tree');
  t.same(resultIn(batch.one), resultIn(batch.three), 'the batch: the same answers');
  const singles = await Promise.all(Object.values(QUERIES).map(async (body) => resultIn(await call(server.url, 'POST', '/collections/one/points/query', body))));
  t.same(resultIn(batch.one), singles, 'the batch answers each tree as alone');

  for (const [what, body] of Object.entries(GROUPS)) {
    const path = 'positive' in body ? '/points/recommend/groups' : '/points/query/groups';
    const { one, three } = await both(path, body);
    t.ok(resultOf<{ groups: unknown[] }>(t, one).groups.length > 0, `${what}: groups found`);
    t.same(resultIn(one), resultIn(three), `${what}: the same groups`);
  }

  for (const [path, body] of [['/points/recommend', { positive: [3, 40], negative: [9], limit: 5 }], ['/points/discover', { target: 5, context: [{ positive: 8, negative: 21 }], limit: 5 }]] as const) {
    const { one, three } = await both(path, body);
    t.equal(one.status, 200, `v1.18 ${path}`);
    t.same(resultIn(one), resultIn(three), `v1.18 ${path}: the same answer`);
  }

  for (const [what, body] of Object.entries(REFUSED)) {
    const { one, three } = await both('/points/query', body);
    t.ok(one.status >= 400 && one.status < 500, `${what}: refused (${one.status})`);
    t.same([one.status, statusIn(one)], [three.status, statusIn(three)], `${what}: the same refusal`);
  }
  const missing = await call(server.url, 'POST', '/collections/one/points/query', REFUSED['a missing stored example']);
  t.same([missing.status, statusIn(missing)], [404, { error: 'Not found: No point with id 5000 found' }], 'a missing example is Qdrant\'s 404');
});
