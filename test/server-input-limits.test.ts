// Input limits where input enters the HTTP server, through the real server over raw HTTP: JSON
// nesting (serde_json's recursion limit, position included), collection and alias names
// (Qdrant's rules, percent-decoded), errors produced by Fastify and Node themselves (in Qdrant's
// body), query parameters of the wrong type on every route, and for each refusal proof that
// nothing changed.

import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startServer } from './helpers/server.js';
import { assertError, call, resultOf, stopAtEnd, type RawResponse } from './helpers/api-http.js';
import { uniqueName } from './helpers/api-data.js';

const LIMIT_MB = 4;
const server = await startServer({ workers: 2, env: { QDRANT__SERVICE__MAX_REQUEST_SIZE_MB: String(LIMIT_MB) } });
stopAtEnd(t, server);
const port = Number(new URL(server.url).port);
const snapshotsDir = join(server.storage, 'snapshots');

/** An HTTP request whose path is sent exactly as written (fetch would resolve `..` and `%2E%2E`). */
function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON: the assertion shows the text
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Bytes written straight to a socket, for requests no HTTP client would send; the status and JSON body of the answer. */
function rawSocket(bytes: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body = ''] = text.split('\r\n\r\n');
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        // kept as text
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), body: parsed });
    });
  });
}

const send = (method: string, path: string, body?: unknown): Promise<RawResponse> => call(server.url, method, path, body);
const ok = async <T = unknown>(t: Test, method: string, path: string, body?: unknown): Promise<T> => resultOf<T>(t, await send(method, path, body));

const VECTOR = [1, 0];

/** A collection of points 1..n, payload {n: id}, 2-d Dot vectors, with an integer index on `n`. */
async function collection(t: Test, n = 5, name = uniqueName('limits')): Promise<string> {
  await ok(t, 'PUT', `/collections/${encodeURIComponent(name)}`, { vectors: { size: 2, distance: 'Dot' }, shard_number: 2 });
  const path = `/collections/${encodeURIComponent(name)}`;
  await ok(t, 'PUT', `${path}/index?wait=true`, { field_name: 'n', field_schema: 'integer' });
  await ok(t, 'PUT', `${path}/points?wait=true`, { points: Array.from({ length: n }, (_, i) => ({ id: i + 1, vector: [1, (i + 1) / 10], payload: { n: i + 1 } })) });
  return name;
}

/** Everything a collection holds, to compare before and after a refusal. */
async function contents(t: Test, name: string): Promise<unknown> {
  return ok(t, 'POST', `/collections/${encodeURIComponent(name)}/points/scroll`, { limit: 1000, with_payload: true, with_vector: true });
}

async function collectionNames(t: Test): Promise<string[]> {
  return (await ok<{ collections: { name: string }[] }>(t, 'GET', '/collections')).collections.map((c) => c.name).sort();
}

const depthError = (line: number, column: number) => `Format error in JSON body: recursion limit exceeded at line ${line} column ${column}`;

/** `times` copies of `open`, then `inner`, then `times` copies of `close`. */
const nest = (open: string, inner: string, close: string, times: number): string => open.repeat(times) + inner + close.repeat(times);

