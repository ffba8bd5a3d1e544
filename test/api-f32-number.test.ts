// Scores and vector components are printed as Qdrant prints its f32s: the fewest digits that read
// back as the same f32.

import fc from 'fast-check';
import t from 'tap';
import { shortF32, shortF32s } from '../src/api/f32-number.js';
import { renderVectors } from '../src/api/point-convert.js';

/** The f32 the decimal text `s` reads as. */
const f32Of = (s: string): number => Math.fround(Number(s));

t.test('the short forms Qdrant prints for f32 values', async (t) => {
  const cases: [number, string][] = [
    [0.15, '0.15'], [0.1, '0.1'], [-0.7, '-0.7'], [1e-7, '1e-7'], [0.3, '0.3'], [123.456, '123.456'],
    [3.4028234663852886e38, '3.4028235e+38'], [1.401298464324817e-45, '1e-45'], [16777216, '16777216'], [3, '3'], [0, '0'],
  ];
  for (const [given, printed] of cases) t.equal(JSON.stringify(shortF32(Math.fround(given))), printed, `${given}`);
  t.equal(JSON.stringify(shortF32(Math.fround(Math.fround(0.1) + Math.fround(0.2)))), '0.3', 'the f32 sum of 0.1 and 0.2 is 0.3 as an f32');
});

t.test('every f32 reads back from its short form, and one digit fewer never does', async (t) => {
  fc.assert(fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), (x) => {
    const text = JSON.stringify(shortF32(x));
    if (f32Of(text) !== x && !(x === 0 && Object.is(x, -0))) return false;
    const digits = text.replace(/^-/, '').replace(/e.*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;
    return digits <= 1 || f32Of(Math.abs(x).toPrecision(digits - 1)) !== Math.abs(x);
  }), { numRuns: 20000 });
});

t.test('vectors render with short components: dense, sparse values and multivector rows', async (t) => {
  const dense = new Float32Array([0.15, -0.25, 1e-7]);
  t.equal(JSON.stringify(renderVectors({ '': dense })), '[0.15,-0.25,1e-7]');
  const sparse = { indices: new Uint32Array([2, 7]), values: new Float32Array([0.1, 0.7]) };
  t.equal(JSON.stringify(renderVectors({ s: sparse })), '{"s":{"indices":[2,7],"values":[0.1,0.7]}}');
  const multi = { dim: 2, data: new Float32Array([0.2, 0.4, 0.6, 0.8]) };
  t.equal(JSON.stringify(renderVectors({ m: multi })), '{"m":[[0.2,0.4],[0.6,0.8]]}');
  t.same(shortF32s(new Float32Array([])), []);
});
