// Binary quantization (Qdrant's `quantization_config: {binary: {}}`, one_bit encoding) through
// the real server and Qdrant's JS client: rescored answers (Qdrant's default for binary) equal an
// exact reference once every point is a candidate, `rescore: false` gives Qdrant's binary scores
// (dim - 2 * popcount(q XOR v), postprocessed per distance) computed here, `ignore` searches the
// originals; the graphs persisted with their codes answer the same after a restart (the other
// encodings and query encodings: server-binary-encodings.test.ts).

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import type { Distance } from '../src/engine/index.js';
import { startServer } from './helpers/server.js';
import { brief, sameHits, type Hit } from './helpers/hits.js';
import { rng } from './helpers/data.js';
import { better, score } from './helpers/reference.js';
import { everyPoint } from './helpers/full-scan.js';
import { DISTANCES, vectorName, uniformVectors, createPerDistance, waitIndexed } from './helpers/quantized-collection.js';

const DIM = 20;
const N = 200;
const LIMIT = 10;
const next = rng(41);
const points = uniformVectors(next, N, DIM);
const queries = uniformVectors(next, 6, DIM);

/** Qdrant's one_bit bits of a vector (value > 0), as a bit count of disagreements with another. */
function xorCount(a: number[], b: number[]): number {
  let n = 0;
  for (let i = 0; i < DIM; i++) if ((a[i] > 0) !== (b[i] > 0)) n++;
  return n;
}

/** Qdrant's binary score: internal dim - 2 * xor, shown as is (Cosine, Dot), sqrt(|s|) (Euclid) or |s| (Manhattan). */
function binaryScore(distance: Distance, query: number[], stored: number[]): number {
  const internal = DIM - 2 * xorCount(query, stored);
  if (distance === 'Euclid') return Math.fround(Math.sqrt(Math.abs(internal)));
  return distance === 'Manhattan' ? Math.abs(internal) : internal;
}

function exactReference(distance: Distance, query: number[]): Hit[] {
  const scored = points.map((p, i) => ({ id: i + 1, score: score(distance, query, p) }));
  scored.sort((x, y) => (better(distance, x.score, y.score) ? -1 : better(distance, y.score, x.score) ? 1 : x.id - y.id));
  return scored.slice(0, LIMIT);
}

/** The best LIMIT internal binary scores (dim - 2 * xor, bigger is closer). */
function topInternal(query: number[]): number[] {
  return points.map((p) => DIM - 2 * xorCount(query, p)).sort((a, b) => b - a).slice(0, LIMIT);
}