t.test('JSON nesting: the 128th open bracket is refused where serde_json stops, before anything is stored', async (t) => {
  const name = await collection(t);
  const before = await contents(t, name);
  const upsert = (payload: string) => raw('PUT', `/collections/${name}/points?wait=true`, `{"points":[{"id":9,"vector":[1,2],"payload":${payload}}]}`);
  // `{"points":[{` holds brackets 1-3 (the third at column 12); `"id":9,"vector":[1,2],"payload":` follows
  // (with one bracket, closed again), so the payload's first `{` is bracket 4, at column 45.
  const PAYLOAD_AT = 45;

  // 124 nested objects in the payload: 127 open at once, the most serde_json reads.
  const deepest = nest('{"a":', '"bottom"', '}', 124);
  t.equal((await upsert(deepest)).status, 200, '127 levels are stored');
  const [stored] = await ok<{ payload: unknown }[]>(t, 'POST', `/collections/${name}/points`, { ids: [9], with_payload: true });
  t.same(stored.payload, JSON.parse(deepest), 'and read back exactly');
  await ok(t, 'POST', `/collections/${name}/points/delete?wait=true`, { points: [9] });

  // One more level: the 128th bracket, 124 objects of 5 characters after the first.
  assertError(t, await upsert(nest('{"a":', '"bottom"', '}', 125)), 400, depthError(1, PAYLOAD_AT + 124 * 5), '128 levels of objects');
  assertError(t, await upsert(nest('{"a":', '1', '}', 2000)), 400, depthError(1, PAYLOAD_AT + 124 * 5), '2000 levels of objects');
  assertError(t, await upsert(`{"a":${nest('[', '1', ']', 4000)}}`), 400, depthError(1, PAYLOAD_AT + 5 + 123), '4000 levels of lists in an object');
  // Lists and objects count together.
  assertError(t, await upsert(nest('{"l":[', '0', ']}', 100)), 400, depthError(1, PAYLOAD_AT + 62 * 6), 'objects and lists alternating');
  // A million levels: no stack overflow, the same answer, fast.
  const started = performance.now();
  assertError(t, await raw('POST', `/collections/${name}/points/scroll`, nest('[', '', ']', 1_000_000)), 400, depthError(1, 128), '1e6 levels of lists');
  assertError(t, await raw('POST', `/collections/${name}/points/scroll`, '{"a":'.repeat(700_000)), 400, depthError(1, 1 + 127 * 5), '700k levels of unclosed objects');
  t.ok(performance.now() - started < 5000, 'answered within 5 s');
  t.same(await contents(t, name), before, 'nothing was stored');

  // Positions as serde_json reports them: lines, and columns in bytes.
  assertError(t, await raw('POST', `/collections/${name}/points/scroll`, `{\n  "x":\n  ${'[ '.repeat(200)}`), 400, depthError(3, 3 + 126 * 2), 'on the third line');
  assertError(t, await raw('POST', `/collections/${name}/points/scroll`, `{"é":${'{"é":'.repeat(200)}`), 400, depthError(1, 128 * 6 - 5), 'after two-byte characters');
  // A syntax error before the limit is what serde_json reports.
  assertError(t, await raw('POST', `/collections/${name}/points/scroll`, `{"a" 1, "b": ${'['.repeat(500)}`), 400, 'Format error in JSON body: expected `:` at line 1 column 6', 'syntax error first');

  // Brackets inside strings (escaped quotes included) are not nesting.
  const tricky = { text: '['.repeat(300) + '{'.repeat(300), quoted: `\\"${'['.repeat(200)}\\\\`, key: { [`${'{'.repeat(150)}"`]: '}'.repeat(10) } };
  t.equal((await raw('PUT', `/collections/${name}/points?wait=true`, JSON.stringify({ points: [{ id: 10, vector: VECTOR, payload: tricky }] }))).status, 200, 'brackets in strings do not count');
  const [record] = await ok<{ payload: unknown }[]>(t, 'POST', `/collections/${name}/points`, { ids: [10], with_payload: true });
  t.same(record.payload, tricky, 'and the strings are stored as sent');
});

/** `levels` nested `must` filters around the condition n == 1 (2 brackets a level, 2 for the condition). */
const deepFilter = (levels: number): string => nest('{"must":[', '{"key":"n","match":{"value":1}}', ']}', levels);

/** Every endpoint that takes a filter, with the rest of a valid body; the filter comes first in each. */
const FILTERED: [method: string, path: string, rest: string][] = [
  ['POST', '/points/scroll', ''],
  ['POST', '/points/count', ',"exact":true'],
  ['POST', '/facet', ',"key":"n"'],
  ['POST', '/points/search', ',"vector":[1,0],"limit":10'],
  ['POST', '/points/recommend', ',"positive":[2],"limit":10'],
  ['POST', '/points/query', ',"query":[1,0],"limit":10'],
  ['POST', '/points/delete?wait=true', ''],
  ['POST', '/points/payload?wait=true', ',"payload":{"x":1}'],
];

t.test('filters nested past the limit are refused on every endpoint, and change nothing', async (t) => {
  const name = await collection(t);
  const before = await contents(t, name);
  // `{"filter":` puts the filter's first `{` at column 11 as bracket 2; bracket 128 is the `{` of level 63.
  for (const [method, path, rest] of FILTERED) {
    for (const levels of [64, 500, 5000]) {
      assertError(t, await raw(method, `/collections/${name}${path}`, `{"filter":${deepFilter(levels)}${rest}}`), 400, depthError(1, 11 + 63 * 9), `${path}, ${levels} levels`);
    }
  }
  t.same(await contents(t, name), before, 'no delete or payload change was applied');
});

