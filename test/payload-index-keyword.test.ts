// Exact-value indexes (keyword, uuid, bool): what they answer, what they leave to payload
// checks, facets, point counts, updates; and the factory.

import t from 'tap';
import { Bitset } from '../src/engine/bitset.js';
import { createPayloadIndex, hasMatchSemantics, isFacetIndex, isOrderedIndex } from '../src/shard/payload-index/index.js';
import { answer, indexOf } from './helpers/filter-index.js';

t.test('keyword index', async (t) => {
  const index = indexOf('k', 'keyword', [
    { k: 'apple' }, { k: ['apple', 'banana'] }, { k: 'Apricot' }, { k: 5 }, { k: null }, {}, { k: [] }, { k: ['banana', null] }, { other: 'apple' },
  ]);
  t.equal(index.indexedPoints(), 4, 'points holding a string');
  t.same(answer(index, { key: 'k', match: { value: 'apple' } }), [0, 1]);
  t.same(answer(index, { key: 'k', match: { any: ['Apricot', 'banana', 'x'] } }), [1, 2, 7]);
  // except: some value outside the list; values of other types pass, null does not.
  t.same(answer(index, { key: 'k', match: { except: ['apple'] } }), [1, 2, 3, 7]);
  t.same(answer(index, { key: 'k', match: { except: ['apple', 'banana', 'Apricot'] } }), [3]);
  t.same(answer(index, { key: 'k', match: { prefix: 'ap' } }), [0, 1]);
  t.same(answer(index, { key: 'k', match: { prefix: 'A' } }), [2]);
  t.same(answer(index, { key: 'k', match: { prefix: '' } }), [0, 1, 2, 7]);
  t.same(answer(index, { key: 'k', values_count: { gte: 2 } }), [1, 7]);
  t.same(answer(index, { is_empty: { key: 'k' } }, 9), [4, 5, 6, 8], 'points never added count as missing');
  t.same(answer(index, { is_null: { key: 'k' } }), [4]);
  t.same(answer(index, { key: 'k', match: { value: 5 } }), undefined, 'integers are left to payload checks');
  t.same(answer(index, { key: 'k', match: { text: 'app' } }), undefined);
  t.same(answer(index, { key: 'k', range: { gt: 1 } }), undefined);
  t.same(answer(index, { key: 'k', match: { value: 'apple' }, range: { gt: 1 } }), undefined, 'combined tests are left to payload checks');
  t.same(answer(index, { key: 'k', match: { value: 'apple' } }, 1), [0], 'offsets past size are left out');

  t.ok(isFacetIndex(index));
  if (isFacetIndex(index)) {
    t.same(index.facet(null), new Map([['apple', 2], ['banana', 2], ['Apricot', 1]]));
    t.same(index.facet(Bitset.of(9, [1, 2])), new Map([['apple', 1], ['banana', 1], ['Apricot', 1]]), 'facets count allowed points only');
  }

  index.add(1, { k: 'cherry' });
  index.remove(0);
  t.same(answer(index, { key: 'k', match: { value: 'apple' } }), [], 'updates and removals are seen');
  t.same(answer(index, { key: 'k', match: { prefix: 'ch' } }), [1]);
  t.equal(index.indexedPoints(), 3);
});

t.test('uuid index compares UUIDs, not strings', async (t) => {
  const u = '550e8400-e29b-41d4-a716-446655440000';
  const index = indexOf('u', 'uuid', [{ u }, { u: u.toUpperCase() }, { u: ['not-a-uuid', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'] }, { u: 'not-a-uuid' }]);
  t.equal(index.indexedPoints(), 3);
  t.same(answer(index, { key: 'u', match: { value: u.replaceAll('-', '') } }), [0, 1]);
  t.same(answer(index, { key: 'u', match: { any: [u, '{6ba7b810-9dad-11d1-80b4-00c04fd430c8}'] } }), [0, 1, 2]);
  t.same(answer(index, { key: 'u', match: { value: 'not-a-uuid' } }), undefined, 'other strings are left to payload checks');
  t.same(answer(index, { key: 'u', match: { except: [u] } }), undefined);
  if (isFacetIndex(index)) t.same(index.facet(null), new Map([[u, 2], ['6ba7b810-9dad-11d1-80b4-00c04fd430c8', 1]]));
});

t.test('bool index', async (t) => {
  const index = indexOf('b', { type: 'bool', on_disk: true }, [{ b: true }, { b: false }, { b: [true, false] }, { b: 'true' }, { b: null }]);
  t.equal(index.indexedPoints(), 3);
  t.same(answer(index, { key: 'b', match: { value: true } }), [0, 2]);
  t.same(answer(index, { key: 'b', match: { value: false } }), [1, 2]);
  t.same(answer(index, { key: 'b', match: { value: 'true' } }), undefined);
  // Field is_null=false: every point but the null one, those without the key included.
  t.same(answer(index, { key: 'b', is_null: false }, 10), [0, 1, 2, 3, 5, 6, 7, 8, 9]);
});

t.test('factory', async (t) => {
  for (const type of ['keyword', 'integer', 'float', 'geo', 'text', 'bool', 'datetime', 'uuid'] as const) {
    const a = createPayloadIndex('a.b', type);
    const b = createPayloadIndex('a.b', { type });
    t.same(a.params, { type }, `${type}: bare name`);
    t.same(b.params, { type }, `${type}: parameters`);
    t.equal(isFacetIndex(a), ['keyword', 'integer', 'bool', 'uuid'].includes(type), `${type}: facets`);
    t.equal(isOrderedIndex(a), ['integer', 'float', 'datetime'].includes(type), `${type}: ordered`);
    t.equal(hasMatchSemantics(a), type === 'text' || type === 'uuid', `${type}: own match semantics`);
  }
  t.equal(createPayloadIndex('"a"."b"', 'keyword').key, 'a.b', 'keys are canonical');
  t.throws(() => createPayloadIndex('a..b', 'keyword'), { kind: 'BadInput', message: "Wrong input: Invalid json path: 'a..b'" });
});
