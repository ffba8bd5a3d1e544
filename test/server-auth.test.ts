// Authentication and authorization as Qdrant v1.19 does them: every route the server registers
// (enumerated from the app itself) against every kind of credential, with the status and message
// Qdrant gives; then the JWT claims (exp, access, value_exists), collection-scoped listings,
// aliases, telemetry and issues (no node-wide figures for a scoped key), collections named in
// request bodies, and how the key may be sent.

import t from 'tap';
import { SignJWT } from 'jose';
import { QdrantClient } from '@qdrant/js-client-rest';
import { fromEnvironment } from '../src/config/config.js';
import { registeredRoutes } from './helpers/registered-routes.js';
import { assertError, call, resultOf, stopAtEnd, type RawResponse } from './helpers/api-http.js';
import { startServer } from './helpers/server.js';

const API_KEY = 'full-access-secret';
const READ_ONLY_KEY = 'read-only-secret';
const MISSING = 'Must provide an API key or an Authorization bearer token';
const INVALID = 'Invalid API key or JWT';
const STATEFUL = 'Invalid JWT, stateful validation failed';

/** The collection the matrix works on; `other` is a collection the scoped tokens do not name. */
const OWN = 'secured';
const OTHER = 'other';

type Headers = Record<string, string>;

async function token(claims: Record<string, unknown>, { secret = API_KEY, expiresIn = 600, alg = 'HS256' } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ exp: now + expiresIn, ...claims }).setProtectedHeader({ alg }).sign(new TextEncoder().encode(secret));
}

const key = (value: string): Headers => ({ 'api-key': value });
const bearer = (value: string): Headers => ({ authorization: `Bearer ${value}` });

// ---------------------------------------------------------------------------------------------
// What Qdrant requires of each endpoint (its access table), stated here independently of the
// server's own table. Endpoints missing here expect the server's default: node-wide manage.

type AccessClass =
  | 'open' // no key needed at all
  | 'any' // any valid key; listings are filtered
  | 'global-read' // node-wide read
  | 'manage' // node-wide manage
  | 'read' // read on the collection
  | 'write' // point changes: rw or prw
  | 'extras' // read of snapshots / cluster info: not prw
  | 'write-extras' // snapshots, payload indexes: rw only
  | 'collection-manage'; // collection cluster changes: node-wide manage only

