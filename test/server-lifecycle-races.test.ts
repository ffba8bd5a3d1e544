// Collection lifecycle operations racing each other on a few names: creates, deletes, upserts,
// alias changes, configuration updates, payload index creation and snapshot recoveries from many
// clients at once (fixed seed). Afterwards every acknowledged write to the collection instance
// that still exists is there, every refused write and every write to an instance that is gone is
// not, each refusal is Qdrant's (409 for a name taken, 404 for a missing collection), and the
// storage holds exactly the folders its collection records name, before and after a restart.
//
// Each create tags its instance with a unique `metadata.tag`. An upsert whose collection shows
// the same tag just before it was sent and just after it was answered went to that instance: an
// instance lives one unbroken interval (its tag never comes back), and it covers both reads.

import t, { type Test } from 'tap';
import { assertError, call, resultOf, stopAtEnd, type RawResponse } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { ONE_PEER_CLUSTER, startServer, type RunningServer } from './helpers/server.js';
import { compareFolders, storedState } from './helpers/storage-folders.js';

const NAMES = ['alpha', 'beta', 'gamma'];
const ALIASES = ['alias_one', 'alias_two'];
const CLIENTS = 8;
const OPS_PER_CLIENT = 40;
const SEED = 1111;
const SEED_TAG = 'snapshot';
const SEED_IDS = [900_001, 900_002, 900_003];

const notFound = (name: string) => `Not found: Collection \`${name}\` doesn't exist!`;
const alreadyExists = (name: string) => `Wrong input: Collection \`${name}\` already exists!`;

/**
 * A cluster peer serves a collection once the control plane's creation is applied, before its
 * replicas' activation (Initializing -> Active) commits, as Qdrant's peers do: meanwhile a read
 * answers that no replica is active, and an update applied only to Initializing replicas is not
 * acknowledged (it may or may not be there afterwards); so is one that finds no replica taking
 * updates while a recovery settles the replicas' states. On a single node a creation is whole.
 */
const NOT_ACTIVE_READ = /^Service internal error: The replica set for shard \d+ on peer \d+ does not have enough active replicas$/;
const NOT_ACTIVE_UPDATE = /^Service internal error: (Failed to apply operation to at least one `Active` replica\. Consistency of this update is not guaranteed\. Please retry\. |The replica set for shard \d+ on peer \d+ has no active replica)$/;

function notActiveYet(response: RawResponse, message: RegExp): boolean {
  const error = (response.body as { status?: { error?: string } }).status?.error ?? '';
  return ONE_PEER_CLUSTER && response.status === 500 && message.test(error);
}

function vector(id: number): number[] {
  return [Math.sin(id), Math.cos(id)];
}

/** The tag of the instance serving `name` (null: none), or the unexpected response. */
async function tagOf(base: string, name: string): Promise<{ tag: string | null; unexpected?: RawResponse }> {
  const response = await call(base, 'GET', `/collections/${name}`);
  if (response.status === 200) return { tag: (response.body as { result: { config: { metadata?: { tag?: string } } } }).result.config.metadata?.tag ?? null };
  if (response.status === 404 && (response.body as { status?: { error?: string } }).status?.error === notFound(name)) return { tag: null };
  // An instance still activating: which one is unknown, so no upsert is tied to it.
  if (notActiveYet(response, NOT_ACTIVE_READ)) return { tag: null };
  return { tag: null, unexpected: response };
}

async function allIds(t: Test, base: string, name: string): Promise<Set<number>> {
  const page = resultOf<{ points: { id: number }[]; next_page_offset: unknown }>(t, await call(base, 'POST', `/collections/${name}/points/scroll`, { limit: 100_000 }));
  t.equal(page.next_page_offset, null, `${name}: one page holds every point`);
  return new Set(page.points.map((p) => p.id));
}

async function upload(base: string, path: string, bytes: Uint8Array): Promise<RawResponse> {
  const form = new FormData();
  form.append('snapshot', new Blob([Buffer.from(bytes)]), 'seed.snapshot');
  const response = await fetch(base + path, { method: 'POST', body: form });
  return { status: response.status, body: await response.json() };
}

