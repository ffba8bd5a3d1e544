// The request fuzzer's fixture (collections with points, payload indexes, an alias) and the
// server's observable state: what must not change when a request is refused, and how the
// fixture is put back after a request that was valid and changed it.

import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { uuidOf, vectorOf } from './api-data.js';
import type { Vocabulary } from './fuzz-schema.js';

/** One request's answer; `body` is parsed JSON, or the text when it is not JSON. */
export interface Answer {
  status: number;
  body: unknown;
}

/** Sends a request to the server; `path` may hold a query string. */
export type Send = (method: string, path: string, body?: unknown) => Promise<Answer>;

interface FixtureCollection {
  name: string;
  config: Record<string, unknown>;
  indexes: Record<string, unknown>;
  points: Record<string, unknown>[];
  /** A collection with custom sharding has its points under this key. */
  shardKey?: string | number;
}

const CITIES = ['Berlin', 'Paris', 'Москва', '東京', ''];

function payloadOf(i: number): Record<string, unknown> {
  return {
    city: CITIES[i % CITIES.length],
    count: i * 7 - 20,
    price: i / 4,
    flag: i % 2 === 0,
    loc: { lon: -180 + i * 17, lat: -80 + i * 8 },
    text: `word${i % 3} shared text ${i}`,
    when: `2024-0${(i % 9) + 1}-1${i % 10}T10:00:00Z`,
    tags: [`t${i % 4}`, `t${(i + 1) % 4}`],
    nested: { a: i, arr: [{ x: i, y: [i, i + 1] }, { x: -i }] },
    'odd.key': i,
    'ключ': `значение ${i}`,
    uid: uuidOf(i),
    maybe: i % 3 === 0 ? null : i % 3 === 1 ? [] : 'set',
    toString: i,
    // Parsed, so that "__proto__" is a field, as in a body.
    ...JSON.parse(`{"__proto__":{"p":${i}}}`),
  };
}

const ID_COUNT = 12;
const ids = Array.from({ length: ID_COUNT }, (_, i) => (i % 4 === 3 ? uuidOf(1000 + i) : i + 1));

const INDEXES = {
  city: 'keyword',
  count: 'integer',
  price: 'float',
  flag: 'bool',
  loc: 'geo',
  text: { type: 'text', tokenizer: 'word', lowercase: true },
  when: 'datetime',
  uid: 'uuid',
  'nested.a': 'integer',
  'tags[]': 'keyword',
};

export const FIXTURE: readonly FixtureCollection[] = [
  {
    name: 'fuzz_plain',
    config: { vectors: { size: 4, distance: 'Cosine' }, shard_number: 2 },
    indexes: INDEXES,
    points: ids.map((id, i) => ({ id, vector: vectorOf(i + 1, 4), payload: payloadOf(i) })),
  },
  {
    name: 'fuzz_named',
    config: {
      vectors: { img: { size: 3, distance: 'Dot' }, txt: { size: 2, distance: 'Euclid' } },
    },
    indexes: { city: 'keyword', count: 'integer' },
    points: ids.map((id, i) => ({
      id,
      // Some points lack some vectors, so that has_vector and named searches have something to tell apart.
      vector: {
        img: vectorOf(i + 1, 3),
        ...(i % 3 === 0 ? {} : { txt: vectorOf(i + 50, 2) }),
      },
      payload: payloadOf(i + 3),
    })),
  },
  {
    name: 'fuzz_keyed',
    config: { vectors: { size: 2, distance: 'Euclid' }, sharding_method: 'custom', shard_number: 2 },
    indexes: { count: 'integer' },
    points: ids.slice(0, 6).map((id, i) => ({ id, vector: vectorOf(i + 200, 2), payload: payloadOf(i + 6) })),
    shardKey: 'k1',
  },
];

export const ALIAS = { alias_name: 'fuzz_alias', collection_name: 'fuzz_plain' };