const C = '/collections/{collection_name}';
const EXPECTED_ACCESS: Record<string, AccessClass> = {
  'GET /': 'open', 'GET /healthz': 'open', 'GET /livez': 'open', 'GET /readyz': 'open',
  'GET /telemetry': 'any', 'GET /metrics': 'global-read', 'GET /issues': 'any', 'DELETE /issues': 'manage',
  'GET /cluster': 'global-read', 'GET /cluster/telemetry': 'any', 'POST /cluster/recover': 'manage',
  'DELETE /cluster/peer/{peer_id}': 'manage', 'GET /quotas': 'global-read', 'PUT /quotas': 'manage',
  // Changing a metadata key needs node-wide write, which only a node-wide manage grant has.
  'GET /cluster/metadata/keys': 'global-read', 'GET /cluster/metadata/keys/{key}': 'global-read',
  'PUT /cluster/metadata/keys/{key}': 'manage', 'DELETE /cluster/metadata/keys/{key}': 'manage',
  'GET /collections': 'any', 'GET /aliases': 'any', 'POST /collections/aliases': 'manage',
  [`GET ${C}`]: 'read', [`PUT ${C}`]: 'manage', [`PATCH ${C}`]: 'manage', [`DELETE ${C}`]: 'manage',
  [`GET ${C}/exists`]: 'read', [`GET ${C}/aliases`]: 'read', [`GET ${C}/optimizations`]: 'read',
  [`GET ${C}/cluster`]: 'extras', [`POST ${C}/cluster`]: 'collection-manage',
  [`PUT ${C}/index`]: 'write-extras', [`DELETE ${C}/index/{field_name}`]: 'write-extras',
  [`PUT ${C}/vectors/{vector_name}`]: 'write-extras', [`DELETE ${C}/vectors/{vector_name}`]: 'write-extras',
  [`GET ${C}/shards`]: 'read', [`PUT ${C}/shards`]: 'manage', [`POST ${C}/shards/delete`]: 'manage',
  [`GET ${C}/snapshots`]: 'extras', [`POST ${C}/snapshots`]: 'write-extras',
  [`GET ${C}/snapshots/{snapshot_name}`]: 'extras', [`DELETE ${C}/snapshots/{snapshot_name}`]: 'write-extras',
  [`POST ${C}/snapshots/upload`]: 'manage', [`PUT ${C}/snapshots/recover`]: 'manage',
  'GET /snapshots': 'global-read', 'POST /snapshots': 'manage',
  'GET /snapshots/{snapshot_name}': 'global-read', 'DELETE /snapshots/{snapshot_name}': 'manage',
  [`GET ${C}/shards/{shard_id}/snapshot`]: 'write-extras', [`GET ${C}/shards/{shard_id}/snapshots`]: 'extras',
  [`POST ${C}/shards/{shard_id}/snapshots`]: 'write-extras', [`GET ${C}/shards/{shard_id}/snapshots/{snapshot_name}`]: 'extras',
  [`DELETE ${C}/shards/{shard_id}/snapshots/{snapshot_name}`]: 'write-extras',
  [`POST ${C}/shards/{shard_id}/snapshots/upload`]: 'manage', [`PUT ${C}/shards/{shard_id}/snapshots/recover`]: 'manage',
  [`GET ${C}/points/{id}`]: 'read', [`POST ${C}/points`]: 'read', [`POST ${C}/points/scroll`]: 'read',
  [`POST ${C}/points/count`]: 'read', [`POST ${C}/facet`]: 'read',
  [`PUT ${C}/points`]: 'write', [`POST ${C}/points/delete`]: 'write', [`PUT ${C}/points/vectors`]: 'write',
  [`POST ${C}/points/vectors/delete`]: 'write', [`POST ${C}/points/payload`]: 'write', [`PUT ${C}/points/payload`]: 'write',
  [`POST ${C}/points/payload/delete`]: 'write', [`POST ${C}/points/payload/clear`]: 'write', [`POST ${C}/points/batch`]: 'write',
  ...Object.fromEntries(['search', 'search/batch', 'search/groups', 'search/matrix/pairs', 'search/matrix/offsets', 'recommend',
    'recommend/batch', 'recommend/groups', 'discover', 'discover/batch', 'query', 'query/batch', 'query/groups']
    .map((p) => [`POST ${C}/points/${p}`, 'read'])),
};

/** The credentials of the matrix, by name. */
type Credential = 'none' | 'wrong key' | 'read-only key' | 'full key' | 'JWT r' | 'JWT m' | 'JWT other collection' | 'expired JWT'
  | 'JWT own r' | 'JWT own rw' | 'JWT own prw';

const forbidden = (message: string): [number, string] => [403, `Forbidden: ${message}`];
const GLOBAL_MANAGE = forbidden('Global manage access is required');
const GLOBAL = forbidden('Global access is required');
const accessTo = (name: string) => forbidden(`Access to collection ${name} is required`);

/** What a credential gets on an endpoint of a class: 'ok' (what the full key gets) or the refusal. */
function expected(cls: AccessClass, credential: Credential, collection: string): 'ok' | [number, string] {
  if (cls === 'open') return 'ok';
  if (credential === 'none') return [401, MISSING];
  if (credential === 'wrong key') return [401, INVALID];
  if (credential === 'expired JWT') return [403, 'ExpiredSignature'];
  if (credential === 'full key' || credential === 'JWT m' || cls === 'any') return 'ok';
  const globalRead = credential === 'read-only key' || credential === 'JWT r';
  if (globalRead) return cls === 'global-read' || cls === 'read' || cls === 'extras' ? 'ok' : GLOBAL_MANAGE;
  // Collection-scoped tokens from here on.
  if (cls === 'global-read' || cls === 'manage') return GLOBAL;
  if (credential === 'JWT other collection') return accessTo(collection);
  const mode = credential === 'JWT own r' ? 'r' : credential === 'JWT own rw' ? 'rw' : 'prw';
  const extras = cls === 'extras' || cls === 'write-extras' || cls === 'collection-manage';
  const write = cls === 'write' || cls === 'write-extras' || cls === 'collection-manage';
  if (extras && mode === 'prw') return forbidden(`Only points access is allowed for collection ${collection}`);
  if (write && mode === 'r') return forbidden(`Write access to collection ${collection} is required`);
  if (cls === 'collection-manage') return forbidden('Manage access for this operation is required');
  return 'ok';
}