/** Stops the server gracefully and checks its storage: records, aliases, folders. */
async function checkStorage(t: Test, server: RunningServer, expected: { names: Map<string, string | null>; aliases: Map<string, string> }): Promise<void> {
  t.equal(await server.stop(), 0, 'the server stops cleanly');
  const stored = await storedState(server.storage);
  t.same(new Map(stored.records.map((r) => [r.name, (r.config.metadata as { tag?: string } | null)?.tag ?? null])), expected.names, 'stored records are the collections served, each with the served instance\'s tag');
  t.same(stored.aliases, expected.aliases, 'stored aliases are the aliases served');
  const { orphans, missing } = await compareFolders(server.storage, stored.records);
  t.same(orphans, [], 'no folder under collections/ that no record names');
  t.same(missing, [], 'every shard folder a record names exists');
}

async function servedAliases(t: Test, base: string): Promise<Map<string, string>> {
  const { aliases } = resultOf<{ aliases: { alias_name: string; collection_name: string }[] }>(t, await call(base, 'GET', '/aliases'));
  return new Map(aliases.map((a) => [a.alias_name, a.collection_name]));
}

t.test('six concurrent creates of one name: one 200, five 409, and no acknowledged upsert lost', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const base = server.url;
  const names = new Map<string, string | null>();
  for (let round = 0; round < 5; round++) {
    const name = `solo_${round}`;
    const creates = Array.from({ length: 6 }, (_, i) => call(base, 'PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Dot' }, shard_number: 2, metadata: { tag: `${round}-${i}` } }));
    let creating = true;
    const settled = Promise.all(creates).finally(() => (creating = false));
    const acknowledged: number[] = [];
    const refused: number[] = [];
    let next = round * 10_000;
    // Writers run while the creates race and a little after: until every create has answered,
    // then 20 more upserts each.
    const writer = async () => {
      let after = 0;
      while (creating || after++ < 20) {
        const id = next++;
        const r = await call(base, 'PUT', `/collections/${name}/points?wait=true`, { points: [{ id, vector: vector(id) }] });
        if (r.status === 200) acknowledged.push(id);
        else if (r.status === 404 && (r.body as { status: { error: string } }).status.error === notFound(name)) refused.push(id);
        else if (!notActiveYet(r, NOT_ACTIVE_UPDATE)) t.fail(`unexpected upsert answer ${r.status} ${JSON.stringify(r.body)}`);
      }
    };
    await Promise.all([settled, writer(), writer(), writer()]);
    const answers = await settled;
    const winners = answers.filter((r) => r.status === 200);
    t.equal(winners.length, 1, `round ${round}: exactly one create succeeds`);
    for (const r of answers.filter((a) => a.status !== 200)) assertError(t, r, 409, alreadyExists(name), `round ${round}: a duplicate create`);
    const present = await allIds(t, base, name);
    t.same(acknowledged.filter((id) => !present.has(id)), [], `round ${round}: all ${acknowledged.length} acknowledged upserts are there`);
    t.same(refused.filter((id) => present.has(id)), [], `round ${round}: no refused upsert is there`);
    t.ok(acknowledged.length >= 60, `round ${round}: ${acknowledged.length} upserts acknowledged`);
    names.set(name, (await tagOf(base, name)).tag);
  }
  await checkStorage(t, server, { names, aliases: new Map() });
});

interface Upsert {
  name: string;
  id: number;
  status: number;
  before: string | null;
  after: string | null;
  /** When it was sent, on the test's clock of operations (`clock`). */
  sent: number;
}

