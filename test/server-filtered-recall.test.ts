// Filtered search through the real server on 50000 points, against exact brute force computed
// here: recall@10 at 50%, 10% and 1% selectivity on the HNSW path (full_scan_threshold at its minimum, 10 KiB, so
// even the 1% set goes through the graph with the allow-bitset), and exact answers where the
// filtered set is small enough for Qdrant's default full_scan_threshold to choose an exact scan.
// Each filter runs on an indexed key (`bucket`) and on the same values under an unindexed key
// (`plain`), whose condition the search checks on the points it reaches.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { clustered, row } from './helpers/data.js';
import { bruteForce, recall } from './helpers/reference.js';
import { startServer } from './helpers/server.js';

const N = 50000;
const DIM = 32;
const QUERIES = 40;
const data = clustered(N + QUERIES, DIM, 40, 2024);
const bucket = (i: number) => i % 100; // bucket < s*100 selects a share s of the points

t.test('filtered HNSW recall on 50000 points at 50%, 10% and 1% selectivity', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  for (const [name, fullScanThreshold] of [['graph', 10], ['default', undefined]] as const) {
    await client.createCollection(name, {
      vectors: { size: DIM, distance: 'Euclid' },
      shard_number: 2,
      hnsw_config: fullScanThreshold === undefined ? undefined : { full_scan_threshold: fullScanThreshold },
    });
    await client.createPayloadIndex(name, { field_name: 'bucket', field_schema: 'integer', wait: true });
    for (let start = 0; start < N; start += 5000) {
      const points = Array.from({ length: 5000 }, (_, j) => start + j).map((i) => ({ id: i, vector: Array.from(row(data, DIM, i)), payload: { bucket: bucket(i), plain: bucket(i) } }));
      await client.upsert(name, { wait: true, points });
    }
  }
  const queries = Array.from({ length: QUERIES }, (_, q) => Array.from(row(data, DIM, N + q)));

  for (const key of ['bucket', 'plain']) {
    for (const share of [0.5, 0.1, 0.01]) {
      const allow = (i: number) => bucket(i) < share * 100;
      const filter = { must: [{ key, range: { lt: share * 100 } }] };
      let sum = 0;
      for (const query of queries) {
        const { points } = await client.query('graph', { query, filter, limit: 10, params: { hnsw_ef: 128 } });
        if (!points.every((p) => allow(Number(p.id)))) t.fail('a hit outside the filter');
        sum += recall(points.map((p) => Number(p.id)), bruteForce('Euclid', data.subarray(0, N * DIM), DIM, query, 10, allow));
      }
      t.ok(sum / QUERIES >= 0.95, `HNSW filtered on ${key} at ${share * 100}% selectivity: recall@10 ${(sum / QUERIES).toFixed(3)} >= 0.95`);
    }

    // 500 points of 32 floats are 62.5 KiB, well under the default full_scan_threshold (10000 KiB):
    // the filtered set is scanned exactly, so every answer is the exact one.
    const filter = { must: [{ key, match: { value: 7 } }] };
    for (const query of queries.slice(0, 10)) {
      const { points } = await client.query('default', { query, filter, limit: 10 });
      t.same(points.map((p) => Number(p.id)), bruteForce('Euclid', data.subarray(0, N * DIM), DIM, query, 10, (i) => bucket(i) === 7), `small filtered set on ${key}: exact answer`);
    }
  }
});
