// The set operations filters add to Bitset, against plain Sets.

import t from 'tap';
import { Bitset } from '../src/engine/bitset.js';
import { rng } from './helpers/data.js';

function randomSet(seed: number, size: number, density: number): Set<number> {
  const next = rng(seed);
  const s = new Set<number>();
  for (let i = 0; i < size; i++) if (next() < density) s.add(i);
  return s;
}

t.test('and, or, andNot, invert, clone, iteration', async (t) => {
  for (const size of [0, 1, 31, 32, 33, 100, 1000]) {
    const a = randomSet(size, size, 0.4);
    const b = randomSet(size + 1, size, 0.6);
    const bits = (s: Set<number>) => Bitset.of(size, s);
    const sorted = (s: Iterable<number>) => [...s].sort((x, y) => x - y);
    t.same([...bits(a).and(bits(b))], sorted([...a].filter((x) => b.has(x))), `and, size ${size}`);
    t.same([...bits(a).or(bits(b))], sorted(new Set([...a, ...b])), `or, size ${size}`);
    t.same([...bits(a).andNot(bits(b))], sorted([...a].filter((x) => !b.has(x))), `andNot, size ${size}`);
    const inverted = bits(a).invert();
    t.same([...inverted], [...Array(size).keys()].filter((x) => !a.has(x)), `invert, size ${size}`);
    t.equal(inverted.count(), size - a.size, 'no bits past size after invert');
    const original = bits(a);
    const copy = original.clone();
    copy.add(0);
    copy.delete(size - 1);
    t.same([...original], sorted(a), 'a clone is independent');
    const seen: number[] = [];
    original.forEach((o) => seen.push(o));
    t.same(seen, sorted(a), 'forEach visits members in order');
    t.equal(original.isEmpty(), a.size === 0);
  }
  const high = new Bitset(64);
  high.add(31);
  high.add(63);
  t.same([...high], [31, 63], 'bit 31 of a word');
});
