// Numeric point ids over the whole u64 range on the wire: the exact digits of long integer
// literals in a body, ids past 2^53 as bigints after validation (other numbers untouched), the
// refusals worded as Qdrant words them, URL path ids, and printing bigints as JSON integers.

import t from 'tap';
import { longIntegerLiterals } from '../src/json/integer-literals.js';
import { toFilter } from '../src/api/filter.js';
import { parseJsonBody } from '../src/api/json-body.js';
import { printJson } from '../src/json/print.js';
import { toPointInputs } from '../src/api/point-convert.js';
import { isPointId, pointIdFromPath, toPointId } from '../src/api/point-id.js';
import { validateBody, type BodyName } from '../src/api/validator.js';
import { FormatError } from '../src/errors.js';

const U64_MAX = 18446744073709551615n;
const P63 = 9223372036854775808n;
const P53_1 = 9007199254740993n;
// Neighbours that differ only in low bits, which one double cannot tell apart.
const NEAR_MAX = [U64_MAX, U64_MAX - 1n, U64_MAX - 2n];

function parsed<K extends BodyName>(name: K, text: string) {
  return validateBody(name, parseJsonBody(text));
}

function refusal(name: BodyName, text: string): string {
  try {
    parsed(name, text);
  } catch (err) {
    if (err instanceof FormatError) return err.message;
    throw err;
  }
  return 'accepted';
}

const invalidId = (shown: string) => `Format error in JSON body: value ${shown} is not a valid point ID, valid values are either an unsigned integer or a UUID`;

t.test('long integer literals are found with their exact digits and JSON pointers', async (t) => {
  const text = '{"points":[{"id":18446744073709551615,"vector":[0.12345678901234567,1e300,12345678901234567.5]},{"id":7}],'
    + '"a/b":{"x~y":-9007199254740993},"s":"12345678901234567890","dup":1234567890123456789,"dup":9007199254740993,"t":[true,null,"]",[9007199254740992]]}';
  t.same([...longIntegerLiterals(text)], [
    ['/points/0/id', U64_MAX],
    ['/a~1b/x~0y', -P53_1],
    ['/dup', P53_1],
    ['/t/3/0', 9007199254740992n],
  ]);
  t.same([...longIntegerLiterals('{"a":[1,2,3],"b":123456789012345}')], [], 'shorter literals always fit a double');
});

t.test('ids past 2^53 become exact bigints, smaller ids stay numbers', async (t) => {
  const body = parsed('PointInsertOperations', `{"points":[
    {"id":18446744073709551615,"vector":[1,2],"payload":{"n":18446744073709551615}},
    {"id":18446744073709551614,"vector":[1,2]},
    {"id":9223372036854775808,"vector":[1,2]},
    {"id":9007199254740993,"vector":[1,2]},
    {"id":9007199254740992,"vector":[1,2]},
    {"id":9007199254740991,"vector":[1,2]},
    {"id":0,"vector":[1,2]}]}`);
  const points = toPointInputs(body);
  t.same(points.map((p) => p.id), [U64_MAX, U64_MAX - 1n, P63, P53_1, 9007199254740992n, 9007199254740991, 0]);
  t.equal(typeof points[5].id, 'number', '2^53-1 stays a number');
  t.equal(points[0].payload.n, U64_MAX, 'a payload integer is exact too (test/payload-exact-numbers.test.ts)');
  const batch = toPointInputs(parsed('PointInsertOperations', '{"batch":{"ids":[18446744073709551615,18446744073709551613,5],"vectors":[[1],[2],[3]]}}'));
  t.same(batch.map((p) => p.id), [U64_MAX, U64_MAX - 2n, 5]);
});

