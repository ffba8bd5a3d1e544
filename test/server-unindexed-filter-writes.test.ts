// Searches filtered on payload keys no index answers, through the real server, while points and
// payloads change: every write that changes a payload (upsert, set, overwrite, delete and clear
// of payloads, point deletion, offsets reused by new points) must show in the next search, on
// keys whose payload columns a shard keeps through the writes and on more keys than it keeps. Each answer is checked against the points the
// test holds (exact searches, so the answer is the reference's).

import t from 'tap';
import { call, resultOf } from './helpers/api-http.js';
import { startServer } from './helpers/server.js';
import { rng } from './helpers/data.js';

const N = 240;
const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'];
/** Keys searched after every write: fewer than a shard keeps columns for, so theirs are kept and must follow the writes. */
const HOT = KEYS.slice(0, 3);
type Payload = Record<string, unknown>;

t.test('filters checked point by point see every payload write', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const next = rng(31);
  const pick = (n: number) => Math.floor(next() * n);
  const payloads = new Map<number, Payload>();
  const vectorOf = (id: number) => [Math.cos(id), Math.sin(id), (id % 13) / 13, 1];
  const randomPayload = (): Payload => Object.fromEntries(KEYS.filter(() => next() < 0.8).map((k) => [k, pick(4)]));
  const write = async (method: string, path: string, body: unknown) => resultOf(t, await call(server.url, method, `/collections/w${path}?wait=true`, body));

  resultOf(t, await call(server.url, 'PUT', '/collections/w', { vectors: { size: 4, distance: 'Euclid' }, shard_number: 2 }));
  const upsert = async (ids: number[]) => {
    for (const id of ids) payloads.set(id, randomPayload());
    await write('PUT', '/points', { points: ids.map((id) => ({ id, vector: vectorOf(id), payload: payloads.get(id) })) });
  };
  await upsert(Array.from({ length: N }, (_, i) => i));

  let mismatches = 0;
  let searches = 0;
  const checkAll = async (what: string, keys: string[]) => {
    for (const key of keys) {
      const value = pick(4);
      const filter = { must: [{ key, match: { value } }] };
      const expected = [...payloads].filter(([, p]) => p[key] === value).map(([id]) => id).sort((a, b) => a - b);
      const got = resultOf<{ points: { id: number }[] }>(t, await call(server.url, 'POST', '/collections/w/points/query', {
        query: [0.5, 0.5, 0.5, 1], filter, limit: N + 100, params: { exact: true },
      })).points.map((p) => p.id).sort((a, b) => a - b);
      searches++;
      if (got.join() !== expected.join() && mismatches++ < 3) t.fail(`${what}: ${key} = ${value}: expected ${expected.length} points, got ${got.length}`);
    }
  };

  await checkAll('as uploaded', KEYS);
  const someIds = (count: number) => Array.from({ length: count }, () => [...payloads.keys()][pick(payloads.size)]);
  for (let round = 0; round < 6; round++) {
    const key = KEYS[pick(KEYS.length)];
    const setIds = [...new Set(someIds(20))];
    const value = pick(4);
    await write('POST', '/points/payload', { points: setIds, payload: { [key]: value } });
    for (const id of setIds) payloads.set(id, { ...payloads.get(id), [key]: value });
    await checkAll(`round ${round}: set_payload`, HOT);

    const overwriteIds = [...new Set(someIds(10))];
    const replacement = randomPayload();
    await write('PUT', '/points/payload', { points: overwriteIds, payload: replacement });
    for (const id of overwriteIds) payloads.set(id, { ...replacement });
    const deleteKey = KEYS[pick(KEYS.length)];
    const unsetIds = [...new Set(someIds(10))];
    await write('POST', '/points/payload/delete', { points: unsetIds, keys: [deleteKey] });
    for (const id of unsetIds) {
      const { [deleteKey]: _gone, ...rest } = payloads.get(id)!;
      payloads.set(id, rest);
    }
    const clearIds = [...new Set(someIds(5))];
    await write('POST', '/points/payload/clear', { points: clearIds });
    for (const id of clearIds) payloads.set(id, {});
    await checkAll(`round ${round}: overwrite, delete and clear`, HOT);

    const deleted = [...new Set(someIds(15))];
    await write('POST', '/points/delete', { points: deleted });
    for (const id of deleted) payloads.delete(id);
    // New ids take the offsets the deleted points left; some existing ones get new payloads.
    await upsert([...Array.from({ length: 15 }, (_, i) => N + round * 15 + i), ...someIds(10)]);
    await checkAll(`round ${round}: deleted points and new ones`, HOT);
    // Every key: more than are kept, so some columns are dropped and made again.
    await checkAll(`round ${round}: every key`, KEYS);
  }
  t.equal(mismatches, 0, `${searches} filtered searches on ${KEYS.length} unindexed keys match the points as written`);
});
