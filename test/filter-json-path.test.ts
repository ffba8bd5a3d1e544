// Payload key paths (parse, canonical text, reading values) and datetime parsing.

import t from 'tap';
import type { Payload } from '../src/model.js';
import { parseDatetime } from '../src/shard/filter/datetime.js';
import { formatJsonPath, parseJsonPath, valuesAt } from '../src/shard/filter/json-path.js';

t.test('parses Qdrant key paths', async (t) => {
  // Qdrant's json_path parse test.
  t.same(parseJsonPath('foo[1][50].bar-baz[]."qux[.]quux"'), [
    { key: 'foo' }, { index: 1 }, { index: 50 }, { key: 'bar-baz' }, { wildcard: true }, { key: 'qux[.]quux' },
  ]);
  t.same(parseJsonPath('"a b".c'), [{ key: 'a b' }, { key: 'c' }]);
  t.same(parseJsonPath('ключ.数字_1'), [{ key: 'ключ' }, { key: '数字_1' }]);
  for (const bad of ['', '.a', 'a.', 'a..b', '[0]', 'a[', 'a[]b', 'a b', 'a[-1]', '"a', 'a."b\\"c"', 'a.[0]']) {
    t.equal(parseJsonPath(bad), undefined, `rejects ${JSON.stringify(bad)}`);
  }
});

t.test('prints paths as Qdrant does, quoting keys only when needed', async (t) => {
  for (const text of ['a', 'a.b[].c[3]', 'a."b.c"', '"a b"[]', '"".x']) t.equal(formatJsonPath(parseJsonPath(text)!), text);
  t.equal(formatJsonPath(parseJsonPath('"a"."b"')!), 'a.b');
});

t.test('reads values like JsonPath::value_get', async (t) => {
  const payload: Payload = { a: { b: [{ c: 1 }, { c: 2 }, { d: { e: 3 } }] }, f: 3, g: ['g0', 'g1', 'g2'], arr: [{ a: [1, 2, 3] }, { a: 4 }, { b: 5 }], n: null, e: [] };
  const at = (p: string) => valuesAt(parseJsonPath(p)!, payload);
  t.same(at('a.b[].c'), [1, 2]);
  t.same(at('a.b[1].c'), [2]);
  t.same(at('g[2]'), ['g2']);
  t.same(at('a.b[3]'), [], 'out of bounds');
  t.same(at('a.b.c'), [], 'keys do not look through arrays');
  t.same(at('arr[].a'), [[1, 2, 3], 4], 'an array value stays whole');
  t.same(at('arr[].a[]'), [1, 2, 3], '[] opens it');
  t.same(at('n'), [null]);
  t.same(at('n[]'), []);
  t.same(at('e'), [[]]);
  t.same(at('missing'), []);
  t.same(at('toString'), [], 'no inherited properties');
});

t.test('datetimes in the formats Qdrant accepts, as microseconds', async (t) => {
  const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => Date.UTC(y, mo - 1, d, h, mi, s) * 1000;
  const cases: [string, number][] = [
    ['2024-01-02T03:04:05Z', utc(2024, 1, 2, 3, 4, 5)],
    ['2024-01-02t03:04:05z', utc(2024, 1, 2, 3, 4, 5)],
    ['2024-01-02T03:04:05.123456Z', utc(2024, 1, 2, 3, 4, 5) + 123456],
    ['2024-01-02T03:04:05.1234567891Z', utc(2024, 1, 2, 3, 4, 5) + 123456],
    ['2024-01-02T03:04:05+02:00', utc(2024, 1, 2, 1, 4, 5)],
    ['2024-01-02T03:04:05-0130', utc(2024, 1, 2, 4, 34, 5)],
    ['2024-01-02T03:04:05+02', utc(2024, 1, 2, 1, 4, 5)],
    ['2024-01-02 03:04:05 +00:00', utc(2024, 1, 2, 3, 4, 5)],
    ['2024-01-02T03:04:05', utc(2024, 1, 2, 3, 4, 5)],
    ['2024-01-02 03:04:05.5', utc(2024, 1, 2, 3, 4, 5) + 500000],
    ['2024-01-02 03:04', utc(2024, 1, 2, 3, 4)],
    ['2024-02-29', utc(2024, 2, 29)],
    ['2016-12-31T23:59:60Z', utc(2017, 1, 1)],
    ['0001-01-01', Date.UTC(2000, 0, 1) * 1000 - 730119 * 86400e6],
  ];
  for (const [text, micros] of cases) t.equal(parseDatetime(text), micros, text);
  for (const bad of ['2023-02-29', '2024-13-01', '2024-01-01T24:00:00Z', '2024-01-01T03:04Z', '2024-01-01T03:04', 'yesterday', '2024-01-01T00:00:00+25:00', '20240101', '2024-01-01 ', ' 2024-01-01']) {
    t.equal(parseDatetime(bad), undefined, `rejects ${JSON.stringify(bad)}`);
  }
});
