// Hardware usage as Qdrant reports it, through the real server started with
// QDRANT__SERVICE__HARDWARE_REPORTING=true: each answer's `usage.hardware` equals what the test
// computes for the operation it made (bytes of vectors and payloads written and read, payload
// index reads and writes, bytes compared while scoring), an update with wait=false reports none,
// and telemetry's per-collection totals and the collection_hardware_metric_* counters equal the
// sum over every answer plus the unreported update. Shapes are checked against Qdrant 1.19's field
// lists (HardwareUsage, Usage).

import t, { type Test } from 'tap';
import { call, resultOf, stopAtEnd, type RawResponse } from './helpers/api-http.js';
import { metrics, sampleValue } from './helpers/metrics-text.js';
import { startServer } from './helpers/server.js';
import { shardOf } from '../src/shard/routing.js';

/** Qdrant 1.19's HardwareUsage, every field required. */
const HARDWARE_USAGE_FIELDS = ['cpu', 'payload_io_read', 'payload_io_write', 'payload_index_io_read', 'payload_index_io_write', 'vector_io_read', 'vector_io_write'] as const;
type Hardware = Record<(typeof HARDWARE_USAGE_FIELDS)[number], number>;

const DIM = 4;
const F32 = 4;
const COUNT = 12;
const SHARDS = 2;

interface RefPoint {
  id: number;
  vector: number[];
  payload: { color: string; n: number; note?: string };
}

const points: RefPoint[] = Array.from({ length: COUNT }, (_, i) => ({
  id: i + 1,
  vector: [i + 1, (i % 3) - 1, 0.5 * i, 2 - i],
  payload: { color: i % 3 === 0 ? 'red' : 'blue', n: i, ...(i % 4 === 0 ? { note: 'x'.repeat(i) } : {}) },
}));

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));
const none = (): Hardware => Object.fromEntries(HARDWARE_USAGE_FIELDS.map((k) => [k, 0])) as Hardware;
const usage = (partial: Partial<Hardware>): Hardware => ({ ...none(), ...partial });
const dot = (a: number[], b: number[]): number => a.reduce((s, x, i) => s + x * b[i], 0);

/** The answer's usage: Qdrant's Usage with every HardwareUsage field and no inference usage. */
function hardwareOf(t: Test, response: RawResponse): Hardware {
  const body = response.body as { usage?: { hardware: Hardware; inference: unknown } };
  t.ok(body.usage, 'answer carries usage');
  t.same(Object.keys(body.usage!).sort(), ['hardware', 'inference'], 'Usage fields');
  t.equal(body.usage!.inference, null, 'no inference usage');
  t.same(Object.keys(body.usage!.hardware).sort(), [...HARDWARE_USAGE_FIELDS].sort(), 'HardwareUsage fields');
  return body.usage!.hardware;
}

const server = await startServer({ workers: 2, env: { QDRANT__SERVICE__HARDWARE_REPORTING: 'true' } });
stopAtEnd(t, server);
/** Every measured answer's usage, summed: what the collection's totals must show. */
const reported = none();
function tally(h: Hardware): void {
  for (const key of HARDWARE_USAGE_FIELDS) reported[key] += h[key];
}

resultOf(t, await call(server.url, 'PUT', '/collections/hw', { vectors: { size: DIM, distance: 'Dot' }, shard_number: SHARDS }));

t.test('an answer about no points carries no usage', async (t) => {
  const info = await call(server.url, 'GET', '/collections/hw');
  t.equal(info.status, 200);
  t.notOk('usage' in (info.body as object), 'collection info has no usage');
});

t.test('creating a payload index on existing points writes nothing yet', async (t) => {
  const created = await call(server.url, 'PUT', '/collections/hw/index?wait=true', { field_name: 'color', field_schema: 'keyword' });
  t.equal(created.status, 200);
  const h = hardwareOf(t, created);
  t.same(h, none(), 'no points, nothing measured');
  tally(h);
});

t.test('upsert: vectors, payloads and indexed values written', async (t) => {
  const upserted = await call(server.url, 'PUT', '/collections/hw/points?wait=true', { points });
  t.equal(upserted.status, 200);
  const h = hardwareOf(t, upserted);
  t.same(h, usage({
    vector_io_write: COUNT * DIM * F32,
    payload_io_write: points.reduce((n, p) => n + bytes(p.payload), 0),
    payload_index_io_write: points.reduce((n, p) => n + bytes(p.payload.color), 0),
  }));
  tally(h);
});

t.test('exact search: every stored vector compared, the payloads of each shard\'s hits read', async (t) => {
  const query = [1, 0.5, -1, 0.25];
  const response = await call(server.url, 'POST', '/collections/hw/points/search', { vector: query, limit: 3, with_payload: true, params: { exact: true } });
  const hits = resultOf<{ id: number; score: number }[]>(t, response);
  const ranked = (list: RefPoint[]) => [...list].sort((a, b) => dot(b.vector, query) - dot(a.vector, query) || a.id - b.id).slice(0, 3);
  t.same(hits.map((h) => h.id), ranked(points).map((p) => p.id), 'the exact top 3');
  // Each shard answers its own top 3 with their payloads; the collection keeps the best 3 of those.
  const perShard = Array.from({ length: SHARDS }, (_, shard) => ranked(points.filter((p) => shardOf(p.id, SHARDS) === shard))).flat();
  const h = hardwareOf(t, response);
  t.same(h, usage({ cpu: COUNT * DIM * F32, payload_io_read: perShard.reduce((n, p) => n + bytes(p.payload), 0) }));
  tally(h);
});

