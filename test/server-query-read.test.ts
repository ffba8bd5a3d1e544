// The query API's order_by and sample queries through the real server: ordering by a payload
// field against sorting in JS (with filters, offsets, start_from and as a rescoring of prefetched
// candidates), and random samples that are distinct, match the filter and cover the collection.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { call, resultOf } from './helpers/api-http.js';
import { startServer } from './helpers/server.js';

const N = 400;
const price = (i: number) => ((i * 7919) % 1000) + i / 1000; // distinct, scattered
const color = (i: number) => ['red', 'green', 'blue'][i % 3];
const vectorOf = (i: number) => [Math.cos(i), Math.sin(i), (i % 17) / 17, 1];

interface ScoredPoint { id: number; score: number; version: number; order_value?: number; payload?: Record<string, unknown> | null }

t.test('order_by and sample queries', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('r', { vectors: { size: 4, distance: 'Euclid' }, shard_number: 3 });
  await client.upsert('r', { wait: true, points: Array.from({ length: N }, (_, i) => ({ id: i, vector: vectorOf(i), payload: { price: price(i), color: color(i) } })) });
  const query = async (body: unknown) => resultOf<{ points: ScoredPoint[] }>(t, await call(server.url, 'POST', '/collections/r/points/query', body)).points;

  const missing = await call(server.url, 'POST', '/collections/r/points/query', { query: { order_by: 'price' } });
  t.equal(missing.status, 400, 'order_by without a range index is refused');
  t.match((missing.body as { status: { error: string } }).status.error, /No range index for `order_by` key: `price`/);

  await client.createPayloadIndex('r', { field_name: 'price', field_schema: 'float', wait: true });
  await client.createPayloadIndex('r', { field_name: 'color', field_schema: 'keyword', wait: true });
  const ids = Array.from({ length: N }, (_, i) => i);
  const byPrice = (list: number[], dir: 'asc' | 'desc') => [...list].sort((a, b) => (dir === 'asc' ? price(a) - price(b) : price(b) - price(a)));

  const asc = await query({ query: { order_by: 'price' }, limit: 15 });
  t.same(asc.map((p) => p.id), byPrice(ids, 'asc').slice(0, 15), 'order_by a key: ascending by value');
  t.same(asc.map((p) => p.order_value), byPrice(ids, 'asc').slice(0, 15).map(price), 'order_value carries the value');
  t.ok(asc.every((p) => p.score === 1 && p.version === 0), 'every hit scores 1 with version 0, as Qdrant answers');

  const red = ids.filter((i) => color(i) === 'red');
  const desc = await query({ query: { order_by: { key: 'price', direction: 'desc' } }, filter: { must: [{ key: 'color', match: { value: 'red' } }] }, limit: 10, offset: 5, with_payload: true });
  t.same(desc.map((p) => p.id), byPrice(red, 'desc').slice(5, 15), 'descending, filtered, with offset');
  t.ok(desc.every((p) => p.payload?.color === 'red'), 'payload returned on request');

  const from = await query({ query: { order_by: { key: 'price', direction: 'asc', start_from: 500 } }, limit: 10 });
  t.same(from.map((p) => p.id), byPrice(ids.filter((i) => price(i) >= 500), 'asc').slice(0, 10), 'start_from leaves out smaller values');

  // Rescoring: the prefetch picks the 40 nearest points, order_by sorts exactly those.
  const q = [1, 0, 0.5, 1];
  const dist = (i: number) => vectorOf(i).reduce((s, x, j) => s + (x - q[j]) ** 2, 0);
  const nearest = [...ids].sort((a, b) => dist(a) - dist(b) || a - b).slice(0, 40);
  const rescored = await query({ prefetch: { query: q, limit: 40, params: { exact: true } }, query: { order_by: { key: 'price', direction: 'desc' } }, limit: 12 });
  t.same(rescored.map((p) => p.id), byPrice(nearest, 'desc').slice(0, 12), 'order_by over prefetched candidates');

  const client119 = await client.query('r', { query: { order_by: { key: 'price' } }, limit: 3 });
  t.same(client119.points.map((p) => p.id), byPrice(ids, 'asc').slice(0, 3), 'the official client sends order_by queries');

  // Random samples: distinct, matching, and over many draws covering every matching point.
  const seen = new Set<number>();
  for (let round = 0; round < 60; round++) {
    const sample = await query({ query: { sample: 'random' }, filter: { must: [{ key: 'color', match: { value: 'blue' } }] }, limit: 20 });
    t.equal(new Set(sample.map((p) => p.id)).size, 20, 'a sample has no duplicates');
    if (!sample.every((p) => color(p.id) === 'blue' && p.score === 1)) t.fail('sample outside the filter');
    for (const p of sample) seen.add(p.id);
  }
  const blue = ids.filter((i) => color(i) === 'blue');
  // 60 draws of 20 out of 133: a point is missed with probability (1-20/133)^60 ~ 6e-5.
  t.ok(seen.size >= blue.length - 2, `samples cover the matching points (${seen.size} of ${blue.length})`);

  const all = await query({ query: { sample: 'random' }, limit: N + 50 });
  t.same(all.map((p) => p.id).sort((a, b) => a - b), ids, 'a sample larger than the collection is the whole collection');

  const batch = resultOf<{ points: ScoredPoint[] }[]>(t, await call(server.url, 'POST', '/collections/r/points/query/batch', {
    searches: [{ query: { sample: 'random' }, limit: 5 }, { query: { order_by: 'price' }, limit: 4 }, { query: q, limit: 3, params: { exact: true } }],
  }));
  t.equal(batch[0].points.length, 5, 'batch: sample');
  t.same(batch[1].points.map((p) => p.id), byPrice(ids, 'asc').slice(0, 4), 'batch: order_by');
  t.same(batch[2].points.map((p) => p.id), nearest.slice(0, 3), 'batch: nearest');

  const bad = await call(server.url, 'POST', '/collections/r/points/query', { query: { sample: 'everything' } });
  t.equal(bad.status, 400, 'an unknown sample kind is a format error');
});
