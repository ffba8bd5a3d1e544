// filterSchema under Ajv 8 in strict mode (no warnings allowed), what it accepts and rejects, and
// what toFilter makes of accepted filters, including the checks the schema cannot express.

import { Ajv } from 'ajv';
import t, { type Test } from 'tap';
import { CONDITION_EXPECTED, filterSchema, toFilter, type WireFilter } from '../src/api/filter.js';
import { I64_KEYWORD } from '../src/api/exact-integer-keywords.js';
import { POINT_ID_KEYWORD } from '../src/api/point-id-keyword.js';
import { FormatError, ValidationError } from '../src/errors.js';
import type { FieldCondition, Filter, NestedCondition } from '../src/shard/filter/types.js';

const ajv = new Ajv({
  strict: true,
  logger: { log: () => {}, warn: (msg: unknown) => { throw new Error(`Ajv warning: ${String(msg)}`); }, error: (msg: unknown) => { throw new Error(String(msg)); } },
});
// has_id's items are point ids and integer match values i64s, judged by Quiver's own keywords
// (the ones the validator registers).
ajv.addKeyword(POINT_ID_KEYWORD);
ajv.addKeyword(I64_KEYWORD);
ajv.addSchema(filterSchema);
// As request schemas use it: by reference, nullable.
const validate = ajv.compile({ type: 'object', properties: { filter: { anyOf: [{ $ref: 'Filter' }, { type: 'null' }] } }, additionalProperties: false });

const ring = (points: [number, number][]) => ({ points: points.map(([lon, lat]) => ({ lon, lat })) });
const square = ring([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]);

const VALID: WireFilter[] = [
  {},
  { must: null, should: null, must_not: null, min_should: null },
  { must: { key: 'a', match: { value: 'x' } } },
  { must: [{ key: 'a', match: { value: 3 } }, { key: 'b', match: { value: false } }] },
  { should: [{ key: 'a', match: { text: 'x' } }, { key: 'a', match: { text_any: 'x y' } }, { key: 'a', match: { phrase: 'x y' } }, { key: 'a', match: { prefix: 'x' } }] },
  { must: [{ key: 'a', match: { any: ['x', 'y'] } }, { key: 'a', match: { except: [1, 2] } }, { key: 'a', match: { any: [] } }] },
  { must: [{ key: 'a', range: { gt: 1, lte: 2.5, lt: null } }, { key: 'd', range: { gte: '2024-01-01T00:00:00Z', lt: '2024-02-01' } }, { key: 'e', range: {} }] },
  { must: [{ key: 'g', geo_bounding_box: { top_left: { lon: -180, lat: 90 }, bottom_right: { lon: 180, lat: -90 } } }] },
  { must: [{ key: 'g', geo_radius: { center: { lon: 1, lat: 2 }, radius: 1000 } }] },
  { must: [{ key: 'g', geo_polygon: { exterior: square, interiors: [square] } }, { key: 'g', geo_polygon: { exterior: square, interiors: null } }] },
  { must: [{ key: 'a', values_count: { gte: 0, lt: 3 } }, { key: 'a', is_empty: true }, { key: 'a', is_null: false, is_empty: null }] },
  { must: [{ is_empty: { key: 'a' } }, { is_null: { key: 'a.b[].c' } }] },
  { must: [{ has_id: [0, 42, '550e8400-e29b-41d4-a716-446655440000', '550E8400E29B41D4A716446655440000', '{550e8400-e29b-41d4-a716-446655440000}', 'urn:uuid:550e8400-e29b-41d4-a716-446655440000'] }] },
  { must: [{ has_vector: '' }, { has_vector: 'image' }, { slice: { total: 4, index: 3 } }] },
  { must: [{ nested: { key: 'diet', filter: { must: [{ key: 'food', match: { value: 'meat' } }] } } }] },
  { must: [{ must: [{ should: { must_not: [{}] } }] }], min_should: { conditions: [{ key: 'a', match: { value: 1 } }], min_count: 1 } },
];