/** Path parameter values that keep every request repeatable: nothing is created or deleted twice. */
const PARAMS: Record<string, string> = {
  collection_name: OWN, id: '1', field_name: 'absent_field', vector_name: 'absent_vector',
  snapshot_name: 'absent.snapshot', shard_id: '0', peer_id: '1',
};

const shapeOf = (pattern: string): string => pattern.replace(/\{[^/}]+\}|:[^/]+/g, '{}');
const EXPECTED_BY_SHAPE = new Map(Object.entries(EXPECTED_ACCESS).map(([k, cls]) => {
  const [method, pattern] = k.split(' ');
  return [`${method} ${shapeOf(pattern)}`, { pattern, cls }];
}));

/** The routes the app registers, each with Qdrant's pattern (or its own), a concrete path and its class. */
async function registeredEndpoints(): Promise<{ method: string; path: string; label: string; cls: AccessClass; collection: string }[]> {
  const routes = await registeredRoutes();
  return routes.map(({ method, url }) => {
    const known = EXPECTED_BY_SHAPE.get(`${method} ${shapeOf(url)}`);
    const pattern = known?.pattern ?? url;
    // Deleting the matrix's collection would end the matrix: that one request names no collection.
    const values = method === 'DELETE' && pattern === C ? { ...PARAMS, collection_name: 'absent' } : PARAMS;
    const path = pattern.replace(/\{([^/}]+)\}|:([^/]+)/g, (_, a: string | undefined, b: string | undefined) => values[a ?? b ?? ''] ?? 'x');
    return { method, path, label: `${method} ${pattern}`, cls: known?.cls ?? 'manage', collection: values.collection_name };
  });
}

// ---------------------------------------------------------------------------------------------

const server = await startServer({
  workers: 1,
  env: { QDRANT__SERVICE__API_KEY: API_KEY, QDRANT__SERVICE__READ_ONLY_API_KEY: READ_ONLY_KEY, QDRANT__SERVICE__JWT_RBAC: 'true' },
});
stopAtEnd(t, server);
const full = key(API_KEY);

/** A request to the server with a credential's headers. */
const send = (method: string, path: string, headers: Headers, body?: unknown): Promise<RawResponse> => call(server.url, method, path, body, headers);

async function must(method: string, path: string, body?: unknown): Promise<void> {
  const response = await send(method, path, full, body);
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
}

for (const name of [OWN, OTHER, 'members']) await must('PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Dot' } });
for (const name of [OWN, OTHER]) {
  await must('PUT', `/collections/${name}/points?wait=true`, { points: [
    { id: 1, vector: [1, 0], payload: { group: 'a', name } },
    { id: 2, vector: [0, 1], payload: { group: 'b', name } },
  ] });
}
await must('PUT', '/collections/members/points?wait=true', { points: [{ id: 1, vector: [1, 1], payload: { user: 'alice', level: 3, active: true } }] });
await must('POST', '/collections/aliases', { actions: [
  { create_alias: { collection_name: OWN, alias_name: 'secured_alias' } },
  { create_alias: { collection_name: OTHER, alias_name: 'other_alias' } },
] });

