// Payload integers as Qdrant keeps them (serde_json's i64 and u64, to the last digit) through the
// real server, with hardware reporting on: integers near 2^53, 2^63 and 2^64 that one double
// cannot tell apart, at the top of a payload and nested in objects and lists, upserted in both
// forms, by set_payload/overwrite_payload and in a batch, are read back with all their digits
// (retrieve, scroll, query), matched exactly (match value/any/except are i64 in Qdrant), compared
// as doubles by ranges (Qdrant's as_f64), counted by facets, ordered by order_by (exact order
// values and start_from) and grouped by group_by, with and without an integer index; hardware
// usage counts their bytes; a snapshot and a restart keep them.
//
// Responses are read with every integer literal of 16 digits or more as its digits (see
// exactParse), independently of the server's own code: JSON.parse alone would round them.
// In process first: which form each number takes, and point records written and read back
// (records written before payload integers were exact read as the integers their doubles are).

import t, { type Test } from 'tap';
import { join } from 'node:path';
import { parseJsonBody } from '../src/api/json-body.js';
import { validateBody } from '../src/api/validator.js';
import type { Payload } from '../src/model.js';
import { decodePoint, encodePoint } from '../src/shard/point-codec.js';
import { startServer, type RunningServer } from './helpers/server.js';
import { stopAtEnd } from './helpers/api-http.js';

const P53 = 2n ** 53n;
const I64_MAX = 2n ** 63n - 1n;
const I64_MIN = -(2n ** 63n);
const U64_MAX = 2n ** 64n - 1n;
const DIM = 4;

/** `n` of each point: neighbours differ in their last bits; 8 holds a u64 no i64 holds, 12 a float. */
const N = new Map<number, bigint | number>([
  [1, P53], [2, P53 + 1n], [3, P53 + 3n], [4, P53 + 4n], [5, I64_MAX], [6, I64_MAX - 1n],
  [7, I64_MIN], [8, U64_MAX], [9, 12n], [10, P53 + 1n], [11, -(P53 + 1n)], [12, 1.5],
]);
const IDS = [...N.keys()];
/** The `n` under `obj` (`obj.v`, `obj.list`) of each point that still holds its first payload's `obj`. */
const OBJ = new Map(N);

/** A payload's JSON text, compact and in this key order (as Quiver prints it back). */
function payloadText(id: number): string {
  const n = String(N.get(id));
  return `{"n":${n},"obj":{"v":${n},"list":[${n},1,{"w":${n}}]},"tag":"p${id}"}`;
}

function vectorOf(id: number): number[] {
  return Array.from({ length: DIM }, (_, d) => (d === id % DIM ? 1 + id : 0.5));
}

/** An integer literal of 16 digits or more in a response, as exactParse reads it. */
type Exact = string;

/** How exactParse shows a value: long integers as '#' and their digits, other numbers as numbers. */
function lit(value: bigint | number): Exact | number {
  if (typeof value === 'number') return value;
  return String(value).replace('-', '').length >= 16 ? `#${value}` : Number(value);
}

/** Parses a response with every integer literal of 16 digits or more read as '#' and its digits. */
function exactParse(text: string): unknown {
  return JSON.parse(text.replace(/([:[,])(-?\d{16,})(?=[,\]}])/g, '$1"#$2"'));
}

/** What exactParse makes of payloadText(id). */
function expectedPayload(id: number): unknown {
  const n = lit(N.get(id)!);
  return { n, obj: { v: n, list: [n, 1, { w: n }] }, tag: `p${id}` };
}

interface Reply {
  status: number;
  text: string;
  body: { result?: unknown; usage?: { hardware: Record<string, number> } };
}

let server: RunningServer;
let base = '';
const C = '/collections/exact';

async function send(method: string, path: string, body?: string): Promise<Reply> {
  const response = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body });
  const text = await response.text();
  return { status: response.status, text, body: exactParse(text) as Reply['body'] };
}

async function ok(t: Test, method: string, path: string, body?: string): Promise<Reply> {
  const reply = await send(method, path, body);
  t.equal(reply.status, 200, `${method} ${path}: ${reply.text.slice(0, 300)}`);
  return reply;
}

