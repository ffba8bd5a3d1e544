// A quantization on top of turbo4 vectors through the real server, as Qdrant 1.19 serves it (its
// turbo4 REST tests' "Quantization on top of Turbo4 storage", its quantization guide's turbo4 +
// turbo bits1 example): created with each method, echoed as given; exact, rescored and `ignore`
// searches score the 4-bit records (a JS reference of Qdrant's rotation, Normal-mode codes and
// estimator, helpers/turbo-reference); PATCH none -> binary -> turbo -> Disabled, with searches
// correct right after each PATCH and once the optimizer has rebuilt; a restart and a snapshot
// upload keep the quantization and the answers; telemetry still counts 4 bits per component;
// turbo4 multivectors with binary and turbo on top rescore MaxSim on the records
// (helpers/turbo4-lists).

import t, { type Test } from 'tap';
import type { Distance } from '../src/engine/index.js';
import { startServer } from './helpers/server.js';
import { call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { Turbo4Lists } from './helpers/turbo4-lists.js';
import { Turbo4Fixture } from './helpers/turbo4-fixture.js';

const DIM = 24;
const N = 200;
const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid'];
const next = rng(416);
const vectorOf = () => Array.from({ length: DIM }, () => Math.fround(4 * next() - 2));
const points = Array.from({ length: N }, vectorOf);
const queries = Array.from({ length: 3 }, vectorOf);

const fixture = new Turbo4Fixture(DIM, DISTANCES, points);

/** Every point's score on its record (by id), and the ids in the distance's order. */
function reference(distance: Distance, query: number[]): { score: Map<number, number>; order: number[] } {
  const scored = fixture.ranked(distance, query);
  return { score: new Map(scored.map((s) => [s.id, s.score])), order: scored.map((s) => s.id) };
}

type Points = { points: { id: number; score: number }[] };

/** Searches of every kind on `collection` score the records: exact is the reference's top 10, rescored and ignored hits have their records' scores and find most of it. */
async function checkSearches(t: Test, base: string, collection: string, what: string): Promise<void> {
  for (const distance of DISTANCES) {
    const using = distance.toLowerCase();
    let found = 0;
    let worst = 0;
    for (const query of queries) {
      const ref = reference(distance, query);
      const top = new Set(ref.order.slice(0, 10));
      const exact = resultOf<Points>(t, await call(base, 'POST', `/collections/${collection}/points/query`, { query, using, limit: 10, params: { exact: true } }));
      t.same(exact.points.map((p) => p.id), ref.order.slice(0, 10), `${what}, ${distance}: exact search is the records' top 10`);
      for (const quantization of [{ rescore: true, oversampling: 3 }, { ignore: true }]) {
        const got = resultOf<Points>(t, await call(base, 'POST', `/collections/${collection}/points/query`, { query, using, limit: 10, params: { hnsw_ef: 128, quantization } }));
        for (const p of got.points) {
          worst = Math.max(worst, Math.abs(p.score - ref.score.get(p.id)!));
          if (top.has(p.id)) found++;
        }
      }
    }
    t.ok(worst < 1e-4, `${what}, ${distance}: rescored and ignored hits carry their records' scores (worst error ${worst.toExponential(2)})`);
    t.ok(found >= 0.8 * 2 * 10 * queries.length, `${what}, ${distance}: they find ${found} of ${2 * 10 * queries.length} of the records' top 10s`);
  }
}

async function waitGreen(t: Test, base: string, collection: string): Promise<void> {
  for (let waited = 0; ; waited += 200) {
    const state = resultOf<{ indexed_vectors_count: number; status: string }>(t, await call(base, 'GET', `/collections/${collection}`));
    if (state.indexed_vectors_count >= DISTANCES.length * N && state.status === 'green') return;
    if (waited > 60_000) {
      t.fail(`${collection}: only ${state.indexed_vectors_count} vectors indexed`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const vectors = Object.fromEntries(DISTANCES.map((distance) => [distance.toLowerCase(), { size: DIM, distance, datatype: 'turbo4' }]));
const body = { points: points.map((p, i) => ({ id: i + 1, vector: Object.fromEntries(DISTANCES.map((d) => [d.toLowerCase(), p])) })) };

t.test('created with each quantization on top of turbo4: echoed, searches score the records', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const base = server.url;
  const configs = [{ scalar: { type: 'int8', always_ram: true } }, { binary: {} }, { product: { compression: 'x4' } }, { turbo: { bits: 'bits1' } }];
  for (const [i, quantization_config] of configs.entries()) {
    const name = `c${i}`;
    t.equal(resultOf(t, await call(base, 'PUT', `/collections/${name}`, { vectors, quantization_config, shard_number: 1, optimizers_config: { indexing_threshold: 1 } })), true, `${JSON.stringify(quantization_config)}: created`);
    const info = resultOf<{ config: { quantization_config: unknown; params: { vectors: Record<string, { datatype: string }> } } }>(t, await call(base, 'GET', `/collections/${name}`));
    t.same(info.config.quantization_config, quantization_config, `${JSON.stringify(quantization_config)}: echoed as given`);
    t.ok(Object.values(info.config.params.vectors).every((v) => v.datatype === 'turbo4'), 'the vectors stay turbo4');
    resultOf(t, await call(base, 'PUT', `/collections/${name}/points?wait=true`, body));
    await checkSearches(t, base, name, `${JSON.stringify(quantization_config)}, stored`);
    await waitGreen(t, base, name);
    await checkSearches(t, base, name, `${JSON.stringify(quantization_config)}, indexed`);
  }
  // Qdrant's guide: turbo4 storage with turbo bits1 on top, at vector level.
  resultOf(t, await call(base, 'PUT', '/collections/guide', { vectors: { v: { size: DIM, distance: 'Cosine', datatype: 'turbo4', quantization_config: { turbo: { bits: 'bits1' } } } } }));
  const guide = resultOf<{ config: { params: { vectors: { v: unknown } } } }>(t, await call(base, 'GET', '/collections/guide'));
  t.same(guide.config.params.vectors.v, { size: DIM, distance: 'Cosine', datatype: 'turbo4', quantization_config: { turbo: { bits: 'bits1' } } }, 'the vector-level quantization is echoed');
});

t.test('PATCH none -> binary -> turbo -> Disabled on turbo4, then restart and snapshot', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const base = server.url;
  resultOf(t, await call(base, 'PUT', '/collections/p', { vectors, shard_number: 1, optimizers_config: { indexing_threshold: 1 } }));
  resultOf(t, await call(base, 'PUT', '/collections/p/points?wait=true', body));
  await waitGreen(t, base, 'p');
  await checkSearches(t, base, 'p', 'no quantization');
  for (const change of [{ binary: {} }, { turbo: { bits: 'bits1' } }, 'Disabled', { turbo: { bits: 'bits2' } }]) {
    resultOf(t, await call(base, 'PATCH', '/collections/p', { quantization_config: change }));
    const info = resultOf<{ config: { quantization_config: unknown } }>(t, await call(base, 'GET', '/collections/p'));
    t.same(info.config.quantization_config, change === 'Disabled' ? null : change, `PATCH ${JSON.stringify(change)}: kept`);
    await checkSearches(t, base, 'p', `right after PATCH ${JSON.stringify(change)}`);
    await waitGreen(t, base, 'p');
    await checkSearches(t, base, 'p', `rebuilt after PATCH ${JSON.stringify(change)}`);
  }

  const telemetry = resultOf<{ collections: { collections: { id: string; shards: { local: { vectors_size_bytes: number } }[] }[] } }>(t, await call(base, 'GET', '/telemetry?details_level=2'));
  const bytes = telemetry.collections.collections.find((c) => c.id === 'p')!.shards.reduce((n, s) => n + s.local.vectors_size_bytes, 0);
  t.equal(bytes, N * DISTANCES.length * Math.ceil(DIM / 2), 'telemetry counts ceil(dim / 2) bytes per turbo4 vector, quantization aside');

  const snapshot = resultOf<{ name: string }>(t, await call(base, 'POST', '/collections/p/snapshots?wait=true'));
  const archive = new Uint8Array(await (await fetch(`${base}/collections/p/snapshots/${snapshot.name}`)).arrayBuffer());
  const form = new FormData();
  form.append('snapshot', new Blob([Buffer.from(archive)]), 'snapshot.tar');
  const uploaded = await fetch(`${base}/collections/restored/snapshots/upload?wait=true`, { method: 'POST', body: form });
  t.equal(uploaded.status, 200, 'the snapshot uploads into a new collection');
  const restored = resultOf<{ config: { quantization_config: unknown } }>(t, await call(base, 'GET', '/collections/restored'));
  t.same(restored.config.quantization_config, { turbo: { bits: 'bits2' } }, 'the snapshot keeps the quantization');
  await checkSearches(t, base, 'restored', 'restored from a snapshot');

  await server.stop();
  const again = await startServer({ storage: server.storage });
  stopAtEnd(t, again);
  const kept = resultOf<{ config: { quantization_config: unknown } }>(t, await call(again.url, 'GET', '/collections/p'));
  t.same(kept.config.quantization_config, { turbo: { bits: 'bits2' } }, 'a restart keeps the quantization');
  await checkSearches(t, again.url, 'p', 'after a restart');
});

t.test('turbo4 multivectors with binary and turbo on top: MaxSim rescored and ignored on the records, after a restart too', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const base = server.url;
  const dim = 20;
  const rowsOf = (count: number) => Array.from({ length: count }, () => Array.from({ length: dim }, () => Math.fround(4 * next() - 2)));
  const lists = Array.from({ length: 120 }, (_, i) => rowsOf(1 + (i % 4)));
  const listQueries = Array.from({ length: 3 }, (_, i) => rowsOf(1 + (i % 3)));
  const ref = new Turbo4Lists('Dot', dim);
  lists.forEach((list, i) => ref.store(i + 1, list.flat()));
  const configs = { binary: { binary: {} }, turbo: { turbo: { bits: 'bits2' } } };
  const multiVectors = Object.fromEntries(Object.entries(configs).map(([name, quantization_config]) => [name, { size: dim, distance: 'Dot', datatype: 'turbo4', multivector_config: { comparator: 'max_sim' }, quantization_config }]));
  resultOf(t, await call(base, 'PUT', '/collections/m', { vectors: multiVectors, shard_number: 1, optimizers_config: { indexing_threshold: 1 } }));
  const info = resultOf<{ config: { params: { vectors: unknown } } }>(t, await call(base, 'GET', '/collections/m'));
  t.same(info.config.params.vectors, multiVectors, 'the datatype, multivector and quantization configs are echoed');
  resultOf(t, await call(base, 'PUT', '/collections/m/points?wait=true', {
    points: lists.map((list, i) => ({ id: i + 1, vector: Object.fromEntries(Object.keys(configs).map((name) => [name, list])) })),
  }));
  const check = async (at: string, what: string): Promise<void> => {
    for (const using of Object.keys(configs)) {
      let worst = 0;
      let found = 0;
      for (const query of listQueries) {
        const want = ref.ranked(query.flat(), 120);
        const score = new Map(want.map((x) => [x.key, x.score]));
        const top = new Set(want.slice(0, 10).map((x) => x.key));
        for (const quantization of [{ rescore: true, oversampling: 3 }, { ignore: true }]) {
          const got = resultOf<Points>(t, await call(at, 'POST', '/collections/m/points/query', { query, using, limit: 10, params: { hnsw_ef: 128, quantization } }));
          for (const p of got.points) {
            worst = Math.max(worst, Math.abs(p.score - score.get(p.id)!));
            if (top.has(p.id)) found++;
          }
        }
      }
      t.ok(worst < 1e-4, `${what}, ${using}: rescored and ignored MaxSim scores are the records' (worst error ${worst.toExponential(2)})`);
      t.ok(found >= 0.8 * 2 * 10 * listQueries.length, `${what}, ${using}: they find ${found} of ${2 * 10 * listQueries.length} of the records' top 10s`);
    }
  };
  await check(base, 'stored');
  for (let waited = 0; ; waited += 200) {
    const state = resultOf<{ indexed_vectors_count: number; status: string }>(t, await call(base, 'GET', '/collections/m'));
    if (state.indexed_vectors_count >= 2 * 120 && state.status === 'green') break;
    if (waited > 60_000) {
      t.fail(`only ${state.indexed_vectors_count} vectors indexed`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await check(base, 'indexed');
  await server.stop();
  const again = await startServer({ storage: server.storage });
  stopAtEnd(t, again);
  await check(again.url, 'after a restart');
});