const INVALID: [string, unknown][] = [
  ['unknown filter field', { musts: [] }],
  ['unknown condition field', { must: [{ key: 'a', match: { value: 1 }, boost: 2 }] }],
  ['unknown match field', { must: [{ key: 'a', match: { value: 1, any: [1] } }] }],
  ['condition that is a string', { must: ['a'] }],
  ['must as a number', { must: 5 }],
  ['float match value', { must: [{ key: 'a', match: { value: 1.5 } }] }],
  ['null match value', { must: [{ key: 'a', match: { value: null } }] }],
  ['mixed any list', { must: [{ key: 'a', match: { any: ['x', 1] } }] }],
  ['numbers and datetimes mixed in a range', { must: [{ key: 'a', range: { gt: 1, lt: '2024-01-01' } }] }],
  ['range bound of another type', { must: [{ key: 'a', range: { gt: true } }] }],
  ['negative values_count', { must: [{ key: 'a', values_count: { gt: -1 } }] }],
  ['fractional values_count', { must: [{ key: 'a', values_count: { gt: 1.5 } }] }],
  ['key not a string', { must: [{ key: 1, match: { value: 1 } }] }],
  ['negative id', { must: [{ has_id: [-1] }] }],
  ['fractional id', { must: [{ has_id: [1.5] }] }],
  ['malformed uuid', { must: [{ has_id: ['550e8400-e29b-41d4-a716-44665544000'] }] }],
  ['uppercase urn prefix', { must: [{ has_id: ['URN:UUID:550e8400-e29b-41d4-a716-446655440000'] }] }],
  ['has_vector not a string', { must: [{ has_vector: 1 }] }],
  ['zero slices', { must: [{ slice: { total: 0, index: 0 } }] }],
  ['slice without index', { must: [{ slice: { total: 2 } }] }],
  ['latitude beyond 90', { must: [{ key: 'g', geo_radius: { center: { lon: 0, lat: 91 }, radius: 1 } }] }],
  ['longitude beyond 180', { must: [{ key: 'g', geo_bounding_box: { top_left: { lon: -181, lat: 1 }, bottom_right: { lon: 0, lat: 0 } } }] }],
  ['polygon of 3 points', { must: [{ key: 'g', geo_polygon: { exterior: ring([[0, 0], [1, 0], [0, 0]]) } }] }],
  ['hole of 3 points', { must: [{ key: 'g', geo_polygon: { exterior: square, interiors: [ring([[0, 0], [1, 0], [0, 0]])] } }] }],
  ['radius missing', { must: [{ key: 'g', geo_radius: { center: { lon: 0, lat: 0 } } }] }],
  ['nested without filter', { must: [{ nested: { key: 'a' } }] }],
  ['unknown field in a nested filter', { must: [{ nested: { key: 'a', filter: { must: [], bogus: 1 } } }] }],
  ['min_count of 0', { min_should: { conditions: [], min_count: 0 } }],
  ['min_should without conditions', { min_should: { min_count: 1 } }],
  ['is_empty with a bare key', { must: [{ is_empty: 'a' }] }],
];

t.test('accepts valid filters', async (t) => {
  for (const filter of VALID) t.ok(validate({ filter }), JSON.stringify(filter));
  t.ok(validate({ filter: null }), 'null filter');
});

t.test('rejects malformed filters', async (t) => {
  for (const [what, filter] of INVALID) t.notOk(validate({ filter }), what);
});

