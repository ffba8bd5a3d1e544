// The filter language through the real server: random payloads (arrays, nulls, missing keys,
// nested objects, UUIDs, datetimes, geo points, text) and random filters of every condition
// kind; count and scroll must select exactly the points a plain reference evaluator selects,
// on a collection without payload indexes and on one with an index on every key.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import type { PointId } from '../src/model.js';
import { rng } from './helpers/data.js';
import { filter, randomPoints } from './helpers/filter-data.js';
import { refMatches, type RefPoint } from './helpers/filter-reference.js';
import { startServer } from './helpers/server.js';

const N = 400;
const FILTERS = 150;
/** The reference's unnamed vector '' becomes the named vector `text` (a collection has one or the other). */
const UNNAMED = 'text';

const INDEXES: Record<string, string | { type: string; [k: string]: unknown }> = {
  int: 'integer', float: 'float', str: 'keyword', bool: 'bool', uuid: 'uuid', dt: 'datetime', geo: 'geo', text: 'text',
  'obj.a': 'integer', 'obj.b': 'keyword', 'objs[].x': 'integer', 'objs[].y': 'text', arr: 'keyword', mixed: { type: 'integer', lookup: true, range: true },
};

function renameUnnamed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(renameUnnamed);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'has_vector' && v === '' ? UNNAMED : renameUnnamed(v)]));
}

function key(id: PointId): string {
  return typeof id === 'number' ? `n${id}` : `u${id}`;
}

t.test('random filters select what the reference selects', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  const next = rng(2024);
  const points: RefPoint[] = randomPoints(next, N);
  const vectors = (p: RefPoint) => Object.fromEntries(p.vectors.map((n) => [n === '' ? UNNAMED : n, [1, (Number(key(p.id).length) % 3) + 1, 0.5, 2]]));
  for (const name of ['plain', 'indexed']) {
    await client.createCollection(name, { vectors: { [UNNAMED]: { size: 4, distance: 'Dot' }, image: { size: 4, distance: 'Dot' } }, shard_number: 3 });
    // Points without any vector are legal in Qdrant; upsert needs a vector map, possibly empty.
    await client.upsert(name, { wait: true, points: points.map((p) => ({ id: p.id as number | string, vector: vectors(p), payload: p.payload })) });
  }
  for (const [field, schema] of Object.entries(INDEXES)) {
    await client.createPayloadIndex('indexed', { field_name: field, field_schema: schema as 'keyword', wait: true });
  }
  t.equal((await client.count('plain', { exact: true })).count, N, 'all points stored');

  const ids = points.map((p) => p.id);
  let mismatches = 0;
  let proper = 0;
  for (let i = 0; i < FILTERS; i++) {
    const wire = filter(next, 2, false, ids);
    const serverFilter = renameUnnamed(wire) as Record<string, unknown>;
    for (const [name, textKeys] of [['plain', new Set<string>()], ['indexed', new Set(['text', 'objs[].y'])]] as const) {
      const expected = points.filter((p) => refMatches(wire, p, { textKeys })).map((p) => key(p.id)).sort();
      const scrolled = await client.scroll(name, { filter: serverFilter, limit: N + 1, with_payload: false });
      const got = scrolled.points.map((p) => key(p.id as PointId)).sort();
      const counted = (await client.count(name, { filter: serverFilter, exact: true })).count;
      if (name === 'plain' && expected.length > 0 && expected.length < N / 2) proper++;
      if (got.join() !== expected.join() || counted !== expected.length) {
        if (mismatches++ < 3) t.fail(`${name}: ${JSON.stringify(wire)}: expected ${expected.length}, scroll ${got.length}, count ${counted}`);
      }
    }
  }
  t.equal(mismatches, 0, `${FILTERS} random filters x 2 collections agree with the reference`);
  t.ok(proper > FILTERS / 10, `${proper} filters select a proper non-empty subset`);
});