t.test('filters nested to the limit are served', async (t) => {
  const name = await collection(t);
  // 62 levels: 1 + 2 * 62 + 2 = 127 brackets open at once.
  const filter = deepFilter(62);
  const body = (rest: string) => `{"filter":${filter}${rest}}`;
  const call = async (path: string, rest: string) => resultOf<unknown>(t, await raw('POST', `/collections/${name}${path}`, body(rest)));
  t.match(await call('/points/scroll', ''), { points: [{ id: 1 }] }, 'scroll');
  t.same(((await call('/points/scroll', '')) as { points: unknown[] }).points.length, 1, 'scroll finds only n == 1');
  t.same(await call('/points/count', ',"exact":true'), { count: 1 }, 'count');
  t.same(await call('/facet', ',"key":"n"'), { hits: [{ value: 1, count: 1 }] }, 'facet');
  t.same(((await call('/points/search', ',"vector":[1,0],"limit":10')) as { id: number }[]).map((h) => h.id), [1], 'search');
  t.same(((await call('/points/recommend', ',"positive":[2],"limit":10')) as { id: number }[]).map((h) => h.id), [1], 'recommend');
  t.same(((await call('/points/query', ',"query":[1,0],"limit":10')) as { points: { id: number }[] }).points.map((h) => h.id), [1], 'query');
  await call('/points/payload?wait=true', ',"payload":{"x":1}');
  t.same((await ok<{ payload: unknown }[]>(t, 'POST', `/collections/${name}/points`, { ids: [1, 2], with_payload: true })).map((r) => r.payload), [{ n: 1, x: 1 }, { n: 2 }], 'set payload by filter');
  await call('/points/delete?wait=true', '');
  t.same(await ok(t, 'POST', `/collections/${name}/points/count`, { exact: true }), { count: 4 }, 'delete by filter');
});

t.test('other deep structures within the limit are served', async (t) => {
  const name = await collection(t, 20);
  // Prefetches nested 125 deep (each level one object, the innermost query one list): 127 brackets.
  let prefetch = '{"query":[0,1],"limit":5}';
  for (let i = 0; i < 124; i++) prefetch = `{"prefetch":${prefetch},"query":[0,1],"limit":5}`;
  const started = performance.now();
  const answer = resultOf<{ points: { id: number }[] }>(t, await raw('POST', `/collections/${name}/points/query`, `{"prefetch":${prefetch},"query":[0,1],"limit":3}`));
  t.same(answer.points.map((p) => p.id), [20, 19, 18], '125 nested prefetches');
  t.ok(performance.now() - started < 30_000, 'within 30 s');

  // A payload 120 objects deep, filtered on by its full path.
  const path = Array.from({ length: 120 }, () => 'a').join('.');
  const payload = nest('{"a":', '"v"', '}', 120);
  t.equal((await raw('PUT', `/collections/${name}/points?wait=true`, `{"points":[{"id":50,"vector":[1,0],"payload":${payload}}]}`)).status, 200, 'deep payload stored');
  const found = await ok<{ points: { id: number }[] }>(t, 'POST', `/collections/${name}/points/scroll`, { filter: { must: [{ key: path, match: { value: 'v' } }] } });
  t.same(found.points.map((p) => p.id), [50], 'and found by a 120-segment key');
  // set_payload's `key` creates objects along its path: at most 127 steps (a body's nesting).
  const keyOf = (steps: number) => Array.from({ length: steps }, () => 'k').join('.');
  const value = JSON.parse(nest('{"a":', '1', '}', 122));
  await ok(t, 'POST', `/collections/${name}/points/payload?wait=true`, { points: [1], payload: { deep: value }, key: keyOf(127) });
  let expected: unknown = { deep: value };
  for (let i = 0; i < 127; i++) expected = { k: expected };
  const [deepRecord] = await ok<{ payload: unknown }[]>(t, 'POST', `/collections/${name}/points`, { ids: [1], with_payload: true });
  t.same(deepRecord.payload, { n: 1, ...(expected as object) }, 'a 127-step key with a 122-level value: stored 250 levels deep and read back');
  const stored = await contents(t, name);
  for (const steps of [128, 200_000]) {
    assertError(t, await send('POST', `/collections/${name}/points/payload?wait=true`, { points: [2], payload: { x: 1 }, key: keyOf(steps) }), 422,
      `Validation error in JSON body: [key: key path of ${steps} steps invalid, must be at most 127 steps]`, `a ${steps}-step key`);
    assertError(t, await send('POST', `/collections/${name}/points/batch?wait=true`, { operations: [{ set_payload: { points: [2], payload: { x: 1 }, key: keyOf(steps) } }] }), 422,
      `Validation error in JSON body: [operations[0].set_payload.key: key path of ${steps} steps invalid, must be at most 127 steps]`, `a ${steps}-step key in a batch`);
  }
  t.same(await contents(t, name), stored, 'refused keys change nothing');

  // Nested conditions, four brackets a level: 30 of them inside a filter's `must` (1 + 2 + 120 + 2 brackets).
  const nested = nest('{"nested":{"key":"a","filter":{"must":[', '{"is_empty":{"key":"z"}}', ']}}}', 30);
  t.same(resultOf(t, await raw('POST', `/collections/${name}/points/count`, `{"filter":{"must":[${nested}]},"exact":true}`)), { count: 0 }, '30 nested conditions');
  t.equal((await send('GET', '/')).status, 200, 'the server still serves');
});

