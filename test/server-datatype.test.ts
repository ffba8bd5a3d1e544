// Vector datatypes (Qdrant's `datatype: float16 | uint8`) through the real server and Qdrant's JS
// client: the collection info reports the datatype; points come back converted as Qdrant returns
// them (float16 rounded, Cosine normalised first; uint8 truncated and saturated, not
// normalised); searches on every distance, dense and multivector, score over the converted
// vectors exactly as a reference computed here (the query converted too); the graph built by the
// optimizer and persisted with the datatype serves the same answers after a restart; telemetry
// counts bytes in the datatype; float16 overflows are refused.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import type { Datatype, Distance } from '../src/engine/index.js';
import { startServer } from './helpers/server.js';
import { brief, sameHits, type Hit } from './helpers/hits.js';
import { call } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { storedForm, storedScore, toHalf } from './helpers/datatype.js';
import { better } from './helpers/reference.js';

const DIM = 8;
const N = 300;
const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const TYPES: Exclude<Datatype, 'float32'>[] = ['float16', 'uint8'];
const next = rng(77);

/** float16: values around ±2 with some tiny ones; uint8: -20..280 with fractions (out-of-range values saturate). */
function randomVector(datatype: Datatype): number[] {
  return Array.from({ length: DIM }, (_, j) => {
    const x = next();
    if (datatype === 'uint8') return Math.fround(-20 + 300 * x);
    return Math.fround(j === 0 ? (x - 0.5) * 1e-5 : 4 * x - 2);
  });
}

const points = new Map(TYPES.map((d) => [d, Array.from({ length: N }, () => ({ dense: randomVector(d), rows: [randomVector(d), randomVector(d)] }))]));
const queries = new Map(TYPES.map((d) => [d, Array.from({ length: 8 }, () => randomVector(d))]));
const names = DISTANCES.map((d) => d.toLowerCase());

function reference(datatype: Datatype, distance: Distance, query: number[], limit: number): Hit[] {
  const q = storedForm(datatype, distance, query);
  const scored = points.get(datatype as 'float16')!.map((p, i) => ({ id: i + 1, score: storedScore(datatype, distance, q, storedForm(datatype, distance, p.dense)) }));
  scored.sort((x, y) => (better(distance, x.score, y.score) ? -1 : better(distance, y.score, x.score) ? 1 : x.id - y.id));
  return scored.slice(0, limit);
}

/** Qdrant's MaxSim over converted rows (Dot), for the multivector vector. */
function maxSimReference(datatype: Datatype, query: number[], limit: number): Hit[] {
  const q = storedForm(datatype, 'Dot', query);
  const scored = points.get(datatype as 'float16')!.map((p, i) => ({
    id: i + 1,
    score: Math.max(...p.rows.map((r) => storedScore(datatype, 'Dot', q, storedForm(datatype, 'Dot', r)))),
  }));
  scored.sort((x, y) => y.score - x.score || x.id - y.id);
  return scored.slice(0, limit);
}