t.test('toFilter: lists, keys, ids, lists of values, ranges', async (t) => {
  const f = toFilter({
    must: { key: 'a', match: { value: 1 } },
    should: [{ has_id: [7, '550E8400E29B41D4A716446655440000'] }, { key: 'b', match: { except: [] } }],
    min_should: { conditions: [{ key: 'c', range: { gte: '2024-01-01T01:00:00+01:00', lt: null } }], min_count: 1 },
    must_not: [{ nested: { key: 'diet', filter: { must: [{ key: '"food.name"', match: { any: [1, 2] } }] } } }],
  });
  t.same(f.must, [{ kind: 'field', key: 'a', path: [{ key: 'a' }], match: { kind: 'value', value: 1 } }]);
  t.same(f.should?.[0], { kind: 'hasId', ids: new Set([7, '550e8400-e29b-41d4-a716-446655440000']) });
  t.same((f.should?.[1] as FieldCondition).match, { kind: 'except', list: { type: 'strings', values: new Set() } }, 'an empty list is a list of strings');
  t.same((f.minShould?.conditions[0] as FieldCondition).range, { kind: 'datetime', gte: Date.UTC(2024, 0, 1) * 1000 });
  const nested = f.mustNot?.[0] as NestedCondition;
  t.equal(nested.key, 'diet[]', 'nested keys walk the array');
  t.same(nested.filter.must?.[0], { kind: 'field', key: '"food.name"', path: [{ key: 'food.name' }], match: { kind: 'any', list: { type: 'integers', values: new Set([1, 2]) } } });
  t.same(toFilter({ must: [] }), { must: [] });
  t.same(toFilter({ must: null }), {});
});

t.test('toFilter: canonical keys', async (t) => {
  const key = (k: string) => (toFilter({ must: [{ key: k, is_empty: true }] }).must?.[0] as FieldCondition).key;
  t.equal(key('a.b[].c[2]'), 'a.b[].c[2]');
  t.equal(key('"a"."b"'), 'a.b', 'quotes only where needed');
  t.equal(key('a."b c"'), 'a."b c"');
  t.equal(key('città.prezzo-max_2'), 'città.prezzo-max_2', 'unicode letters, dashes and underscores need no quotes');
});

function throwsWith(t: Test, fn: () => Filter, type: typeof FormatError | typeof ValidationError, status: number, message: string): void {
  try {
    fn();
    t.fail(`expected ${message}`);
  } catch (err) {
    t.ok(err instanceof type, `${message}: error class`);
    t.equal((err as FormatError).statusCode, status, `${message}: status`);
    t.equal((err as Error).message, message);
  }
}

t.test('toFilter: what the schema cannot check', async (t) => {
  const format = `Format error in JSON body: ${CONDITION_EXPECTED}`;
  // GeoPolygon::validate_line_string: first and last points must coincide (within f64::EPSILON).
  const open = ring([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0.5]]);
  throwsWith(t, () => toFilter({ must: [{ key: 'g', geo_polygon: { exterior: open } }] }), FormatError, 400, format);
  throwsWith(t, () => toFilter({ must: [{ key: 'g', geo_polygon: { exterior: square, interiors: [open] } }] }), FormatError, 400, format);
  // Invalid json paths and datetimes fail inside the untagged Condition, which reports only this.
  for (const key of ['', 'a..b', 'a[', 'a b', '[0]', 'a.', 'a[x]', '"a\\"b"']) {
    throwsWith(t, () => toFilter({ must: [{ key, match: { value: 1 } }] }), FormatError, 400, format);
  }
  throwsWith(t, () => toFilter({ must: [{ nested: { key: 'a..b', filter: {} } }] }), FormatError, 400, format);
  throwsWith(t, () => toFilter({ must: [{ key: 'd', range: { gt: '2024-13-01' } }] }), FormatError, 400, format);
  // validate_field_condition (HTTP 422).
  throwsWith(t, () => toFilter({ should: { must: [{ key: 'a' }] } }), ValidationError, 422,
    'Validation error in JSON body: [filter.should.must[0]: At least one field condition must be specified]');
  throwsWith(t, () => toFilter({ must: [{ key: 'a', match: null, range: null }] }, 'query.filter'), ValidationError, 422,
    'Validation error in JSON body: [query.filter.must[0]: At least one field condition must be specified]');
  throwsWith(t, () => toFilter({ must: [{ slice: { total: 2, index: 2 } }] }), ValidationError, 422,
    'Validation error in JSON body: [filter.must[0].slice.index: must be less than total (2)]');
});
