// TurboQuant (Qdrant's `quantization_config: {turbo: {bits, always_ram, memory}}`) through the
// real server and Qdrant's JS client: the config echoed as given at collection and vector level,
// Qdrant's validation errors, unrescored scores equal to the JS reference of Qdrant's estimator
// (helpers/turbo-reference), Qdrant's rescoring defaults (bits4 off, the smaller widths on),
// rescored and ignored answers equal to the exact ones, the same answers after a restart, a
// PATCH from int8 to turbo to binary, and PATCHes between turbo and product while the optimizer
// trains (fits run in steps between requests).

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import type { Distance, TurboBits } from '../src/engine/index.js';
import { startServer } from './helpers/server.js';
import { brief, sameHits, type Hit } from './helpers/hits.js';
import { assertError, call } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { better, dot, score } from './helpers/reference.js';
import { decodeRecord, encode, fitModel, internalScore, type TurboModel } from './helpers/turbo-reference.js';
import { everyPoint } from './helpers/full-scan.js';
import { DISTANCES, vectorName, uniformVectors, createPerDistance, waitIndexed } from './helpers/quantized-collection.js';

const DIM = 24;
const N = 200;
const LIMIT = 10;
const next = rng(57);
const points = uniformVectors(next, N, DIM);
const queries = uniformVectors(next, 4, DIM);

/** The vector as Qdrant stores and queries it: normalised (in f32) for Cosine. */
function preprocessed(distance: Distance, v: number[]): Float32Array {
  const out = Float32Array.from(v);
  if (distance !== 'Cosine') return out;
  const len = Math.fround(Math.sqrt(dot(out, out)));
  return out.map((x) => x / len);
}

function exactReference(distance: Distance, query: number[]): Hit[] {
  const scored = points.map((p, i) => ({ id: i + 1, score: score(distance, query, p) }));
  scored.sort((x, y) => (better(distance, x.score, y.score) ? -1 : better(distance, y.score, x.score) ? 1 : x.id - y.id));
  return scored.slice(0, LIMIT);
}

/** Qdrant's shown score of an internal (bigger is closer) one. */
function shown(distance: Distance, internal: number): number {
  if (distance === 'Euclid') return Math.sqrt(Math.abs(internal));
  return distance === 'Manhattan' ? Math.abs(internal) : internal;
}

/**
 * The reference model of one vector's index: the points are written in one request, so the
 * optimizer fitted the TQ+ calibration on all of them when it indexed them (as Qdrant fits a
 * segment's). Rounded as the engine rounds (f32), so both code each coordinate alike (see
 * turbo-reference).
 */
function modelOf(distance: Distance, bits: TurboBits): TurboModel {
  return fitModel(distance, bits, DIM, points.map((p) => preprocessed(distance, p)), true);
}

for (const bits of ['bits4', 'bits1_5'] as const) {
  t.test(`turbo ${bits}: unrescored scores are Qdrant's estimator, rescoring as Qdrant, kept across a restart`, async (t) => {
    const server = await startServer();
    let client = new QdrantClient({ url: server.url, checkCompatibility: false });
    const config = { turbo: { bits, always_ram: true } };
    await createPerDistance(client, 'tq', DIM, config, points);
    const models = new Map(DISTANCES.map((d) => [d, modelOf(d, bits)]));
    const codes = new Map(DISTANCES.map((d) => [d, points.map((p) => encode(models.get(d)!, preprocessed(d, p)))]));

    const check = async (what: string): Promise<void> => {
      const info = await client.getCollection('tq');
      t.same(info.config.quantization_config, config, `${what}: the config is echoed as given`);
      for (const [qi, query] of queries.entries()) {
        for (const distance of DISTANCES) {
          const using = vectorName(distance);
          const at = `${what}, ${distance} q${qi}`;
          const model = models.get(distance)!;
          const q = preprocessed(distance, query);
          const raw = await client.query('tq', { query, using, limit: LIMIT, filter: everyPoint(1e9), params: { quantization: { rescore: false } } });
          const want = raw.points.map((p) => shown(distance, internalScore(model, q, codes.get(distance)![Number(p.id) - 1])));
          const worst = Math.max(...raw.points.map((p, i) => Math.abs(p.score - want[i])));
          t.ok(raw.points.length === LIMIT && worst < 1e-3, `${at}: rescore false gives Qdrant's TurboQuant scores (worst error ${worst.toExponential(2)})`);
          const full = await client.query('tq', { query, using, limit: LIMIT, params: { hnsw_ef: N, quantization: { rescore: true, oversampling: N / LIMIT } } });
          sameHits(t, brief(full.points), exactReference(distance, query), `${at}: rescored at full oversampling`, 1e-5);
          const byDefault = await client.query('tq', { query, using, limit: LIMIT, filter: everyPoint(1e9), params: { quantization: { oversampling: N / LIMIT } } });
          if (bits === 'bits4') t.same(brief(byDefault.points), brief(raw.points), `${at}: bits4 does not rescore by default`);
          else sameHits(t, brief(byDefault.points), exactReference(distance, query), `${at}: ${bits} rescores by default`, 1e-5);
          const ignored = await client.query('tq', { query, using, limit: LIMIT, filter: everyPoint(1e9), params: { quantization: { ignore: true, rescore: false } } });
          sameHits(t, brief(ignored.points), exactReference(distance, query), `${at}: ignore searches the originals`, 1e-5);
        }
      }
    };

    await waitIndexed(client, 'tq', DISTANCES.length * N);
    await check('indexed');
    await server.stop();
    const again = await startServer({ storage: server.storage });
    t.teardown(() => again.stop());
    client = new QdrantClient({ url: again.url, checkCompatibility: false });
    await waitIndexed(client, 'tq', DISTANCES.length * N);
    await check('after a restart');
  });
}