async function result<T>(t: Test, method: string, path: string, body?: string): Promise<T> {
  return (await ok(t, method, path, body)).body.result as T;
}

interface Rec { id: number; payload?: Record<string, unknown>; order_value?: Exact | number }

/** Ids of the points a filter selects (scroll), ascending. */
async function selected(t: Test, filter: string, collection = C): Promise<number[]> {
  const page = await result<{ points: Rec[] }>(t, 'POST', `${collection}/points/scroll`, `{"limit":100,"with_payload":false,"filter":${filter}}`);
  return page.points.map((p) => p.id).sort((a, b) => a - b);
}

async function payloadsOf(t: Test, collection = C): Promise<Map<number, unknown>> {
  const page = await result<{ points: Rec[] }>(t, 'POST', `${collection}/points/scroll`, '{"limit":100,"with_payload":true}');
  return new Map(page.points.map((p) => [p.id, p.payload]));
}

// ---- reference: Qdrant's rules on serde_json values ----

/** serde_json's as_i64: an integer an i64 holds (a float, or a u64 past i64, is none). */
function asI64(value: bigint | number): bigint | undefined {
  return typeof value === 'bigint' && value >= I64_MIN && value <= I64_MAX ? value : undefined;
}

/** The points `holds` selects by their `n` (or by the `n` under `obj`). */
function where(holds: (n: bigint | number) => boolean, values = N): number[] {
  return IDS.filter((id) => values.has(id) && holds(values.get(id)!));
}

await t.test('in process: one form per value, kept by point records', async (t) => {
  const body = validateBody('SetPayload', parseJsonBody(`{"points":[1],"payload":{"a":9007199254740991,"b":9007199254740993,`
    + `"c":1e18,"d":18446744073709551616,"e":-9223372036854775809,"f":9007199254740993.0,"g":[-9223372036854775808,{"h~/":18446744073709551615}],`
    + `"__proto__":9223372036854775807}}`));
  const payload = body.payload as Payload;
  t.same(Object.entries(payload), [
    ['a', 9007199254740991], // 2^53-1: a number
    ['b', P53 + 1n],
    ['c', 10n ** 18n], // a whole float past 2^53 is the integer it equals
    ['d', 2 ** 64], // past u64 serde_json reads a float: the double
    ['e', -(2 ** 63)], // below i64 too
    ['f', P53], // a float literal: the double JSON.parse made, as an integer
    ['g', [I64_MIN, { 'h~/': U64_MAX }]],
    ['__proto__', I64_MAX],
  ]);
  t.equal(Object.getPrototypeOf(payload), Object.prototype, 'the __proto__ key is a field');

  const record = { id: 7, vectors: { '': new Float32Array([1, 2]) }, payload, version: 3 };
  t.same(decodePoint(encodePoint(record)), record, 'a record keeps every integer');
  // A record as written before: its payload printed by JSON.stringify, the integer rounded and
  // written in JavaScript's shortest digits, which are also what responses showed of it.
  const old = encodePoint({ ...record, payload: { x: 2 ** 60, y: 2 ** 64, z: 0.5 } });
  t.same(decodePoint(old).payload, { x: 1152921504606847000n, y: 2 ** 64, z: 0.5 }, 'an old record reads as the digits it holds');
});

server = await startServer({ workers: 2, env: { QDRANT__SERVICE__HARDWARE_REPORTING: 'true' } });
stopAtEnd(t, server);
base = server.url;

