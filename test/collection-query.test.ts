// The collection layer's query planning over fake shard replicas (test/helpers/fake-shards.ts)
// under a real Collection and its replica sets, with no workers and no server: routing of example
// lookups, fan-out and top-k merge, whole trees in one task on a one-shard reader and
// step by step over several shards (both equal to a brute-force reference over all points),
// batching, scroll paging, sampling, groups and the distance matrix.

import t from 'tap';
import { toFilter } from '../src/api/filter.js';
import { toFormula } from '../src/api/formula-convert.js';
import { queryGroups } from '../src/collection/groups.js';
import { searchMatrix } from '../src/collection/matrix.js';
import { runQueries } from '../src/collection/query-planner.js';
import type { QueryNode, QueryPlan, QueryRequest } from '../src/collection/query-tree.js';
import type { Distance } from '../src/engine/index.js';
import { BadInput, BadRequest, NotFound } from '../src/errors.js';
import { compareIds } from '../src/shard/shard.js';
import type { PointId } from '../src/model.js';
import type { ScoredView } from '../src/shard/search.js';
import { rng } from './helpers/data.js';
import { FakeCollection, fakeScope, scoreOf, type FakePoint } from './helpers/fake-shards.js';

const DIM = 4;
const next = rng(12);
const POINTS: FakePoint[] = Array.from({ length: 60 }, (_, i) => ({
  id: i + 1,
  // Stored vectors are f32, so the reference scores with what a shard stores.
  vector: Array.from({ length: DIM }, () => Math.fround(Math.round((next() * 2 - 1) * 1000) / 1000)),
  payload: { group: `g${i % 7}`, n: i, parity: i % 2 ? 'odd' : 'even' },
}));
const ALL_SHAPE = { withPayload: { all: false }, withVector: false };
const QUERY = [0.3, -0.2, 0.5, 0.1];

function node(plan: QueryPlan | null, more: Partial<QueryNode> = {}): QueryNode {
  return {
    plan, prefetches: [], filter: null, using: '', lookupFrom: null,
    params: { hnswEf: null, exact: false, quantization: null, indexedOnly: false, idfCorpus: null },
    scoreThreshold: null, limit: 10, offset: 0, ...more,
  };
}

function request(root: QueryNode): QueryRequest {
  return { root, shape: ALL_SHAPE, shardKey: null };
}

const nearest = (vector: number[]): QueryPlan => ({ kind: 'nearest', input: { vector } });
const odd = toFilter({ must: [{ key: 'parity', match: { value: 'odd' } }] });

/** Exact search over all points: best first, ties by id. */
function reference(distance: Distance, vector: number[], limit: number, offset = 0, keep: (p: FakePoint) => boolean = () => true): { id: PointId; score: number }[] {
  const larger = distance !== 'Euclid';
  return POINTS.filter(keep)
    .map((p) => ({ id: p.id, score: scoreOf(distance, p.vector, vector) }))
    .sort((a, b) => (larger ? b.score - a.score : a.score - b.score) || compareIds(a.id, b.id))
    .slice(offset, offset + limit);
}

/** Reciprocal rank fusion as Qdrant defines it (k = 2): 1 / (position + k), summed. */
function referenceRrf(lists: { id: PointId }[][]): { id: PointId; score: number }[] {
  const scores = new Map<PointId, number>();
  for (const list of lists) list.forEach((h, position) => scores.set(h.id, (scores.get(h.id) ?? 0) + 1 / (position + 2)));
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || compareIds(a.id, b.id));
}

const brief = (hits: ScoredView[]) => hits.map((h) => ({ id: h.id, score: h.score }));

