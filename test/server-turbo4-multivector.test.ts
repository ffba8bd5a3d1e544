// turbo4 multivectors through the real server, as Qdrant 1.19 serves them (its test_turbo4.py
// creates a `datatype: turbo4` vector with `multivector_config: {comparator: max_sim}`): the
// collection info echoes both; /points/query with a list scores MaxSim on the stored 4-bit records
// as Qdrant's estimator does (a JS reference, helpers/turbo4-lists) for every distance, exact and
// through the graph the optimizer builds; retrieve returns every row dequantized and rotated back;
// a payload update leaves the records as they were; a snapshot upload and a restart serve the same.

import t from 'tap';
import type { Distance } from '../src/engine/index.js';
import { startServer } from './helpers/server.js';
import { brief, sameHits, type Hit } from './helpers/hits.js';
import { call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { Turbo4Lists } from './helpers/turbo4-lists.js';

const DIM = 20;
const N = 120;
const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const next = rng(2719);
const rowsOf = (count: number) => Array.from({ length: count }, () => Array.from({ length: DIM }, () => Math.fround(4 * next() - 2)));
const lists = Array.from({ length: N }, (_, i) => rowsOf(1 + (i % 4)));
const queries = Array.from({ length: 3 }, (_, i) => rowsOf(1 + (i % 3)));

const refs = new Map(DISTANCES.map((distance) => {
  const ref = new Turbo4Lists(distance, DIM);
  lists.forEach((list, i) => ref.store(i + 1, list.flat()));
  return [distance, ref];
}));

const reference = (distance: Distance, query: number[][], limit: number): Hit[] =>
  refs.get(distance)!.ranked(query.flat(), limit).map((x) => ({ id: x.key, score: x.score }));

t.test('turbo4 multivectors: config echo, MaxSim on records, read-back, payload update, snapshot, restart', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const base = server.url;
  const params = (distance: Distance) => ({ size: DIM, distance, datatype: 'turbo4', multivector_config: { comparator: 'max_sim' } });
  const vectors = Object.fromEntries(DISTANCES.map((d) => [d.toLowerCase(), params(d)]));
  // One shard, so its 120 points' records (10 bytes each) pass the 1 KB indexing threshold.
  resultOf(t, await call(base, 'PUT', '/collections/m4', { vectors, shard_number: 1, optimizers_config: { indexing_threshold: 1 } }));
  const info = resultOf<{ config: { params: { vectors: Record<string, unknown> } } }>(t, await call(base, 'GET', '/collections/m4'));
  t.same(info.config.params.vectors, vectors, 'the collection info echoes the datatype and the multivector config');
  resultOf(t, await call(base, 'PUT', '/collections/m4/points?wait=true', {
    points: lists.map((list, i) => ({ id: i + 1, vector: Object.fromEntries(DISTANCES.map((d) => [d.toLowerCase(), list])), payload: { i } })),
  }));

  const check = async (at: string, collection: string, what: string): Promise<void> => {
    const got = resultOf<{ id: number; vector: Record<string, number[][]> }[]>(t, await call(at, 'POST', `/collections/${collection}/points`, { ids: [1, 2, 4], with_vector: true }));
    for (const p of got) {
      for (const distance of DISTANCES) {
        const want = refs.get(distance)!.dequantized(p.id);
        const back = p.vector[distance.toLowerCase()];
        const flat = back.flat();
        const worst = flat.length === want.length ? Math.max(...flat.map((x, j) => Math.abs(x - want[j]))) : Infinity;
        t.ok(back.length === lists[p.id - 1].length && worst < 1e-5, `${what}, ${distance}: point ${p.id} comes back as ${back.length} dequantized rows (worst error ${worst.toExponential(2)})`);
      }
    }
    for (const [qi, query] of queries.entries()) {
      for (const distance of DISTANCES) {
        const using = distance.toLowerCase();
        const want = reference(distance, query, 10);
        const exact = resultOf<{ points: { id: number; score: number }[] }>(t, await call(at, 'POST', `/collections/${collection}/points/query`, { query, using, limit: 10, params: { exact: true } }));
        sameHits(t, brief(exact.points), want, `${what}, ${distance} q${qi}: exact MaxSim scores the records as Qdrant does`, 1e-4);
        const graph = resultOf<{ points: { id: number; score: number }[] }>(t, await call(at, 'POST', `/collections/${collection}/points/query`, { query, using, limit: 10, params: { hnsw_ef: 128 } }));
        sameHits(t, brief(graph.points), want, `${what}, ${distance} q${qi}: the graph finds the same`, 1e-4);
      }
    }
  };

  await check(base, 'm4', 'stored');
  for (let waited = 0; ; waited += 200) {
    const state = resultOf<{ indexed_vectors_count: number; status: string }>(t, await call(base, 'GET', '/collections/m4'));
    if (state.indexed_vectors_count > 0 && state.status === 'green') break;
    if (waited > 60_000) {
      t.fail(`only ${state.indexed_vectors_count} vectors indexed`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await check(base, 'm4', 'indexed');
  // A payload update restages the point: its lists must not be encoded again.
  resultOf(t, await call(base, 'POST', '/collections/m4/points/payload?wait=true', { payload: { touched: true }, points: [1, 2, 4] }));
  await check(base, 'm4', 'after a payload update');

  const snapshot = resultOf<{ name: string }>(t, await call(base, 'POST', '/collections/m4/snapshots?wait=true'));
  const archive = new Uint8Array(await (await fetch(`${base}/collections/m4/snapshots/${snapshot.name}`)).arrayBuffer());
  const form = new FormData();
  form.append('snapshot', new Blob([Buffer.from(archive)]), 'snapshot.tar');
  const uploaded = await fetch(`${base}/collections/restored/snapshots/upload?wait=true`, { method: 'POST', body: form });
  t.equal(uploaded.status, 200, 'the snapshot uploads into a new collection');
  await check(base, 'restored', 'restored from a snapshot');

  await server.stop();
  const again = await startServer({ storage: server.storage });
  stopAtEnd(t, again);
  const echo = resultOf<{ config: { params: { vectors: Record<string, unknown> } } }>(t, await call(again.url, 'GET', '/collections/m4'));
  t.same(echo.config.params.vectors, vectors, 'the config survives a restart');
  await check(again.url, 'm4', 'after a restart');
});
