// The live-offset set a shard keeps for filters: what is added and not deleted, below a size.

import t from 'tap';
import { LiveOffsets } from '../src/shard/live-offsets.js';

t.test('holds the offsets added and not deleted since, below the size asked', async (t) => {
  const live = new LiveOffsets();
  const reference = new Set<number>();
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 5000;
  for (let i = 0; i < 20000; i++) {
    const offset = next();
    if (i % 3 === 0) { live.delete(offset); reference.delete(offset); } else { live.add(offset); reference.add(offset); }
  }
  for (const size of [0, 1, 31, 32, 33, 4096, 4999, 5000, 7000]) {
    const set = live.below(size);
    t.equal(set.size, size);
    t.same([...set], [...reference].filter((o) => o < size).sort((a, b) => a - b), `size ${size}`);
  }
});

t.test('deleting an offset never added, or past every word, changes nothing', async (t) => {
  const live = new LiveOffsets();
  live.delete(100000);
  live.add(3);
  live.delete(4);
  t.same([...live.below(10)], [3]);
});
