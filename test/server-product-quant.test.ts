// Product quantization (Qdrant's `quantization_config: {product: {compression}}`) through the real
// server and Qdrant's JS client: the config echoed as given; unrescored answers (Qdrant's default
// for product) score each point against its vector rebuilt from the codebook, which this test
// rebuilds itself: the optimizer fitted the codebook when it indexed the first 128 points, so
// (Qdrant's rule for up to 256 vectors) its centroids are those points' chunks, and every point
// written after (not a doubling: no new fit) is coded by the nearest centroid of each chunk; a
// rebuild after a PATCH fits on all 200 points at once; rescored answers with every point a candidate are the exact
// top-k; `ignore` searches the originals; a restart answers the same; PATCH moves int8 -> product
// -> binary; bad product configs get Qdrant's validation errors.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import type { Distance } from '../src/engine/index.js';
import { startServer } from './helpers/server.js';
import { brief, sameHits, type Hit } from './helpers/hits.js';
import { assertError, call, formatErrorMessage } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { score } from './helpers/reference.js';
import { everyPoint } from './helpers/full-scan.js';
import { DISTANCES, vectorName, uniformVectors, createPerDistance, waitIndexed, ranked } from './helpers/quantized-collection.js';

const DIM = 20;
const BUCKET = 4; // x16: five chunks of four dimensions
const N = 200;
const FITTED = 128; // written and indexed first: the codebook is fitted on them
const LIMIT = 10;
const next = rng(43);
const points = uniformVectors(next, N, DIM);
const queries = uniformVectors(next, 5, DIM);
const PRODUCT = { product: { compression: 'x16', always_ram: true } } as const;

/** The vector as the engine stores it: normalised for Cosine (in f32). */
function stored(distance: Distance, v: number[]): number[] {
  if (distance !== 'Cosine') return v;
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => Math.fround(x / norm));
}

/** Each point rebuilt from its code when the first `fitted` (<= 256) were the centroids: per chunk, the nearest (squared L2, first minimum) of the 256 centroids. */
function rebuiltPoints(distance: Distance, fitted: number): number[][] {
  const centroids = Array.from({ length: 256 }, (_, k) => (k < fitted ? stored(distance, points[k]) : new Array<number>(DIM).fill(0)));
  return points.map((p) => {
    const v = stored(distance, p);
    const out = new Array<number>(DIM);
    for (let j0 = 0; j0 < DIM; j0 += BUCKET) {
      let best = Infinity;
      let at = 0;
      centroids.forEach((c, k) => {
        let s = 0;
        for (let j = j0; j < j0 + BUCKET; j++) s += (v[j] - c[j]) ** 2;
        if (s < best) {
          best = s;
          at = k;
        }
      });
      for (let j = j0; j < j0 + BUCKET; j++) out[j] = centroids[at][j];
    }
    return out;
  });
}

const REBUILT = new Map([FITTED, N].map((fitted) => [fitted, Object.fromEntries(DISTANCES.map((d) => [d, rebuiltPoints(d, fitted)])) as Record<Distance, number[][]>]));

/** Qdrant's unrescored product score: the score against the rebuilt vector (Cosine: the normalised query's dot product). */
function productScore(distance: Distance, query: number[], i: number, fitted = FITTED): number {
  const rebuilt = REBUILT.get(fitted)![distance][i];
  return distance === 'Cosine' ? score('Dot', stored('Cosine', query), rebuilt) : score(distance, query, rebuilt);
}

const exactReference = (distance: Distance, query: number[]): Hit[] => ranked(distance, points.map((p, i) => ({ id: i + 1, score: score(distance, query, p) })), LIMIT);
const productReference = (distance: Distance, query: number[], fitted = FITTED): Hit[] => ranked(distance, points.map((_, i) => ({ id: i + 1, score: productScore(distance, query, i, fitted) })), LIMIT);