t.test(`${CLIENTS} clients racing lifecycle operations on ${NAMES.length} names (seed ${SEED})`, async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const base = server.url;

  // A snapshot whose recovery replaces a collection with an instance tagged SEED_TAG.
  resultOf(t, await call(base, 'PUT', '/collections/seed', { vectors: { size: 2, distance: 'Dot' }, shard_number: 2, metadata: { tag: SEED_TAG } }));
  resultOf(t, await call(base, 'PUT', '/collections/seed/points?wait=true', { points: SEED_IDS.map((id) => ({ id, vector: vector(id) })) }));
  const snapshot = resultOf<{ name: string }>(t, await call(base, 'POST', '/collections/seed/snapshots'));
  const archive = new Uint8Array(await (await fetch(`${base}/collections/seed/snapshots/${snapshot.name}`)).arrayBuffer());
  resultOf(t, await call(base, 'DELETE', '/collections/seed'));

  const upserts: Upsert[] = [];
  /** Successful recoveries, by name, with when they were answered (`clock`). */
  const recovered: { name: string; done: number }[] = [];
  let clock = 0;
  const unexpected: string[] = [];
  const counts = new Map<string, number>();
  const expect = (what: string, r: RawResponse, allowed: Record<number, string | null>) => {
    const key = `${what} ${r.status}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (!(r.status in allowed)) return unexpected.push(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    const message = allowed[r.status];
    const error = (r.body as { status?: { error?: string } }).status?.error;
    if (message !== null && error !== message) unexpected.push(`${what}: ${r.status} with ${JSON.stringify(error)}, expected ${JSON.stringify(message)}`);
  };
  const noteTag = (what: string, read: { unexpected?: RawResponse }) => {
    if (read.unexpected) unexpected.push(`${what}: ${read.unexpected.status} ${JSON.stringify(read.unexpected.body)}`);
  };

  async function client(c: number): Promise<void> {
    const random = rng(SEED + c);
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
    for (let op = 0; op < OPS_PER_CLIENT; op++) {
      const name = pick(NAMES);
      const roll = random();
      if (roll < 0.2) {
        const r = await call(base, 'PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Dot' }, shard_number: 2, metadata: { tag: `c${c}-op${op}` } });
        expect('create', r, { 200: null, 409: alreadyExists(name) });
      } else if (roll < 0.3) {
        expect('delete', await call(base, 'DELETE', `/collections/${name}`), { 200: null });
      } else if (roll < 0.65) {
        const id = c * 100_000 + op;
        const sent = ++clock;
        const before = await tagOf(base, name);
        noteTag('tag read', before);
        const r = await call(base, 'PUT', `/collections/${name}/points?wait=true`, { points: [{ id, vector: vector(id), payload: { n: op } }] });
        if (!notActiveYet(r, NOT_ACTIVE_UPDATE)) expect('upsert', r, { 200: null, 404: notFound(name) });
        const after = await tagOf(base, name);
        noteTag('tag read', after);
        upserts.push({ name, id, status: r.status, before: before.tag, after: after.tag, sent });
      } else if (roll < 0.8) {
        const [alias, other] = random() < 0.5 ? ALIASES : [...ALIASES].reverse();
        const kind = pick(['create', 'delete', 'rename']);
        const action = kind === 'create' ? { create_alias: { collection_name: name, alias_name: alias } }
          : kind === 'delete' ? { delete_alias: { alias_name: alias } }
            : { rename_alias: { old_alias_name: alias, new_alias_name: other } };
        const r = await call(base, 'POST', '/collections/aliases', { actions: [action] });
        if (kind === 'create') expect('create_alias', r, { 200: null, 404: notFound(name) });
        else if (kind === 'delete') expect('delete_alias', r, { 200: null });
        else expect('rename_alias', r, { 200: null, 404: `Not found: Alias ${alias} does not exists!` });
      } else if (roll < 0.88) {
        const r = await call(base, 'PATCH', `/collections/${name}`, { optimizers_config: { indexing_threshold: 1000 + op }, metadata: { touched: op } });
        expect('update', r, { 200: null, 404: notFound(name) });
      } else if (roll < 0.95) {
        const r = await call(base, 'PUT', `/collections/${name}/index?wait=true`, { field_name: 'n', field_schema: 'integer' });
        expect('create_index', r, { 200: null, 404: notFound(name) });
      } else {
        // A cluster peer recovers into the collection the cluster has (its configuration, so its
        // tag, kept: Qdrant's rule), which a concurrent delete may have removed meanwhile.
        const r = await upload(base, `/collections/${name}/snapshots/upload?wait=true`, archive);
        expect('recover', r, ONE_PEER_CLUSTER ? { 200: null, 404: notFound(name) } : { 200: null });
        if (r.status === 200) recovered.push({ name, done: ++clock });
      }
    }
  }

  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  t.same(unexpected, [], 'every answer is one Qdrant gives for that race, with its message');
  t.comment(`answers: ${JSON.stringify(Object.fromEntries([...counts].sort()))}`);
  for (const what of ['create 200', 'create 409', 'upsert 200', 'upsert 404']) t.ok((counts.get(what) ?? 0) > 0, `the race produced at least one ${what}`);

  const finalTags = new Map<string, string | null>();
  let checked = 0;
  for (const name of NAMES) {
    const { tag } = await tagOf(base, name);
    finalTags.set(name, tag);
    const present = tag === null ? new Set<number>() : await allIds(t, base, name);
    const mine = upserts.filter((u) => u.name === name);
    const acknowledged = new Set(mine.filter((u) => u.status === 200).map((u) => u.id));
    // On a cluster peer a recovery replaces an instance's points in place, under the same tag:
    // an upsert acknowledged before one that answered later may be gone.
    const replacedAfter = (u: Upsert) => ONE_PEER_CLUSTER && recovered.some((r) => r.name === u.name && r.done > u.sent);
    const sameInstance = mine.filter((u) => u.status === 200 && u.before !== null && u.before === u.after && u.before !== SEED_TAG && !replacedAfter(u));
    checked += sameInstance.length;
    t.same(sameInstance.filter((u) => u.before === tag && !present.has(u.id)).map((u) => u.id), [], `${name}: every upsert acknowledged by the surviving instance is there`);
    t.same(sameInstance.filter((u) => u.before !== tag && present.has(u.id)).map((u) => u.id), [], `${name}: no upsert acknowledged by an instance since deleted or replaced is there`);
    // An update left unconfirmed on activating replicas (status 500, cluster only) may be there.
    const unconfirmed = new Set(mine.filter((u) => u.status === 500).map((u) => u.id));
    t.same(mine.filter((u) => u.status !== 200 && !unconfirmed.has(u.id) && present.has(u.id)).map((u) => u.id), [], `${name}: no refused upsert is there`);
    const fromSnapshot = (id: number) => SEED_IDS.includes(id) && (tag === SEED_TAG || (ONE_PEER_CLUSTER && recovered.some((r) => r.name === name)));
    t.same([...present].filter((id) => !acknowledged.has(id) && !unconfirmed.has(id) && !fromSnapshot(id)), [], `${name}: every point there was acknowledged (or came with the snapshot)`);
    if (tag !== null) {
      const hits = resultOf<unknown[]>(t, await call(base, 'POST', `/collections/${name}/points/search`, { vector: [1, 0], limit: 3 }));
      t.equal(hits.length, Math.min(3, present.size), `${name}: searches work`);
    }
  }
  // Fewer on a cluster peer, where every recovery answered later unties them (see replacedAfter).
  t.ok(checked >= (ONE_PEER_CLUSTER ? 1 : 5), `${checked} acknowledged upserts could be tied to one instance`);
  const aliases = await servedAliases(t, base);
  for (const [alias, target] of aliases) t.ok(finalTags.get(target) !== null, `alias ${alias} points to an existing collection`);

  const live = new Map([...finalTags].filter(([, tag]) => tag !== null));
  await checkStorage(t, server, { names: live, aliases });

  const again = await startServer({ storage: server.storage });
  stopAtEnd(t, again);
  for (const [name, tag] of live) {
    t.equal((await tagOf(again.url, name)).tag, tag, `${name}: the same instance after a restart`);
    resultOf(t, await call(again.url, 'PUT', `/collections/${name}/points?wait=true`, { points: [{ id: 1, vector: [1, 0] }] }));
  }
  t.same(await servedAliases(t, again.url), aliases, 'the same aliases after a restart');
  await checkStorage(t, again, { names: live, aliases });
});

t.test('shard keys created and dropped while the collection is deleted, recreated, updated and written', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const base = server.url;
  const name = 'tenants';
  const KEYS = ['k0', 'k1', 'k2'];
  const create = () => call(base, 'PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Dot' }, sharding_method: 'custom' });
  resultOf(t, await create());
  const unexpected: string[] = [];
  const counts = new Map<string, number>();
  const expect = (what: string, r: RawResponse, allowed: Record<number, string[]>) => {
    counts.set(`${what} ${r.status}`, (counts.get(`${what} ${r.status}`) ?? 0) + 1);
    const error = (r.body as { status?: { error?: string } }).status?.error;
    if (!(r.status in allowed) || (r.status !== 200 && !allowed[r.status].includes(error!))) unexpected.push(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  /** `lifecycle`: the collection itself may be deleted and created too. */
  async function client(c: number, lifecycle: boolean): Promise<void> {
    const random = rng(SEED * 7 + c + (lifecycle ? 0 : 100));
    for (let op = 0; op < 25; op++) {
      const key = KEYS[Math.floor(random() * KEYS.length)];
      const roll = random() * (lifecycle ? 1 : 0.88);
      if (roll < 0.25) {
        expect('create_key', await call(base, 'PUT', `/collections/${name}/shards`, { shard_key: key, shards_number: 1 + (op % 2) }), { 200: [], 400: [`Bad request: Sharding key ${key} already exists for collection ${name}`], 404: [notFound(name)] });
      } else if (roll < 0.4) {
        expect('drop_key', await call(base, 'POST', `/collections/${name}/shards/delete`, { shard_key: key }), { 200: [], 400: [`Bad request: Sharding key ${key} does not exist for collection ${name}`], 404: [notFound(name)] });
      } else if (roll < 0.75) {
        const id = c * 1000 + op;
        const r = await call(base, 'PUT', `/collections/${name}/points?wait=true`, { points: [{ id, vector: vector(id) }], shard_key: key });
        // A cluster peer may still route to a key the control plane just dropped: no replica takes it.
        if (!notActiveYet(r, NOT_ACTIVE_UPDATE)) expect('upsert', r, { 200: [], 400: [`Wrong input: Shard key ${key} not found`], 404: [notFound(name)] });
      } else if (roll < 0.82) {
        expect('update', await call(base, 'PATCH', `/collections/${name}`, { optimizers_config: { indexing_threshold: 500 + op } }), { 200: [], 404: [notFound(name)] });
      } else if (roll < 0.88) {
        expect('create_index', await call(base, 'PUT', `/collections/${name}/index?wait=true`, { field_name: 'n', field_schema: 'keyword' }), { 200: [], 404: [notFound(name)] });
      } else if (roll < 0.93) {
        expect('delete', await call(base, 'DELETE', `/collections/${name}`), { 200: [] });
      } else {
        expect('create', await create(), { 200: [], 409: [alreadyExists(name)] });
      }
    }
  }
  await Promise.all(Array.from({ length: 6 }, (_, c) => client(c, true)));
  // Then keys race on one collection that stays, so the end state has keys to compare.
  expect('create', await create(), { 200: [], 409: [alreadyExists(name)] });
  await Promise.all(Array.from({ length: 6 }, (_, c) => client(c, false)));
  t.same(unexpected, [], 'every answer is one Qdrant gives for that race, with its message');
  t.comment(`answers: ${JSON.stringify(Object.fromEntries([...counts].sort()))}`);
  for (const what of ['create_key 200', 'create_key 400', 'upsert 200']) t.ok((counts.get(what) ?? 0) > 0, `the race produced at least one ${what}`);

  const listed = await call(base, 'GET', `/collections/${name}/shards`);
  const served = resultOf<{ shard_keys: { key: string }[] }>(t, listed).shard_keys.map((k) => k.key);
  t.comment(`served keys at the end: ${JSON.stringify(served)}`);
  for (const key of served) resultOf(t, await call(base, 'POST', `/collections/${name}/points/count`, { shard_key: key, exact: true }));
  await checkStorage(t, server, { names: new Map([[name, null]]), aliases: new Map() });
  const { records } = await storedState(server.storage);
  t.same(records[0]?.shardKeys?.map((k) => k.key) ?? [], served, 'the stored shard keys are the keys served, in order');
});