t.test('collection names: Qdrant\'s rules, after percent-decoding, on every path', async (t) => {
  const existing = await collection(t, 2);
  const namesBefore = await collectionNames(t);
  const snapshotFoldersBefore = (await readdir(snapshotsDir).catch(() => [] as string[])).sort();
  const body = JSON.stringify({ vectors: { size: 2, distance: 'Dot' } });
  const invalid = (message: string) => `Validation error in path parameters: [name: ${message}]`;
  const contain = (c: string) => invalid(`collection name cannot contain "${c}" char`);

  // Creating: StrictCollectionPath.
  const forbidden: [encoded: string, char: string][] = [
    ['%3C', '<'], ['%3E', '>'], ['%3A', ':'], ['%22', '"'], ['%2F', '/'], ['%5C', '\\'], ['%7C', '|'], ['%3F', '?'], ['*', '*'], ['%00', '\0'], ['%1F', '\u001f'],
  ];
  for (const [encoded, char] of forbidden) {
    assertError(t, await raw('PUT', `/collections/a${encoded}b`, body), 422, contain(char), `create with ${JSON.stringify(char)}`);
  }
  const response = await raw('PUT', '/collections/a:b', body);
  assertError(t, response, 422, contain(':'), 'unencoded colon');
  t.equal((response.body as { time: number }).time, 0, 'time 0, as Qdrant reports extractor errors');
  // The validator names the first of its characters, in its own order.
  assertError(t, await raw('PUT', '/collections/%2Fa:', body), 422, contain(':'), 'the first forbidden character in Qdrant\'s list');
  for (const dots of ['.', '..', '%2E', '%2E%2E', '.%2e']) {
    const decoded = decodeURIComponent(dots);
    assertError(t, await raw('PUT', `/collections/${dots}`, body), 422, invalid(`collection name cannot be "${decoded}"`), `create ${dots}`);
  }
  assertError(t, await raw('PUT', '/collections/', body), 422, invalid('value "" invalid, must be from 1 to 255 characters'), 'the empty name');
  const long = 'n'.repeat(256);
  assertError(t, await raw('PUT', `/collections/${long}`, body), 422, invalid(`value "${long}" invalid, must be from 1 to 255 characters`), '256 characters');
  assertError(t, await raw('PUT', `/collections/${long.slice(1)}:`, body), 422,
    `Validation error in path parameters: [name: value "${long.slice(1)}:" invalid, must be from 1 to 255 characters; name: collection name cannot contain ":" char]`, 'both rules broken: both reported');

  // Everywhere else: CollectionPath (length) with the legacy characters (`/`, NUL) and no dot names.
  const everywhere: [string, string, string?][] = [
    ['GET', ''], ['DELETE', ''], ['PATCH', '', '{}'], ['GET', '/exists'], ['GET', '/aliases'], ['POST', '/points/scroll', '{}'],
    ['PUT', '/points?wait=true', '{"points":[{"id":1,"vector":[1,0]}]}'], ['GET', '/snapshots'], ['POST', '/snapshots?wait=true'],
    ['DELETE', '/snapshots/x.snapshot'], ['PUT', '/snapshots/recover', '{"location":"file:///nope"}'], ['GET', '/shards'],
    ['PUT', '/shards', '{"shard_key":"k"}'], ['GET', '/shards/0/snapshots'], ['POST', '/shards/0/snapshots'], ['GET', '/shards/0/snapshot'],
    ['GET', '/cluster'], ['GET', '/optimizations'], ['PUT', '/index', '{"field_name":"x","field_schema":"keyword"}'],
  ];
  for (const [method, path, payload] of everywhere) {
    assertError(t, await raw(method, `/collections/..${path}`, payload), 422, invalid('collection name cannot be ".."'), `${method} ..${path}`);
    assertError(t, await raw(method, `/collections/%2E${path}`, payload), 422, invalid('collection name cannot be "."'), `${method} %2E${path}`);
    assertError(t, await raw(method, `/collections/a%2Fb${path}`, payload), 422, contain('/'), `${method} a%2Fb${path}`);
    assertError(t, await raw(method, `/collections/a%00${path}`, payload), 422, contain('\0'), `${method} a%00${path}`);
    assertError(t, await raw(method, `/collections/${path}`, payload), 422, invalid('value "" invalid, must be from 1 to 255 characters'), `${method} (empty)${path}`);
  }
  // Characters only refused at creation are a plain 404 elsewhere, as in Qdrant.
  assertError(t, await raw('GET', '/collections/a:b'), 404, "Not found: Collection `a:b` doesn't exist!", 'GET a:b');
  assertError(t, await raw('POST', '/collections/a%3Cb/points/count', '{}'), 404, "Not found: Collection `a<b` doesn't exist!", 'count a<b');
  t.same(resultOf(t, await raw('DELETE', '/collections/a%3Cb')), false, 'deleting a<b: nothing to delete');
  // An existing collection is still reached through percent-encoding.
  t.equal((await raw('GET', `/collections/${existing.replace('_', '%5F')}`)).status, 200, 'a valid encoded name works');

  t.same(await collectionNames(t), namesBefore, 'no collection was created or deleted');
  t.same((await readdir(snapshotsDir).catch(() => [] as string[])).sort(), snapshotFoldersBefore, 'and no snapshot folder appeared');
});

