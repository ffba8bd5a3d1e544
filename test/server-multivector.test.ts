// Multivectors (Qdrant's multivector_config: {comparator: "max_sim"}) through the real server and
// Qdrant's JS client: points carry lists of vectors (both upsert forms, update_vectors), come back
// as lists of lists; /points/query with a list of vectors scores MaxSim equal to a reference
// computed here for Cosine, Dot and Euclid (exact, filtered, with score_threshold and offset, over
// two shards); a plain dense query is a list of one; the ColBERT pattern (dense prefetch,
// multivector rescoring); recommend by point ids (average_vector concatenates rows, Qdrant's rule;
// sum_scores); HNSW recall against the exact scan; Qdrant's validation errors; a restart.

import t, { type Test } from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { startServer } from './helpers/server.js';
import { asF32, brief, sameHits, type Hit } from './helpers/hits.js';
import { call } from './helpers/api-http.js';
import { rng } from './helpers/data.js';

type Rows = number[][];
type Distance = 'Cosine' | 'Dot' | 'Euclid';

interface Doc {
  id: number;
  rows: Rows;
  dense: number[];
  group: number;
}

const DIM = 4;
const next = rng(1319);

function randomRows(count: number, dim = DIM): Rows {
  return Array.from({ length: count }, () => Array.from({ length: dim }, () => Math.fround(next() * 2 - 1)));
}

const DOCS: Doc[] = Array.from({ length: 120 }, (_, i) => ({
  id: i + 1,
  rows: randomRows(1 + (i % 5)),
  dense: randomRows(1)[0],
  group: i % 3,
}));

const dot = (a: number[], b: number[]) => a.reduce((s, x, j) => s + x * b[j], 0);
const normalised = (v: number[]) => {
  const n = Math.sqrt(dot(v, v));
  return n === 0 ? v : v.map((x) => x / n);
};

/** Qdrant's raw MaxSim: the sum over query rows of the best similarity to any stored row. */
function rawMaxSim(distance: Distance, query: Rows, doc: Rows): number {
  const sim = (q: number[], d: number[]) => {
    if (distance === 'Cosine') return dot(normalised(q), normalised(d));
    if (distance === 'Dot') return dot(q, d);
    return -q.reduce((s, x, j) => s + (x - d[j]) ** 2, 0);
  };
  return query.reduce((sum, q) => sum + Math.max(...doc.map((d) => sim(q, d))), 0);
}

/** The reported score: Euclid's is sqrt(|sum|) (Qdrant's post-processing of the sum), smaller first. */
function score(distance: Distance, query: Rows, doc: Rows): number {
  const raw = rawMaxSim(distance, query, doc);
  return distance === 'Euclid' ? Math.sqrt(Math.abs(raw)) : raw;
}


function reference(distance: Distance, query: Rows, docs: Doc[], options: { limit: number; offset?: number; threshold?: number } = { limit: 10 }): Hit[] {
  const larger = distance !== 'Euclid';
  const hits = docs.map((d) => ({ id: d.id, score: score(distance, query, d.rows) }))
    .filter((h) => options.threshold === undefined || (larger ? h.score >= options.threshold : h.score <= options.threshold));
  hits.sort((a, b) => (larger ? b.score - a.score : a.score - b.score) || a.id - b.id);
  return hits.slice(options.offset ?? 0, (options.offset ?? 0) + options.limit);
}


function sameRows(t: Test, actual: unknown, expected: Rows, what: string): void {
  const rows = actual as Rows;
  t.same(rows.map((r) => r.length), expected.map((r) => r.length), `${what}: shape`);
  t.ok(rows.every((r, i) => r.every((x, j) => Math.abs(x - expected[i][j]) < 1e-6)), `${what}: values`);
}

const QUERIES: Rows[] = [randomRows(1), randomRows(3), randomRows(6)];

const errorOf = (r: { status: number; body: unknown }) => [r.status, (r.body as { status: { error: string } }).status.error];

