// int8 scalar quantization through the real server and Qdrant's JS client: once the optimizer
// has built the graphs (and fitted the codebook on every point, as Qdrant fits a segment's),
// `rescore: false` answers carry Qdrant's quantized scores computed here from its formulas, and
// `params.exact: true` searches the original vectors whatever the quantization params say.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { startServer } from './helpers/server.js';
import { brief, sameHits } from './helpers/hits.js';
import { rng } from './helpers/data.js';
import { score } from './helpers/reference.js';
import { codebookOf, qdrantRange, qdrantScore } from './helpers/int8-reference.js';
import { everyPoint } from './helpers/full-scan.js';
import { DISTANCES, vectorName, uniformVectors, createPerDistance, waitIndexed, ranked } from './helpers/quantized-collection.js';

const DIM = 20;
const N = 200;
const LIMIT = 10;
const next = rng(43);
const points = uniformVectors(next, N, DIM);
const queries = uniformVectors(next, 4, DIM);

function normalised(v: number[]): number[] {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
}

t.test('int8 quantization: exact search reads the originals, rescore false gives Qdrant\'s int8 scores', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await createPerDistance(client, 'sq', DIM, { scalar: { type: 'int8', quantile: 0.99 } }, points);
  await waitIndexed(client, 'sq', 4 * N);

  for (const distance of DISTANCES) {
    const using = vectorName(distance);
    const stored = (await client.scroll('sq', { limit: N, with_vector: [using] })).points
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map((p) => Float32Array.from((p.vector as Record<string, number[]>)[using]));
    const cb = codebookOf(qdrantRange(stored, 0.99));
    for (const [qi, query] of queries.entries()) {
      const at = `${distance} q${qi}`;
      const truth = ranked(distance, points.map((p, i) => ({ id: i + 1, score: score(distance, query, p) })), LIMIT);
      const exact = await client.query('sq', { query, using, limit: LIMIT, params: { exact: true, quantization: { rescore: false } } });
      sameHits(t, brief(exact.points), truth, `${at}: exact searches the originals`, 1e-5);

      const q = Float32Array.from(distance === 'Cosine' ? normalised(query) : query);
      const raw = await client.query('sq', { query, using, limit: LIMIT, filter: everyPoint(N + 1), params: { quantization: { rescore: false } } });
      const want = raw.points.map((p) => qdrantScore(cb, distance, q, stored[Number(p.id) - 1]));
      const close = raw.points.every((p, i) => Math.abs(p.score - want[i]) <= 1e-5 * Math.max(1, Math.abs(want[i])));
      t.ok(close, `${at}: rescore false gives Qdrant's int8 scores (${raw.points[0]?.score} vs ${want[0]})`);
    }
  }
});