const scoped = (mode: string, collection = OWN) => token({ access: [{ collection, access: mode }] });
const CREDENTIALS: Record<Credential, Headers> = {
  'none': {},
  'wrong key': key('not-the-key'),
  'read-only key': key(READ_ONLY_KEY),
  'full key': full,
  'JWT r': bearer(await token({ access: 'r' })),
  'JWT m': bearer(await token({ access: 'm' })),
  'JWT other collection': bearer(await scoped('rw', OTHER)),
  'expired JWT': bearer(await token({ access: 'm' }, { expiresIn: -120 })),
  'JWT own r': key(await scoped('r')),
  'JWT own rw': key(await scoped('rw')),
  'JWT own prw': key(await scoped('prw')),
};

t.test('every registered route x every credential', async (t) => {
  const endpoints = await registeredEndpoints();
  // The routes this server serves today, at least: new ones join the matrix as they register.
  const labels = endpoints.map((e) => e.label);
  for (const route of ['GET /collections', `PUT ${C}/points`, `POST ${C}/points/search`, `PUT ${C}/index`, 'POST /collections/aliases']) {
    t.ok(labels.includes(`${route}`), `${route} is registered`);
  }
  for (const { method, path, label, cls, collection } of endpoints) {
    const body = method === 'GET' || method === 'DELETE' ? undefined : {};
    const baseline = await send(method, path, full, body);
    if (cls !== 'open') t.ok(baseline.status !== 401 && baseline.status !== 403, `${label}: the full key passes (${baseline.status})`);
    for (const [credential, headers] of Object.entries(CREDENTIALS) as [Credential, Headers][]) {
      const want = expected(cls, credential, collection);
      const got = await send(method, path, headers, body);
      if (want === 'ok') t.equal(got.status, baseline.status, `${label} with ${credential}: ${baseline.status} like the full key`);
      else assertError(t, got, want[0], want[1], `${label} with ${credential}`);
    }
  }
});

t.test('the root and health probes need no key; an unknown path needs one', async (t) => {
  const root = await send('GET', '/', {});
  t.equal(root.status, 200);
  t.match(root.body, { title: String, version: String });
  t.equal((await send('GET', '/', key('wrong'))).status, 200, 'a wrong key is not even looked at');
  t.equal((await send('GET', '/healthz', {})).status, 200);
  assertError(t, await send('GET', '/no/such/path', {}), 401, MISSING);
  t.equal((await send('GET', '/no/such/path', full)).status, 404, 'with a key: not found');
});

t.test('how the key may be sent', async (t) => {
  t.equal((await send('GET', '/collections', bearer(API_KEY))).status, 200, 'Authorization: Bearer <api key>');
  t.equal((await send('GET', '/collections', key(await token({ access: 'r' })))).status, 200, 'a JWT in the api-key header');
  assertError(t, await send('GET', '/collections', { authorization: `bearer ${API_KEY}` }), 401, MISSING, 'the scheme is case-sensitive');
  assertError(t, await send('GET', '/collections', { authorization: API_KEY }), 401, MISSING, 'no scheme');
  assertError(t, await send('GET', '/collections', { ...key('wrong'), ...bearer(API_KEY) }), 401, INVALID, 'the api-key header wins over Authorization');
  assertError(t, await send('GET', '/collections', key('')), 401, INVALID, 'an empty key');

  const client = new QdrantClient({ url: server.url, apiKey: API_KEY, checkCompatibility: false });
  const names = (await client.getCollections()).collections.map((c) => c.name).sort();
  t.same(names, ['members', OTHER, OWN], 'the official client sends api-key');
  const reader = new QdrantClient({ url: server.url, apiKey: READ_ONLY_KEY, checkCompatibility: false });
  t.same((await reader.getCollection(OWN)).points_count, 2, 'the read-only key reads');
  const refusal = await reader.createCollection('nope', { vectors: { size: 2, distance: 'Dot' } }).then(() => null, (e: { status?: number }) => e);
  t.equal(refusal?.status, 403, 'and may not create a collection');
  t.equal((await send('GET', '/collections/nope/exists', full)).status, 200);
  t.match((await send('GET', '/collections/nope/exists', full)).body, { result: { exists: false } }, 'nothing was created');
});

