// serde_json's wording and positions for bodies that are not JSON (what Qdrant answers).

import t from 'tap';
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