t.test('scroll filtered on an unindexed key: every payload checked, none returned', async (t) => {
  const response = await call(server.url, 'POST', '/collections/hw/points/scroll', { filter: { must: [{ key: 'n', range: { gte: 6 } }] }, limit: 100, with_payload: false });
  const { points: found } = resultOf<{ points: { id: number }[] }>(t, response);
  t.same(found.map((p) => p.id), points.filter((p) => p.payload.n >= 6).map((p) => p.id));
  const h = hardwareOf(t, response);
  t.same(h, usage({ payload_io_read: points.reduce((n, p) => n + bytes(p.payload), 0) }));
  tally(h);
});

t.test('count filtered on the indexed key: the index answers with its matching offsets', async (t) => {
  const response = await call(server.url, 'POST', '/collections/hw/points/count', { filter: { must: [{ key: 'color', match: { value: 'red' } }] }, exact: true });
  const reds = points.filter((p) => p.payload.color === 'red').length;
  t.same(resultOf(t, response), { count: reds });
  const h = hardwareOf(t, response);
  t.same(h, usage({ payload_index_io_read: reds * 4 }));
  tally(h);
});

t.test('retrieve with vectors: the vectors read', async (t) => {
  const response = await call(server.url, 'POST', '/collections/hw/points', { ids: [1, 2, 3], with_vector: true, with_payload: false });
  t.equal(resultOf<unknown[]>(t, response).length, 3);
  const h = hardwareOf(t, response);
  t.same(h, usage({ vector_io_read: 3 * DIM * F32 }));
  tally(h);
});

t.test('a failed search still reports what it used', async (t) => {
  const response = await call(server.url, 'POST', '/collections/hw/points/search', { vector: [1, 2], limit: 1 });
  t.equal(response.status, 400);
  const h = hardwareOf(t, response);
  t.same(h, none());
});

t.test('sparse search: products through the postings; pairs when the filter leaves few points', async (t) => {
  resultOf(t, await call(server.url, 'PUT', '/collections/sparse', { sparse_vectors: { text: {} }, shard_number: 1 }));
  const docs = [
    { id: 1, vector: { text: { indices: [1, 2, 3], values: [1, 1, 1] } }, payload: { k: 1 } },
    { id: 2, vector: { text: { indices: [2, 5], values: [2, 0.5] } }, payload: { k: 2 } },
    { id: 3, vector: { text: { indices: [3, 4, 5, 6], values: [1, 2, 3, 4] } }, payload: { k: 3 } },
  ];
  const upserted = await call(server.url, 'PUT', '/collections/sparse/points?wait=true', { points: docs });
  t.same(hardwareOf(t, upserted), usage({ vector_io_write: 9 * 8, payload_io_write: docs.reduce((n, d) => n + bytes(d.payload), 0) }), '8 bytes per sparse element');
  const query = { indices: [2, 3, 7], values: [1, 1, 1] };
  const search = await call(server.url, 'POST', '/collections/sparse/points/query', { query, using: 'text', limit: 3 });
  t.same(resultOf<{ points: { id: number }[] }>(t, search).points.map((p) => p.id), [1, 2, 3]);
  // Index 2 is in documents 1 and 2, index 3 in 1 and 3, index 7 in none.
  t.same(hardwareOf(t, search), usage({ cpu: 4 }));
  const filtered = await call(server.url, 'POST', '/collections/sparse/points/query', { query, using: 'text', limit: 3, filter: { must: [{ has_id: [3] }] } });
  t.same(resultOf<{ points: { id: number }[] }>(t, filtered).points.map((p) => p.id), [3]);
  t.same(hardwareOf(t, filtered), usage({ cpu: Math.min(3, 4) }), 'the one allowed point scored directly');
});

/** The update sent with wait=false: counted in the totals only. */
const unreported = { id: 100, vector: [1, 1, 1, 1], payload: { color: 'green', n: 100 } };

t.test('wait=false: answered before it is applied, so no usage; totals still count it', async (t) => {
  const response = await call(server.url, 'PUT', '/collections/hw/points?wait=false', { points: [unreported] });
  t.equal(response.status, 200);
  t.notOk('usage' in (response.body as object), 'no usage in an unwaited answer');
});

t.test('telemetry and metrics totals equal the answers plus the unwaited update', async (t) => {
  const expected = { ...reported };
  expected.vector_io_write += DIM * F32;
  expected.payload_io_write += bytes(unreported.payload);
  expected.payload_index_io_write += bytes(unreported.payload.color);
  const telemetry = resultOf<{ hardware: { collection_data: Record<string, Hardware> } }>(t, await call(server.url, 'GET', '/telemetry?details_level=1'));
  t.same(Object.keys(telemetry.hardware), ['collection_data'], 'HardwareTelemetry fields');
  t.same(telemetry.hardware.collection_data.hw, expected, 'per-collection totals');
  const families = await metrics(t, server);
  for (const key of HARDWARE_USAGE_FIELDS) {
    t.equal(families.get(`collection_hardware_metric_${key}`)?.type, 'counter', `${key} is a counter`);
    t.equal(sampleValue(families, `collection_hardware_metric_${key}`, { id: 'hw' }), expected[key], `collection_hardware_metric_${key}`);
  }
  const anonymous = await metrics(t, server, '?anonymize=true');
  t.equal(sampleValue(anonymous, 'collection_hardware_metric_cpu', { id: 'hw' }), undefined, 'collection name hidden');
});