t.test('PATCH int8 -> turbo -> binary: each answers with its own codes', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('p', { vectors: { size: DIM, distance: 'Dot' }, quantization_config: { scalar: { type: 'int8' } }, shard_number: 1, optimizers_config: { indexing_threshold: 1 } });
  await client.upsert('p', { wait: true, points: points.map((p, i) => ({ id: i + 1, vector: p })) });
  await waitIndexed(client, 'p', N);
  const query = queries[0];
  const model = modelOf('Dot', 'bits2');
  const codes = points.map((p) => encode(model, Float32Array.from(p)));

  await client.updateCollection('p', { quantization_config: { turbo: { bits: 'bits2' } } });
  t.same((await client.getCollection('p')).config.quantization_config, { turbo: { bits: 'bits2' } }, 'PATCH to turbo is kept as given');
  await waitIndexed(client, 'p', N);
  const raw = await client.query('p', { query, limit: LIMIT, filter: everyPoint(1e9), params: { quantization: { rescore: false } } });
  const worst = Math.max(...raw.points.map((p) => Math.abs(p.score - internalScore(model, Float32Array.from(query), codes[Number(p.id) - 1]))));
  t.ok(raw.points.length === LIMIT && worst < 1e-3, `turbo bits2 scores after the PATCH (worst error ${worst.toExponential(2)})`);
  const rescored = await client.query('p', { query, limit: LIMIT, params: { hnsw_ef: N, quantization: { oversampling: N / LIMIT } } });
  sameHits(t, brief(rescored.points), exactReference('Dot', query), 'bits2 rescores by default after the PATCH', 1e-5);

  await client.updateCollection('p', { quantization_config: { binary: {} } });
  await waitIndexed(client, 'p', N);
  const binary = await client.query('p', { query, limit: LIMIT, filter: everyPoint(1e9), params: { quantization: { rescore: false } } });
  const xorScore = (v: number[]) => DIM - 2 * v.filter((x, i) => x > 0 !== query[i] > 0).length;
  t.same(binary.points.map((p) => p.score), binary.points.map((p) => xorScore(points[Number(p.id) - 1])), 'PATCH to binary: binary scores');
});

