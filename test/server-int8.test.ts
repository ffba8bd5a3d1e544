// int8 scalar quantization through the real server and Qdrant's JS client: once the optimizer
// has built the graphs (and fitted the codebook on every point, as Qdrant fits a segment's),
// `rescore: false` answers carry Qdrant's quantized scores computed here from its formulas, and
// `params.exact: true` searches the original vectors whatever the quantization params say.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import type { Distance } from '../src/engine/index.js';
import { startServer } from './helpers/server.js';
import { brief, sameHits, type Hit } from './helpers/hits.js';
import { rng } from './helpers/data.js';
import { better, score } from './helpers/reference.js';
import { codebookOf, qdrantRange, qdrantScore } from './helpers/int8-reference.js';
import { everyPoint } from './helpers/full-scan.js';

const DIM = 20;
const N = 200;
const LIMIT = 10;
const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const next = rng(43);
const vector = (): number[] => Array.from({ length: DIM }, () => Math.fround(2 * next() - 1));
const points = Array.from({ length: N }, vector);
const queries = Array.from({ length: 4 }, vector);
const name = (d: Distance): string => d.toLowerCase();

function ranked(distance: Distance, scored: Hit[]): Hit[] {
  return scored.sort((x, y) => (better(distance, x.score, y.score) ? -1 : better(distance, y.score, x.score) ? 1 : Number(x.id) - Number(y.id))).slice(0, LIMIT);
}

function normalised(v: number[]): number[] {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
}

t.test('int8 quantization: exact search reads the originals, rescore false gives Qdrant\'s int8 scores', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('sq', {
    vectors: Object.fromEntries(DISTANCES.map((d) => [name(d), { size: DIM, distance: d }])),
    quantization_config: { scalar: { type: 'int8', quantile: 0.99 } },
    shard_number: 1,
    optimizers_config: { indexing_threshold: 1 },
  });
  await client.upsert('sq', { wait: true, points: points.map((p, i) => ({ id: i + 1, vector: Object.fromEntries(DISTANCES.map((d) => [name(d), p])) })) });
  let indexed = false;
  for (let waited = 0; waited < 60_000 && !indexed; waited += 200) {
    const info = await client.getCollection('sq');
    indexed = (info.indexed_vectors_count ?? 0) >= 4 * N && info.status === 'green';
    if (!indexed) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  t.ok(indexed, 'the graphs were built');

  for (const distance of DISTANCES) {
    const using = name(distance);
    const stored = (await client.scroll('sq', { limit: N, with_vector: [using] })).points
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map((p) => Float32Array.from((p.vector as Record<string, number[]>)[using]));
    const cb = codebookOf(qdrantRange(stored, 0.99));
    for (const [qi, query] of queries.entries()) {
      const at = `${distance} q${qi}`;
      const truth = ranked(distance, points.map((p, i) => ({ id: i + 1, score: score(distance, query, p) })));
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