t.test('multivectors: stored as lists, scored by MaxSim as the reference, rescored after a dense prefetch, recommended, and kept across a restart', async (t) => {
  const server = await startServer();
  let client = new QdrantClient({ url: server.url, checkCompatibility: false });
  let url = server.url;
  const distances: Distance[] = ['Cosine', 'Dot', 'Euclid'];
  for (const distance of distances) {
    await client.createCollection(distance.toLowerCase(), {
      vectors: { colbert: { size: DIM, distance, multivector_config: { comparator: 'max_sim' } }, dense: { size: DIM, distance: 'Dot' } },
      sparse_vectors: { text: {} },
      shard_number: 2,
    });
    // Both upsert forms: half as points, half as a batch.
    const half = DOCS.slice(0, 60);
    const rest = DOCS.slice(60);
    await client.upsert(distance.toLowerCase(), { wait: true, points: half.map((d) => ({ id: d.id, vector: { colbert: d.rows, dense: d.dense }, payload: { group: d.group } })) });
    await client.upsert(distance.toLowerCase(), { wait: true, batch: { ids: rest.map((d) => d.id), vectors: { colbert: rest.map((d) => d.rows), dense: rest.map((d) => d.dense) }, payloads: rest.map((d) => ({ group: d.group })) } });
  }

  const check = async (what: string) => {
    for (const distance of distances) {
      const name = distance.toLowerCase();
      const label = `${what}, ${distance}`;
      const got = await client.retrieve(name, { ids: [3, 5], with_vector: true });
      const byId = new Map(got.map((p) => [Number(p.id), p.vector as Record<string, unknown>]));
      // Cosine vectors are stored normalised, as Qdrant stores them.
      const stored = (rows: Rows) => (distance === 'Cosine' ? rows.map(normalised) : rows);
      sameRows(t, byId.get(3)?.colbert, stored(DOCS[2].rows), `${label}: retrieve gives point 3's list of ${DOCS[2].rows.length}`);
      sameRows(t, byId.get(5)?.colbert, stored(DOCS[4].rows), `${label}: retrieve gives point 5's list of ${DOCS[4].rows.length}`);
      for (const [i, query] of QUERIES.entries()) {
        const exact = await client.query(name, { query, using: 'colbert', limit: 10, params: { exact: true } });
        sameHits(t, brief(exact.points), reference(distance, query, DOCS), `${label}: exact MaxSim, query ${i}`, 1e-4);
        const plain = await client.query(name, { query, using: 'colbert', limit: 10 });
        sameHits(t, brief(plain.points), reference(distance, query, DOCS), `${label}: MaxSim without exact, query ${i}`, 1e-4);
      }
      const filtered = await client.query(name, { query: QUERIES[1], using: 'colbert', limit: 5, offset: 3, filter: { must: [{ key: 'group', match: { value: 2 } }] } });
      sameHits(t, brief(filtered.points), reference(distance, QUERIES[1], DOCS.filter((d) => d.group === 2), { limit: 5, offset: 3 }), `${label}: filter and offset`, 1e-4);
      // Halfway between the 13th and 14th scores, so f32 rounding cannot move a point across it.
      const ranked = reference(distance, QUERIES[2], DOCS, { limit: 20 });
      const cut = (ranked[12].score + ranked[13].score) / 2;
      const above = await client.query(name, { query: QUERIES[2], using: 'colbert', limit: 100, score_threshold: cut });
      sameHits(t, brief(above.points), reference(distance, QUERIES[2], DOCS, { limit: 100, threshold: cut }), `${label}: score_threshold`, 1e-4);
      t.equal(above.points.length, 13, `${label}: score_threshold keeps the 13 best`);
    }
  };
  await check('fresh');

  // A plain dense query on a multivector name is a list of one (Qdrant reads it so).
  const single = QUERIES[0][0];
  const asDense = await client.query('dot', { query: single, using: 'colbert', limit: 10 });
  sameHits(t, brief(asDense.points), reference('Dot', [single], DOCS), 'a dense query on the multivector name', 1e-4);

  // with_vector on search hits: the list of lists.
  const withVector = await client.query('dot', { query: QUERIES[1], using: 'colbert', limit: 1, with_vector: ['colbert'] });
  const top = DOCS.find((d) => d.id === Number(withVector.points[0].id))!;
  sameRows(t, (withVector.points[0].vector as Record<string, unknown>).colbert, top.rows, 'a search hit carries its list');

  // The ColBERT pattern: a dense prefetch finds candidates, the multivector rescores them.
  const denseQuery = [0.4, -0.2, 0.7, 0.1];
  const rescored = await client.query('dot', {
    prefetch: { query: denseQuery, using: 'dense', limit: 20, params: { exact: true } },
    query: QUERIES[1],
    using: 'colbert',
    limit: 5,
  });
  const candidates = DOCS.map((d) => ({ d, s: dot(d.dense, denseQuery) })).sort((a, b) => b.s - a.s || a.d.id - b.d.id).slice(0, 20).map((c) => c.d);
  sameHits(t, brief(rescored.points), reference('Dot', QUERIES[1], candidates, { limit: 5 }), 'dense prefetch rescored by MaxSim', 1e-4);
  const euclidRescored = await client.query('euclid', {
    prefetch: { query: denseQuery, using: 'dense', limit: 20, params: { exact: true } },
    query: QUERIES[2],
    using: 'colbert',
    limit: 5,
  });
  sameHits(t, brief(euclidRescored.points), reference('Euclid', QUERIES[2], candidates, { limit: 5 }), 'dense prefetch rescored by Euclid MaxSim', 1e-4);

  // Recommend by ids. average_vector: Qdrant concatenates the positives' rows and appends the negatives' rows negated.
  const [a, b, c] = [DOCS[6], DOCS[7], DOCS[8]];
  const others = DOCS.filter((d) => ![a.id, b.id, c.id].includes(d.id));
  const sig = (x: number) => 0.5 * (x / (1 + Math.abs(x)) + 1);
  const simTo = (e: Doc, d: Doc) => rawMaxSim('Dot', e.rows, d.rows);
  const averaged = await client.query('dot', { query: { recommend: { positive: [a.id, b.id], negative: [c.id] } }, using: 'colbert', limit: 8 });
  const concatenated = [...a.rows, ...b.rows, ...c.rows.map((r) => r.map((x) => -x))];
  sameHits(t, brief(averaged.points), reference('Dot', concatenated, others, { limit: 8 }), 'recommend average_vector by ids: rows concatenated, negatives negated', 1e-4);
  const summed = await client.query('dot', { query: { recommend: { positive: [a.id, b.id], negative: [c.id], strategy: 'sum_scores' } }, using: 'colbert', limit: 8 });
  const sums = others.map((d) => ({ id: d.id, score: rawMaxSim('Dot', a.rows, d.rows) + rawMaxSim('Dot', b.rows, d.rows) - rawMaxSim('Dot', c.rows, d.rows) }))
    .sort((x, y) => y.score - x.score || x.id - y.id).slice(0, 8);
  sameHits(t, brief(summed.points), sums, 'recommend sum_scores by ids: MaxSim similarities summed', 1e-4);
  const best = await client.query('dot', { query: { recommend: { positive: [a.id, b.id], negative: [c.id], strategy: 'best_score' } }, using: 'colbert', limit: 8 });
  const bestRef = others.map((d) => {
    const pos = Math.max(simTo(a, d), simTo(b, d));
    const neg = simTo(c, d);
    return { id: d.id, score: pos > neg ? sig(pos) : -sig(neg) };
  }).sort((x, y) => y.score - x.score || x.id - y.id).slice(0, 8);
  sameHits(t, brief(best.points), bestRef, 'recommend best_score by ids: the best MaxSim to a positive against the best to a negative', 1e-4);
  const euclidSummed = await client.query('euclid', { query: { recommend: { positive: [a.id], negative: [c.id], strategy: 'sum_scores' } }, using: 'colbert', limit: 8 });
  const euclidSums = others.concat(b).map((d) => ({ id: d.id, score: rawMaxSim('Euclid', a.rows, d.rows) - rawMaxSim('Euclid', c.rows, d.rows) }))
    .sort((x, y) => y.score - x.score || x.id - y.id).slice(0, 8);
  sameHits(t, brief(euclidSummed.points), euclidSums, 'recommend sum_scores on Euclid: the raw MaxSim sums (negated squared distances)', 1e-4);
  // discover and context by ids: each point's MaxSim to the examples, combined as Qdrant's objectives combine similarities.
  const discovered = await client.query('dot', { query: { discover: { target: a.id, context: [{ positive: b.id, negative: c.id }] } }, using: 'colbert', limit: 6 });
  const discoverRef = others.map((d) => ({ id: d.id, score: (simTo(b, d) > simTo(c, d) ? 1 : -1) + sig(simTo(a, d)) }))
    .sort((x, y) => y.score - x.score || x.id - y.id).slice(0, 6);
  sameHits(t, brief(discovered.points), discoverRef, 'discover by ids on a multivector', 1e-4);
  const context = await client.query('dot', { query: { context: [{ positive: b.id, negative: c.id }] }, using: 'colbert', limit: 200 });
  const outside = context.points.filter((p) => p.score < 0).map((p) => Number(p.id)).sort((x, y) => x - y);
  const outsideRef = DOCS.filter((d) => d.id !== b.id && d.id !== c.id && simTo(b, d) - simTo(c, d) < 0).map((d) => d.id);
  t.same(outside, outsideRef, 'context by ids: the points closer (by MaxSim) to the negative than to the positive score below 0');
  const mixed = await call(url, 'POST', '/collections/dot/points/query', { query: { recommend: { positive: [a.id, [0.1, 0.2, 0.3, 0.4]] } }, using: 'colbert' });
  t.same(errorOf(mixed), [400, "Wrong input: Validation failed: Can't average vectors with different types"], 'average_vector of a multivector and a dense vector is refused as Qdrant refuses it');

  // update_vectors replaces a point's list; the dense vector stays.
  const replaced = randomRows(2);
  await client.updateVectors('dot', { wait: true, points: [{ id: 10, vector: { colbert: replaced } }] });
  const after = await client.retrieve('dot', { ids: [10], with_vector: true });
  sameRows(t, (after[0].vector as Record<string, unknown>).colbert, replaced, 'update_vectors replaced the list');
  t.same(asF32((after[0].vector as Record<string, number[]>).dense), DOCS[9].dense, 'and left the dense vector');
  const found = await client.query('dot', { query: replaced, using: 'colbert', limit: 1, filter: { must: [{ has_id: [10] }] }, with_vector: false });
  t.ok(Math.abs(found.points[0].score - rawMaxSim('Dot', replaced, replaced)) < 1e-5, 'the new list is what is searched');
  await client.updateVectors('dot', { wait: true, points: [{ id: 10, vector: { colbert: DOCS[9].rows } }] });

  // Qdrant's answers to wrong input.
  const bad = async (body: unknown, status: number, message: string, what: string) => {
    t.same(errorOf(await call(url, 'PUT', '/collections/dot/points?wait=true', body)), [status, message], what);
  };
  await bad({ points: [{ id: 1, vector: { colbert: [0.1, 0.2, 0.3, 0.4] } }] }, 400, 'Wrong input: Conversion between multi and regular vectors failed', 'a single vector under the multivector name');
  await bad({ points: [{ id: 1, vector: { dense: [[0.1, 0.2, 0.3, 0.4]] } }] }, 400, 'Wrong input: Conversion between multi and regular vectors failed', 'a multivector under the dense name');
  await bad({ points: [{ id: 1, vector: { text: [[0.1, 0.2, 0.3, 0.4]] } }] }, 400, 'Wrong input: Conversion between multi and regular vectors failed', 'a multivector under a sparse name');
  await bad({ points: [{ id: 1, vector: { colbert: { indices: [1], values: [1] } } }] }, 400, 'Wrong input: Conversion between sparse and regular vectors failed', 'a sparse vector under the multivector name');
  await bad({ points: [{ id: 1, vector: { colbert: [] } }] }, 400, 'Wrong input: Vector dimension error: expected dim: 4, got 0', 'an empty multivector');
  await bad({ points: [{ id: 1, vector: { colbert: [[]] } }] }, 422, 'Validation error in JSON body: [points[0].vector.?.data: all vectors must be non-empty]', 'an empty inner vector');
  await bad({ points: [{ id: 1, vector: { colbert: [[0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3]] } }] }, 422, 'Validation error in JSON body: [points[0].vector.?.data: all vectors must have the same dimension, found vector with dimension 3]', 'rows of different lengths');
  await bad({ points: [{ id: 1, vector: { colbert: [[0.1, 0.2, 0.3], [0.1, 0.2, 0.3]] } }] }, 400, 'Wrong input: Vector dimension error: expected dim: 4, got 3', 'rows of the wrong dimension');
  const wrongQuery = await call(url, 'POST', '/collections/dot/points/query', { query: [[0.1, 0.2, 0.3, 0.4]], using: 'dense' });
  t.same(errorOf(wrongQuery), [400, 'Wrong input: Conversion between multi and regular vectors failed'], 'a multivector query on a dense vector');
  const shortQuery = await call(url, 'POST', '/collections/dot/points/query', { query: [[0.1, 0.2]], using: 'colbert' });
  t.same(errorOf(shortQuery), [400, 'Wrong input: Vector dimension error: expected dim: 4, got 2'], 'a query of the wrong dimension');
  const legacy = await call(url, 'POST', '/collections/dot/points/search', { vector: { colbert: [[0.1, 0.2, 0.3, 0.4]] }, limit: 3 });
  t.same(errorOf(legacy), [400, 'Format error in JSON body: data did not match any variant of untagged enum NamedVectorStruct'], 'the v1.18 search takes no multivector, as in Qdrant');
  await check('after updates and refused writes');

  await server.stop();
  const again = await startServer({ storage: server.storage });
  t.teardown(() => again.stop());
  client = new QdrantClient({ url: again.url, checkCompatibility: false });
  url = again.url;
  await check('after a restart');
});

