// Hand-written filter cases pinned to Qdrant's documented or source-level behaviour; each comment
// names the fact. Every case runs without indexes and, where given, with payload indexes, and
// selectMatching must agree with the point-by-point check (helpers/filter-cases.ts).

import t, { type Test } from 'tap';
import type { WireFilter } from '../src/api/filter.js';
import type { PointId } from '../src/model.js';
import type { IndexSchema } from '../src/shard/payload-index/index.js';
import { matchingIds, sourceOf, type CasePoint } from './helpers/filter-cases.js';

function check(t: Test, points: CasePoint[], filter: WireFilter, expected: PointId[], indexes: Record<string, IndexSchema>[] = [], what = JSON.stringify(filter)): void {
  t.same(matchingIds(sourceOf(points), filter), expected, `${what}: no index`);
  for (const config of indexes) t.same(matchingIds(sourceOf(points, config), filter), expected, `${what}: ${JSON.stringify(config)}`);
}

t.test('match on arrays: any element (the example in Qdrant\'s API description)', async (t) => {
  // Qdrant's OpenAPI description: points 1..6, filter should city=London returns ids 4 and 2.
  const points: CasePoint[] = [
    { id: 1, payload: { city: 'Berlin' } },
    { id: 2, payload: { city: ['Berlin', 'London'] } },
    { id: 3, payload: { city: ['Berlin', 'Moscow'] } },
    { id: 4, payload: { city: ['London', 'Moscow'] } },
    { id: 5, payload: { count: [0] } },
    { id: 6 },
  ];
  check(t, points, { should: [{ key: 'city', match: { value: 'London' } }] }, [2, 4], [{ city: 'keyword' }]);
  check(t, points, { must: [{ key: 'count', match: { value: 0 } }] }, [5], [{ count: 'integer' }]);
});

t.test('clauses: the examples of Qdrant\'s filtering docs', async (t) => {
  const points: CasePoint[] = [
    { id: 1, payload: { city: 'London', color: 'green' } },
    { id: 2, payload: { city: 'London', color: 'red' } },
    { id: 3, payload: { city: 'London', color: 'blue' } },
    { id: 4, payload: { city: 'Berlin', color: 'red' } },
    { id: 5, payload: { city: 'Moscow', color: 'green' } },
    { id: 6, payload: { city: 'Moscow', color: 'blue' } },
  ];
  const london = { key: 'city', match: { value: 'London' } };
  const red = { key: 'color', match: { value: 'red' } };
  const indexes: Record<string, IndexSchema>[] = [{ city: 'keyword', color: 'keyword' }, { city: 'keyword' }];
  check(t, points, { must: [london, red] }, [2], indexes, 'must');
  check(t, points, { should: [london, red] }, [1, 2, 3, 4], indexes, 'should');
  check(t, points, { must_not: [london, red] }, [5, 6], indexes, 'must_not');
  check(t, points, { must: [london], must_not: [red] }, [1, 3], indexes, 'must and must_not');
  check(t, points, { must_not: [{ must: [london, red] }] }, [1, 3, 4, 5, 6], indexes, 'nested clauses');
});

t.test('empty filters, should, must_not and min_should', async (t) => {
  const points: CasePoint[] = [{ id: 1, payload: { a: 1 } }, { id: 2, payload: { a: 2 } }, { id: 3, payload: { a: 3 } }];
  check(t, points, {}, [1, 2, 3]);
  check(t, points, { must: [] }, [1, 2, 3]);
  // check_should: `any` over the listed conditions, so an empty list matches nothing.
  check(t, points, { should: [] }, []);
  check(t, points, { must_not: [] }, [1, 2, 3]);
  // A condition may stand alone instead of in a list (MaybeOneOrMany).
  check(t, points, { must: { key: 'a', match: { value: 2 } } }, [2]);
  check(t, points, { must_not: { key: 'a', match: { value: 2 } } }, [1, 3], [{ a: 'integer' }]);
  const two = { min_should: { conditions: [{ key: 'a', range: { gte: 2 } }, { key: 'a', range: { lte: 2 } }, { key: 'a', match: { value: 3 } }], min_count: 2 } };
  check(t, points, two, [2, 3], [{ a: 'integer' }, { a: 'float' }]);
  check(t, points, { min_should: { conditions: [{ key: 'a', range: { gte: 0 } }], min_count: 2 } }, []);
  // A Filter is itself a condition; an empty one holds for every point.
  check(t, points, { must: [{}, { should: [{ key: 'a', match: { value: 1 } }, { key: 'a', match: { value: 3 } }] }] }, [1, 3]);
});

