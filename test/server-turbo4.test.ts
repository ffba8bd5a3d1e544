// The turbo4 datatype through the real server: the collection info echoes it as given; searches on
// every distance score the stored 4-bit records as Qdrant's estimator does (a JS reference of its
// rotation, Normal-mode codes and scoring, helpers/turbo-reference); retrieve returns the
// dequantized vector rotated back, as Qdrant's turbo4 storage returns it; a payload update leaves
// the vector as it was; the graph the optimizer builds, a restart and a snapshot upload all serve
// the same answers (a quantization on top: server-turbo4-quantized.test.ts; turbo4 multivectors:
// server-turbo4-multivector.test.ts).

import t from 'tap';
import type { Distance } from '../src/engine/index.js';
import { startServer } from './helpers/server.js';
import { asF32, brief, sameHits, type Hit } from './helpers/hits.js';
import { call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { Turbo4Fixture } from './helpers/turbo4-fixture.js';
import { dequantize, normalModel } from './helpers/turbo-reference.js';

const DIM = 24;
const N = 200;
const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const names = DISTANCES.map((d) => d.toLowerCase());
const next = rng(415);
const vectorOf = () => Array.from({ length: DIM }, () => Math.fround(4 * next() - 2));
const points = Array.from({ length: N }, vectorOf);
const queries = Array.from({ length: 4 }, vectorOf);

const fixture = new Turbo4Fixture(DIM, DISTANCES, points);

function reference(distance: Distance, query: number[], limit: number): Hit[] {
  return fixture.ranked(distance, query).slice(0, limit);
}

t.test('turbo4 vectors: config echo, scores on records, read-back, payload updates, restart, snapshot', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const base = server.url;
  const vectors = { ...Object.fromEntries(DISTANCES.map((distance) => [distance.toLowerCase(), { size: DIM, distance, datatype: 'turbo4' }])), plain: { size: DIM, distance: 'Dot' } };
  resultOf(t, await call(base, 'PUT', '/collections/t4', { vectors, optimizers_config: { indexing_threshold: 1 } }));
  const info = resultOf<{ config: { params: { vectors: Record<string, unknown> } } }>(t, await call(base, 'GET', '/collections/t4'));
  t.same(info.config.params.vectors, {
    ...Object.fromEntries(DISTANCES.map((distance) => [distance.toLowerCase(), { size: DIM, distance, datatype: 'turbo4' }])),
    plain: { size: DIM, distance: 'Dot' },
  }, 'the collection info echoes the datatype as given');
  resultOf(t, await call(base, 'PUT', '/collections/t4/points?wait=true', {
    points: points.map((p, i) => ({ id: i + 1, vector: { ...Object.fromEntries(names.map((n) => [n, p])), plain: p }, payload: { i } })),
  }));

  const check = async (collection: string, what: string): Promise<void> => {
    const got = resultOf<{ id: number; vector: Record<string, number[]> }[]>(t, await call(base, 'POST', `/collections/${collection}/points`, { ids: [1, 2, 3], with_vector: true }));
    for (const p of got) {
      for (const distance of DISTANCES) {
        const model = normalModel(distance, DIM);
        const want = dequantize(model, fixture.records.get(distance)![p.id - 1]);
        const back = p.vector[distance.toLowerCase()];
        const worst = Math.max(...back.map((x, j) => Math.abs(x - want[j])));
        t.ok(back.length === DIM && worst < 1e-5, `${what}, ${distance}: point ${p.id} comes back dequantized and rotated back (worst error ${worst.toExponential(2)})`);
      }
      t.same(asF32(p.vector.plain), points[p.id - 1], `${what}: the float32 vector beside them is kept as given`);
    }
    for (const [qi, query] of queries.entries()) {
      for (const distance of DISTANCES) {
        const using = distance.toLowerCase();
        const want = reference(distance, query, 10);
        const exact = resultOf<{ points: { id: number; score: number }[] }>(t, await call(base, 'POST', `/collections/${collection}/points/query`, { query, using, limit: 10, params: { exact: true } }));
        sameHits(t, brief(exact.points), want, `${what}, ${distance} q${qi}: exact search scores the records as Qdrant does`, 1e-4);
        const graph = resultOf<{ points: { id: number; score: number }[] }>(t, await call(base, 'POST', `/collections/${collection}/points/query`, { query, using, limit: 10, params: { hnsw_ef: 128 } }));
        sameHits(t, brief(graph.points), want, `${what}, ${distance} q${qi}: the graph finds the same`, 1e-4);
      }
    }
  };

  await check('t4', 'stored');

  for (let waited = 0; ; waited += 200) {
    const state = resultOf<{ indexed_vectors_count: number; status: string }>(t, await call(base, 'GET', '/collections/t4'));
    if (state.indexed_vectors_count >= 5 * N && state.status === 'green') break;
    if (waited > 60_000) {
      t.fail(`only ${state.indexed_vectors_count} vectors indexed`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await check('t4', 'indexed');
  // A payload update restages the point's record: its vectors must not be encoded again.
  resultOf(t, await call(base, 'POST', '/collections/t4/points/payload?wait=true', { payload: { touched: true }, points: [1, 2, 3] }));
  await check('t4', 'after a payload update');

  const telemetry = resultOf<{ collections: { collections: { id: string; shards: { local: { vectors_size_bytes: number } }[] }[] } }>(t, await call(base, 'GET', '/telemetry?details_level=2'));
  const bytes = telemetry.collections.collections.find((c) => c.id === 't4')!.shards.reduce((n, s) => n + s.local.vectors_size_bytes, 0);
  t.equal(bytes, N * (4 * Math.ceil(DIM / 2) + DIM * 4), 'telemetry counts ceil(dim / 2) bytes per turbo4 vector (4 per float32 component)');

  const snapshot = resultOf<{ name: string }>(t, await call(base, 'POST', '/collections/t4/snapshots?wait=true'));
  const archive = new Uint8Array(await (await fetch(`${base}/collections/t4/snapshots/${snapshot.name}`)).arrayBuffer());
  const form = new FormData();
  form.append('snapshot', new Blob([Buffer.from(archive)]), 'snapshot.tar');
  const uploaded = await fetch(`${base}/collections/restored/snapshots/upload?wait=true`, { method: 'POST', body: form });
  t.equal(uploaded.status, 200, 'the snapshot uploads into a new collection');
  await check('restored', 'restored from a snapshot');

  await server.stop();
  const again = await startServer({ storage: server.storage });
  stopAtEnd(t, again);
  const echo = resultOf<{ config: { params: { vectors: Record<string, { datatype?: string }> } } }>(t, await call(again.url, 'GET', '/collections/t4'));
  t.same(Object.values(echo.config.params.vectors).map((v) => v.datatype ?? null), ['turbo4', 'turbo4', 'turbo4', 'turbo4', null], 'the datatype survives a restart');
  for (const [qi, query] of queries.entries()) {
    for (const distance of DISTANCES) {
      const got = resultOf<{ points: { id: number; score: number }[] }>(t, await call(again.url, 'POST', '/collections/t4/points/query', { query, using: distance.toLowerCase(), limit: 10, params: { hnsw_ef: 128 } }));
      sameHits(t, brief(got.points), reference(distance, query, 10), `after a restart, ${distance} q${qi}`, 1e-4);
    }
  }
});
