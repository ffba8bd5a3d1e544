// Binary quantization's two_bits / one_and_half_bits encodings and scalar4bits / scalar8bits
// query encodings through the real server and Qdrant's JS client: the config is echoed as given,
// unrescored scores are Qdrant's (computed here by helpers/binary-reference.ts over the stored
// points), rescored answers are the exact top-k, the graphs keep their encoding across a
// restart, PATCH moves a collection from one encoding to another, and invalid values get
// Qdrant's deserialisation error (its untagged-enum form).

import t, { type Test } from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import type { BinaryEncoding, BinaryQueryEncoding, Distance } from '../src/engine/index.js';
import { startServer } from './helpers/server.js';
import { brief, sameHits, type Hit } from './helpers/hits.js';
import { assertError, call, formatErrorMessage } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { better, score } from './helpers/reference.js';
import { encodeVector, postprocess, queryScorer, vectorStats } from './helpers/binary-reference.js';
import { everyPoint } from './helpers/full-scan.js';
import { vectorName, uniformVectors, createPerDistance, waitIndexed } from './helpers/quantized-collection.js';

const DIM = 20;
const N = 256; // a power of two: the engine's last statistics refit saw every point
const LIMIT = 10;
const DISTANCES: Distance[] = ['Dot', 'Euclid', 'Manhattan'];
const next = rng(43);
const points = uniformVectors(next, N, DIM);
const queries = uniformVectors(next, 4, DIM);

function exactReference(distance: Distance, query: number[]): Hit[] {
  const scored = points.map((p, i) => ({ id: i + 1, score: score(distance, query, p) }));
  scored.sort((x, y) => (better(distance, x.score, y.score) ? -1 : better(distance, y.score, x.score) ? 1 : x.id - y.id));
  return scored.slice(0, LIMIT);
}

/** Qdrant's unrescored score of each point (by id - 1) for a query, with statistics over every point. */
function binaryScores(distance: Distance, encoding: BinaryEncoding, queryEncoding: BinaryQueryEncoding | undefined, query: number[]): number[] {
  const stats = encoding === 'one_bit' ? null : vectorStats(points, DIM);
  const scorer = queryScorer(encoding, queryEncoding, DIM, stats, Float32Array.from(query));
  return points.map((p) => postprocess(distance, scorer(encodeVector(encoding, p, DIM, stats))));
}

t.test('encodings and query encodings: echoed, Qdrant\'s scores, exact when rescored, across a restart and PATCH', async (t) => {
  const server = await startServer();
  let client = new QdrantClient({ url: server.url, checkCompatibility: false });
  const first = { binary: { encoding: 'two_bits', query_encoding: 'scalar4bits', always_ram: true } } as const;
  await createPerDistance(client, 'enc', DIM, first, points, DISTANCES);

  const check = async (t: Test, what: string, config: unknown, encoding: BinaryEncoding, queryEncoding?: BinaryQueryEncoding): Promise<void> => {
    t.same((await client.getCollection('enc')).config.quantization_config, config, `${what}: the config is echoed as given`);
    for (const [qi, query] of queries.entries()) {
      for (const distance of DISTANCES) {
        const using = vectorName(distance);
        const at = `${what}, ${distance} q${qi}`;
        const full = await client.query('enc', { query, using, limit: LIMIT, params: { hnsw_ef: N, quantization: { oversampling: N / LIMIT } } });
        sameHits(t, brief(full.points), exactReference(distance, query), `${at}: rescored by default`, 1e-5);
        const raw = await client.query('enc', { query, using, limit: LIMIT, filter: everyPoint(N + 1), params: { quantization: { rescore: false } } });
        const want = binaryScores(distance, encoding, queryEncoding, query);
        t.same(raw.points.map((p) => Math.fround(p.score)), raw.points.map((p) => want[Number(p.id) - 1]), `${at}: rescore false gives Qdrant's scores`);
      }
    }
  };

  await waitIndexed(client, 'enc', DISTANCES.length * N);
  await check(t, 'two_bits/scalar4bits', first, 'two_bits', 'scalar4bits');
  await server.stop();
  const again = await startServer({ storage: server.storage });
  t.teardown(() => again.stop());
  client = new QdrantClient({ url: again.url, checkCompatibility: false });
  await waitIndexed(client, 'enc', DISTANCES.length * N);
  await check(t, 'after a restart', first, 'two_bits', 'scalar4bits');

  const second = { binary: { encoding: 'one_and_half_bits', query_encoding: 'default' } } as const;
  await client.updateCollection('enc', { quantization_config: second });
  await waitIndexed(client, 'enc', DISTANCES.length * N);
  await check(t, 'PATCH to one_and_half_bits', second, 'one_and_half_bits');

  const third = { binary: { encoding: 'one_bit', query_encoding: 'scalar8bits' } } as const;
  await client.updateCollection('enc', { quantization_config: third });
  await waitIndexed(client, 'enc', DISTANCES.length * N);
  await check(t, 'PATCH to one_bit/scalar8bits', third, 'one_bit', 'scalar8bits');
});

t.test('vector-level configs are accepted and echoed; invalid values get Qdrant\'s format error', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const binary = { encoding: 'one_and_half_bits', query_encoding: 'binary' };
  const created = await call(server.url, 'PUT', '/collections/v', { vectors: { a: { size: 4, distance: 'Cosine', quantization_config: { binary } } } });
  t.equal(created.status, 200, 'created');
  const info = await call(server.url, 'GET', '/collections/v');
  const params = (info.body as { result: { config: { params: { vectors: { a: { quantization_config: unknown } } } } } }).result.config.params;
  t.same(params.vectors.a.quantization_config, { binary }, 'echoed as given');
  // QuantizationConfig (and its PATCH form) is an untagged enum in Qdrant: serde reports that no
  // variant matched rather than the bad value.
  for (const bad of [{ encoding: 'three_bits' }, { query_encoding: 'scalar2bits' }, { encoding: 'one_bit', query_encoding: 2 }]) {
    const response = await call(server.url, 'PUT', '/collections/bad', { vectors: { size: 4, distance: 'Dot' }, quantization_config: { binary: bad } });
    assertError(t, response, 400, formatErrorMessage('data did not match any variant of untagged enum QuantizationConfig'), JSON.stringify(bad));
    const patch = await call(server.url, 'PATCH', '/collections/v', { quantization_config: { binary: bad } });
    assertError(t, patch, 400, formatErrorMessage('data did not match any variant of untagged enum QuantizationConfigDiff'), `PATCH ${JSON.stringify(bad)}`);
  }
  t.equal((await call(server.url, 'GET', '/collections/bad')).status, 404, 'nothing was created');
});