t.test('names of 101 to 255 characters work end to end', async (t) => {
  for (const name of ['x'.repeat(101), 'y'.repeat(255), 'é'.repeat(255), `${'a.b-'.repeat(63)}abc`]) {
    t.equal([...name].length <= 255, true);
    const path = `/collections/${encodeURIComponent(name)}`;
    await collection(t, 3, name);
    t.ok((await collectionNames(t)).includes(name), `created (${[...name].length} characters)`);
    t.same(await ok(t, 'POST', `${path}/points/count`, { exact: true }), { count: 3 }, 'written and counted');
    const created = await ok<{ name: string }>(t, 'POST', `${path}/snapshots?wait=true`);
    const listed = await ok<{ name: string }[]>(t, 'GET', `${path}/snapshots`);
    t.same(listed.map((s) => s.name), [created.name], 'a snapshot is created and listed');
    const download = await fetch(`${server.url}${path}/snapshots/${encodeURIComponent(created.name)}`);
    t.equal(download.status, 200, 'and downloaded');
    await download.arrayBuffer();
    t.equal((await ok<{ name: string }>(t, 'POST', `${path}/shards/0/snapshots?wait=true`)).name.endsWith('.snapshot'), true, 'a shard snapshot too');
    t.equal(await ok(t, 'DELETE', path), true, 'deleted');
    t.same(await ok(t, 'GET', `${path}/exists`), { exists: false });
  }
});

