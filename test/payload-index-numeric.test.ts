// Integer, float and datetime indexes: ranges and matches against brute force under random
// updates (the sorted arrays merge buffered writes), ordered iteration for order_by, and the
// integer index's lookup/range switches.

import t from 'tap';
import type { Payload } from '../src/model.js';
import { isOrderedIndex, type OrderedEntry } from '../src/shard/payload-index/index.js';
import { rng } from './helpers/data.js';
import { answer, indexOf } from './helpers/filter-index.js';

t.test('integer index', async (t) => {
  const index = indexOf('n', 'integer', [{ n: 1 }, { n: [2, 3] }, { n: 2.5 }, { n: '1' }, { n: null }, { n: [1, 'x'] }, { n: -4 }]);
  t.equal(index.indexedPoints(), 4, 'points holding an integer');
  t.same(answer(index, { key: 'n', match: { value: 1 } }), [0, 5]);
  t.same(answer(index, { key: 'n', match: { any: [3, -4, 9] } }), [1, 6]);
  // except: an integer outside the list, or any non-null value of another type.
  t.same(answer(index, { key: 'n', match: { except: [1, 2, 3] } }), [2, 3, 5, 6]);
  // Ranges see every number, floats included, as payload checks do.
  t.same(answer(index, { key: 'n', range: { gt: 2, lte: 3 } }), [1, 2]);
  t.same(answer(index, { key: 'n', range: {} }), [0, 1, 2, 5, 6]);
  t.same(answer(index, { key: 'n', match: { value: 'x' } }), undefined);
  t.same(answer(index, { key: 'n', range: { gt: '2024-01-01' } }), undefined, 'datetime ranges are not numbers');
  const noLookup = indexOf('n', { type: 'integer', lookup: false }, [{ n: 1 }]);
  t.same(answer(noLookup, { key: 'n', match: { value: 1 } }), undefined, 'lookup: false leaves matches to payload checks');
  t.same(answer(noLookup, { key: 'n', range: { gte: 1 } }), [0]);
  const noRange = indexOf('n', { type: 'integer', range: false }, [{ n: 1 }]);
  t.same(answer(noRange, { key: 'n', range: { gte: 1 } }), undefined, 'range: false leaves ranges to payload checks');
  t.same(answer(noRange, { key: 'n', match: { value: 1 } }), [0]);
});

t.test('float and datetime indexes', async (t) => {
  const floats = indexOf('f', 'float', [{ f: 0.5 }, { f: [1, 1.5] }, { f: '2' }, { f: -1e-9 }]);
  t.same(answer(floats, { key: 'f', range: { gte: 0, lt: 1.5 } }), [0, 1]);
  t.same(answer(floats, { key: 'f', range: { lt: 0 } }), [3]);
  t.same(answer(floats, { key: 'f', match: { value: 1 } }), undefined, 'float indexes do not serve matches');
  const dates = indexOf('d', 'datetime', [{ d: '2024-01-01T00:00:00Z' }, { d: ['2024-01-01T01:00:00+02:00', 'x'] }, { d: 20240101 }, { d: '2024-01-02' }]);
  t.equal(dates.indexedPoints(), 3);
  t.same(answer(dates, { key: 'd', range: { lt: '2024-01-01T00:00:00Z' } }), [1]);
  t.same(answer(dates, { key: 'd', range: { gte: '2024-01-01', lte: '2024-01-02 00:00:00' } }), [0, 3]);
  t.same(answer(dates, { key: 'd', range: { gte: 0 } }), undefined, 'numeric ranges are not datetimes');
});

t.test('ranges and order stay exact under random updates', async (t) => {
  const next = rng(7);
  const N = 500;
  const payloads: (Payload | undefined)[] = [];
  const value = (): Payload => {
    const r = next();
    if (r < 0.1) return {};
    if (r < 0.4) return { v: Array.from({ length: Math.floor(next() * 3) }, () => Math.floor(next() * 50) - 25) };
    return { v: r < 0.7 ? Math.floor(next() * 50) - 25 : Math.round(next() * 500 - 250) / 10 };
  };
  for (let i = 0; i < N; i++) payloads.push(value());
  for (const type of ['integer', 'float'] as const) {
    const index = indexOf('v', type, payloads);
    const current = [...payloads];
    let wrong = 0;
    for (let round = 0; round < 200; round++) {
      const changes = Math.floor(next() * 20);
      for (let c = 0; c < changes; c++) {
        const offset = Math.floor(next() * N);
        if (next() < 0.3) {
          current[offset] = undefined;
          index.remove(offset);
        } else {
          current[offset] = value();
          index.add(offset, current[offset]!);
        }
      }
      const lo = Math.floor(next() * 60) - 30;
      const bounds = { gte: lo, lt: lo + Math.floor(next() * 20) };
      const expected = current.flatMap((p, o) => {
        const vs = p?.v === undefined ? [] : [p.v].flat() as number[];
        return vs.some((v) => v >= bounds.gte && v < bounds.lt) ? [o] : [];
      });
      if (JSON.stringify(answer(index, { key: 'v', range: bounds }, N)) !== JSON.stringify(expected)) wrong++;
    }
    t.equal(wrong, 0, `${type}: 200 rounds of updates and ranges`);

    if (!isOrderedIndex(index)) throw new Error('numeric indexes are ordered');
    const entries = current.flatMap((p, offset) => (p?.v === undefined ? [] : ([p.v].flat() as number[]).map((v) => ({ value: v, offset }))))
      .filter((e) => type === 'float' || Number.isInteger(e.value))
      .sort((a, b) => a.value - b.value || a.offset - b.offset);
    const asc: OrderedEntry[] = [...index.ordered('asc')];
    t.same(asc, entries, `${type}: ascending, one entry per value`);
    t.same([...index.ordered('desc')], [...entries].reverse(), `${type}: descending`);
    t.same([...index.ordered('asc', 3)], entries.filter((e) => e.value >= 3), `${type}: ascending from 3`);
    t.same([...index.ordered('desc', 3)], [...entries].reverse().filter((e) => e.value <= 3), `${type}: descending from 3`);
  }
});