t.test('product quantization: unrescored by default, rescored, ignored, kept across a restart, PATCH int8 -> product -> binary', async (t) => {
  const server = await startServer();
  let client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await createPerDistance(client, 'pq', DIM, PRODUCT, points.slice(0, FITTED));
  await waitIndexed(client, 'pq', 4 * FITTED);
  const later = points.slice(FITTED).map((p, i) => ({ id: FITTED + i + 1, vector: Object.fromEntries(DISTANCES.map((d) => [vectorName(d), p])) }));
  await client.upsert('pq', { wait: true, points: later });

  const check = async (what: string): Promise<void> => {
    const info = await client.getCollection('pq');
    t.same(info.config.quantization_config, PRODUCT, `${what}: the config is echoed as given`);
    for (const [qi, query] of queries.entries()) {
      for (const distance of DISTANCES) {
        const using = vectorName(distance);
        const at = `${what}, ${distance} q${qi}`;
        const byDefault = await client.query('pq', { query, using, limit: LIMIT, filter: everyPoint(N + 1) });
        sameHits(t, brief(byDefault.points), productReference(distance, query), `${at}: not rescored by default, scores against the rebuilt vectors`, 1e-4);
        const graph = await client.query('pq', { query, using, limit: LIMIT, params: { hnsw_ef: N, quantization: { rescore: false } } });
        t.same(brief(graph.points).filter((h) => Math.abs(h.score - productScore(distance, query, h.id - 1)) > 1e-4 * Math.max(1, Math.abs(h.score))), [], `${at}: graph search on codes, rescore false`);
        const full = await client.query('pq', { query, using, limit: LIMIT, params: { hnsw_ef: N, quantization: { rescore: true, oversampling: N / LIMIT } } });
        sameHits(t, brief(full.points), exactReference(distance, query), `${at}: rescored with every point a candidate`, 1e-5);
        const ignored = await client.query('pq', { query, using, limit: LIMIT, filter: everyPoint(N + 1), params: { quantization: { ignore: true } } });
        sameHits(t, brief(ignored.points), exactReference(distance, query), `${at}: ignore searches the originals`, 1e-5);
        const exact = await client.query('pq', { query, using, limit: LIMIT, params: { exact: true } });
        sameHits(t, brief(exact.points), exactReference(distance, query), `${at}: params.exact searches the originals`, 1e-5);
      }
    }
  };

  await waitIndexed(client, 'pq', 4 * N);
  await check('indexed');
  await server.stop();
  const again = await startServer({ storage: server.storage });
  t.teardown(() => again.stop());
  client = new QdrantClient({ url: again.url, checkCompatibility: false });
  await waitIndexed(client, 'pq', 4 * N);
  await check('after a restart');

  await client.updateCollection('pq', { quantization_config: { scalar: { type: 'int8' } } });
  await waitIndexed(client, 'pq', 4 * N);
  t.same((await client.getCollection('pq')).config.quantization_config, { scalar: { type: 'int8' } }, 'PATCH to int8 is kept');
  await client.updateCollection('pq', { quantization_config: { product: { compression: 'x16' } } });
  await waitIndexed(client, 'pq', 4 * N);
  t.same((await client.getCollection('pq')).config.quantization_config, { product: { compression: 'x16' } }, 'PATCH to product is kept');
  const query = queries[1];
  for (const distance of DISTANCES) {
    const raw = await client.query('pq', { query, using: vectorName(distance), limit: LIMIT, filter: everyPoint(N + 1) });
    // The rebuild stores every point, then fits once on all 200: each is its own centroid.
    sameHits(t, brief(raw.points), productReference(distance, query, N), `PATCH from int8 to product: ${distance} product scores`, 1e-4);
  }
  await client.updateCollection('pq', { quantization_config: { binary: {} } });
  await waitIndexed(client, 'pq', 4 * N);
  const binary = await client.query('pq', { query, using: 'dot', limit: LIMIT, filter: everyPoint(N + 1), params: { quantization: { rescore: false } } });
  const xor = (a: number[], b: number[]) => a.reduce((n, x, j) => n + ((x > 0) !== (b[j] > 0) ? 1 : 0), 0);
  t.same(binary.points.map((p) => p.score), binary.points.map((p) => DIM - 2 * xor(query, points[Number(p.id) - 1])), 'PATCH from product to binary: binary scores');
});