await t.test('upserted in both forms, every digit is read back by retrieve, scroll and query', async (t) => {
  await ok(t, 'PUT', C, JSON.stringify({ vectors: { size: DIM, distance: 'Euclid' }, shard_number: 2 }));
  const listed = IDS.slice(0, 6).map((id) => `{"id":${id},"vector":${JSON.stringify(vectorOf(id))},"payload":${payloadText(id)}}`);
  const first = await ok(t, 'PUT', `${C}/points?wait=true`, `{"points":[${listed.join(',')}]}`);
  const rest = IDS.slice(6);
  const second = await ok(t, 'PUT', `${C}/points?wait=true`,
    `{"batch":{"ids":${JSON.stringify(rest)},"vectors":${JSON.stringify(rest.map(vectorOf))},"payloads":[${rest.map(payloadText).join(',')}]}}`);
  // Hardware usage: the payload bytes written are those of the exact text.
  const written = (ids: number[]) => ids.reduce((sum, id) => sum + Buffer.byteLength(payloadText(id)), 0);
  t.equal(first.body.usage?.hardware.payload_io_write, written(IDS.slice(0, 6)), 'payload bytes written (points form)');
  t.equal(second.body.usage?.hardware.payload_io_write, written(rest), 'payload bytes written (batch form)');

  const expected = new Map(IDS.map((id) => [id, expectedPayload(id)]));
  const retrieved = await ok(t, 'POST', `${C}/points`, `{"ids":${JSON.stringify(IDS)},"with_payload":true}`);
  t.same(new Map((retrieved.body.result as Rec[]).map((p) => [p.id, p.payload])), expected, 'retrieve');
  t.equal(retrieved.body.usage?.hardware.payload_io_read, written(IDS), 'payload bytes read');
  t.same(await payloadsOf(t), expected, 'scroll');
  const queried = await result<{ points: Rec[] }>(t, 'POST', `${C}/points/query`, '{"limit":100,"with_payload":true}');
  t.same(new Map(queried.points.map((p) => [p.id, p.payload])), expected, 'query');
  const one = await ok(t, 'GET', `${C}/points/8`);
  t.match(one.text, `"payload":${payloadText(8)}`, 'the raw text holds the payload as it was sent');
  t.match((await ok(t, 'GET', `${C}/points/7`)).text, '"n":-9223372036854775808,');
});

/** Filters whose answers must not change when an index answers them. */
const MATCHES: [what: string, filter: string, expected: () => number[]][] = [
  ['match 2^53+1', `{"must":[{"key":"n","match":{"value":${P53 + 1n}}}]}`, () => where((n) => asI64(n) === P53 + 1n)],
  ['match 2^53', `{"must":[{"key":"n","match":{"value":${P53}}}]}`, () => where((n) => asI64(n) === P53)],
  ['match i64::MAX', `{"must":[{"key":"n","match":{"value":${I64_MAX}}}]}`, () => where((n) => asI64(n) === I64_MAX)],
  ['match i64::MIN', `{"must":[{"key":"n","match":{"value":${I64_MIN}}}]}`, () => where((n) => asI64(n) === I64_MIN)],
  ['match -(2^53+1)', `{"must":[{"key":"n","match":{"value":${-(P53 + 1n)}}}]}`, () => where((n) => asI64(n) === -(P53 + 1n))],
  ['match in a list', `{"must":[{"key":"obj.list","match":{"value":${I64_MAX - 1n}}}]}`, () => where((n) => asI64(n) === I64_MAX - 1n, OBJ)],
  ['match any', `{"must":[{"key":"n","match":{"any":[${P53 + 3n},${I64_MAX - 1n},${P53 + 2n}]}}]}`,
    () => where((n) => [P53 + 3n, I64_MAX - 1n, P53 + 2n].includes(asI64(n) as bigint))],
  // Qdrant's except passes a number that is no i64 (the u64, the float).
  ['match except', `{"must":[{"key":"n","match":{"except":[${P53 + 1n},${P53}]}}]}`,
    () => where((n) => asI64(n) === undefined || ![P53 + 1n, P53].includes(asI64(n)!))],
  // Ranges are f64 in Qdrant, and it compares an integer payload value as the double it rounds to.
  ['range gte 2^53+1', `{"must":[{"key":"n","range":{"gte":${P53 + 1n}}}]}`, () => where((n) => Number(n) >= Number(P53 + 1n))],
  ['range lt 2^53+4', `{"must":[{"key":"n","range":{"lt":${P53 + 4n}}}]}`, () => where((n) => Number(n) < Number(P53 + 4n))],
  ['range gt i64::MAX-1', `{"must":[{"key":"n","range":{"gt":${I64_MAX - 1n}}}]}`, () => where((n) => Number(n) > Number(I64_MAX - 1n))],
  ['range on a nested key', `{"must":[{"key":"obj.v","range":{"lte":-9007199254740993}}]}`, () => where((n) => Number(n) <= -Number(P53 + 1n), OBJ)],
];