t.test('float16 and uint8 vectors: stored converted, scored over converted values, persisted', async (t) => {
  const server = await startServer();
  let client = new QdrantClient({ url: server.url, checkCompatibility: false });
  for (const datatype of TYPES) {
    await client.createCollection(datatype, {
      vectors: {
        ...Object.fromEntries(DISTANCES.map((distance) => [distance.toLowerCase(), { size: DIM, distance, datatype }])),
        multi: { size: DIM, distance: 'Dot', datatype, multivector_config: { comparator: 'max_sim' } },
      },
      shard_number: 2,
      optimizers_config: { indexing_threshold: 1 },
    });
    const all = points.get(datatype)!;
    await client.upsert(datatype, {
      wait: true,
      points: all.map((p, i) => ({ id: i + 1, vector: { ...Object.fromEntries(names.map((n) => [n, p.dense])), multi: p.rows } })),
    });
    const info = await client.getCollection(datatype);
    const vectors = info.config.params.vectors as Record<string, { datatype?: string }>;
    t.same(Object.values(vectors).map((v) => v.datatype), [...names, 'multi'].map(() => datatype), `${datatype}: the collection info reports the datatype`);
  }

  const waitIndexed = async (name: string): Promise<void> => {
    // Each of the 5 named vectors is linked by the optimizer (indexing_threshold 1 KiB).
    let indexed = 0;
    for (let waited = 0; waited < 60_000; waited += 200) {
      const info = await client.getCollection(name);
      indexed = info.indexed_vectors_count ?? 0;
      if (indexed >= 5 * N && info.status === 'green') return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    t.fail(`${name}: only ${indexed} vectors indexed`);
  };

  const check = async (what: string): Promise<void> => {
    for (const datatype of TYPES) {
      const all = points.get(datatype)!;
      const got = await client.retrieve(datatype, { ids: [1, 2, 3], with_vector: true });
      for (const p of got) {
        const sent = all[Number(p.id) - 1];
        const vector = p.vector as Record<string, number[] | number[][]>;
        for (const distance of DISTANCES) {
          const want = storedForm(datatype, distance, sent.dense);
          const back = (vector[distance.toLowerCase()] as number[]).map((x) => Math.fround(x));
          // float16 Cosine: normalised in f32 first, so a value may round to the neighbouring half.
          const ok = back.every((x, j) => x === want[j] || (datatype === 'float16' && distance === 'Cosine' && toHalf(x) === x && Math.abs(x - want[j]) <= Math.abs(want[j]) * 2 ** -10));
          t.ok(ok, `${what}, ${datatype} ${distance}: point ${p.id} comes back converted (${back} vs ${[...want]})`);
        }
        t.same((vector.multi as number[][]).map((r) => r.map((x) => Math.fround(x))), sent.rows.map((r) => [...storedForm(datatype, 'Dot', r)]), `${what}, ${datatype}: the multivector comes back converted`);
      }
      for (const [qi, query] of queries.get(datatype)!.entries()) {
        for (const distance of DISTANCES) {
          const using = distance.toLowerCase();
          const want = reference(datatype, distance, query, 10);
          const tolerance = datatype === 'uint8' ? 1e-6 : 1e-4;
          const exact = await client.query(datatype, { query, using, limit: 10, params: { exact: true } });
          sameHits(t, brief(exact.points), want, `${what}, ${datatype} ${distance} q${qi}: exact search equals the reference`, tolerance);
          const graph = await client.query(datatype, { query, using, limit: 10, params: { hnsw_ef: 128 } });
          sameHits(t, brief(graph.points), want, `${what}, ${datatype} ${distance} q${qi}: the graph finds the same`, tolerance);
        }
        const multi = await client.query(datatype, { query: [query], using: 'multi', limit: 5, params: { exact: true } });
        sameHits(t, brief(multi.points), maxSimReference(datatype, query, 5), `${what}, ${datatype} q${qi}: MaxSim over converted rows`, datatype === 'uint8' ? 1e-6 : 1e-4);
      }
    }
  };

  for (const datatype of TYPES) await waitIndexed(datatype);
  await check('indexed');

  const telemetry = await call(server.url, 'GET', '/telemetry?details_level=2');
  const collections = (telemetry.body as { result: { collections: { collections: { id: string; shards: { local: { vectors_size_bytes: number } }[] }[] } } }).result.collections.collections;
  for (const datatype of TYPES) {
    const bytes = collections.find((c) => c.id === datatype)!.shards.reduce((n, s) => n + s.local.vectors_size_bytes, 0);
    const element = datatype === 'float16' ? 2 : 1;
    t.equal(bytes, (4 * N + 2 * N) * DIM * element, `${datatype}: telemetry counts ${element} byte(s) per component`);
  }

  // Refused: float16 values that would be infinities (turbo4: server-turbo4.test.ts).
  const huge = await call(server.url, 'PUT', '/collections/float16/points?wait=true', { points: [{ id: 1, vector: { dot: [1, 2, 3, 70000, 5, 6, 7, 8] } }] });
  t.same([huge.status, (huge.body as { status: { error: string } }).status.error], [400, "Wrong input: value 70000 at index 3 of vector 'dot' is outside the float16 range (its magnitude must be below 65520, which rounds to at most 65504)"], 'a float16 overflow is refused');
  const largest = await call(server.url, 'PUT', '/collections/float16/points?wait=true', { points: [{ id: N + 1, vector: { dot: [65519, -65519, 0, 0, 0, 0, 0, 1e-8] } }] });
  t.equal(largest.status, 200, 'values rounding to ±65504 are stored');
  const back = await client.retrieve('float16', { ids: [N + 1], with_vector: true });
  t.same((back[0].vector as Record<string, number[]>).dot, [65504, -65504, 0, 0, 0, 0, 0, toHalf(1e-8)], 'as ±65504 (and a subnormal half)');
  await client.delete('float16', { wait: true, points: [N + 1] });

  await server.stop();
  const again = await startServer({ storage: server.storage });
  t.teardown(() => again.stop());
  client = new QdrantClient({ url: again.url, checkCompatibility: false });
  for (const datatype of TYPES) await waitIndexed(datatype);
  await check('after a restart');
});