t.test('product multivectors: MaxSim on per-row codes unrescored, rescored MaxSim on the stored rows', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  // 64 lists of two rows: 128 rows, all fitted as centroids (the last fit, at 64 lists, saw them all).
  const lists = Array.from({ length: 64 }, (_, i) => [points[2 * i], points[2 * i + 1]]);
  await client.createCollection('mv', {
    vectors: { size: DIM, distance: 'Dot', multivector_config: { comparator: 'max_sim' }, quantization_config: { product: { compression: 'x8' } } },
    shard_number: 1,
  });
  await client.upsert('mv', { wait: true, points: lists.map((rows, i) => ({ id: i + 1, vector: rows })) });
  const maxSim = (query: number[][], rows: number[][]): number => query.reduce((sum, q) => sum + Math.max(...rows.map((r) => score('Dot', q, r))), 0);
  for (const [qi, first] of queries.entries()) {
    const query = [first, queries[(qi + 1) % queries.length]];
    const exact = ranked('Dot', lists.map((rows, i) => ({ id: i + 1, score: maxSim(query, rows) })), LIMIT);
    // Every row is its own centroid, so MaxSim on codes equals MaxSim on the rows.
    const raw = await client.query('mv', { query, limit: LIMIT });
    sameHits(t, brief(raw.points), exact, `q${qi}: unrescored MaxSim on codes`, 1e-4);
    const full = await client.query('mv', { query, limit: LIMIT, params: { quantization: { rescore: true, oversampling: 64 / LIMIT } } });
    sameHits(t, brief(full.points), exact, `q${qi}: rescored MaxSim`, 1e-5);
  }
});

t.test('product configs: Qdrant\'s validation errors, every compression accepted, vector level and PATCH', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const put = (body: unknown) => call(server.url, 'PUT', '/collections/c', body);
  // QuantizationConfig is an untagged enum in Qdrant: serde reports no variant's own error (a
  // Qdrant user's report of this message: a scalar config given a `compression` field).
  const untagged = formatErrorMessage('data did not match any variant of untagged enum QuantizationConfig');
  assertError(t, await put({ vectors: { size: 4, distance: 'Dot' }, quantization_config: { product: { compression: 'x2' } } }), 400, untagged, 'an unknown compression');
  assertError(t, await put({ vectors: { size: 4, distance: 'Dot' }, quantization_config: { product: {} } }), 400, untagged, 'no compression');
  // Inside `vectors` (itself untagged: one vector or a map of named ones) the outer enum is named.
  assertError(t, await put({ vectors: { v: { size: 4, distance: 'Dot', quantization_config: { product: { compression: 16 } } } } }), 400,
    formatErrorMessage('data did not match any variant of untagged enum VectorsConfig'), 'a compression that is not a string, vector level');
  t.equal((await call(server.url, 'GET', '/collections/c')).status, 404, 'nothing was created');
  for (const compression of ['x4', 'x8', 'x16', 'x32', 'x64']) {
    const config = { product: { compression, always_ram: false, memory: 'cached' } };
    const created = await put({ vectors: { v: { size: 5, distance: 'Euclid', quantization_config: config } } });
    t.equal(created.status, 200, `${compression} is accepted`);
    const info = await call(server.url, 'GET', '/collections/c');
    t.same((info.body as { result: { config: { params: { vectors: { v: { quantization_config: unknown } } } } } }).result.config.params.vectors.v.quantization_config, config, `${compression}: echoed as given at vector level`);
    t.equal((await call(server.url, 'PUT', '/collections/c/points?wait=true', { points: [{ id: 1, vector: { v: [1, 2, 3, 4, 5] } }] })).status, 200, `${compression}: a point is stored`);
    const found = await call(server.url, 'POST', '/collections/c/points/query', { query: [1, 2, 3, 4, 5], using: 'v' });
    t.same((found.body as { result: { points: { id: number; score: number }[] } }).result.points.map((p) => [p.id, p.score]), [[1, 0]], `${compression}: one point, its own centroid, distance 0`);
    t.equal((await call(server.url, 'DELETE', '/collections/c')).status, 200);
  }
  t.equal((await put({ vectors: { size: 4, distance: 'Dot' } })).status, 200);
  assertError(t, await call(server.url, 'PATCH', '/collections/c', { quantization_config: { product: { compression: 'x128' } } }), 400,
    formatErrorMessage('data did not match any variant of untagged enum QuantizationConfigDiff'), 'PATCH with an unknown compression');
  t.equal((await call(server.url, 'PATCH', '/collections/c', { quantization_config: { product: { compression: 'x32' } } })).status, 200, 'PATCH to product');
  const info = await call(server.url, 'GET', '/collections/c');
  t.same((info.body as { result: { config: { quantization_config: unknown } } }).result.config.quantization_config, { product: { compression: 'x32' } }, 'the PATCH is kept');
});