t.test('alias names must be valid collection names', async (t) => {
  const target = await collection(t, 1);
  const aliasesBefore = await ok(t, 'GET', '/aliases');
  const refuse = async (actions: unknown[], message: string, what: string) => {
    assertError(t, await send('POST', '/collections/aliases', { actions }), 422, `Validation error in JSON body: [${message}]`, what);
  };
  const create = (alias: string) => ({ create_alias: { collection_name: target, alias_name: alias } });
  for (const [alias, problem] of [
    ['a/b', 'alias name cannot contain "/" char'], ['a:b', 'alias name cannot contain ":" char'], ['..', 'alias name cannot be ".."'],
    ['.', 'alias name cannot be "."'], ['', 'value "" invalid, must be from 1 to 255 characters'],
    ['z'.repeat(256), `value "${'z'.repeat(256)}" invalid, must be from 1 to 255 characters`],
  ]) {
    await refuse([create(alias)], `actions[0].create_alias.alias_name: ${problem}`, `create_alias ${JSON.stringify(alias.slice(0, 8))}`);
  }
  await refuse([create('fine'), { rename_alias: { old_alias_name: 'fine', new_alias_name: 'x\0' } }],
    'actions[1].rename_alias.new_alias_name: alias name cannot contain "\0" char', 'rename_alias to a NUL name');
  t.same(await ok(t, 'GET', '/aliases'), aliasesBefore, 'no alias was created, not even the valid one before a refused action');
  const alias = 'w'.repeat(255);
  await ok(t, 'POST', '/collections/aliases', { actions: [create(alias)] });
  t.same(await ok(t, 'POST', `/collections/${alias}/points/count`, {}), { count: 1 }, 'a 255-character alias works');
});