t.test('an unnamed multivector: written and read as a list of lists, scrolled, searched', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('plain', { vectors: { size: DIM, distance: 'Dot', multivector_config: { comparator: 'max_sim' } } });
  const info = await client.getCollection('plain');
  t.same((info.config.params.vectors as { multivector_config?: unknown }).multivector_config, { comparator: 'max_sim' }, 'the config keeps multivector_config');
  const docs = DOCS.slice(0, 30);
  await client.upsert('plain', { wait: true, points: docs.map((d) => ({ id: d.id, vector: d.rows })) });
  const telemetry = await call(server.url, 'GET', '/telemetry?details_level=2');
  const shards = (telemetry.body as { result: { collections: { collections: { id: string; shards: { local: { vectors_size_bytes: number } }[] }[] } } }).result.collections.collections.find((c) => c.id === 'plain')!.shards;
  t.equal(shards.reduce((n, s) => n + s.local.vectors_size_bytes, 0), docs.reduce((n, d) => n + d.rows.length, 0) * DIM * 4, 'telemetry counts every row of every list in vectors_size_bytes');
  const page = await client.scroll('plain', { limit: 2, with_vector: true });
  sameRows(t, page.points[0].vector, docs[0].rows, 'scroll gives the unnamed list as it was sent');
  sameRows(t, page.points[1].vector, docs[1].rows, 'and the next one');
  const found = await client.query('plain', { query: QUERIES[1], limit: 5 });
  sameHits(t, brief(found.points), reference('Dot', QUERIES[1], docs, { limit: 5 }), 'MaxSim on the unnamed vector', 1e-4);
});