export const VOCABULARY: Vocabulary = {
  words: [
    ...FIXTURE.map((c) => c.name), ALIAS.alias_name, 'fuzz_missing', 'img', 'txt', 'k1', '',
    ...Object.keys(payloadOf(0)), 'nested.arr[].x', 'nested.arr[].y[]', 'nested.arr[0].x', 'tags[]', 'loc.lon', '"odd.key"',
    ...CITIES, 'word1', 'shared text', '2024-03-13T10:00:00Z', 'keyword', 'integer', 'float', 'geo', 'text', 'datetime', 'uuid', 'bool',
  ],
  pointIds: [...ids, 999_999, uuidOf(424_242)],
};

function check(what: string, answer: Answer): unknown {
  if (answer.status !== 200) throw new Error(`fuzz fixture: ${what} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return (answer.body as { result: unknown }).result;
}

async function createCollection(send: Send, fixture: FixtureCollection): Promise<void> {
  const path = `/collections/${fixture.name}`;
  check(`create ${fixture.name}`, await send('PUT', path, fixture.config));
  if (fixture.shardKey !== undefined) check(`shard key of ${fixture.name}`, await send('PUT', `${path}/shards`, { shard_key: fixture.shardKey }));
  for (const [field_name, field_schema] of Object.entries(fixture.indexes)) {
    check(`index ${field_name}`, await send('PUT', `${path}/index?wait=true`, { field_name, field_schema }));
  }
  check(`points of ${fixture.name}`, await send('PUT', `${path}/points?wait=true`, { points: fixture.points, shard_key: fixture.shardKey }));
}

/** Creates the fixture on an empty server. */
export async function createFixture(send: Send): Promise<void> {
  for (const fixture of FIXTURE) await createCollection(send, fixture);
  check('alias', await send('POST', '/collections/aliases', { actions: [{ create_alias: ALIAS }] }));
}

/** What a client can see of one collection: its info, exact count and every point with payload and vectors. */
async function collectionState(send: Send, name: string): Promise<unknown> {
  const path = `/collections/${encodeURIComponent(name)}`;
  const info = check(`info of ${name}`, await send('GET', path)) as Record<string, unknown>;
  const count = check(`count of ${name}`, await send('POST', `${path}/points/count`, { exact: true }));
  const scroll = check(`scroll of ${name}`, await send('POST', `${path}/points/scroll`, { limit: 10_000, with_payload: true, with_vector: true })) as { points: unknown[] };
  const cluster = check(`cluster of ${name}`, await send('GET', `${path}/cluster`)) as { local_shards: { shard_id: number }[] };
  const shardSnapshots: Record<number, string[]> = {};
  for (const { shard_id } of cluster.local_shards) {
    shardSnapshots[shard_id] = snapshotNames(check(`snapshots of shard ${shard_id}`, await send('GET', `${path}/shards/${shard_id}/snapshots`)));
  }
  return {
    // Status, segments and indexed vectors move with the optimizer on their own.
    config: info.config,
    points_count: info.points_count,
    payload_schema: info.payload_schema,
    count,
    points: createHash('sha256').update(JSON.stringify(scroll.points)).digest('hex'),
    shard_keys: check(`shard keys of ${name}`, await send('GET', `${path}/shards`)),
    snapshots: snapshotNames(check(`snapshots of ${name}`, await send('GET', `${path}/snapshots`))),
    shard_snapshots: shardSnapshots,
  };
}

function snapshotNames(list: unknown): string[] {
  return (list as { name: string }[]).map((s) => s.name).sort();
}

export interface ServerState {
  collections: Record<string, unknown>;
  aliases: unknown;
  quotas: unknown;
  snapshots: string[];
}

/** Everything observable that a refused request must leave as it was. */
export async function stateOf(send: Send): Promise<ServerState> {
  const names = (check('collections', await send('GET', '/collections')) as { collections: { name: string }[] }).collections.map((c) => c.name).sort();
  const collections: Record<string, unknown> = {};
  for (const name of names) collections[name] = await collectionState(send, name);
  const aliases = (check('aliases', await send('GET', '/aliases')) as { aliases: { alias_name: string }[] }).aliases
    .sort((a, b) => (a.alias_name < b.alias_name ? -1 : 1));
  return {
    collections,
    aliases,
    quotas: (check('quotas', await send('GET', '/quotas')) as { config: unknown }).config,
    snapshots: snapshotNames(check('snapshots', await send('GET', '/snapshots'))),
  };
}

/** The first difference between two states, as a path and both values; null when equal. */
export function stateDifference(before: ServerState, after: ServerState): string | null {
  const walk = (a: unknown, b: unknown, path: string): string | null => {
    if (isDeepStrictEqual(a, b)) return null;
    if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
        const found = walk((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}.${key}`);
        if (found) return found;
      }
    }
    return `${path}: ${JSON.stringify(a)?.slice(0, 500)} became ${JSON.stringify(b)?.slice(0, 500)}`;
  };
  return walk(before, after, 'state');
}