t.test('fan-out and top-k merge equal an exact search over all points', async (t) => {
  for (const distance of ['Dot', 'Euclid'] as const) {
    const fake = await FakeCollection.open('c', POINTS, 3, distance);
    t.ok(fake.sizes.every((n) => n > 0), 'every shard holds points');
    const [hits] = await runQueries(fakeScope(fake), [request(node(nearest(QUERY), { limit: 7, offset: 3 }))]);
    t.same(brief(hits), reference(distance, QUERY, 7, 3), `${distance}: offset and limit over the merged list`);
    t.same(fake.takeTasks(), { search: 3 }, `${distance}: one search task per shard`);
    const [filtered] = await runQueries(fakeScope(fake), [request(node(nearest(QUERY), { filter: odd, limit: 5 }))]);
    t.same(brief(filtered), reference(distance, QUERY, 5, 0, (p) => p.payload.parity === 'odd'), `${distance}: filtered`);
    fake.takeTasks();
  }
});

t.test('stored examples: read only from the shards holding them, once per tree, and left out of the results', async (t) => {
  const fake = await FakeCollection.open('c', POINTS, 3, 'Dot');
  const example = POINTS[4];
  const tree = node({ kind: 'fusion', method: 'rrf', k: null, weights: null }, {
    prefetches: [node({ kind: 'nearest', input: { pointId: example.id } }), node({ kind: 'recommend', positives: [{ pointId: example.id }], negatives: [], strategy: 'average_vector' })],
  });
  const [hits] = await runQueries(fakeScope(fake), [request(tree)]);
  const prefetch = reference('Dot', example.vector, 10, 0, (p) => p.id !== example.id);
  t.same(brief(hits), referenceRrf([prefetch, prefetch]).slice(0, 10), 'both prefetches search by the stored vector, without the example');
  t.same(fake.takeTasks(), { retrieve: 1, search: 3 }, 'one retrieve (only the owning shard), then both prefetches in one search task per shard');

  const single = await FakeCollection.open('c', POINTS, 1, 'Dot');
  const [alone] = await runQueries(fakeScope(single), [request(tree)]);
  t.same(brief(alone), brief(hits), 'one shard: the same answer');
  t.same(single.takeTasks(), { query: 1 }, 'one shard: the examples are read where the tree runs, in its one task');

  const other = await FakeCollection.open('c', [{ id: 'a6f0c2d4-1b3e-4f5a-8c7d-9e0f1a2b3c4d', vector: example.vector, payload: {} }], 1, 'Dot');
  const lookedUp = node({ kind: 'nearest', input: { pointId: 'a6f0c2d4-1b3e-4f5a-8c7d-9e0f1a2b3c4d' } }, { lookupFrom: { collection: 'other', vector: null, shardKey: null } });
  const [fromOther] = await runQueries(fakeScope(single, { other }), [request(lookedUp)]);
  t.same(brief(fromOther), reference('Dot', example.vector, 10), 'lookup_from: the other collection\'s vector, and no point left out');
  t.same([other.takeTasks(), single.takeTasks()], [{ retrieve: 1 }, { query: 1 }], 'lookup_from: read from the other collection first, then one task');

  for (const shards of [1, 3]) {
    const missing = await FakeCollection.open('c', POINTS, shards, 'Dot');
    await t.rejects(runQueries(fakeScope(missing), [request(node({ kind: 'nearest', input: { pointId: 999 } }))]), new NotFound('No point with id 999 found'), `${shards} shard(s): a missing example is not found`);
  }
  await t.rejects(runQueries(fakeScope(fake), [request(node({ kind: 'fusion', method: 'rrf', k: null, weights: null }))]), new BadInput('Validation failed: cannot apply Fusion without prefetches'));
  const [scrolled] = await runQueries(fakeScope(fake), [request(node(null, { limit: 4, offset: 1 }))]);
  t.same(scrolled.map((h) => [h.id, h.score, h.version]), [...POINTS].sort((a, b) => compareIds(a.id, b.id)).slice(1, 5).map((p) => [p.id, 1, 0]), 'no query: points in id order, score 1, version 0');
  await t.rejects(runQueries(fakeScope(fake), [request(node(null, { prefetches: [node(nearest(QUERY))] }))]), new BadRequest("A query is needed to merge the prefetches. Can't have prefetches without defining a query."));
});