t.test('JWT validation', async (t) => {
  const get = async (headers: Headers) => send('GET', '/collections', headers);
  t.equal((await get(bearer(await token({ access: 'r' }, { expiresIn: -10 })))).status, 200, 'expired 10 s ago: within the 30 s leeway');
  assertError(t, await get(bearer(await token({ access: 'r' }, { expiresIn: -60 }))), 403, 'ExpiredSignature', 'expired 60 s ago');
  assertError(t, await get(bearer(await token({ access: 'r' }, { secret: 'another-secret' }))), 403, 'InvalidSignature', 'signed with another secret');
  assertError(t, await get(bearer(await token({ access: 'r' }, { secret: READ_ONLY_KEY }))), 403, 'InvalidSignature', 'signed with the read-only key');
  assertError(t, await get(bearer(await token({ access: 'r' }, { alg: 'HS512' }))), 401, INVALID, 'another algorithm');
  // Qdrant requires no claim: a token without `exp` never expires, and grants what it says.
  const noExp = await new SignJWT({ access: 'r' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(API_KEY));
  t.equal((await get(bearer(noExp))).status, 200, 'no exp claim: accepted');
  assertError(t, await send('PATCH', `/collections/${OWN}`, bearer(noExp), {}), 403, 'Forbidden: Global manage access is required', 'no exp claim: still read-only');
  const badExp = await new SignJWT({ access: 'r', exp: 'soon' as unknown as number }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(API_KEY));
  assertError(t, await get(bearer(badExp)), 401, INVALID, 'an exp that is not a number');
  assertError(t, await get(bearer(await token({ access: 'x' }))), 401, INVALID, 'unknown access mode');
  assertError(t, await get(bearer(await token({ access: [{ collection: OWN, access: 'm' }] }))), 401, INVALID, 'manage is not a collection mode');
  assertError(t, await get(bearer(await token({ access: [{ collection: OWN, access: 'r' }, { collection: OWN, access: 'rw' }] }))), 401,
    'access: Collection name should be unique', 'a collection listed twice');
  assertError(t, await get(bearer(await token({ access: [{ collection: OWN, access: 'r', payload: { group: 'a' } }] }))), 401,
    "access: The 'payload' constraint is deprecated and should not be used", 'payload constraints are gone');
  // Without an access claim a token grants everything, as in Qdrant.
  t.equal((await send('PATCH', `/collections/${OWN}`, bearer(await token({})), {})).status, 200, 'no access claim: manage');
});

t.test('value_exists: the token holds while a matching point exists', async (t) => {
  const claim = (matches: unknown[], collection = 'members') => token({ access: 'r', value_exists: { collection, matches } });
  const alice = await claim([{ key: 'user', value: 'alice' }, { key: 'level', value: 3 }, { key: 'active', value: true }]);
  t.equal((await send('GET', '/collections', bearer(alice))).status, 200, 'alice exists with level 3 and active');
  assertError(t, await send('GET', '/collections', bearer(await claim([{ key: 'user', value: 'bob' }]))), 401, STATEFUL, 'no such point');
  assertError(t, await send('GET', '/collections', bearer(await claim([{ key: 'user', value: 'alice' }, { key: 'level', value: 4 }]))), 401, STATEFUL, 'one pair differs');
  assertError(t, await send('GET', '/collections', bearer(await claim([], 'absent'))), 403, STATEFUL, 'no such collection');
  assertError(t, await send('GET', '/collections', bearer(await claim([{ key: 'user', value: 1.5 }]))), 401, INVALID, 'a float is not a match value');

  await must('POST', '/collections/members/points/payload?wait=true', { payload: { active: false }, points: [1] });
  assertError(t, await send('GET', '/collections', bearer(alice)), 401, STATEFUL, 'the same token once the point changed');
  await must('POST', '/collections/members/points/payload?wait=true', { payload: { active: true }, points: [1] });
  t.equal((await send('GET', '/collections', bearer(alice))).status, 200, 'and again once it matches');
});

t.test('a collection-scoped key sees only its collections', async (t) => {
  const own = key(await scoped('r'));
  const listed = (await send('GET', '/collections', own)).body as { result: { collections: { name: string }[] } };
  t.same(listed.result.collections, [{ name: OWN }], 'GET /collections lists only its collection');
  const aliases = (await send('GET', '/aliases', own)).body as { result: { aliases: unknown[] } };
  t.same(aliases.result.aliases, [{ alias_name: 'secured_alias', collection_name: OWN }], 'GET /aliases: only the alias of its collection');
  const ownAliases = (await send('GET', `/collections/${OWN}/aliases`, own)).body as { result: { aliases: unknown[] } };
  t.same(ownAliases.result.aliases, [{ alias_name: 'secured_alias', collection_name: OWN }]);
  assertError(t, await send('GET', `/collections/${OTHER}/aliases`, own), 403, `Forbidden: Access to collection ${OTHER} is required`);
  const all = (await send('GET', '/aliases', full)).body as { result: { aliases: unknown[] } };
  t.equal(all.result.aliases.length, 2, 'the full key lists both aliases');

  const search = { vector: [1, 0], limit: 1 };
  t.equal((await send('POST', '/collections/secured_alias/points/search', own, search)).status, 200, 'search through an alias of its collection');
  assertError(t, await send('POST', '/collections/other_alias/points/search', own, search), 403,
    'Forbidden: Access to collection other_alias is required', 'an alias does not lead to another collection');
  const aliasScoped = key(await token({ access: [{ collection: 'other_alias', access: 'r' }] }));
  t.equal((await send('POST', '/collections/other_alias/points/search', aliasScoped, search)).status, 200, 'a key naming the alias reads through it');
  assertError(t, await send('POST', `/collections/${OWN}/points/search`, aliasScoped, search), 403, `Forbidden: Access to collection ${OWN} is required`);
});

interface Telemetry {
  collections: { collections?: { id: string }[] };
  [part: string]: unknown;
}

t.test('node-wide figures are for node-wide keys; a collection-scoped key sees its collections only', async (t) => {
  const own = key(await scoped('r'));
  const NODE_PARTS = ['app', 'cluster', 'collections', 'hardware', 'id', 'memory', 'quota', 'requests', 'search_pool'];
  for (const [name, headers] of [['read-only key', key(READ_ONLY_KEY)], ['JWT r', CREDENTIALS['JWT r']], ['full key', full]] as const) {
    const telemetry = resultOf<Telemetry>(t, await send('GET', '/telemetry?details_level=2', headers));
    t.same(Object.keys(telemetry).sort(), NODE_PARTS, `${name}: telemetry holds every part`);
    t.same(telemetry.collections.collections!.map((c) => c.id).sort(), ['members', OTHER, OWN], `${name}: every collection`);
    const cluster = resultOf<Record<string, object>>(t, await send('GET', '/cluster/telemetry', headers));
    t.same(Object.keys(cluster).sort(), ['cluster', 'collections'], `${name}: cluster telemetry with the cluster part`);
    t.same(Object.keys(cluster.collections).sort(), ['members', OTHER, OWN]);
  }

  const telemetry = resultOf<Telemetry>(t, await send('GET', '/telemetry?details_level=2', own));
  t.same(Object.keys(telemetry).sort(), ['app', 'collections', 'hardware', 'id'], 'scoped: telemetry without cluster, requests, memory, search pool or quota');
  const hardware = (telemetry.hardware as { collection_data: Record<string, unknown> }).collection_data;
  t.ok(Object.keys(hardware).every((name) => name === OWN), 'scoped: hardware usage of its collection only');
  t.same(telemetry.collections.collections!.map((c) => c.id), [OWN], 'scoped: only its collection');
  t.equal((telemetry.collections as { number_of_collections?: number }).number_of_collections, 1, 'scoped: counts only its collection');
  const cluster = resultOf<Record<string, object>>(t, await send('GET', '/cluster/telemetry?details_level=3', own));
  t.same(Object.keys(cluster), ['collections'], 'scoped: cluster telemetry without the cluster part');
  t.same(Object.keys(cluster.collections), [OWN], 'scoped: only its collection');
  for (const path of ['/metrics', '/cluster', '/quotas', '/snapshots']) {
    assertError(t, await send('GET', path, own), ...GLOBAL, `scoped: GET ${path} needs node-wide access`);
  }

  // More than 30 nearly empty collections: Qdrant's node-wide "too many collections" issue.
  const crowd = Array.from({ length: 28 }, (_, i) => `crowd-${i}`);
  for (const name of crowd) await must('PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Dot' } });
  const issues = resultOf<{ issues: { id: string }[] }>(t, await send('GET', '/issues', full)).issues;
  t.same(issues.map((i) => i.id), ['TOO_MANY_COLLECTIONS/'], 'the full key sees the node-wide issue');
  t.same(resultOf<{ issues: unknown[] }>(t, await send('GET', '/issues', CREDENTIALS['JWT r'])).issues, issues, 'so does a node-wide read token');
  t.same(resultOf<{ issues: unknown[] }>(t, await send('GET', '/issues', own)), { issues: [] }, 'a scoped key sees no node-wide issue');
  assertError(t, await send('DELETE', '/issues', own), ...GLOBAL, 'and may not clear them');
  for (const name of crowd) await must('DELETE', `/collections/${name}`);
});

