// serde_json's wording and positions for bodies that are not JSON or nest too deep (what Qdrant
// answers).

import t from 'tap';
import { exceedsNesting, parseJsonBody } from '../src/api/json-body.js';
import { describeJsonError } from '../src/api/json-syntax.js';

const CASES: [string, string][] = [
  ['{bad', 'key must be a string at line 1 column 2'],
  ['{"points": [', 'EOF while parsing a list at line 1 column 12'],
  ['{"a": 1', 'EOF while parsing an object at line 1 column 7'],
  ['{"exact": true} x', 'trailing characters at line 1 column 17'],
  ['{"a" 1}', 'expected `:` at line 1 column 6'],
  ['[1 2]', 'expected `,` or `]` at line 1 column 4'],
  ['{"a": 1 "b": 2}', 'expected `,` or `}` at line 1 column 9'],
  ['{"a": tru}', 'expected ident at line 1 column 10'],
  ['"abc', 'EOF while parsing a string at line 1 column 4'],
  ['{"a":}', 'expected value at line 1 column 6'],
  ['{\n "a": [1,\n 2,', 'EOF while parsing a value at line 3 column 3'],
];

t.test('syntax errors are described as serde_json does', async (t) => {
  for (const [text, message] of CASES) {
    t.throws(() => JSON.parse(text), `${JSON.stringify(text)} is not JSON`);
    t.equal(describeJsonError(text), message, JSON.stringify(text));
  }
});

t.test('nesting: serde_json refuses the 128th open bracket, at its position', async (t) => {
  const lists = (n: number) => '['.repeat(n) + ']'.repeat(n);
  t.equal(exceedsNesting(lists(127)), false, '127 levels fit');
  t.equal(exceedsNesting(lists(128)), true, '128 do not');
  t.equal(describeJsonError(lists(128)), 'recursion limit exceeded at line 1 column 128');
  t.equal(describeJsonError('{"a":'.repeat(1_000_000)), 'recursion limit exceeded at line 1 column 636', 'a million levels: no stack overflow');
  t.equal(exceedsNesting(`["${'['.repeat(500)}", "\\"${'{'.repeat(500)}", "\\\\"]`), false, 'brackets in strings, after escaped quotes and backslashes, do not count');
  t.equal(exceedsNesting(`["\\\\"${'['.repeat(200)}`), true, 'an escaped backslash ends no string');
  t.equal(describeJsonError(`{"ü":\n ${'{"é":'.repeat(200)}`), 'recursion limit exceeded at line 2 column 758', 'columns count bytes');
  t.equal(describeJsonError(`{"a" ${'['.repeat(500)}`), 'expected `:` at line 1 column 6', 'a syntax error before the limit comes first');
});

t.test('parseJsonBody: values, undefined for an empty body, serde_json\'s messages otherwise', async (t) => {
  t.same(parseJsonBody('{"a":[1,{"b":null}]}'), { a: [1, { b: null }] });
  t.equal(parseJsonBody(''), undefined);
  t.throws(() => parseJsonBody('[1 2]'), { message: 'Format error in JSON body: expected `,` or `]` at line 1 column 4', statusCode: 400 });
  t.throws(() => parseJsonBody('['.repeat(200) + ']'.repeat(200)), { message: 'Format error in JSON body: recursion limit exceeded at line 1 column 128' });
});