t.test('a tree with fusion and rescoring: one task on one shard, step by step over several, same answer', async (t) => {
  const other = [-0.4, 0.1, 0.2, 0.7];
  const tree = () => node(nearest(QUERY), {
    limit: 5,
    offset: 1,
    filter: odd,
    prefetches: [node({ kind: 'fusion', method: 'rrf', k: null, weights: null }, {
      limit: 12,
      prefetches: [node(nearest(QUERY), { limit: 15 }), node(nearest(other), { limit: 15 })],
    })],
  });
  const isOdd = (p: FakePoint) => p.payload.parity === 'odd';
  const fused = referenceRrf([reference('Dot', QUERY, 15, 0, isOdd), reference('Dot', other, 15, 0, isOdd)]).slice(0, 12);
  const candidates = new Set(fused.map((h) => h.id));
  const expected = reference('Dot', QUERY, 5, 1, (p) => candidates.has(p.id));

  const single = await FakeCollection.open('c', POINTS, 1, 'Dot');
  const [one] = await runQueries(fakeScope(single), [request(tree())]);
  t.same(brief(one), expected, 'one shard: the exact answer');
  t.same(single.takeTasks(), { query: 1 }, 'one shard: the whole tree in one task');

  const several = await FakeCollection.open('c', POINTS, 4, 'Dot');
  const [many] = await runQueries(fakeScope(several), [request(tree())]);
  t.same(brief(many), expected, 'four shards: the same answer');
  t.same(several.takeTasks(), { search: 8 }, 'four shards: the leaves in one task per shard, then the rescoring in one more');
});

t.test('a batch reading the same shards goes to them together', async (t) => {
  const fake = await FakeCollection.open('c', POINTS, 3, 'Dot');
  const vectors = [QUERY, [1, 0, 0, 0], [0, 0, -1, 0.5]];
  const results = await runQueries(fakeScope(fake), vectors.map((v) => request(node(nearest(v), { limit: 4 }))));
  results.forEach((hits, i) => t.same(brief(hits), reference('Dot', vectors[i], 4), `request ${i}`));
  t.same(fake.takeTasks(), { search: 3 }, 'one search task per shard for the whole batch');

  const single = await FakeCollection.open('c', POINTS, 1, 'Dot');
  const trees = vectors.map((v) => request(node(nearest(v), { limit: 3, prefetches: [node(nearest(v), { limit: 6 })] })));
  const answers = await runQueries(fakeScope(single), trees);
  answers.forEach((hits, i) => t.same(brief(hits), reference('Dot', vectors[i], 3), `tree ${i}: its prefetch's hits rescored, paged`));
  t.same(single.takeTasks(), { query: 1 }, 'one shard: all trees of the batch in one task');
});