t.test('errors of Fastify and Node themselves come in Qdrant\'s body', async (t) => {
  const name = await collection(t, 2);
  const before = await contents(t, name);
  const limit = LIMIT_MB * 1024 * 1024;
  const big = `{"points":[{"id":7,"vector":[1,0],"payload":{"s":"${'x'.repeat(limit)}"}}]}`;
  const length = Buffer.byteLength(big);
  assertError(t, await raw('PUT', `/collections/${name}/points?wait=true`, big, { 'content-length': String(length) }), 400,
    `Payload error: JSON payload (${length} bytes) is larger than allowed (limit: ${limit} bytes).`, 'body over the limit, length announced');
  assertError(t, await raw('PUT', `/collections/${name}/points?wait=true`, big, { 'transfer-encoding': 'chunked' }), 400,
    `Payload error: JSON payload has exceeded limit (${limit} bytes).`, 'body over the limit, chunked');
  t.same(await contents(t, name), before, 'nothing of either was stored');

  assertError(t, await raw('GET', '/collections/%E0%A4%A'), 400, "Bad request: '/collections/%E0%A4%A' is not a valid url component", 'broken percent-encoding');
  assertError(t, await raw('GET', `/collections/${name}/points/%ZZ`), 400, `Bad request: '/collections/${name}/points/%ZZ' is not a valid url component`, 'a bad escape in another parameter');
  assertError(t, await raw('GET', '/no/such/route'), 404, 'Not found: GET /no/such/route', 'unknown route');
  assertError(t, await raw('PATCH', '/collections'), 404, 'Not found: PATCH /collections', 'unknown method on a known path');
  assertError(t, await rawSocket('THIS IS NOT HTTP\r\n\r\n'), 400, 'Bad request: malformed HTTP request', 'a request the HTTP parser cannot read');
  assertError(t, await rawSocket(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`), 431, 'Bad request: the request line and headers are too large', 'headers too large');
  assertError(t, await rawSocket(`GET /collections/${'c'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`), 431, 'Bad request: the request line and headers are too large', 'a path too long');
  t.equal((await send('GET', '/')).status, 200, 'the server still serves');
});

const WRITE_ROUTES: [string, string, unknown][] = [
  ['PUT', '/points', { points: [{ id: 99, vector: VECTOR }] }],
  ['POST', '/points/delete', { points: [1] }],
  ['PUT', '/points/vectors', { points: [{ id: 1, vector: [5, 5] }] }],
  ['POST', '/points/vectors/delete', { points: [1], vector: [''] }],
  ['POST', '/points/payload', { points: [1], payload: { x: 1 } }],
  ['PUT', '/points/payload', { points: [1], payload: { x: 1 } }],
  ['POST', '/points/payload/delete', { points: [1], keys: ['n'] }],
  ['POST', '/points/payload/clear', { points: [1] }],
  ['POST', '/points/batch', { operations: [{ delete: { points: [1] } }] }],
  ['PUT', '/index', { field_name: 'other', field_schema: 'keyword' }],
  ['DELETE', '/index/n', undefined],
];

const READ_ROUTES: [string, unknown][] = [
  ['/points', { ids: [1] }],
  ['/points/scroll', {}],
  ['/points/count', {}],
  ['/facet', { key: 'n' }],
  ['/points/search', { vector: VECTOR, limit: 1 }],
  ['/points/search/batch', { searches: [{ vector: VECTOR, limit: 1 }] }],
  ['/points/search/groups', { vector: VECTOR, group_by: 'n', limit: 1, group_size: 1 }],
  ['/points/search/matrix/pairs', { sample: 2, limit: 1 }],
  ['/points/search/matrix/offsets', { sample: 2, limit: 1 }],
  ['/points/recommend', { positive: [1], limit: 1 }],
  ['/points/recommend/batch', { searches: [{ positive: [1], limit: 1 }] }],
  ['/points/recommend/groups', { positive: [1], group_by: 'n', limit: 1, group_size: 1 }],
  ['/points/discover', { target: [1, 0], context: [{ positive: 1, negative: 2 }], limit: 1 }],
  ['/points/discover/batch', { searches: [{ target: [1, 0], context: [{ positive: 1, negative: 2 }], limit: 1 }] }],
  ['/points/query', { query: VECTOR }],
  ['/points/query/batch', { searches: [{ query: VECTOR }] }],
  ['/points/query/groups', { query: VECTOR, group_by: 'n' }],
];

const QUERY_ERROR = (detail: string) => `Deserialize error in query parameters: ${detail}`;
const NOT_BOOL = QUERY_ERROR('provided string was not `true` or `false`');
const NOT_DIGIT = QUERY_ERROR('invalid digit found in string');
const NOT_NONZERO = QUERY_ERROR('invalid value: integer `0`, expected a nonzero u64');
const BAD_ORDERING = QUERY_ERROR('unknown variant `bad`, expected one of `weak`, `medium`, `strong`');
const BAD_CONSISTENCY = QUERY_ERROR('failed to deserialize read consistency query parameter value');

t.test('query parameters of the wrong type are refused on every route, before anything happens', async (t) => {
  const name = await collection(t, 3);
  const before = await contents(t, name);
  const base = `/collections/${name}`;
  const infoBefore = await ok(t, 'GET', base);
  const refuse = async (method: string, path: string, body: unknown, message: string) =>
    assertError(t, await send(method, path, body), 400, message, `${method} ${path}`);

  for (const [method, path, body] of WRITE_ROUTES) {
    await refuse(method, `${base}${path}?wait=maybe`, body, NOT_BOOL);
    await refuse(method, `${base}${path}?ordering=bad`, body, BAD_ORDERING);
    await refuse(method, `${base}${path}?timeout=abc`, body, NOT_DIGIT);
    await refuse(method, `${base}${path}?timeout=0`, body, NOT_NONZERO);
    await refuse(method, `${base}${path}?wait=true&wait=false`, body, QUERY_ERROR('duplicate field `wait`'));
  }
  for (const [path, body] of READ_ROUTES) {
    await refuse('POST', `${base}${path}?consistency=xyz`, body, BAD_CONSISTENCY);
    await refuse('POST', `${base}${path}?timeout=abc`, body, NOT_DIGIT);
    await refuse('POST', `${base}${path}?timeout=-1`, body, NOT_DIGIT);
  }
  await refuse('GET', `${base}/points/1?consistency=0`, undefined, BAD_CONSISTENCY);
  await refuse('GET', `${base}/optimizations?with=bad`, undefined, QUERY_ERROR('unknown variant `bad`, expected one of `queued`, `completed`, `idle_segments`'));
  await refuse('GET', `${base}/optimizations?completed_limit=-1`, undefined, NOT_DIGIT);
  t.same(await contents(t, name), before, 'no write was applied');

  // Collection, alias and shard-key changes (commit timeout).
  const fresh = uniqueName('never');
  await refuse('PUT', `/collections/${fresh}?timeout=abc`, { vectors: { size: 2, distance: 'Dot' } }, NOT_DIGIT);
  await refuse('PATCH', `${base}?timeout=1.5`, { optimizers_config: { indexing_threshold: 1 } }, NOT_DIGIT);
  await refuse('DELETE', `${base}?timeout=x`, undefined, NOT_DIGIT);
  await refuse('POST', '/collections/aliases?timeout=abc', { actions: [{ create_alias: { collection_name: name, alias_name: `${name}_alias` } }] }, NOT_DIGIT);
  await refuse('PUT', `${base}/shards?timeout=abc`, { shard_key: 'k' }, NOT_DIGIT);
  await refuse('POST', `${base}/shards/delete?timeout=abc`, { shard_key: 'k' }, NOT_DIGIT);
  t.notOk((await collectionNames(t)).includes(fresh), 'no collection was created');
  t.same(await ok(t, 'GET', `${base}/aliases`), { aliases: [] }, 'no alias was created');
  t.same(await ok(t, 'GET', base), infoBefore, 'the collection, its config and its indexes are unchanged');

  // Snapshots.
  const snapshotsBefore = await ok(t, 'GET', `${base}/snapshots`);
  await refuse('POST', '/snapshots?wait=maybe', undefined, NOT_BOOL);
  await refuse('DELETE', '/snapshots/x.snapshot?wait=maybe', undefined, NOT_BOOL);
  await refuse('POST', `${base}/snapshots?wait=maybe`, undefined, NOT_BOOL);
  await refuse('DELETE', `${base}/snapshots/x.snapshot?wait=1`, undefined, NOT_BOOL);
  await refuse('PUT', `${base}/snapshots/recover?wait=yes`, { location: 'file:///nope.snapshot' }, NOT_BOOL);
  await refuse('POST', `${base}/snapshots/upload?wait=maybe`, undefined, NOT_BOOL);
  await refuse('POST', `${base}/snapshots/upload?priority=bad`, undefined, QUERY_ERROR('unknown variant `bad`, expected one of `no_sync`, `snapshot`, `replica`'));
  await refuse('POST', `${base}/shards/0/snapshots?wait=maybe`, undefined, NOT_BOOL);
  await refuse('DELETE', `${base}/shards/0/snapshots/x.snapshot?wait=maybe`, undefined, NOT_BOOL);
  await refuse('PUT', `${base}/shards/0/snapshots/recover?wait=maybe`, { location: 'x.snapshot' }, NOT_BOOL);
  await refuse('POST', `${base}/shards/0/snapshots/upload?wait=maybe`, undefined, NOT_BOOL);
  await refuse('POST', `${base}/shards/0/snapshots/upload?priority=first`, undefined, QUERY_ERROR('unknown variant `first`, expected one of `no_sync`, `snapshot`, `replica`'));
  t.same(await ok(t, 'GET', `${base}/snapshots`), snapshotsBefore, 'no snapshot was created');
  t.same(await ok(t, 'GET', '/snapshots'), [], 'no full snapshot either');

  // Node-wide endpoints.
  await refuse('GET', '/telemetry?anonymize=x', undefined, NOT_BOOL);
  await refuse('GET', '/telemetry?per_collection=x', undefined, NOT_BOOL);
  await refuse('GET', '/telemetry?details_level=-1', undefined, NOT_DIGIT);
  await refuse('GET', '/telemetry?timeout=abc', undefined, NOT_DIGIT);
  await refuse('GET', '/cluster/telemetry?details_level=x', undefined, NOT_DIGIT);
  await refuse('GET', '/cluster/telemetry?timeout=0', undefined, NOT_NONZERO);
  await refuse('GET', '/metrics?anonymize=x', undefined, NOT_BOOL);
  await refuse('GET', '/metrics?per_collection=x', undefined, NOT_BOOL);
  await refuse('GET', '/metrics?timeout=abc', undefined, NOT_DIGIT);
  const quotas = await ok(t, 'GET', '/quotas');
  await refuse('PUT', '/quotas?wait=maybe', { enabled: true, max_disk_usage_percent: 1 }, NOT_BOOL);
  t.same(await ok(t, 'GET', '/quotas'), quotas, 'the quota is unchanged');

  // What a route does not read is ignored, as Qdrant ignores unknown parameters.
  t.equal((await send('GET', '/metrics?details_level=x')).status, 200, '/metrics has no details_level');
  t.equal((await send('GET', `${base}?timeout=abc&anything=1`)).status, 200, 'GET collection reads no parameter');
  t.equal((await send('POST', `${base}/points/scroll?wait=maybe`, {})).status, 200, 'a read ignores write parameters');
});
