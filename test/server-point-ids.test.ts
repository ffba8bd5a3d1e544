// Numeric point ids up to 2^64-1 through the real server, as raw JSON text both ways: ids near
// 2^64, 2^63 and 2^53 that differ only in their low bits (one double would merge them) are
// upserted in both forms, read back by id and by path, paged through by scroll offsets, matched
// by has_id, found by search and by query by id, deleted, kept across a restart and through a
// snapshot. Responses are read with every id as its digits (see exactIds), so each assertion is
// on exact values.

import t, { type Test } from 'tap';
import { join } from 'node:path';
import { startServer } from './helpers/server.js';
import { stopAtEnd } from './helpers/api-http.js';

const U64_MAX = 2n ** 64n - 1n;
const P63 = 2n ** 63n;
const P53 = 2n ** 53n;
const UUID = '5c56c793-691f-4b3a-b0a6-a1b7e5a2e0c1';
/** In id order; neighbours differ in the last bit or two. */
const IDS: string[] = [5n, P53 - 1n, P53, P53 + 1n, P53 + 2n, P63 - 1n, P63, P63 + 1n, U64_MAX - 2n, U64_MAX - 1n, U64_MAX].map(String);
const ALL = [...IDS, UUID];
const DIM = 4;

/** A distinct vector per point, so a search by a point's own vector finds it first (Euclid). */
function vectorOf(i: number): number[] {
  return Array.from({ length: DIM }, (_, d) => (d === i % DIM ? 10 + i : 1));
}

/** The JSON text of an id: numeric ids bare, UUIDs quoted. */
function idText(id: string): string {
  return id === UUID ? JSON.stringify(id) : id;
}

/**
 * Parses a response with every numeric `id` and `next_page_offset` read as its digits (a string),
 * independently of the server's own code: JSON.parse alone would round the big ones.
 */
function exactIds(text: string): unknown {
  return JSON.parse(text.replace(/("(?:id|next_page_offset)":)(\d+)/g, '$1"$2"'));
}

interface Reply {
  status: number;
  body: { result?: unknown; status?: unknown };
  text: string;
}

async function send(base: string, method: string, path: string, body?: string): Promise<Reply> {
  const response = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body });
  const text = await response.text();
  return { status: response.status, body: exactIds(text) as Reply['body'], text };
}

async function result<T>(t: Test, base: string, method: string, path: string, body?: string): Promise<T> {
  const reply = await send(base, method, path, body);
  t.equal(reply.status, 200, `${method} ${path}: ${reply.text.slice(0, 300)}`);
  return reply.body.result as T;
}

interface Rec { id: string; payload: { key?: string; i?: number; touched?: boolean } | null; vector?: number[] }

const server = await startServer({ workers: 2 });
stopAtEnd(t, server);
const base = server.url;
const C = '/collections/big';

await t.test('upsert in both forms, then read every id back exactly', async (t) => {
  await result(t, base, 'PUT', C, JSON.stringify({ vectors: { size: DIM, distance: 'Euclid' }, shard_number: 3 }));
  // Points form for the first half, columns for the rest; each payload names its own id.
  const half = Math.ceil(ALL.length / 2);
  const listed = ALL.slice(0, half).map((id, i) => `{"id":${idText(id)},"vector":${JSON.stringify(vectorOf(i))},"payload":{"key":"${id}","i":${i}}}`);
  await result(t, base, 'PUT', `${C}/points?wait=true`, `{"points":[${listed.join(',')}]}`);
  const rest = ALL.slice(half);
  await result(t, base, 'PUT', `${C}/points?wait=true`, `{"batch":{"ids":[${rest.map(idText).join(',')}],`
    + `"vectors":${JSON.stringify(rest.map((_, j) => vectorOf(half + j)))},"payloads":${JSON.stringify(rest.map((id, j) => ({ key: id, i: half + j })))}}}`);

  const count = await result<{ count: number }>(t, base, 'POST', `${C}/points/count`, '{"exact":true}');
  t.equal(count.count, ALL.length, 'no two ids merged');
  const got = await result<Rec[]>(t, base, 'POST', `${C}/points`, `{"ids":[${ALL.map(idText).join(',')}],"with_payload":true}`);
  t.same(got.map((p) => [p.id, p.payload?.key]).sort(), ALL.map((id) => [id, id]).sort(), 'each id holds its own point');
  for (const id of [String(U64_MAX), String(U64_MAX - 1n), String(P53 + 1n)]) {
    const one = await result<Rec>(t, base, 'GET', `${C}/points/${id}`);
    t.same([one.id, one.payload?.key], [id, id], `GET by path ${id}`);
  }
  const raw = await send(base, 'POST', `${C}/points`, `{"ids":[${U64_MAX}]}`);
  t.match(raw.text, /"id":18446744073709551615[,}]/, 'printed as a JSON integer, not a float or a string');
});