t.test('order_by and sample queries read points', async (t) => {
  for (const shards of [1, 3]) {
    const fake = await FakeCollection.open('c', POINTS, shards, 'Dot', [{ key: 'n', schema: 'integer' }]);
    const orderBy: QueryPlan = { kind: 'order_by', orderBy: { key: 'n', direction: 'desc', startFrom: null } };
    const [ordered] = await runQueries(fakeScope(fake), [request(node(orderBy, { limit: 4, offset: 2, filter: odd }))]);
    t.same(ordered.map((h) => [h.id, h.score, h.version]), [[56, 1, 0], [54, 1, 0], [52, 1, 0], [50, 1, 0]], `${shards} shard(s): largest n first, odd ones, past the offset`);
    const [sampled] = await runQueries(fakeScope(fake), [request(node({ kind: 'sample' }, { limit: 8, filter: odd }))]);
    t.equal(new Set(sampled.map((h) => h.id)).size, 8, `${shards} shard(s): 8 distinct points`);
    t.ok(sampled.every((h) => (h.id as number) % 2 === 0), 'all match the filter (odd n = even id)');
    const unindexed: QueryPlan = { kind: 'order_by', orderBy: { key: 'group', direction: null, startFrom: null } };
    await t.rejects(runQueries(fakeScope(fake), [request(node(unindexed))]), { message: /No range index for `order_by` key: `group`/ }, 'order_by needs a range index');
    const none = toFilter({ must: [{ key: 'parity', match: { value: 'neither' } }] });
    const [empty] = await runQueries(fakeScope(fake), [request(node(unindexed, { prefetches: [node(nearest(QUERY), { filter: none })] }))]);
    t.same(empty, [], `${shards} shard(s): rescoring no candidates answers nothing, before order_by is checked`);
    const [emptyRecommend] = await runQueries(fakeScope(fake), [request(node({ kind: 'recommend', positives: [], negatives: [], strategy: 'average_vector' }, { prefetches: [node(nearest(QUERY), { filter: none })] }))]);
    t.same(emptyRecommend, [], `${shards} shard(s): nor is the rescoring query built`);
  }
});

t.test('scroll pages across shards in id order; sample draws distinct points', async (t) => {
  const fake = await FakeCollection.open('c', POINTS, 3, 'Dot');
  const reader = fake.reader();
  const seen: PointId[] = [];
  let from: PointId | null = null;
  for (let page = 0; page < 20; page++) {
    const result = await reader.scroll(null, from, 7, ALL_SHAPE, null);
    seen.push(...result.points.map((p) => p.id));
    from = result.next_page_offset;
    if (from === null) break;
  }
  t.same(seen, POINTS.map((p) => p.id), 'every point once, in id order, then no next page');
  const drawn = await reader.sample(odd, 100, ALL_SHAPE);
  t.same(drawn.map((p) => p.id).sort(compareIds), POINTS.filter((p) => p.payload.parity === 'odd').map((p) => p.id), 'asking more than match draws every match once');
});

t.test('groups: best hits per group value, with each group looked up', async (t) => {
  const fake = await FakeCollection.open('c', POINTS, 3, 'Dot');
  const lookups = await FakeCollection.open('c', Array.from({ length: 7 }, (_, i) => ({ id: i, vector: [0, 0, 0, 0], payload: { name: `group ${i}` } })), 2, 'Dot');
  const byN = new Map(POINTS.map((p) => [p.id, p]));
  const groups = await queryGroups(fakeScope(fake, { lookups }), request(node(nearest(QUERY))), {
    groupBy: 'n', groupSize: 1, limit: 4,
    lookup: { collection: 'lookups', shape: { withPayload: { all: true }, withVector: false } },
  });
  const top = reference('Dot', QUERY, 4);
  t.same(groups.map((g) => g.id), top.map((h) => byN.get(h.id)!.payload.n), 'one group per distinct n, best first');
  t.same(groups.map((g) => brief(g.hits)), top.map((h) => [h]), 'each holding its point');
  t.same(groups.map((g) => g.lookup?.payload ?? null), groups.map((g) => ((g.id as number) < 7 ? { name: `group ${g.id}` } : null)), 'looked up where the id names a point');

  const bigger = await queryGroups(fakeScope(fake), request(node(nearest(QUERY))), { groupBy: 'group', groupSize: 3, limit: 7, lookup: null });
  t.equal(bigger.length, 7, 'all 7 groups');
  for (const g of bigger) {
    const members = POINTS.filter((p) => p.payload.group === g.id).map((p) => p.id);
    t.same(brief(g.hits), reference('Dot', QUERY, 3, 0, (p) => members.includes(p.id)), `${g.id}: its 3 best points`);
  }
});