t.test('types never cross: integers, floats, strings, booleans', async (t) => {
  const points: CasePoint[] = [
    { id: 1, payload: { v: 1 } },
    { id: 2, payload: { v: 1.5 } },
    { id: 3, payload: { v: '1' } },
    { id: 4, payload: { v: true } },
    { id: 5, payload: { v: [1, 'a'] } },
  ];
  // MatchValue compares a JSON number only through as_i64: 1.5 is not 1 (1.0 cannot be told from
  // 1 once JSON is parsed in JavaScript, so Quiver treats it as 1).
  check(t, points, { must: [{ key: 'v', match: { value: 1 } }] }, [1, 5], [{ v: 'integer' }]);
  check(t, points, { must: [{ key: 'v', match: { value: '1' } }] }, [3], [{ v: 'keyword' }]);
  check(t, points, { must: [{ key: 'v', match: { value: true } }] }, [4], [{ v: 'bool' }]);
  // Range reads numbers only (as_f64), never strings or booleans.
  check(t, points, { must: [{ key: 'v', range: { gte: 1, lte: 1.5 } }] }, [1, 2, 5], [{ v: 'float' }, { v: 'integer' }]);
  check(t, points, { must: [{ key: 'v', match: { any: [1, 2] } }] }, [1, 5], [{ v: 'integer' }]);
  check(t, points, { must: [{ key: 'v', match: { any: ['1', 'a'] } }] }, [3, 5], [{ v: 'keyword' }]);
});

t.test('match except: needs a present, non-null value outside the list', async (t) => {
  const points: CasePoint[] = [
    { id: 1, payload: { c: 'red' } },
    { id: 2, payload: { c: 'blue' } },
    { id: 3, payload: { c: ['red', 'blue'] } },
    { id: 4, payload: {} },
    { id: 5, payload: { c: null } },
    { id: 6, payload: { c: [] } },
    { id: 7, payload: { c: 5 } },
    { id: 8, payload: { c: [null, 'red'] } },
  ];
  // ValueChecker for MatchExcept: a string in the list fails, null fails, any other type passes;
  // a missing key or an empty array has no value to pass.
  check(t, points, { must: [{ key: 'c', match: { except: ['red'] } }] }, [2, 3, 7], [{ c: 'keyword' }]);
  // Integers listed: strings pass (a different type), listed integers fail.
  check(t, points, { must: [{ key: 'c', match: { except: [5] } }] }, [1, 2, 3, 8], [{ c: 'integer' }]);
  // An empty list is read as a list of strings (first untagged variant): any non-null value passes.
  check(t, points, { must: [{ key: 'c', match: { except: [] } }] }, [1, 2, 3, 7, 8], [{ c: 'keyword' }]);
  check(t, points, { must: [{ key: 'c', match: { any: [] } }] }, [], [{ c: 'keyword' }]);
});

t.test('is_empty and is_null, condition and field forms', async (t) => {
  // Qdrant's test_condition_checker: parts=[] is empty, not_null=[null] is neither empty nor null,
  // packaging=null is null, a missing key is empty but not null.
  const points: CasePoint[] = [
    { id: 1, payload: { f: 1 } },
    { id: 2, payload: { f: [] } },
    { id: 3, payload: { f: null } },
    { id: 4, payload: { f: [null] } },
    { id: 5, payload: {} },
    { id: 6, payload: { f: {} } },
  ];
  const indexes: Record<string, IndexSchema>[] = [{ f: 'keyword' }, { f: 'integer' }];
  check(t, points, { must: [{ is_empty: { key: 'f' } }] }, [2, 3, 5], indexes);
  check(t, points, { must: [{ is_null: { key: 'f' } }] }, [3], indexes);
  check(t, points, { must: [{ key: 'f', is_empty: true }] }, [2, 3, 5], indexes);
  check(t, points, { must: [{ key: 'f', is_empty: false }] }, [1, 4, 6], indexes);
  // Field is_null looks into arrays: [null] counts as null (test_value_checker_for_null_or_empty).
  check(t, points, { must: [{ key: 'f', is_null: true }] }, [3, 4], indexes);
  check(t, points, { must: [{ key: 'f', is_null: false }] }, [1, 2, 5, 6], indexes);
  check(t, points, { must_not: [{ is_empty: { key: 'f' } }] }, [1, 4, 6], indexes);
});

