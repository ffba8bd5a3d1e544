// What several replicas' answers to one read resolve to (src/replica/read-resolution.ts), against
// an exact reference: an item is kept when at least k answers hold it identically (k = all of
// them, or a majority), in the answers' order merged head by head; counts take the smallest or
// the median; facet values need k answers, their counts resolve as counts.

import t from 'tap';
import { resolveAnswers, resolveCount, resolveFacet, resolveRecords, resolveScored, resolutionCount } from '../src/replica/read-resolution.js';
import type { ResolveCondition } from '../src/replica/read-consistency.js';
import type { PointView } from '../src/shard/selectors.js';
import type { ScoredView } from '../src/shard/search.js';
import type { RankedList } from '../src/shard/fusion.js';
import type { FacetValue } from '../src/shard/payload-index/types.js';
import type { ReplicaTask } from '../src/replica/replica.js';
import type { Payload } from '../src/model.js';

const CONDITIONS: ResolveCondition[] = ['All', 'Majority'];

function scored(id: number, score: number, payload?: Payload): ScoredView {
  return payload === undefined ? { id, score, version: 1 } : { id, score, version: 1, payload };
}

/** The reference: ids held identically (by `key`) by at least k answers. */
function keptIds<I extends { id: unknown }>(answers: I[][], condition: ResolveCondition, key: (item: I) => string): Set<unknown> {
  const k = resolutionCount(condition, answers.length);
  const counts = new Map<string, { id: unknown; n: number }>();
  for (const items of answers) for (const item of items) {
    const entry = counts.get(key(item)) ?? { id: item.id, n: 0 };
    entry.n++;
    counts.set(key(item), entry);
  }
  return new Set([...counts.values()].filter((e) => e.n >= k).map((e) => e.id));
}

t.test('resolution counts: all answers, or a majority of them', async (t) => {
  t.same([1, 2, 3, 4, 5].map((n) => resolutionCount('All', n)), [1, 2, 3, 4, 5]);
  t.same([1, 2, 3, 4, 5].map((n) => resolutionCount('Majority', n)), [1, 2, 2, 3, 3]);
});

t.test('one answer is the answer as is, whatever it holds', async (t) => {
  const only = [scored(2, 0.5), scored(1, 0.9)];
  const task: ReplicaTask = { type: 'search', searches: [] };
  for (const condition of CONDITIONS) t.equal(resolveAnswers(task, [[only]], condition)[0], only, `${condition}: the same list, not a copy`);
  const sample = { type: 'sample' as const, filter: null, limit: 2, shape: { withPayload: { all: true }, withVector: false } };
  const first = { points: [{ id: 1 }], matching: 1 };
  t.equal(resolveAnswers(sample, [first, { points: [{ id: 2 }], matching: 1 }], 'All'), first, 'a task that does not resolve (sample) takes the first answer');
});

t.test('scored lists: kept items, in the answers\' order', async (t) => {
  // Replica answers over ids 1..12 with random drops and score changes; the reference keeps an
  // id whose (id, score) pair at least k answers hold.
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let round = 0; round < 40; round++) {
    const replicas = 2 + (round % 4);
    const answers = Array.from({ length: replicas }, () =>
      Array.from({ length: 12 }, (_, i) => scored(i + 1, 1 - i / 20 + (random() < 0.15 ? 0.5 : 0))).filter(() => random() > 0.2),
    );
    for (const condition of CONDITIONS) {
      const resolved = resolveScored(answers, condition);
      const expected = keptIds(answers, condition, (p) => `${p.id}:${p.score}`);
      t.same(new Set(resolved.map((p) => p.id)), expected, `round ${round}, ${replicas} replicas, ${condition}: the ids held by enough answers`);
      t.equal(resolved.length, expected.size, 'each once');
      // Every answer lists ids in increasing order here, so the merge keeps that order.
      t.same(resolved.map((p) => p.id), [...resolved.map((p) => p.id)].sort((a, b) => Number(a) - Number(b)), 'in the answers\' order');
    }
  }
});

t.test('merge of heads: the item heading the most answers comes first', async (t) => {
  // Qdrant's example: [A, F, B, C], [A, B, C], [F, B, C] merge as A, F, B, C.
  const [a, f, b, c] = [1, 6, 2, 3].map((id) => scored(id, 0));
  t.same(resolveScored([[a, f, b, c], [a, b, c], [f, b, c]], 'Majority').map((p) => p.id), [1, 6, 2, 3]);
  t.same(resolveScored([[a, f, b, c], [a, b, c], [f, b, c]], 'All').map((p) => p.id), [2, 3], 'All: only what every answer holds');
});