t.test('distance matrix: exact neighbours within the sample', async (t) => {
  const fake = await FakeCollection.open('c', POINTS, 3, 'Euclid');
  const matrix = await searchMatrix(fakeScope(fake), { shardKey: null, filter: odd, using: '', sample: 9, limit: 2 });
  t.equal(matrix.ids.length, 9, 'the sample has the asked size');
  t.same(matrix.ids, [...matrix.ids].sort((a, b) => (a as number) - (b as number)), 'sampled ids listed in id order, as Qdrant lists them');
  const sampled = new Set(matrix.ids);
  t.ok(matrix.ids.every((id) => (id as number) % 2 === 0), 'only matching points are sampled');
  matrix.ids.forEach((id, i) => {
    const own = POINTS.find((p) => p.id === id)!;
    const expected = reference('Euclid', own.vector, 2, 0, (p) => sampled.has(p.id) && p.id !== id);
    t.same(brief(matrix.neighbours[i]), expected, `point ${id}: its 2 nearest other sampled points`);
  });
  t.same(fake.takeTasks(), { sample: 3, search: 3 }, 'one sample (with vectors) and one batched search per shard');
  const lone = await searchMatrix(fakeScope(fake), { shardKey: null, filter: { must: [{ kind: 'hasId', ids: new Set([2]) }] }, using: '', sample: 9, limit: 2 });
  t.same(lone, { ids: [], neighbours: [] }, 'under two sampled points there is no matrix, as in Qdrant');
});

t.test('a formula rescores in the shards holding the candidates: one task on one shard, one round more over several', async (t) => {
  const formula = toFormula({ formula: { sum: ['$score', { mult: [0.01, 'n'] }, { mult: [0.5, { key: 'parity', match: { value: 'odd' } }] }] } });
  const tree = node({ kind: 'formula', formula }, { limit: 5, offset: 1, prefetches: [node(nearest(QUERY), { limit: 20 })] });
  const expected = reference('Dot', QUERY, 20)
    .map(({ id, score }) => {
      const p = POINTS.find((q) => q.id === id)!;
      return { id, score: Math.fround(Math.fround(score) + Math.fround(0.01) * (p.payload.n as number) + (p.payload.parity === 'odd' ? 0.5 : 0)) };
    })
    .sort((a, b) => b.score - a.score || compareIds(a.id, b.id))
    .slice(1, 6);
  for (const shards of [1, 3]) {
    const fake = await FakeCollection.open('c', POINTS, shards, 'Dot');
    const [hits] = await runQueries(fakeScope(fake), [request(tree)]);
    t.same(hits.map((h) => h.id), expected.map((h) => h.id), `${shards} shard(s): the formula's order, past the offset`);
    t.ok(hits.every((h, i) => Math.abs(h.score - expected[i].score) < 1e-5), `${shards} shard(s): the formula's scores`);
    t.same(fake.takeTasks(), shards === 1 ? { query: 1 } : { search: 3, formula: 3 }, `${shards} shard(s): tasks`);
  }
});

t.test('MMR: in the tree\'s task on one shard, in one shard\'s worker over the merged candidates on several', async (t) => {
  const tree = node({ kind: 'mmr', input: { vector: QUERY }, lambda: 0.4, candidatesLimit: 25 }, { limit: 6, offset: 1 });
  const answers = [];
  for (const shards of [1, 3]) {
    const fake = await FakeCollection.open('c', POINTS, shards, 'Dot');
    const [hits] = await runQueries(fakeScope(fake), [request(tree)]);
    answers.push(brief(hits));
    t.same(fake.takeTasks(), shards === 1 ? { query: 1 } : { search: 3, mmr: 1 }, `${shards} shard(s): tasks`);
    t.ok(hits.every((h) => h.vectors === undefined), `${shards} shard(s): the compared vector is not returned unasked`);
  }
  t.same(answers[1], answers[0], 'the same picks, with their search scores');
  const candidates = new Set(reference('Dot', QUERY, 25).map((h) => h.id));
  t.ok(answers[0].length === 6 && answers[0].every((h) => candidates.has(h.id)), 'six picks among the 25 nearest');
});