t.test('several values through arrays of objects: conditions hold for any value', async (t) => {
  const points: CasePoint[] = [
    { id: 1, payload: { a: [{ b: 1 }, { b: null }] } },
    { id: 2, payload: { a: [{ b: 1 }, { b: 2 }] } },
    { id: 3, payload: { a: [{ c: 1 }] } },
  ];
  const indexes: Record<string, IndexSchema>[] = [{ 'a[].b': 'integer' }];
  // IsEmptyCondition needs every value empty; the field form is_empty=true needs one.
  check(t, points, { must: [{ is_empty: { key: 'a[].b' } }] }, [3], indexes);
  check(t, points, { must: [{ key: 'a[].b', is_empty: true }] }, [1, 3], indexes);
  check(t, points, { must: [{ key: 'a[].b', match: { value: 2 } }] }, [2], indexes);
  // `a.b` does not look through the array (JsonPath: `.key` descends into objects only).
  check(t, points, { must: [{ key: 'a.b', match: { value: 1 } }] }, []);
  check(t, points, { must: [{ key: 'a[1].b', match: { value: 2 } }] }, [2]);
});

t.test('values_count counts each value: null 0, array its length, anything else 1', async (t) => {
  // Qdrant's test_condition_checker: rating [3, 7, 9, 9] has fewer than 5 values, not 10 or more.
  const points: CasePoint[] = [
    { id: 1, payload: { rating: [3, 7, 9, 9] } },
    { id: 2, payload: { rating: 4 } },
    { id: 3, payload: { rating: null } },
    { id: 4, payload: {} },
    { id: 5, payload: { rating: [null, null] } },
    { id: 6, payload: { rating: { x: 1, y: 2 } } },
  ];
  const indexes: Record<string, IndexSchema>[] = [{ rating: 'integer' }];
  check(t, points, { must: [{ key: 'rating', values_count: { lt: 5 } }] }, [1, 2, 3, 4, 5, 6], indexes);
  check(t, points, { must: [{ key: 'rating', values_count: { gte: 10 } }] }, [], indexes);
  check(t, points, { must: [{ key: 'rating', values_count: { gt: 1 } }] }, [1, 5], indexes);
  // A missing key counts as 0 values (Qdrant's check_empty forwards to values_count, qdrant#9586).
  check(t, points, { must: [{ key: 'rating', values_count: { lte: 0 } }] }, [3, 4], indexes);
  check(t, points, { must: [{ key: 'rating', values_count: { gte: 1 } }] }, [1, 2, 5, 6], indexes);
});

t.test('a field condition with several tests holds if any holds; values_count takes precedence', async (t) => {
  const points: CasePoint[] = [{ id: 1, payload: { x: 1 } }, { id: 2, payload: { x: 5 } }, { id: 3, payload: { x: [1, 2, 3] } }];
  // FieldCondition::check_match ORs match, range and geo; check() uses values_count alone when set.
  check(t, points, { must: [{ key: 'x', match: { value: 1 }, range: { gt: 4 } }] }, [1, 2, 3], [{ x: 'integer' }]);
  check(t, points, { must: [{ key: 'x', match: { value: 5 }, values_count: { gt: 1 } }] }, [3], [{ x: 'integer' }]);
});