await t.test('scroll pages through the ids in numeric order with exact offsets', async (t) => {
  const seen: string[] = [];
  const offsets: (string | null)[] = [];
  let offset: string | null = null;
  do {
    const body: string = `{"limit":3,"with_payload":false${offset === null ? '' : `,"offset":${idText(offset)}`}}`;
    const page: { points: Rec[]; next_page_offset: string | null } = await result(t, base, 'POST', `${C}/points/scroll`, body);
    seen.push(...page.points.map((p) => p.id));
    offset = page.next_page_offset;
    offsets.push(offset);
  } while (offset !== null && seen.length <= ALL.length);
  t.same(seen, ALL, 'every id once, numbers by value, then the UUID');
  t.same(offsets, [ALL[3], ALL[6], ALL[9], null]);
  const fromTop = await result<{ points: Rec[]; next_page_offset: string | null }>(t, base, 'POST', `${C}/points/scroll`, `{"limit":2,"offset":${U64_MAX - 1n}}`);
  t.same([fromTop.points.map((p) => p.id), fromTop.next_page_offset], [[String(U64_MAX - 1n), String(U64_MAX)], UUID]);
});

await t.test('has_id filters, search results and queries by id carry exact ids', async (t) => {
  const wanted = [U64_MAX, P63 + 1n, P53 + 1n].map(String);
  const filtered = await result<{ points: Rec[] }>(t, base, 'POST', `${C}/points/scroll`, `{"limit":20,"filter":{"must":[{"has_id":[${wanted.join(',')}]}]}}`);
  t.same(filtered.points.map((p) => p.id), [String(P53 + 1n), String(P63 + 1n), String(U64_MAX)]);
  const excluded = await result<{ count: number }>(t, base, 'POST', `${C}/points/count`, `{"exact":true,"filter":{"must_not":[{"has_id":[${U64_MAX - 1n}]}]}}`);
  t.equal(excluded.count, ALL.length - 1);

  for (const i of [ALL.indexOf(String(U64_MAX - 1n)), ALL.indexOf(String(P53))]) {
    const hits = await result<Rec[]>(t, base, 'POST', `${C}/points/search`, `{"vector":${JSON.stringify(vectorOf(i))},"limit":1,"with_payload":true}`);
    t.same(hits.map((h) => [h.id, h.payload?.key]), [[ALL[i], ALL[i]]], `search finds ${ALL[i]}`);
  }
  // Nearest to the stored vector of U64_MAX-2 (read by its exact id); the example itself is left out.
  const byId = await result<{ points: Rec[] }>(t, base, 'POST', `${C}/points/query`, `{"query":${U64_MAX - 2n},"limit":3,"filter":{"must":[{"has_id":[${U64_MAX - 2n},${U64_MAX - 1n},${P63}]}]}}`);
  t.same(byId.points.map((p) => p.id).sort(), [String(P63), String(U64_MAX - 1n)].sort());
  const recommended = await result<Rec[]>(t, base, 'POST', `${C}/points/recommend`, `{"positive":[${U64_MAX}],"limit":20}`);
  t.notOk(recommended.some((p) => p.id === String(U64_MAX)), 'the example itself is left out, by its exact id');
  t.equal(recommended.length, ALL.length - 1);
});