t.test('PATCH int8 -> turbo -> product -> turbo, each while the optimizer trains the one before: exact when rescored meanwhile, bits2 codes after', async (t) => {
  // Large enough that a fit spans several of the optimizer's slices between requests.
  const dim = 256;
  const n = 4000;
  const more = rng(91);
  const big = uniformVectors(more, n, dim);
  const query = uniformVectors(more, 1, dim)[0];
  const exact = big.map((p, i) => ({ id: i + 1, score: dot(query, p) })).sort((x, y) => y.score - x.score || x.id - y.id).slice(0, LIMIT);
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  // Written under int8: no graph image stored for a later configuration, so each PATCH trains anew.
  await client.createCollection('m', { vectors: { size: dim, distance: 'Dot' }, quantization_config: { scalar: { type: 'int8' } }, shard_number: 1, optimizers_config: { indexing_threshold: 1 } });
  for (let from = 0; from < n; from += 500) {
    await client.upsert('m', { wait: true, points: big.slice(from, from + 500).map((p, i) => ({ id: from + i + 1, vector: p })) });
  }
  await waitIndexed(client, 'm', n);
  const rescored = async (what: string) => {
    const found = await client.query('m', { query, limit: LIMIT, filter: everyPoint(1e9), params: { quantization: { rescore: true, oversampling: n / LIMIT } } });
    sameHits(t, brief(found.points), exact, what, 1e-5);
  };
  /**
   * Polls the collection's optimizations (bounded) until one is training the quantization. The
   * fit takes a few 20 ms slices, so polling starts with the PATCH: a request queued behind it
   * (a query on a loaded machine) can outlast the whole fit.
   */
  const training = async (): Promise<boolean> => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const { result } = (await call(server.url, 'GET', '/collections/m/optimizations')).body as { result: { running: { progress: { children?: { name: string; finished_at?: string }[] } }[] } };
      if (result.running.some((r) => r.progress.children?.some((c) => c.name === 'train_quantization' && !c.finished_at))) return true;
    }
    return false;
  };
  for (const config of [{ turbo: { bits: 'bits4' as const } }, { product: { compression: 'x16' as const } }, { turbo: { bits: 'bits2' as const } }]) {
    const name = JSON.stringify(config);
    const last = config.turbo?.bits === 'bits2';
    const patched = client.updateCollection('m', { quantization_config: config });
    const trains = last ? null : training();
    await patched;
    await rescored(`PATCH to ${name}, right after it`);
    if (!trains) break;
    t.ok(await trains, `PATCH to ${name}: the optimizer is seen training it (and the next PATCH lands meanwhile)`);
    await rescored(`PATCH to ${name}, while it is trained`);
  }
  await waitIndexed(client, 'm', n);
  await rescored('bits2 indexed');
  // bits2 fitted by the optimizer on the first 2^18 / 256 = 1024 points (turbo-quant.ts turboFitLimit), in id order.
  const model = fitModel('Dot', 'bits2', dim, big.slice(0, 1024).map((p) => Float32Array.from(p)), true);
  const raw = await client.query('m', { query, limit: LIMIT, filter: everyPoint(1e9), params: { quantization: { rescore: false } } });
  const worst = Math.max(...raw.points.map((p) => Math.abs(p.score - internalScore(model, Float32Array.from(query), encode(model, Float32Array.from(big[Number(p.id) - 1]))))));
  t.ok(raw.points.length === LIMIT && worst < 1e-3, `after the PATCHes: bits2 scores on the calibration fitted in steps (worst error ${worst.toExponential(2)})`);
});

t.test('turbo configs: accepted and echoed as Qdrant does, bad ones refused with its errors', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  // [sent, echoed]: fields set to null are not serialised back (Qdrant skips None options).
  const accepted = [
    [{}, {}],
    [{ bits: 'bits4' }, { bits: 'bits4' }],
    [{ bits: 'bits2', always_ram: false }, { bits: 'bits2', always_ram: false }],
    [{ bits: 'bits1_5', memory: 'pinned' }, { bits: 'bits1_5', memory: 'pinned' }],
    [{ bits: 'bits1', always_ram: null, memory: null }, { bits: 'bits1' }],
    [{ bits: null }, {}],
  ];
  for (const [i, [sent, echoed]] of accepted.entries()) {
    const created = await call(server.url, 'PUT', `/collections/c${i}`, { vectors: { size: 4, distance: 'Cosine' }, quantization_config: { turbo: sent } });
    t.equal(created.status, 200, `${JSON.stringify(sent)} is accepted`);
    const info = await call(server.url, 'GET', `/collections/c${i}`);
    t.same((info.body as { result: { config: { quantization_config: unknown } } }).result.config.quantization_config, { turbo: echoed }, `${JSON.stringify(sent)} is echoed as ${JSON.stringify(echoed)}`);
    const named = await call(server.url, 'PUT', `/collections/v${i}`, { vectors: { v: { size: 4, distance: 'Euclid', quantization_config: { turbo: sent } } } });
    t.equal(named.status, 200, `${JSON.stringify(sent)} at vector level`);
    const vinfo = await call(server.url, 'GET', `/collections/v${i}`);
    t.same((vinfo.body as { result: { config: { params: { vectors: { v: { quantization_config: unknown } } } } } }).result.config.params.vectors.v.quantization_config, { turbo: echoed }, 'echoed at vector level');
  }
  // serde: an unknown bits variant or a mistyped field matches no variant of the untagged QuantizationConfig.
  for (const turbo of [{ bits: 'bits3' }, { bits: 4 }, { always_ram: 'yes' }, { memory: 'disk' }]) {
    const refused = await call(server.url, 'PUT', '/collections/bad', { vectors: { size: 4, distance: 'Dot' }, quantization_config: { turbo } });
    assertError(t, refused, 400, 'Format error in JSON body: data did not match any variant of untagged enum QuantizationConfig', `${JSON.stringify(turbo)} is refused`);
  }
  const patched = await call(server.url, 'PATCH', '/collections/c0', { quantization_config: { turbo: { bits: 'bits0' } } });
  assertError(t, patched, 400, 'Format error in JSON body: data did not match any variant of untagged enum QuantizationConfigDiff', 'a bad PATCH is refused');
  t.equal((await call(server.url, 'GET', '/collections/bad')).status, 404, 'nothing was created');
});