t.test('datetime ranges compare instants', async (t) => {
  // Qdrant's test_condition_checker: shipped_at 2020-02-15T00:00:00Z is in February, not March.
  const points: CasePoint[] = [
    { id: 1, payload: { at: '2020-02-15T00:00:00Z' } },
    { id: 2, payload: { at: '2020-02-15T01:00:00+01:00' } },
    { id: 3, payload: { at: '2020-03-01 00:00:00' } },
    { id: 4, payload: { at: '2020-02-29' } },
    { id: 5, payload: { at: ['garbage', '2019-12-31T23:59:59.999999Z'] } },
    { id: 6, payload: { at: 1581724800 } },
  ];
  const indexes: Record<string, IndexSchema>[] = [{ at: 'datetime' }];
  check(t, points, { must: [{ key: 'at', range: { gte: '2020-02-01T00:00:00Z', lt: '2020-03-01T00:00:00Z' } }] }, [1, 2, 4], indexes);
  check(t, points, { must: [{ key: 'at', range: { gte: '2020-03-01T00:00:00Z', lt: '2020-04-01T00:00:00Z' } }] }, [3], indexes);
  // Same instant, other offset; bounds without timezone are UTC.
  check(t, points, { must: [{ key: 'at', range: { lte: '2020-02-15 00:00:00', gte: '2020-02-15T02:00:00+02:00' } }] }, [1, 2], indexes);
  // Microseconds count.
  check(t, points, { must: [{ key: 'at', range: { gt: '2019-12-31T23:59:59.999998Z', lt: '2020-01-01' } }] }, [5], indexes);
});

t.test('geo conditions', async (t) => {
  // Qdrant's test_condition_checker and test_geo_matching.
  const berlin = { lon: 13.404954, lat: 52.520008 };
  const moscow = { lon: 37.62137960067377, lat: 55.7536283 };
  const points: CasePoint[] = [
    { id: 1, payload: { location: berlin } },
    { id: 2, payload: { location: [moscow, { lat: 52.52197645, lon: 13.413637435864272 }] } },
    { id: 3, payload: { location: moscow } },
    { id: 4, payload: { location: { lon: '13.4', lat: 52.5 } } },
  ];
  const indexes: Record<string, IndexSchema>[] = [{ location: 'geo' }];
  const inBerlin = { top_left: { lon: 13.08835, lat: 52.67551 }, bottom_right: { lon: 13.76116, lat: 52.33826 } };
  check(t, points, { must: [{ key: 'location', geo_bounding_box: inBerlin }] }, [1, 2], indexes);
  check(t, points, { must: [{ key: 'location', geo_radius: { center: { lon: 13.423637, lat: 52.511 }, radius: 2000 } }] }, [1, 2], indexes);
  check(t, points, { must: [{ key: 'location', geo_radius: { center: { lon: 20.423637, lat: 52.511 }, radius: 2000 } }] }, [], indexes);
  // top_left east of bottom_right: the box crosses the antimeridian (GeoBoundingBox::check_point).
  const across: CasePoint[] = [{ id: 1, payload: { p: { lon: 179.5, lat: 0 } } }, { id: 2, payload: { p: { lon: -179.5, lat: 0 } } }, { id: 3, payload: { p: { lon: 0, lat: 0 } } }];
  check(t, across, { must: [{ key: 'p', geo_bounding_box: { top_left: { lon: 179, lat: 1 }, bottom_right: { lon: -179, lat: -1 } } }] }, [1, 2], [{ p: 'geo' }]);
  // Points exactly on a box edge are outside (strict inequalities).
  const edge: CasePoint[] = [{ id: 1, payload: { p: { lon: 1, lat: 0.5 } } }, { id: 2, payload: { p: { lon: 0.5, lat: 0.5 } } }];
  check(t, edge, { must: [{ key: 'p', geo_bounding_box: { top_left: { lon: 0, lat: 1 }, bottom_right: { lon: 1, lat: 0 } } }] }, [2], [{ p: 'geo' }]);
});

t.test('geo polygon with a hole; edges are not inside', async (t) => {
  const square = (lo: number, hi: number) => ({ points: [{ lon: lo, lat: lo }, { lon: hi, lat: lo }, { lon: hi, lat: hi }, { lon: lo, lat: hi }, { lon: lo, lat: lo }] });
  const points: CasePoint[] = [
    { id: 1, payload: { p: { lon: 1, lat: 1 } } }, // inside
    { id: 2, payload: { p: { lon: 5, lat: 5 } } }, // in the hole
    { id: 3, payload: { p: { lon: 0, lat: 5 } } }, // on the outer edge
    { id: 4, payload: { p: { lon: 4, lat: 5 } } }, // on the hole's edge
    { id: 5, payload: { p: { lon: 11, lat: 5 } } }, // outside
  ];
  const polygon = { exterior: square(0, 10), interiors: [square(4, 6)] };
  check(t, points, { must: [{ key: 'p', geo_polygon: polygon }] }, [1], [{ p: 'geo' }]);
  check(t, points, { must: [{ key: 'p', geo_polygon: { exterior: square(0, 10) } }] }, [1, 2, 4], [{ p: 'geo' }]);
});

