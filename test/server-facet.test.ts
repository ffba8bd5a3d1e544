// POST /facet through the real server: counts per value against counting in JS, with filters,
// limits, Qdrant's order (count descending, then value), and the error without an index.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { rng } from './helpers/data.js';
import { startServer } from './helpers/server.js';

t.test('facet counts', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('f', { vectors: { size: 2, distance: 'Dot' }, shard_number: 3 });
  const next = rng(5);
  const colours = ['red', 'green', 'blue', 'amber', 'teal'];
  const payloads = Array.from({ length: 600 }, () => ({
    colour: colours[Math.floor(next() * next() * colours.length)],
    size: Math.floor(next() * 4),
    tags: [colours[Math.floor(next() * 5)], colours[Math.floor(next() * 5)]],
    ok: next() < 0.3,
  }));
  await client.upsert('f', { wait: true, points: payloads.map((payload, id) => ({ id, vector: [1, 0], payload })) });
  for (const [field, schema] of [['colour', 'keyword'], ['size', 'integer'], ['tags', 'keyword'], ['ok', 'bool']] as const) {
    await client.createPayloadIndex('f', { field_name: field, field_schema: schema, wait: true });
  }
  const expected = (values: (p: (typeof payloads)[number]) => (string | number | boolean)[], keep: (p: (typeof payloads)[number]) => boolean = () => true) => {
    const counts = new Map<string | number | boolean, number>();
    for (const p of payloads.filter(keep)) for (const v of new Set(values(p))) counts.set(v, (counts.get(v) ?? 0) + 1);
    return [...counts].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  };
  t.same((await client.facet('f', { key: 'colour' })).hits, expected((p) => [p.colour]).slice(0, 10));
  t.same((await client.facet('f', { key: 'size', limit: 2 })).hits, expected((p) => [p.size]).slice(0, 2), 'limit');
  t.same((await client.facet('f', { key: 'tags', exact: true })).hits, expected((p) => p.tags), 'a point counts once per distinct value');
  t.same((await client.facet('f', { key: 'ok' })).hits, expected((p) => [p.ok]), 'bool values');
  t.same(
    (await client.facet('f', { key: 'colour', filter: { must: [{ key: 'size', range: { gte: 2 } }] } })).hits,
    expected((p) => [p.colour], (p) => p.size >= 2),
    'filtered',
  );
  const res = await fetch(`${server.url}/collections/f/facet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: 'nothing' }) });
  t.equal(res.status, 400);
  t.match(((await res.json()) as { status: { error: string } }).status.error, /^Wrong input: No appropriate index for faceting: `nothing`/);
});