async function checkMatches(t: Test, how: string): Promise<void> {
  for (const [what, filter, expected] of MATCHES) t.same(await selected(t, filter), expected(), `${what} (${how})`);
}

await t.test('match compares integers exactly, range as doubles, with and without an integer index', async (t) => {
  // The reference's own sanity: exactness and rounding both show in these cases.
  t.same(MATCHES[0][2](), [2, 10], 'the two points holding 2^53+1');
  t.same(MATCHES[9][2](), [1, 2, 7, 9, 10, 11, 12], 'lt 2^53+4 leaves out 2^53+3, which rounds to 2^53+4');
  await checkMatches(t, 'payload checks');
  await ok(t, 'PUT', `${C}/index?wait=true`, '{"field_name":"n","field_schema":"integer"}');
  await ok(t, 'PUT', `${C}/index?wait=true`, '{"field_name":"obj.list","field_schema":"integer"}');
  await checkMatches(t, 'integer index');
  // Qdrant's match value is an i64: a u64 past it is no value serde reads there.
  const refused = await send('POST', `${C}/points/scroll`, `{"filter":{"must":[{"key":"n","match":{"value":${U64_MAX}}}]}}`);
  t.equal(refused.status, 400, 'a match value past i64 is refused');
});

await t.test('facets, order_by and group_by see the exact integers', async (t) => {
  // Facet counts: the i64 values of the integer index, by count then value.
  const counts = new Map<bigint, number>();
  for (const n of N.values()) {
    const i = asI64(n);
    if (i !== undefined) counts.set(i, (counts.get(i) ?? 0) + 1);
  }
  const facetExpected = [...counts].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).map(([value, count]) => ({ value: lit(value), count }));
  const facet = await result<{ hits: unknown[] }>(t, 'POST', `${C}/facet`, '{"key":"n","limit":100,"exact":true}');
  t.same(facet.hits, facetExpected, 'facet counts');

  // order_by: the i64 values (ties by id), exact order values, an exact start.
  const pairs = [...N].filter(([, n]) => asI64(n) !== undefined).map(([id, n]) => ({ id, n: n as bigint }));
  const ordered = (desc: boolean, keep: (n: bigint) => boolean) => pairs.filter((p) => keep(p.n))
    .sort((a, b) => (a.n === b.n ? a.id - b.id : (a.n < b.n) !== desc ? -1 : 1))
    .map((p) => ({ id: p.id, order_value: lit(p.n) }));
  const scrolled = async (orderBy: string) => (await result<{ points: Rec[] }>(t, 'POST', `${C}/points/scroll`, `{"limit":100,"with_payload":false,"order_by":${orderBy}}`))
    .points.map((p) => ({ id: p.id, order_value: p.order_value }));
  t.same(await scrolled('"n"'), ordered(false, () => true), 'ascending');
  t.same(await scrolled('{"key":"n","direction":"desc"}'), ordered(true, () => true), 'descending');
  t.same(await scrolled(`{"key":"n","start_from":${P53 + 1n}}`), ordered(false, (n) => n >= P53 + 1n), 'ascending from 2^53+1 (2^53 left out)');
  t.same(await scrolled(`{"key":"n","direction":"desc","start_from":${I64_MAX - 1n}}`), ordered(true, (n) => n <= I64_MAX - 1n), 'descending from i64::MAX-1');
  const queried = await result<{ points: Rec[] }>(t, 'POST', `${C}/points/query`, '{"query":{"order_by":{"key":"n","direction":"desc"}},"limit":3}');
  t.same(queried.points.map((p) => [p.id, p.order_value]), ordered(true, () => true).slice(0, 3).map((p) => [p.id, p.order_value]), 'query by order_by');

  // group_by: every integer (a u64 too) is a group id, a float none.
  const groups = await result<{ groups: { id: unknown; hits: Rec[] }[] }>(t, 'POST', `${C}/points/query/groups`,
    `{"query":${JSON.stringify(vectorOf(0))},"group_by":"n","group_size":5,"limit":100}`);
  const byValue = new Map<unknown, number[]>();
  for (const [id, n] of N) if (typeof n === 'bigint') byValue.set(lit(n), [...(byValue.get(lit(n)) ?? []), id]);
  t.same(new Map(groups.groups.map((g) => [g.id, g.hits.map((h) => h.id).sort((a, b) => a - b)])), byValue, 'groups by exact value');
});

