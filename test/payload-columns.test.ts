// The payload columns a shard keeps for filters checked on every point: each column reads as
// payload[key] would at every offset, through writes, removals, out-of-order offsets and
// evictions of the least recently asked key.

import t from 'tap';
import type { Payload } from '../src/model.js';
import { ownValue } from '../src/shard/filter/json-path.js';
import { PayloadColumns } from '../src/shard/payload-columns.js';

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f', 'toString', '__proto__'];

/** What a column must hold: the own value of `key` at each offset. */
function expected(payloads: (Payload | undefined)[], key: string): unknown[] {
  return Array.from(payloads, (p) => (p === undefined ? undefined : ownValue(p, key)));
}

/** Equal element by element, a missing value (undefined) told apart from null. */
function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => (v === undefined) === (b[i] === undefined) && JSON.stringify(v) === JSON.stringify(b[i]));
}

t.test('columns follow every write, removal and out-of-order offset', async (t) => {
  const payloads: (Payload | undefined)[] = [];
  const columns = new PayloadColumns(payloads);
  let seed = 99;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const write = (offset: number, payload: Payload | undefined) => {
    payloads[offset] = payload;
    columns.set(offset, payload);
  };
  for (let i = 0; i < 50; i++) write(i, { a: i % 3, b: `s${i}` });
  let mismatches = 0;
  for (let step = 0; step < 3000; step++) {
    const offset = next(payloads.length + 3); // sometimes past the end, leaving offsets unset below it
    const payload: Payload | undefined = next(5) === 0 ? undefined : { [KEYS[next(6)]]: next(4), [KEYS[next(6)]]: [next(3), null], c: next(2) === 0 ? null : 'x' };
    write(offset, payload);
    const key = KEYS[next(KEYS.length)];
    if (!sameValues(columns.column(key), expected(payloads, key)) && mismatches++ < 3) t.fail(`step ${step}: column ${key} differs`);
  }
  t.equal(mismatches, 0, 'every column asked for reads as the payloads do');
});

t.test('more keys than are kept: the least recently asked is dropped and made again when asked', async (t) => {
  const payloads: (Payload | undefined)[] = [{ a: 1, b: 2, c: 3, d: 4, e: 5 }];
  const columns = new PayloadColumns(payloads);
  const a = columns.column('a');
  for (const key of ['b', 'c', 'd']) columns.column(key);
  t.equal(columns.column('a'), a, 'a kept column is handed out again');
  columns.column('e'); // five keys: b, asked least recently, goes
  const b = columns.column('b');
  payloads[0] = { a: 10, b: 20 };
  columns.set(0, payloads[0]);
  t.strictSame(b, [20], 'a column made again is kept up to date');
  t.strictSame(columns.column('a'), [10], 'so are the kept ones');
  t.strictSame(columns.column('c'), [undefined], 'a key written away reads as missing');
});

t.test('inherited names are not values', async (t) => {
  const payloads: (Payload | undefined)[] = [{ a: 1 }, JSON.parse('{"__proto__": 5, "toString": "x"}'), undefined];
  const columns = new PayloadColumns(payloads);
  t.strictSame(columns.column('toString'), [undefined, 'x', undefined]);
  t.strictSame(columns.column('__proto__'), [undefined, 5, undefined]);
  t.strictSame(columns.column('constructor'), [undefined, undefined, undefined]);
});