t.test('HNSW over multivectors (f32, and int8 codes rescored) finds what the exact scan finds', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  const dim = 8;
  const n = 1000;
  const docs = Array.from({ length: n }, (_, i) => ({ id: i + 1, rows: randomRows(1 + (i % 4), dim) }));
  const queries = Array.from({ length: 20 }, (_, i) => randomRows(1 + (i % 3), dim));
  for (const [name, quantization] of [['graph', null], ['int8', { scalar: { type: 'int8' as const } }]] as const) {
    await client.createCollection(name, {
      vectors: { size: dim, distance: 'Cosine', multivector_config: { comparator: 'max_sim' }, ...(quantization ? { quantization_config: quantization } : {}) },
      shard_number: 1,
      optimizers_config: { indexing_threshold: 1 },
    });
    for (let i = 0; i < n; i += 250) {
      await client.upsert(name, { wait: true, points: docs.slice(i, i + 250).map((d) => ({ id: d.id, vector: d.rows })) });
    }
    let indexed = 0;
    for (let waited = 0; waited < 60_000; waited += 200) {
      indexed = (await client.getCollection(name)).indexed_vectors_count ?? 0;
      if (indexed >= n - 300) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    t.ok(indexed >= n - 300, `${name}: the optimizer linked ${indexed} of ${n} lists into the graph`);
    let overlap = 0;
    for (const query of queries) {
      // Scalar codes are not rescored unless asked (Qdrant's default for scalar quantization).
      const graph = await client.query(name, { query, limit: 10, params: { hnsw_ef: 64, quantization: { rescore: true } } });
      const exact = await client.query(name, { query, limit: 10, params: { exact: true, quantization: { ignore: true } } });
      const truth = new Set(exact.points.map((p) => p.id));
      overlap += graph.points.filter((p) => truth.has(p.id)).length;
      const expected = reference('Cosine', query, docs.map((d) => ({ ...d, dense: [], group: 0 })), { limit: 10 });
      sameHits(t, brief(exact.points), expected, `${name}: the exact scan equals the reference`, 1e-4);
      // Rescoring with the f32 lists: the graph's hits carry their exact MaxSim scores.
      const exactScore = new Map(docs.map((d) => [d.id, score('Cosine', query, d.rows)]));
      t.ok(graph.points.every((p) => Math.abs(p.score - exactScore.get(Number(p.id))!) < 1e-4), `${name}: hits carry exact MaxSim scores`);
    }
    const recall = overlap / (queries.length * 10);
    t.ok(recall >= 0.9, `${name}: recall@10 of the graph search is ${recall}`);
  }
});