/** Waits for the writes sent to `fixture` so far: a collection applies its writes in order. */
async function barrier(send: Send, fixture: FixtureCollection): Promise<void> {
  const path = `/collections/${fixture.name}`;
  if (fixture.shardKey !== undefined) {
    const { shard_keys: keys } = check(`shard keys of ${fixture.name}`, await send('GET', `${path}/shards`)) as { shard_keys: { key: unknown }[] };
    // A valid request dropped the key, and its points with it: the collection is made again anyway.
    if (!keys.some((k) => k.key === fixture.shardKey)) return;
  }
  check(`barrier on ${fixture.name}`, await send('POST', `${path}/points/delete?wait=true`, { points: [], shard_key: fixture.shardKey }));
}

/**
 * Puts the fixture back after a request that was valid and may have changed it: writes sent
 * with wait=false are waited for, collections that are not the fixture's are dropped, the
 * fixture's collections that differ from `pristine` are made again, the alias is restored and
 * the quota configuration put back.
 */
export async function restoreFixture(send: Send, pristine: ServerState): Promise<void> {
  const names = (check('collections', await send('GET', '/collections')) as { collections: { name: string }[] }).collections.map((c) => c.name);
  for (const name of names) {
    const fixture = FIXTURE.find((f) => f.name === name);
    if (fixture) await barrier(send, fixture);
    else check(`drop ${name}`, await send('DELETE', `/collections/${encodeURIComponent(name)}`));
  }
  for (const fixture of FIXTURE) {
    if (!names.includes(fixture.name)) await createCollection(send, fixture);
    else if (await configChanged(send, fixture.name, pristine) || !isDeepStrictEqual(withoutSnapshots(await collectionState(send, fixture.name)), withoutSnapshots(pristine.collections[fixture.name]))) {
      check(`drop ${fixture.name}`, await send('DELETE', `/collections/${fixture.name}`));
      await createCollection(send, fixture);
    }
  }
  const aliases = (check('aliases', await send('GET', '/aliases')) as { aliases: typeof ALIAS[] }).aliases;
  const actions = aliases.filter((a) => !isDeepStrictEqual(a, ALIAS)).map((a) => ({ delete_alias: { alias_name: a.alias_name } }));
  if (!aliases.some((a) => isDeepStrictEqual(a, ALIAS))) actions.push({ create_alias: ALIAS } as never);
  if (actions.length > 0) check('aliases', await send('POST', '/collections/aliases', { actions }));
  check('quotas', await send('PUT', '/quotas', pristine.quotas));
}

/**
 * Whether a valid request changed a fixture collection's configuration: then it is made again
 * without reading its points, which its strict mode (limits, rate limits) may now refuse.
 */
async function configChanged(send: Send, name: string, pristine: ServerState): Promise<boolean> {
  const info = check(`info of ${name}`, await send('GET', `/collections/${encodeURIComponent(name)}`)) as { config: unknown };
  return !isDeepStrictEqual(info.config, (pristine.collections[name] as { config: unknown }).config);
}

// Snapshots made by valid requests are kept: they are files, not the collections' content.
function withoutSnapshots(state: unknown): unknown {
  const { snapshots: _snapshots, shard_snapshots: _shardSnapshots, ...rest } = state as Record<string, unknown>;
  return rest;
}

