// The hostile values the request fuzzer (test/server-fuzz.test.ts) puts where a request expects
// something sensible: numbers beyond every integer and float range, strings that are empty, NUL,
// lone surrogates, path syntax or merely very long, nesting around serde_json's depth limit, and
// number tokens JSON.stringify cannot write (spliced into the body text afterwards).

import fc from 'fast-check';
import { MAX_JSON_NESTING } from '../../src/api/json-syntax.js';

/** Strings that have broken parsers before: payload path syntax, encodings, names of Object's own properties. */
const ODD_STRINGS: readonly string[] = [
  '', ' ', '\u0000', 'a\u0000b', '\t\n', '.', '..', '../..', 'a..b', 'a.', '.a', 'a.b.c.d.e.f.g.h',
  '[', ']', '[]', 'a[]', 'a[0]', 'a[-1]', 'a[1.5]', 'a[99999999999999999999]', 'a[]b', 'a[].b[]', '[0]', 'a[x]',
  '"', '""', '"a"."b"', '"a.b"', 'a"b', '\\', '\\"', '$', '$.a', '*', '%', '%2F', '%00', '/', 'a/b',
  '\uD800', '\uDFFF', 'a\uD83D', '😀', '👩‍👩‍👧', 'é', 'e\u0301', 'ß', '\u202Eabc', 'ключ', '中文', '\uFEFF', '\uFFFF',
  'x'.repeat(256), 'é'.repeat(300), 'x'.repeat(20_000),
  'null', 'true', '0', '-1', '1e39', 'NaN', 'Infinity', '__proto__', 'constructor', 'toString', 'hasOwnProperty',
  '2024-13-45T99:99:99Z', '0000-00-00T00:00:00Z', '+275760-09-13T00:00:00Z', '2024-01-01', '00000000-0000-0000-0000-00000000000g',
  '00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', 'http://127.0.0.1:1/x.snapshot', 'file:///nonexistent.snapshot',
];

/** Numbers outside what the fields hold: beyond u64, i64, f32, f64's integers; negative; fractional; zero. */
const ODD_NUMBERS: readonly number[] = [
  0, -0, -1, 1.5, -2.5, 0.1, 1e-7, 5e-324, 255, 256, 65_535, 65_536, 2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 53, 2 ** 53 + 2,
  2 ** 63, 2 ** 64, 1e12, 1e15, 1e20, 3.5e38, 1e39, -1e39, 1e300, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_SAFE_INTEGER,
];

/** Number tokens only a hand-written body holds: out of f64's range, more digits than any integer type, odd spellings. */
const RAW_NUMBER_TOKENS: readonly string[] = [
  '1e400', '-1e400', '1e-400', '123456789012345678901234567890', '-123456789012345678901234567890', '18446744073709551615',
  '18446744073709551616', '9223372036854775808', '-9223372036854775809', '9007199254740993', '-0', '-0.0', '1.0', '1E2', '0e0',
];

// A placeholder that JSON.stringify writes as it is (a private-use character is not escaped),
// replaced by its raw token in the body text.
const RAW_MARK = '\uE000raw:';
const RAW_PATTERN = new RegExp(`"${RAW_MARK}([^"]*)"`, 'g');

/** The body text of `value`, with raw-number placeholders replaced by their tokens. */
export function bodyText(value: unknown): string {
  return JSON.stringify(value).replace(RAW_PATTERN, (_, token: string) => token);
}

/** `depth` arrays (or objects) open at once around `inner`. */
export function nested(depth: number, inner: unknown, kind: 'array' | 'object'): unknown {
  let value = inner;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}

/** Nesting just under, at and past serde_json's limit, counting the levels a body already has around the value. */
const NESTING_DEPTHS = [MAX_JSON_NESTING - 8, MAX_JSON_NESTING - 2, MAX_JSON_NESTING - 1, MAX_JSON_NESTING, MAX_JSON_NESTING + 1, 4 * MAX_JSON_NESTING];

export const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ODD_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);

/** Objects whose keys JavaScript treats specially; JSON.parse makes them own properties, as the server's parser does. */
const TRICKY_OBJECTS: readonly unknown[] = [
  JSON.parse('{"__proto__":{"polluted":1}}'),
  JSON.parse('{"constructor":{"prototype":{"polluted":1}}}'),
  { '': 1 },
  { '\u0000': null },
];

/** Any hostile value: wrong-typed scalars, odd strings and numbers, empty and tricky containers, deep nesting. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ODD_NUMBERS) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_NUMBER_TOKENS).map((token) => RAW_MARK + token) },
  { weight: 4, arbitrary: oddString },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], [[]], [{}], ...TRICKY_OBJECTS) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...NESTING_DEPTHS), fc.constantFrom<'array' | 'object'>('array', 'object')).map(([depth, kind]) => nested(depth, 1, kind)) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...ODD_NUMBERS), { minLength: 1, maxLength: 5 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Whole bodies that are not JSON, or JSON in forms only hand-written text has. */
export const RAW_BODIES: readonly string[] = [
  '', ' ', '{', '[', '}', '{"a":}', '{"a":1,}', '[1,]', 'nul', 'tru', '"unterminated', '\u0000', '{"\u0000":1}',
  '\uFEFF{}', '{} {}', '{}garbage', '{"limit":1,"limit":2}', '{"a":"\\ud800"}', '{"a":"\\u0000"}', '{"a":"\\x"}',
  '1e400', '-', '{"a":01}', '{"a":.5}', '{"a":NaN}', '{"a":Infinity}', "{'a':1}", '/* c */{}',
  '['.repeat(MAX_JSON_NESTING - 1) + ']'.repeat(MAX_JSON_NESTING - 1),
  '['.repeat(MAX_JSON_NESTING) + ']'.repeat(MAX_JSON_NESTING),
  '['.repeat(100_000),
  '{"a":'.repeat(MAX_JSON_NESTING + 1) + '1' + '}'.repeat(MAX_JSON_NESTING + 1),
];