t.test('every place an id appears takes its exact value', async (t) => {
  t.same(parsed('PointRequest', '{"ids":[18446744073709551615,18446744073709551614]}').ids, NEAR_MAX.slice(0, 2));
  t.same(parsed('PointsSelector', '{"points":[18446744073709551613]}'), { points: [U64_MAX - 2n] });
  t.same(parsed('SetPayload', '{"payload":{},"points":[9223372036854775808]}').points, [P63]);
  t.same(parsed('DeletePayload', '{"keys":["a"],"points":[9223372036854775809]}').points, [P63 + 1n]);
  t.same(parsed('UpdateVectors', '{"points":[{"id":9007199254740993,"vector":[1]}]}').points[0].id, P53_1);
  t.same(parsed('DeleteVectors', '{"vector":["a"],"points":[9007199254740995]}').points, [P53_1 + 2n]);
  const scroll = parsed('ScrollRequest', '{"offset":18446744073709551614,"filter":{"must":[{"has_id":[18446744073709551615,18446744073709551613,3]}]}}');
  t.equal(scroll.offset, U64_MAX - 1n);
  const filter = toFilter(scroll.filter ?? {});
  const ids = (filter.must?.[0] as { ids: Set<unknown> }).ids;
  t.same([...ids], [U64_MAX, U64_MAX - 2n, 3]);
  t.ok(ids.has(U64_MAX - 2n) && !ids.has(U64_MAX - 1n), 'the set holds the exact values');
  const query = parsed('QueryRequest', '{"query":{"recommend":{"positive":[18446744073709551614],"negative":[9007199254740993]}},"prefetch":[{"query":18446744073709551613}]}');
  t.same(query.query, { recommend: { positive: [U64_MAX - 1n], negative: [P53_1] } });
  t.same(query.prefetch, [{ query: U64_MAX - 2n }]);
  const recommend = parsed('RecommendRequest', '{"positive":[18446744073709551615],"negative":[9223372036854775807],"limit":1}');
  t.same([recommend.positive, recommend.negative], [[U64_MAX], [P63 - 1n]]);
  const discover = parsed('DiscoverRequest', '{"target":18446744073709551615,"context":[{"positive":9007199254740993,"negative":9007199254740995}],"limit":1}');
  t.same([discover.target, discover.context], [U64_MAX, [{ positive: P53_1, negative: P53_1 + 2n }]]);
  const batch = parsed('UpdateOperations', '{"operations":[{"delete":{"points":[18446744073709551615]}},{"upsert":{"points":[{"id":18446744073709551614,"vector":[1]}]}}]}');
  t.same(batch.operations, [{ delete: { points: [U64_MAX] } }, { upsert: { points: [{ id: U64_MAX - 1n, vector: [1] }] } }]);
});

t.test('numbers that are not ids are refused as Qdrant words it', async (t) => {
  t.equal(refusal('PointRequest', '{"ids":[18446744073709551616]}'), invalidId('18446744073709552000'), 'u64::MAX + 1: serde_json reads a float');
  t.equal(refusal('PointRequest', '{"ids":[36893488147419103232]}'), invalidId('36893488147419103000'));
  t.equal(refusal('PointRequest', '{"ids":[-1]}'), invalidId('-1'));
  t.equal(refusal('PointRequest', '{"ids":[-9007199254740993]}'), invalidId('-9007199254740993'), 'an i64 is shown with all its digits');
  t.equal(refusal('PointRequest', '{"ids":[1.5]}'), invalidId('1.5'));
  t.equal(refusal('PointRequest', '{"ids":[18446744073709551615.5]}'), invalidId('18446744073709552000'));
  t.equal(refusal('ScrollRequest', '{"offset":18446744073709551616}'), invalidId('18446744073709552000'));
  t.equal(refusal('PointRequest', '{"ids":[18446744073709551615, -2]}'), invalidId('-2'));
  t.equal(refusal('PointRequest', '{"ids":[18446744073709551615]}'), 'accepted');
});

t.test('numeric ids in both forms, and in URL paths', async (t) => {
  t.ok(isPointId(U64_MAX));
  t.notOk(isPointId(U64_MAX + 1n));
  t.notOk(isPointId(-1n));
  t.equal(toPointId(U64_MAX), U64_MAX);
  t.equal(toPointId(9007199254740991n), 9007199254740991, 'a small bigint is a number');
  t.equal(pointIdFromPath('18446744073709551615'), U64_MAX);
  t.equal(pointIdFromPath('9007199254740993'), P53_1);
  t.equal(pointIdFromPath('9007199254740991'), 9007199254740991);
  t.equal(pointIdFromPath('007'), 7);
  t.equal(pointIdFromPath('18446744073709551616'), undefined);
  t.equal(pointIdFromPath('-1'), undefined);
});

t.test('responses print bigint ids as JSON integers, everything else as JSON.stringify does', async (t) => {
  const hit = { id: U64_MAX, version: 3, score: 0.25, payload: { a: [1, 'x', null], b: undefined }, vector: [0.1, 2], f: () => 1 };
  t.equal(printJson({ result: [hit, { id: P53_1, payload: null }, { id: 7 }], status: 'ok' }),
    '{"result":[{"id":18446744073709551615,"version":3,"score":0.25,"payload":{"a":[1,"x",null]},"vector":[0.1,2]},{"id":9007199254740993,"payload":null},{"id":7}],"status":"ok"}');
  t.equal(printJson({ next_page_offset: U64_MAX - 1n }), '{"next_page_offset":18446744073709551614}');
  t.equal(printJson([U64_MAX, undefined, new Date(0)]), '[18446744073709551615,null,"1970-01-01T00:00:00.000Z"]');
  t.equal(printJson(U64_MAX), '18446744073709551615');
  const plain = { result: { points: [{ id: 1, payload: { s: 'é"\n' }, vector: [0.5] }], next_page_offset: null }, time: 0.001 };
  t.equal(printJson(plain), JSON.stringify(plain));
});