t.test('identical means the same id, score, payload (absent = {}), vectors and order value', async (t) => {
  const base = scored(1, 0.5, { a: 1, b: [1, 2] });
  const same = [
    { ...base, payload: { b: [1, 2], a: 1 } },
    { ...base, shardKey: 'k', version: 9 },
  ];
  for (const other of same) t.same(resolveScored([[base], [other]], 'All').map((p) => p.id), [1], `kept: ${JSON.stringify(other)}`);
  t.same(resolveScored([[scored(1, 0.5)], [scored(1, 0.5, {})]], 'All').map((p) => p.id), [1], 'an absent payload equals an empty one');
  const differ: ScoredView[] = [
    scored(1, 0.6, { a: 1, b: [1, 2] }),
    scored(1, 0.5, { a: 2, b: [1, 2] }),
    scored(1, 0.5, { a: 1, b: [2, 1] }),
    scored(1, 0.5),
    { ...base, vectors: { '': new Float32Array([1]) } },
    { ...base, orderValue: 3 },
  ];
  for (const other of differ) t.same(resolveScored([[base], [other]], 'All'), [], `dropped: ${JSON.stringify(other)}`);
  const v1: PointView = { id: 'x', vectors: { '': new Float32Array([1, 2]) } };
  t.same(resolveRecords([[v1], [{ id: 'x', vectors: { '': new Float32Array([1, 2]) } }]], 'All').map((p) => p.id), ['x'], 'records: equal vectors');
  t.same(resolveRecords([[v1], [{ id: 'x', vectors: { '': new Float32Array([1, 3]) } }]], 'All'), [], 'records: different vectors');
});

t.test('records by majority: the variant most replicas hold', async (t) => {
  const answers: PointView[][] = [
    [{ id: 1, payload: { v: 1 } }, { id: 2, payload: { v: 1 } }],
    [{ id: 1, payload: { v: 2 } }, { id: 2, payload: { v: 1 } }],
    [{ id: 1, payload: { v: 2 } }],
  ];
  t.same(resolveRecords(answers, 'Majority'), [{ id: 1, payload: { v: 2 } }, { id: 2, payload: { v: 1 } }], 'id 1 as two of three hold it, id 2 held by two');
  t.same(resolveRecords(answers, 'All'), [], 'no point every answer holds identically');
});

t.test('a search batch resolves per entry; a query per list', async (t) => {
  const answers: ScoredView[][][] = [
    [[scored(1, 0.9), scored(2, 0.8)], [scored(5, 0.1)]],
    [[scored(1, 0.9), scored(3, 0.7)], [scored(5, 0.1), scored(6, 0.2)]],
  ];
  const resolved = resolveAnswers({ type: 'search' as const, searches: [] }, answers, 'All');
  t.same(resolved.map((entry) => entry.map((p) => p.id)), [[1], [5]]);
  const lists: RankedList[][] = answers.map((entries) => entries.map((hits) => ({ hits, largerBetter: false })));
  const query = resolveAnswers({ type: 'query' as const, queries: [] }, lists, 'All');
  t.same(query.map((l) => [l.hits.map((p) => p.id), l.largerBetter]), [[[1], false], [[5], false]]);
});

t.test('counts: the smallest of all, the median by majority', async (t) => {
  t.equal(resolveCount([7, 3, 9], 'All'), 3);
  t.equal(resolveCount([7, 3, 9], 'Majority'), 7);
  t.equal(resolveCount([7, 3, 9, 10], 'Majority'), 9, 'even: the upper middle of the sorted counts');
  t.equal(resolveAnswers({ type: 'count', filter: null }, [4, 5], 'All'), 4);
});

t.test('facets: values held by enough answers, counts resolved as counts, in the answers\' order', async (t) => {
  const answers: [FacetValue, number][][] = [
    [['a', 20], ['b', 15], ['c', 1]],
    [['a', 21], ['b', 13]],
    [['b', 14], ['a', 22], [1, 5]],
  ];
  t.same(resolveFacet(answers, 'All'), [['a', 20], ['b', 13]], 'All: values every answer holds, smallest counts');
  t.same(resolveFacet(answers, 'Majority'), [['a', 21], ['b', 14]], 'Majority: values two hold, median counts');
  t.same(resolveFacet([[['1', 2]], [[1, 2]]], 'All'), [], 'the string "1" is not the number 1');
  const reordered = resolveRecords([[{ id: 1 }, { id: 2 }], [{ id: 2 }, { id: 1 }]], 'All');
  t.same(reordered.map((p) => p.id).sort(), [1, 2], 'answers ordering kept items differently: each item once');
});
