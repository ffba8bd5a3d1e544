// How shard answers merge: a k-way merge by the scores shown in the distance's order, each
// shard's list kept in its own order (Qdrant's collection-level kmerge_by), which for ranked
// lists is the sort of their union, ties by id.

import t from 'tap';
import { mergeHits, rankHits, type ScoredView } from '../src/shard/search.js';

const hit = (id: number, score: number): ScoredView => ({ id, score, version: 0 });
const ids = (hits: ScoredView[]): number[] => hits.map((h) => Number(h.id));

t.test('ranked lists merge into the sorted union, ties by id', async (t) => {
  const a = [hit(1, 0.9), hit(4, 0.5), hit(2, 0.5)];
  const b = [hit(3, 0.7), hit(5, 0.5), hit(6, 0.1)];
  t.same(ids(mergeHits([a, b], true)), ids(rankHits([...a, ...b], true)));
  t.same(ids(mergeHits([a, b], true)), [1, 3, 2, 4, 5, 6]);
  t.same(ids(mergeHits([[hit(1, 1), hit(2, 3)], [hit(3, 2)]], false)), [1, 3, 2], 'smaller first for a distance');
});

t.test('a list not ordered by the score shown keeps its order, merged by heads', async (t) => {
  // Unrescored binary Euclid: sqrt(|dim - 2 xor|) of each shard's best points first.
  const shard1 = [hit(1, 4), hit(2, 1), hit(3, 3)];
  const shard2 = [hit(4, 2), hit(5, 5)];
  // Heads 4 (id 1) and 2 (id 4): id 4; then 4 (id 1) against 5 (id 5): id 1; then ids 2, 3, 5.
  t.same(ids(mergeHits([shard1, shard2], false)), [4, 1, 2, 3, 5]);
  t.same(ids(mergeHits([shard1], false)), [1, 2, 3], 'one shard: its own order');
});