await t.test('updates and deletes by exact id touch only that point', async (t) => {
  await result(t, base, 'POST', `${C}/points/payload?wait=true`, `{"payload":{"touched":true},"points":[${U64_MAX - 1n}]}`);
  await result(t, base, 'POST', `${C}/points/delete?wait=true`, `{"points":[${U64_MAX}]}`);
  const got = await result<Rec[]>(t, base, 'POST', `${C}/points`, `{"ids":[${U64_MAX},${U64_MAX - 1n},${U64_MAX - 2n}],"with_payload":true}`);
  t.same(got.map((p) => [p.id, p.payload?.touched ?? false]).sort(), [[String(U64_MAX - 2n), false], [String(U64_MAX - 1n), true]]);
  // Every other selector by id, in one batch, on the neighbours 2^63 and 2^63+1.
  await result(t, base, 'POST', `${C}/points/batch?wait=true`, `{"operations":[
    {"overwrite_payload":{"payload":{"key":"over"},"points":[${P63}]}},
    {"clear_payload":{"points":[${P63 + 1n}]}},
    {"update_vectors":{"points":[{"id":${P63},"vector":[7,7,7,7]}]}},
    {"set_payload":{"payload":{"s":1},"points":[${P63 + 1n}]}},
    {"delete_payload":{"keys":["s"],"points":[${P63 + 1n}]}}]}`);
  const pair = await result<Rec[]>(t, base, 'POST', `${C}/points`, `{"ids":[${P63},${P63 + 1n}],"with_payload":true,"with_vector":true}`);
  t.same(pair.map((p) => [p.id, p.payload, p.vector]).sort(), [[String(P63), { key: 'over' }, [7, 7, 7, 7]], [String(P63 + 1n), {}, vectorOf(ALL.indexOf(String(P63 + 1n)))]]);
  const missing = await send(base, 'GET', `${C}/points/${U64_MAX}`);
  t.same([missing.status, (missing.body.status as { error?: string }).error], [404, `Not found: Point with id ${U64_MAX} does not exists!`]);
});

await t.test('ids Qdrant does not take are refused with its message', async (t) => {
  for (const [literal, shown] of [['18446744073709551616', '18446744073709552000'], ['-9007199254740993', '-9007199254740993'], ['2.5', '2.5']]) {
    const reply = await send(base, 'PUT', `${C}/points?wait=true`, `{"points":[{"id":${literal},"vector":[1,1,1,1]}]}`);
    t.same([reply.status, (reply.body.status as { error?: string }).error],
      [400, `Format error in JSON body: value ${shown} is not a valid point ID, valid values are either an unsigned integer or a UUID`], literal);
  }
  const path = await send(base, 'GET', `${C}/points/18446744073709551616`);
  t.same([path.status, (path.body.status as { error?: string }).error], [400, 'Wrong input: Can not recognize "18446744073709551616" as point id']);
});

await t.test('ids survive a snapshot and a restart exactly', async (t) => {
  const before = await result<{ points: Rec[] }>(t, base, 'POST', `${C}/points/scroll`, '{"limit":50,"with_payload":true,"with_vector":true}');
  const created = await result<{ name: string }>(t, base, 'POST', `${C}/snapshots?wait=true`);
  const location = `file://${join(server.storage, 'snapshots', 'big', created.name)}`;
  await result(t, base, 'PUT', '/collections/copy/snapshots/recover', JSON.stringify({ location }));
  const copied = await result<{ points: Rec[] }>(t, base, 'POST', '/collections/copy/points/scroll', '{"limit":50,"with_payload":true,"with_vector":true}');
  t.same(copied, before, 'the recovered collection holds the same ids, payloads and vectors');

  await server.stop();
  const again = await startServer({ storage: server.storage, workers: 2 });
  t.teardown(() => again.stop());
  for (const name of ['big', 'copy']) {
    const after = await result<{ points: Rec[] }>(t, again.url, 'POST', `/collections/${name}/points/scroll`, '{"limit":50,"with_payload":true,"with_vector":true}');
    t.same(after, before, `${name} after a restart`);
  }
  const one = await result<Rec>(t, again.url, 'GET', `${C}/points/${U64_MAX - 1n}`);
  t.same([one.id, one.payload], [String(U64_MAX - 1n), { key: String(U64_MAX - 1n), i: ALL.indexOf(String(U64_MAX - 1n)), touched: true }]);
});