t.test('binary quantization: rescored, unrescored and ignored searches, kept across a restart', async (t) => {
  const server = await startServer();
  let client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await createPerDistance(client, 'bq', DIM, { binary: { always_ram: true } }, points);

  const check = async (what: string): Promise<void> => {
    const info = await client.getCollection('bq');
    t.same(info.config.quantization_config, { binary: { always_ram: true } }, `${what}: the config is echoed as given`);
    for (const [qi, query] of queries.entries()) {
      for (const distance of DISTANCES) {
        const using = vectorName(distance);
        const at = `${what}, ${distance} q${qi}`;
        // Every point a candidate (oversampling N / LIMIT): the rescored top-k is the exact one.
        const full = await client.query('bq', { query, using, limit: LIMIT, params: { hnsw_ef: N, quantization: { oversampling: N / LIMIT } } });
        sameHits(t, brief(full.points), exactReference(distance, query), `${at}: rescored by default`, 1e-5);
        const explicit = await client.query('bq', { query, using, limit: LIMIT, params: { hnsw_ef: N, quantization: { rescore: true, oversampling: N / LIMIT } } });
        sameHits(t, brief(explicit.points), exactReference(distance, query), `${at}: rescore true`, 1e-5);
        const ignored = await client.query('bq', { query, using, limit: LIMIT, params: { exact: true, quantization: { ignore: true } } });
        sameHits(t, brief(ignored.points), exactReference(distance, query), `${at}: ignore searches the originals`, 1e-5);
        const exactRaw = await client.query('bq', { query, using, limit: LIMIT, params: { exact: true, quantization: { rescore: false } } });
        sameHits(t, brief(exactRaw.points), exactReference(distance, query), `${at}: exact searches the originals whatever rescore says`, 1e-5);
        const raw = await client.query('bq', { query, using, limit: LIMIT, filter: everyPoint(N + 1), params: { quantization: { rescore: false } } });
        t.same(raw.points.map((p) => Math.fround(p.score)), raw.points.map((p) => binaryScore(distance, query, points[Number(p.id) - 1])), `${at}: rescore false gives Qdrant's binary scores`);
        t.same(raw.points.map((p) => DIM - 2 * xorCount(query, points[Number(p.id) - 1])).sort((a, b) => b - a), topInternal(query), `${at}: the top ${LIMIT} by binary score`);
      }
    }
  };

  await waitIndexed(client, 'bq', 4 * N);
  await check('indexed');
  await server.stop();
  const again = await startServer({ storage: server.storage });
  t.teardown(() => again.stop());
  client = new QdrantClient({ url: again.url, checkCompatibility: false });
  await waitIndexed(client, 'bq', 4 * N);
  await check('after a restart');

  // PATCH to binary on an int8 collection, and back: both answer with their own codes.
  await client.updateCollection('bq', { quantization_config: { scalar: { type: 'int8' } } });
  t.same((await client.getCollection('bq')).config.quantization_config, { scalar: { type: 'int8' } }, 'PATCH to int8 is kept');
  await client.updateCollection('bq', { quantization_config: { binary: { encoding: 'one_bit', query_encoding: 'binary' } } });
  await waitIndexed(client, 'bq', 4 * N);
  const query = queries[0];
  const raw = await client.query('bq', { query, using: 'dot', limit: LIMIT, filter: everyPoint(N + 1), params: { quantization: { rescore: false } } });
  t.same(raw.points.map((p) => p.score), raw.points.map((p) => binaryScore('Dot', query, points[Number(p.id) - 1])), 'PATCH back to binary: binary scores again');
});

t.test('binary multivectors: MaxSim on per-row codes, rescored MaxSim on the stored rows', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  const lists = points.map((p, i) => [p, points[(i * 7 + 3) % N]]);
  await client.createCollection('mv', {
    vectors: { size: DIM, distance: 'Dot', multivector_config: { comparator: 'max_sim' }, quantization_config: { binary: { encoding: 'one_bit' } } },
    shard_number: 1,
  });
  await client.upsert('mv', { wait: true, points: lists.map((rows, i) => ({ id: i + 1, vector: rows })) });
  const maxSim = (pair: (a: number[], b: number[]) => number, query: number[][], rows: number[][]): number =>
    query.reduce((sum, q) => sum + Math.max(...rows.map((r) => pair(q, r))), 0);
  for (const [qi, first] of queries.entries()) {
    const query = [first, queries[(qi + 1) % queries.length]];
    const raw = await client.query('mv', { query, limit: LIMIT, params: { quantization: { rescore: false } } });
    const codeScore = (rows: number[][]) => maxSim((a, b) => DIM - 2 * xorCount(a, b), query, rows);
    t.same(raw.points.map((p) => p.score), raw.points.map((p) => codeScore(lists[Number(p.id) - 1])), `q${qi}: unrescored scores are MaxSim on codes`);
    t.same(raw.points.map((p) => p.score).sort((a, b) => b - a), lists.map(codeScore).sort((a, b) => b - a).slice(0, LIMIT), `q${qi}: the top ${LIMIT} by it`);
    const full = await client.query('mv', { query, limit: LIMIT, params: { quantization: { oversampling: N / LIMIT } } });
    const exact = lists.map((rows, i) => ({ id: i + 1, score: maxSim((a, b) => score('Dot', a, b), query, rows) }))
      .sort((x, y) => y.score - x.score || x.id - y.id).slice(0, LIMIT);
    sameHits(t, brief(full.points), exact, `q${qi}: rescored by default, the exact MaxSim top ${LIMIT}`, 1e-5);
  }
});
