// Conversions between Qdrant's point JSON and Quiver's point model.

import t from 'tap';
import {
  renderRecord,
  renderVectors,
  toNamedVectors,
  toPayloadSelection,
  toPointInputs,
  toVectorSelection,
} from '../src/api/point-convert.js';
import { isPointId, toPointId } from '../src/api/point-id.js';
import { BadInput, ServiceError } from '../src/errors.js';
import { Bm25 } from '../src/text/bm25.js';

const CANONICAL = '5c56c793-691f-4b3a-b0a6-a1b7e5a2e0c1';

t.test('UUIDs are read in every form the uuid crate reads and kept lowercase hyphenated', async (t) => {
  for (const form of [
    CANONICAL,
    CANONICAL.toUpperCase(),
    '5C56C793691F4B3AB0A6A1B7E5A2E0C1',
    `{${CANONICAL}}`,
    `urn:uuid:${CANONICAL}`,
  ]) {
    t.ok(isPointId(form), form);
    t.equal(toPointId(form), CANONICAL, form);
  }
  for (const bad of ['123', 'user-14', `${CANONICAL}0`, `${CANONICAL.slice(0, 35)}g`, '', `{${CANONICAL}`, `URN:UUID:${CANONICAL}`]) {
    t.notOk(isPointId(bad), bad);
  }
});

t.test('numeric ids are non-negative integers JavaScript holds exactly', async (t) => {
  t.ok(isPointId(0));
  t.ok(isPointId(Number.MAX_SAFE_INTEGER));
  t.ok(isPointId(CANONICAL));
  for (const bad of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, '1', null, true, [1], {}]) t.notOk(isPointId(bad), String(bad));
  t.equal(toPointId(42), 42);
});

t.test('vectors: the unnamed one is stored under the default name', async (t) => {
  t.same(toNamedVectors([1, 2]), { '': [1, 2] });
  t.same(toNamedVectors({ image: [1], text: [2, 3] }), { image: [1], text: [2, 3] });
  t.same(toNamedVectors({}), {}, 'an empty map is a point without vectors');
  t.same(toNamedVectors({ '': [5] }), { '': [5] });
  t.same(toNamedVectors({ model: [1] }), { model: [1] }, 'a vector may be named like an inference field');
});

t.test('sparse vectors are held with their indices ascending, values alongside', async (t) => {
  const { s } = toNamedVectors({ s: { indices: [9, 1, 4], values: [0.5, -2, 3] } }) as { s: { indices: Uint32Array; values: Float32Array } };
  t.same([Array.from(s.indices), Array.from(s.values)], [[1, 4, 9], [-2, 3, 0.5]]);
  t.ok(s.indices instanceof Uint32Array && s.values instanceof Float32Array, 'as typed arrays');
  t.same(renderVectors({ s }), { s: { indices: [1, 4, 9], values: [-2, 3, 0.5] } }, 'rendered as Qdrant\'s {indices, values}');
  t.same(toNamedVectors({ e: { indices: [], values: [] } }), { e: { indices: new Uint32Array(0), values: new Float32Array(0) } }, 'an empty one is a vector');
});

t.test('multivectors become one block of rows with their dimension; they render as lists of lists', async (t) => {
  t.same(toNamedVectors([[1, 2], [3, 4], [5, 6]]), { '': { dim: 2, data: new Float32Array([1, 2, 3, 4, 5, 6]) } }, 'an unnamed list of three');
  t.same(toNamedVectors({ m: [[1, 2, 3]], d: [7, 8] }), { m: { dim: 3, data: new Float32Array([1, 2, 3]) }, d: new Float32Array([7, 8]) }, 'a named list of one beside a dense vector');
  t.same(renderVectors({ '': { dim: 2, data: new Float32Array([1, 2, 3, 4]) } }), [[1, 2], [3, 4]], 'a lone unnamed multivector renders as its list');
  t.same(renderVectors({ m: { dim: 1, data: new Float32Array([0.5, 2]) }, d: new Float32Array([1]) }), { m: [[0.5], [2]], d: [1] }, 'named ones by name');
});