t.test('collections named in a request body need access too', async (t) => {
  const own = key(await scoped('r'));
  const denied = `Forbidden: Access to collection ${OTHER} is required`;
  const cases: [string, unknown][] = [
    ['recommend', { positive: [1], limit: 1, lookup_from: { collection: OTHER } }],
    ['recommend/batch', { searches: [{ positive: [1], limit: 1 }, { positive: [1], limit: 1, lookup_from: { collection: OTHER } }] }],
    ['discover', { target: 1, context: [{ positive: 1, negative: 2 }], limit: 1, lookup_from: { collection: OTHER } }],
    ['query', { query: 1, limit: 1, lookup_from: { collection: OTHER } }],
    ['query', { prefetch: [{ prefetch: { query: 1, lookup_from: { collection: OTHER } }, query: { fusion: 'rrf' } }], query: { fusion: 'rrf' }, limit: 1 }],
    ['query/batch', { searches: [{ query: 1, lookup_from: { collection: OTHER } }] }],
    ['search/groups', { vector: [1, 0], group_by: 'group', limit: 2, group_size: 1, with_lookup: OTHER }],
    ['query/groups', { query: [1, 0], group_by: 'group', limit: 2, group_size: 1, with_lookup: { collection: OTHER } }],
  ];
  for (const [endpoint, body] of cases) {
    const path = `/collections/${OWN}/points/${endpoint}`;
    t.equal((await send('POST', path, full, body)).status, 200, `${endpoint}: served with the full key`);
    assertError(t, await send('POST', path, own, body), 403, denied, `${endpoint}: refused to a key scoped to ${OWN}`);
  }
  const both = key(await token({ access: [{ collection: OWN, access: 'r' }, { collection: OTHER, access: 'r' }] }));
  t.equal((await send('POST', `/collections/${OWN}/points/recommend`, both, cases[0][1])).status, 200, 'served when the key names both');
  const viaAlias = { positive: [1], limit: 1, lookup_from: { collection: 'secured_alias' } };
  t.equal((await send('POST', `/collections/${OWN}/points/recommend`, own, viaAlias)).status, 200, 'lookup through an alias of its own collection');
});

t.test('keys are opaque text in the environment', async (t) => {
  const env = fromEnvironment({ QDRANT__SERVICE__API_KEY: '0123', QDRANT__SERVICE__READ_ONLY_API_KEY: 'a: b' });
  t.same(env, { service: { api_key: '0123', read_only_api_key: 'a: b' } }, 'not read as a YAML number or mapping');
});
