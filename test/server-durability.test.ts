// Acknowledged writes survive restarts and kill -9: the server is killed in the middle of a
// stream of wait=true upserts, restarted on the same storage, and every acknowledged point must
// be there with its payload and vector.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { startServer } from './helpers/server.js';

const DIM = 8;

function vectorOf(id: number): number[] {
  return Array.from({ length: DIM }, (_, j) => Math.sin(id * 0.37 + j) * 10);
}

t.test('kill -9 during a stream of upserts loses no acknowledged point', async (t) => {
  const server = await startServer();
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('durable', { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 3 });
  await client.updateCollectionAliases({ actions: [{ create_alias: { collection_name: 'durable', alias_name: 'steady' } }] });
  await client.createPayloadIndex('durable', { field_name: 'group', field_schema: 'integer', wait: true });

  const acknowledged = new Set<number>();
  let next = 0;
  let killed = false;
  let lastOp = 0;
  const writer = async () => {
    while (!killed) {
      const ids = [next++, next++, next++];
      try {
        const r = await client.upsert('durable', { wait: true, points: ids.map((id) => ({ id, vector: vectorOf(id), payload: { n: id, group: id % 7, tag: `p${id}` } })) });
        if (r.status === 'completed') ids.forEach((id) => acknowledged.add(id));
        lastOp = Math.max(lastOp, r.operation_id ?? 0);
      } catch {
        return; // the connection died with the server
      }
    }
  };
  const writers = [writer(), writer(), writer()];
  // Kill once a good number of writes is acknowledged, with requests still in flight.
  while (acknowledged.size < 300) await new Promise((r) => setImmediate(r));
  killed = true;
  await server.stop('SIGKILL');
  await Promise.all(writers);
  t.ok(acknowledged.size >= 300, `${acknowledged.size} points acknowledged before the kill`);

  const again = await startServer({ storage: server.storage });
  const client2 = new QdrantClient({ url: again.url, checkCompatibility: false });
  const ids = [...acknowledged];
  const found = await client2.retrieve('steady', { ids, with_payload: true, with_vector: true });
  t.equal(found.length, ids.length, 'every acknowledged point is back (read through the alias)');
  let intact = 0;
  for (const p of found) {
    const id = p.id as number;
    const v = p.vector as number[];
    const payload = p.payload as { n: number; group: number; tag: string };
    if (payload.n === id && payload.tag === `p${id}` && v.every((x, j) => Math.abs(x - vectorOf(id)[j]) < 1e-4)) intact++;
  }
  t.equal(intact, ids.length, 'with the payload and vector that were written');
  const info = await client2.getCollection('durable');
  t.ok(info.points_count! >= ids.length, 'point count covers them');
  t.ok(info.payload_schema.group, 'payload index survived');
  const grouped = await client2.count('durable', { filter: { must: [{ key: 'group', match: { value: 3 } }] }, exact: true });
  const expected = (await client2.scroll('durable', { limit: 100000, with_payload: true })).points.filter((p) => (p.payload as { group: number }).group === 3).length;
  t.equal(grouped.count, expected, 'indexed filter agrees with a scan after recovery');
  // operation ids go on increasing after the restart
  const r = await client2.upsert('durable', { wait: true, points: [{ id: 1_000_000, vector: vectorOf(1), payload: {} }] });
  t.ok((r.operation_id ?? 0) > lastOp, `operation ids continue after ${lastOp}`);
  await again.stop();
});

t.test('graceful restart keeps collections, aliases, indexes and points', async (t) => {
  const server = await startServer();
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('kept', { vectors: { a: { size: 3, distance: 'Dot' }, b: { size: 2, distance: 'Cosine' } } });
  await client.upsert('kept', { wait: true, points: [{ id: 'a3bb189e-8bf9-3888-9912-ace4e6543002', vector: { a: [1, 2, 3], b: [3, 4] }, payload: { x: 1 } }, { id: 7, vector: { a: [0, 1, 0] }, payload: { x: 2 } }] });
  await client.updateCollectionAliases({ actions: [{ create_alias: { collection_name: 'kept', alias_name: 'kept_alias' } }] });
  await client.createPayloadIndex('kept', { field_name: 'x', field_schema: 'integer', wait: true });
  const lastOp = (await client.setPayload('kept', { wait: true, points: [7], payload: { y: true } })).operation_id!;
  t.equal(await server.stop('SIGTERM'), 0, 'SIGTERM shuts down cleanly');

  const again = await startServer({ storage: server.storage });
  const client2 = new QdrantClient({ url: again.url, checkCompatibility: false });
  t.same((await client2.getCollections()).collections.map((c) => c.name), ['kept']);
  t.same((await client2.getAliases()).aliases, [{ alias_name: 'kept_alias', collection_name: 'kept' }]);
  const points = await client2.retrieve('kept_alias', { ids: [7, 'a3bb189e-8bf9-3888-9912-ace4e6543002'], with_payload: true, with_vector: true });
  t.equal(points.length, 2);
  const seven = points.find((p) => p.id === 7)!;
  t.same(seven.payload, { x: 2, y: true });
  t.same(seven.vector, { a: [0, 1, 0] }, 'a point keeps only the vectors it has');
  const uuid = points.find((p) => p.id !== 7)!;
  t.same((uuid.vector as Record<string, number[]>).b.map((x) => +x.toFixed(5)), [0.6, 0.8], 'Cosine vector stored normalised');
  t.ok((await client2.getCollection('kept')).payload_schema.x, 'index kept');
  const next = (await client2.deletePayload('kept', { wait: true, points: [7], keys: ['y'] })).operation_id!;
  t.ok(next > lastOp, `operation ids continue (${lastOp} -> ${next})`);
  await again.stop();
});