t.test('has_id and has_vector', async (t) => {
  const uuid = '550e8400-e29b-41d4-a716-446655440000';
  const points: CasePoint[] = [{ id: 1, vectors: [''] }, { id: 2, vectors: ['image'] }, { id: uuid, vectors: ['', 'image'] }];
  // Ids in any UUID form Qdrant reads; numbers and UUIDs never equal each other.
  check(t, points, { must: [{ has_id: [1, '550E8400E29B41D4A716446655440000', 7] }] }, [1, uuid]);
  check(t, points, { must_not: [{ has_id: [2] }] }, [1, uuid]);
  // The unnamed default vector is named "" (DEFAULT_VECTOR_NAME).
  check(t, points, { must: [{ has_vector: '' }] }, [1, uuid]);
  check(t, points, { must: [{ has_vector: 'image' }] }, [2, uuid]);
  check(t, points, { must: [{ has_vector: 'missing' }] }, []);
});

t.test('nested: one array element must satisfy the whole inner filter', async (t) => {
  // Qdrant's filtering docs, "Nested object filter": with diet[].food and diet[].likes projected
  // separately both dinosaurs match; the nested condition matches only the one that likes meat.
  const points: CasePoint[] = [
    { id: 1, payload: { dinosaur: 't-rex', diet: [{ food: 'leaves', likes: false }, { food: 'meat', likes: true }] } },
    { id: 2, payload: { dinosaur: 'diplodocus', diet: [{ food: 'leaves', likes: true }, { food: 'meat', likes: false }] } },
  ];
  const indexes: Record<string, IndexSchema>[] = [{ 'diet[].food': 'keyword', 'diet[].likes': 'bool' }];
  check(t, points, { must: [{ key: 'diet[].food', match: { value: 'meat' } }, { key: 'diet[].likes', match: { value: true } }] }, [1, 2], indexes);
  const nested = { must: [{ key: 'food', match: { value: 'meat' } }, { key: 'likes', match: { value: true } }] };
  check(t, points, { must: [{ nested: { key: 'diet', filter: nested } }] }, [1], indexes);
  check(t, points, { must: [{ nested: { key: 'diet[]', filter: nested } }] }, [1], indexes);
  check(t, points, { must_not: [{ nested: { key: 'diet', filter: nested } }] }, [2], indexes);
  // Inside nested there is no id tracker and no vectors: has_id and has_vector never hold.
  check(t, points, { must: [{ nested: { key: 'diet', filter: { must: [{ has_id: [1, 2] }] } } }] }, []);
  check(t, points, { must: [{ nested: { key: 'diet', filter: { must_not: [{ has_vector: '' }] } } }] }, [1, 2]);
});

t.test('text matching: substring without a text index, tokens with one', async (t) => {
  const points: CasePoint[] = [
    { id: 1, payload: { d: 'The Quick brown fox' } },
    { id: 2, payload: { d: 'quickly foxes' } },
    { id: 3, payload: { d: ['brown', 'quick dog'] } },
    { id: 4, payload: { d: 42 } },
  ];
  // Without an index MatchText is `stored.contains(text)`, case-sensitive.
  check(t, points, { must: [{ key: 'd', match: { text: 'quick' } }] }, [2, 3]);
  check(t, points, { must: [{ key: 'd', match: { text: 'brown fox' } }] }, [1]);
  // text_any: some whitespace-separated word is a substring.
  check(t, points, { must: [{ key: 'd', match: { text_any: 'fox dog' } }] }, [1, 2, 3]);
  // With a text index: lowercase word tokens, all query tokens among the point's tokens.
  const text: Record<string, IndexSchema> = { d: 'text' };
  t.same(matchingIds(sourceOf(points, text), { must: [{ key: 'd', match: { text: 'QUICK' } }] }), [1, 3]);
  t.same(matchingIds(sourceOf(points, text), { must: [{ key: 'd', match: { text: 'quick brown' } }] }), [1, 3]);
  t.same(matchingIds(sourceOf(points, text), { must: [{ key: 'd', match: { text_any: 'foxes dog' } }] }), [2, 3]);
  // A phrase must appear in order within one string.
  t.same(matchingIds(sourceOf(points, text), { must: [{ key: 'd', match: { phrase: 'brown fox' } }] }), [1]);
  t.same(matchingIds(sourceOf(points, text), { must: [{ key: 'd', match: { phrase: 'fox brown' } }] }), []);
  // A query with no tokens matches nothing (TokenSet::has_subset of an empty set is false).
  t.same(matchingIds(sourceOf(points, text), { must: [{ key: 'd', match: { text: '  ,, ' } }] }), []);
});

