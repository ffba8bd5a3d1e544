// f64 numbers as Rust's Display prints them (Qdrant embeds them in its formula messages): the
// shortest digits that read back the same, never an exponent.

import t from 'tap';
import { displayF64 } from '../src/messages.js';

t.test('Rust Display of f64', async (t) => {
  const cases: [number, string][] = [
    [1, '1'],
    [-8, '-8'],
    [0.4, '0.4'],
    [0, '0'],
    [-0, '-0'],
    [1e21, '1000000000000000000000'],
    [1.5e-7, '0.00000015'],
    [-2.5e-10, '-0.00000000025'],
    [123456789012345680000, '123456789012345680000'],
    [1.0000000300949327e60, '1000000030094932700000000000000000000000000000000000000000000'],
    [NaN, 'NaN'],
    [Infinity, 'inf'],
    [-Infinity, '-inf'],
  ];
  for (const [n, text] of cases) t.equal(displayF64(n), text, `${n}`);
});
