// TurboQuant (Qdrant's `quantization_config: {turbo: {bits, always_ram, memory}}`) through the
// real server and Qdrant's JS client: the config echoed as given at collection and vector level,
// Qdrant's validation errors, unrescored scores equal to the JS reference of Qdrant's estimator
// (helpers/turbo-reference), Qdrant's rescoring defaults (bits4 off, the smaller widths on),
// rescored and ignored answers equal to the exact ones, the same answers after a restart, and a
// PATCH from int8 to turbo to binary.

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