t.test('prefix is byte-wise and case-sensitive', async (t) => {
  // MatchPrefix (OpenAPI): byte-wise, case-sensitive, consistent with exact keyword matching.
  const points: CasePoint[] = [{ id: 1, payload: { k: 'apple' } }, { id: 2, payload: { k: ['Apricot', 'banana'] } }, { id: 3, payload: { k: 'ap' } }, { id: 4, payload: { k: 7 } }];
  check(t, points, { must: [{ key: 'k', match: { prefix: 'ap' } }] }, [1, 3], [{ k: 'keyword' }, { k: { type: 'keyword', prefix: true } }]);
  check(t, points, { must: [{ key: 'k', match: { prefix: '' } }] }, [1, 2, 3], [{ k: 'keyword' }]);
  check(t, points, { must: [{ key: 'k', match: { prefix: 'Ap' } }] }, [2], [{ k: 'keyword' }]);
});

t.test('keys: nested objects, indexes, quoted keys, inherited names', async (t) => {
  const points: CasePoint[] = [
    { id: 1, payload: { a: { b: { c: 1 } }, 'x.y': 2, constructor: 'c', list: [10, 20] } },
    { id: 2, payload: { a: { b: [{ c: 2 }] }, x: { y: 3 } } },
  ];
  check(t, points, { must: [{ key: 'a.b.c', match: { value: 1 } }] }, [1], [{ 'a.b.c': 'integer' }]);
  check(t, points, { must: [{ key: 'a.b[].c', match: { value: 2 } }] }, [2], [{ 'a.b[].c': 'integer' }]);
  check(t, points, { must: [{ key: '"x.y"', match: { value: 2 } }] }, [1], [{ '"x.y"': 'integer' }]);
  check(t, points, { must: [{ key: 'x.y', match: { value: 3 } }] }, [2]);
  check(t, points, { must: [{ key: 'list[1]', match: { value: 20 } }] }, [1], [{ 'list[1]': 'integer' }]);
  // Payload keys are own JSON keys only: nothing is inherited from Object.prototype.
  check(t, points, { must: [{ key: 'constructor', match: { text: 'function' } }] }, []);
  check(t, points, { must: [{ is_empty: { key: 'toString' } }] }, [1, 2]);
});

t.test('deleted offsets never match', async (t) => {
  const source = sourceOf([{ id: 1 }, { id: 2 }, { id: 3 }], {});
  source.put(1, undefined);
  t.same(matchingIds(source, {}), [1, 3]);
  t.same(matchingIds(source, { must_not: [{ has_id: [1] }] }), [3]);
});

t.test('a uuid index compares UUIDs as UUIDs, by index and by payload check alike', async (t) => {
  const u = '550e8400-e29b-41d4-a716-446655440000';
  const points: CasePoint[] = Array.from({ length: 100 }, (_, i) => ({ id: i, payload: { u: i === 1 ? u.toUpperCase() : i === 2 ? u : 'other' } }));
  const wire: WireFilter = { must: [{ key: 'u', match: { value: u } }] };
  t.same(matchingIds(sourceOf(points), wire), [2], 'without an index: string equality');
  t.same(matchingIds(sourceOf(points, { u: 'uuid' }), wire), [1, 2], 'uuid index: the same UUID in another form');
  // has_id leaves few candidates, so the uuid condition is checked on payloads, with the index's rule.
  const few: WireFilter = { must: [{ has_id: [1, 2, 3] }, { key: 'u', match: { any: [u.replaceAll('-', '')] } }] };
  t.same(matchingIds(sourceOf(points, { u: 'uuid' }), few), [1, 2]);
});