t.test('documents for the BM25 model become sparse vectors; other models need an inference service', async (t) => {
  const named = toNamedVectors({ v: { text: 'Running dogs, running!', model: 'qdrant/bm25' } }) as Record<string, { indices: Uint32Array; values: Float32Array }>;
  const expected = Bm25.fromOptions(null).document('Running dogs, running!');
  t.same([Array.from(named.v.indices), Array.from(named.v.values)], [expected.indices, expected.values], 'a named document: its BM25 document vector');
  t.ok(named.v.indices.length === 2, 'two distinct stems');
  const unnamed = toNamedVectors({ text: 'hello', model: 'BM25' });
  t.same(Object.keys(unnamed), [''], 'an unnamed document is the default vector (the collection decides whether it may be sparse)');
  t.throws(() => toNamedVectors({ v: { text: 'hello', model: 'sentence-transformers/all-minilm-l6-v2' } }), new ServiceError('InferenceService URL not configured - please provide valid address in config'));
  t.throws(() => toNamedVectors({ v: { image: 'https://example.com/a.png', model: 'qdrant/bm25' } } as never), new BadInput('Only text input is supported for qdrant/bm25.'));
});

t.test('both upsert forms give the same points', async (t) => {
  const expected = [
    { id: 1, vectors: { '': [1, 2] }, payload: { a: 1 } },
    { id: CANONICAL, vectors: { '': [3, 4] }, payload: {} },
    { id: 3, vectors: { '': [5, 6] }, payload: {} },
  ];
  t.same(
    toPointInputs({
      points: [
        { id: 1, vector: [1, 2], payload: { a: 1 } },
        { id: CANONICAL.toUpperCase(), vector: [3, 4], payload: null },
        { id: 3, vector: [5, 6] },
      ],
    }),
    expected,
  );
  t.same(
    toPointInputs({ batch: { ids: [1, CANONICAL.toUpperCase(), 3], vectors: [[1, 2], [3, 4], [5, 6]], payloads: [{ a: 1 }, null, {}] } }),
    expected,
    'a null payload is an empty one',
  );
  t.same(toPointInputs({ batch: { ids: [7], vectors: [[1]] } }), [{ id: 7, vectors: { '': [1] }, payload: {} }], 'payloads may be left out');
  t.same(
    toPointInputs({ batch: { ids: [1, 2], vectors: { image: [[1], [2]], text: [[3, 3], [4, 4]] } } }),
    [
      { id: 1, vectors: { image: [1], text: [3, 3] }, payload: {} },
      { id: 2, vectors: { image: [2], text: [4, 4] }, payload: {} },
    ],
  );
});

t.test('payload selectors', async (t) => {
  t.same(toPayloadSelection(undefined), { all: true }, 'the whole payload by default');
  t.same(toPayloadSelection(null), { all: true });
  t.same(toPayloadSelection(true), { all: true });
  t.same(toPayloadSelection(false), { all: false });
  // Paths arrive parsed, as Qdrant reads them into JsonPaths.
  t.same(toPayloadSelection(['a', 'b.c']), { all: false, include: [[{ key: 'a' }], [{ key: 'b' }, { key: 'c' }]] });
  t.same(toPayloadSelection({ include: ['a[].b'] }), { all: false, include: [[{ key: 'a' }, { wildcard: true }, { key: 'b' }]] });
  t.same(toPayloadSelection({ exclude: ['a[0]'] }), { all: true, exclude: [[{ key: 'a' }, { index: 0 }]] });
  t.throws(() => toPayloadSelection({ include: ['a..b'] }), { message: 'Format error in JSON body: data did not match any variant of untagged enum WithPayloadInterface' }, 'an unparsable path fails the selector');
});

t.test('vector selectors', async (t) => {
  t.equal(toVectorSelection(undefined), false, 'no vectors by default');
  t.equal(toVectorSelection(true), true);
  t.same(toVectorSelection(['image']), ['image']);
});

t.test('records come back in Qdrant\'s shape', async (t) => {
  t.same(renderRecord({ id: 1, payload: { a: 1 }, vectors: { '': new Float32Array([1, 2]) } }), { id: 1, payload: { a: 1 }, vector: [1, 2] });
  t.strictSame(renderRecord({ id: CANONICAL }), { id: CANONICAL }, 'parts not asked for are left out (Qdrant skips them since 1.10)');
  t.same(
    renderRecord({ id: 2, payload: {}, vectors: { image: new Float32Array([1]), text: new Float32Array([2]) }, shardKey: 'eu', orderValue: 3.5 }),
    { id: 2, payload: {}, vector: { image: [1], text: [2] }, shard_key: 'eu', order_value: 3.5 },
  );
  t.same(renderVectors({}), {}, 'a point without vectors has an empty map');
  t.same(renderVectors({ '': new Float32Array([1]), image: new Float32Array([2]) }), { '': [1], image: [2] }, 'the unnamed vector among named ones stays in the map');
});