await t.test('formula variables read integers as doubles, as Qdrant does', async (t) => {
  const hits = await result<{ points: { id: number; score: number }[] }>(t, 'POST', `${C}/points/query`,
    `{"prefetch":{"query":${JSON.stringify(vectorOf(0))},"limit":100},"query":{"formula":"n","defaults":{"n":0}},"limit":1}`);
  t.same(hits.points.map((p) => p.id), [8], 'the u64 ranks first');
});

await t.test('set_payload, overwrite_payload and batch operations keep every digit', async (t) => {
  await ok(t, 'POST', `${C}/points/payload?wait=true`, `{"payload":{"m":${I64_MIN + 1n},"arr":[${U64_MAX - 1n},{"x":${P53 + 5n}}]},"points":[9]}`);
  await ok(t, 'POST', `${C}/points/payload?wait=true`, `{"payload":{"k":${P53 + 9n}},"key":"obj","points":[9]}`);
  await ok(t, 'PUT', `${C}/points/payload?wait=true`, `{"payload":{"n":${P53 + 7n}},"points":[12]}`);
  await ok(t, 'POST', `${C}/points/batch?wait=true`, `{"operations":[`
    + `{"upsert":{"points":[{"id":13,"vector":${JSON.stringify(vectorOf(13))},"payload":{"n":${-(P53 + 3n)}}}]}},`
    + `{"set_payload":{"payload":{"z":${I64_MAX}},"points":[13]}},`
    + `{"overwrite_payload":{"payload":{"n":${I64_MAX - 2n}},"points":[4]}}]}`);
  const payloads = await payloadsOf(t);
  const nine = expectedPayload(9) as { obj: Record<string, unknown> };
  t.same(payloads.get(9), { ...nine, obj: { ...nine.obj, k: lit(P53 + 9n) }, m: lit(I64_MIN + 1n), arr: [lit(U64_MAX - 1n), { x: lit(P53 + 5n) }] }, 'set_payload, whole and under a key');
  t.same(payloads.get(12), { n: lit(P53 + 7n) }, 'overwrite_payload');
  t.same(payloads.get(13), { n: lit(-(P53 + 3n)), z: lit(I64_MAX) }, 'batch upsert and set_payload');
  t.same(payloads.get(4), { n: lit(I64_MAX - 2n) }, 'batch overwrite_payload');
  N.set(12, P53 + 7n).set(13, -(P53 + 3n)).set(4, I64_MAX - 2n);
  OBJ.delete(12);
  OBJ.delete(4);
  IDS.push(13);
  t.same(await selected(t, `{"must":[{"key":"n","match":{"value":${P53 + 7n}}}]}`), [12], 'the index holds the new exact value');
  t.same(await selected(t, `{"must":[{"key":"n","match":{"any":[${I64_MAX - 2n},${I64_MAX - 3n}]}}]}`), [4]);
  t.same(await selected(t, `{"must":[{"key":"arr","range":{"gte":${U64_MAX - 1n}}}]}`), [9], 'a u64 in a range, as a double');
});

await t.test('a snapshot and a restart keep every digit', async (t) => {
  const before = await payloadsOf(t);
  t.equal(before.get(7) !== undefined && (before.get(7) as { n: unknown }).n, lit(I64_MIN));
  const created = await result<{ name: string }>(t, 'POST', `${C}/snapshots?wait=true`);
  const location = `file://${join(server.storage, 'snapshots', 'exact', created.name)}`;
  await ok(t, 'PUT', '/collections/copy/snapshots/recover', JSON.stringify({ location }));
  t.same(await payloadsOf(t, '/collections/copy'), before, 'the recovered copy');

  await server.stop();
  const again = await startServer({ storage: server.storage, workers: 2, env: { QDRANT__SERVICE__HARDWARE_REPORTING: 'true' } });
  t.teardown(() => again.stop());
  base = again.url;
  t.same(await payloadsOf(t), before, 'after a restart');
  t.same(await payloadsOf(t, '/collections/copy'), before, 'the copy after a restart');
  for (const [what, filter, expected] of MATCHES) t.same(await selected(t, filter), expected(), `${what} (after a restart)`);
});
