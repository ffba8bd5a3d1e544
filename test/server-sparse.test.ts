// Sparse vectors through the real server and Qdrant's JS client: points carry them beside a
// dense vector (both upsert forms), come back with indices ascending; nearest searches by
// /points/query and /points/search equal an exact dot-product reference computed here (no shared
// index, no match; ties by id), with filters, score_threshold and offset, over several shards;
// the idf modifier weights the query by Qdrant's formula with each shard's statistics (or those
// of a corpus filter's points); rrf fuses a sparse and a dense
// prefetch as the reference does; average_vector recommends by the averaged sparse vector;
// updates, has_vector and Qdrant's validation errors; everything survives a restart; BM25
// documents are embedded on upsert and in queries.

import t from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import { startServer } from './helpers/server.js';
import { asF32, brief, sameHits, sparseAsF32, type Hit } from './helpers/hits.js';
import { call } from './helpers/api-http.js';
import { rng } from './helpers/data.js';
import { shardOf } from '../src/shard/routing.js';
import { Bm25 } from '../src/text/bm25.js';

interface Sparse {
  indices: number[];
  values: number[];
}

interface Doc {
  id: number;
  dense: number[];
  /** Absent: the point has no sparse vector. */
  sparse?: Sparse;
  group: number;
}

const VOCAB = 40;
const next = rng(2026);

function randomSparse(maxNonZero: number): Sparse {
  const n = Math.floor(next() * (maxNonZero + 1));
  const indices = [...new Set(Array.from({ length: n }, () => Math.floor(next() * VOCAB)))];
  return { indices, values: indices.map(() => Math.fround(Math.round((next() * 4 - 1) * 100) / 100)) };
}

const DOCS: Doc[] = Array.from({ length: 150 }, (_, i) => ({
  id: i + 1,
  dense: Array.from({ length: 4 }, () => Math.fround(next() * 2 - 1)),
  sparse: i % 10 === 9 ? undefined : randomSparse(6),
  group: i % 3,
}));

/** The stored form: indices ascending, values alongside. */
function sorted(v: Sparse): Sparse {
  const order = v.indices.map((_, i) => i).sort((a, b) => v.indices[a] - v.indices[b]);
  return { indices: order.map((i) => v.indices[i]), values: order.map((i) => v.values[i]) };
}

/** Dot product over shared indices; null when none is shared (no match). */
function dot(query: Sparse, doc: Sparse, weight: (index: number) => number = () => 1): number | null {
  let sum = 0;
  let shared = false;
  doc.indices.forEach((index, i) => {
    const j = query.indices.indexOf(index);
    if (j < 0) return;
    shared = true;
    sum += Math.fround(query.values[j] * weight(index)) * doc.values[i];
  });
  return shared ? sum : null;
}


function reference(query: Sparse, docs: Doc[], options: { limit: number; offset?: number; threshold?: number; weight?: (index: number) => number } = { limit: 10 }): Hit[] {
  const hits = docs.flatMap((d) => {
    const score = d.sparse ? dot(query, d.sparse, options.weight) : null;
    return score === null || (options.threshold !== undefined && score < options.threshold) ? [] : [{ id: d.id, score }];
  });
  hits.sort((a, b) => b.score - a.score || a.id - b.id);
  return hits.slice(options.offset ?? 0, (options.offset ?? 0) + options.limit);
}


const QUERIES: Sparse[] = [
  { indices: [3, 1, 17], values: [1, 0.5, 2] },
  { indices: [39, 0], values: [-1, 1] },
  { indices: [5, 6, 7, 8, 9, 10], values: [1, 1, 1, 1, 1, 1] },
];

t.test('sparse vectors beside a dense one: stored, searched exactly, fused, recommended, and kept across a restart', async (t) => {
  const server = await startServer();
  let client = new QdrantClient({ url: server.url, checkCompatibility: false });
  let url = () => server.url;
  await client.createCollection('hybrid', {
    vectors: { dense: { size: 4, distance: 'Dot' } },
    sparse_vectors: { text: {} },
    shard_number: 3,
  });
  const pointOf = (d: Doc) => ({ id: d.id, vector: { dense: d.dense, ...(d.sparse ? { text: d.sparse } : {}) }, payload: { group: d.group } });
  await client.upsert('hybrid', { wait: true, points: DOCS.slice(0, 100).map(pointOf) });
  const rest = DOCS.slice(100).filter((d) => d.sparse);
  await client.upsert('hybrid', { wait: true, batch: { ids: rest.map((d) => d.id), vectors: { dense: rest.map((d) => d.dense), text: rest.map((d) => d.sparse!) }, payloads: rest.map((d) => ({ group: d.group })) } });
  const noSparse = DOCS.slice(100).filter((d) => !d.sparse);
  await client.upsert('hybrid', { wait: true, points: noSparse.map(pointOf) });

  const check = async (what: string) => {
    const some = await client.retrieve('hybrid', { ids: [1, 2, 10], with_vector: true });
    const byId = new Map(some.map((p) => [Number(p.id), p.vector as Record<string, unknown>]));
    t.same(sparseAsF32(byId.get(1)?.text), sorted(DOCS[0].sparse!), `${what}: retrieve gives indices ascending, values alongside`);
    t.notOk(byId.get(10) && 'text' in byId.get(10)!, `${what}: a point without the sparse vector has none`);
    for (const [i, query] of QUERIES.entries()) {
      const found = await client.query('hybrid', { query, using: 'text', limit: 10 });
      sameHits(t, brief(found.points), reference(query, DOCS), `${what}: query ${i}`);
      // The v1.18 route (the 1.19 client has no method for it).
      const searched = await call(url(), 'POST', '/collections/hybrid/points/search', { vector: { name: 'text', vector: query }, limit: 10 });
      sameHits(t, brief((searched.body as { result: Hit[] }).result), reference(query, DOCS), `${what}: /points/search with a NamedSparseVector, query ${i}`);
    }
    const filtered = await client.query('hybrid', { query: QUERIES[0], using: 'text', limit: 5, offset: 2, filter: { must: [{ key: 'group', match: { value: 1 } }] } });
    sameHits(t, brief(filtered.points), reference(QUERIES[0], DOCS.filter((d) => d.group === 1), { limit: 5, offset: 2 }), `${what}: filter and offset`);
    const above = await client.query('hybrid', { query: QUERIES[2], using: 'text', limit: 100, score_threshold: 1 });
    sameHits(t, brief(above.points), reference(QUERIES[2], DOCS, { limit: 100, threshold: 1 }), `${what}: score_threshold (inclusive)`);
  };
  await check('fresh');

  // Hybrid: rrf over a sparse and a dense prefetch (1 / (rank + 2) per list, as Quiver's rrf).
  const denseQuery = [0.3, -0.1, 0.8, 0.2];
  const fused = await client.query('hybrid', {
    prefetch: [{ query: QUERIES[0], using: 'text', limit: 20 }, { query: denseQuery, using: 'dense', limit: 20, params: { exact: true } }],
    query: { fusion: 'rrf' },
    limit: 10,
  });
  const sparseRanks = reference(QUERIES[0], DOCS, { limit: 20 });
  const denseRanks = DOCS.map((d) => ({ id: d.id, score: d.dense.reduce((s, x, j) => s + x * denseQuery[j], 0) }))
    .sort((a, b) => b.score - a.score || a.id - b.id).slice(0, 20);
  const rrf = new Map<number, number>();
  for (const list of [sparseRanks, denseRanks]) list.forEach((h, rank) => rrf.set(h.id, (rrf.get(h.id) ?? 0) + 1 / (rank + 2)));
  const expectedFusion = [...rrf].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id).slice(0, 10);
  sameHits(t, brief(fused.points), expectedFusion, 'rrf of a sparse and a dense prefetch');

  // average_vector over sparse examples: the union of indices, averaged; the examples left out.
  const [a, b] = [DOCS[0], DOCS[1]];
  const avg = new Map<number, number>();
  for (const v of [a.sparse!, b.sparse!]) v.indices.forEach((index, i) => avg.set(index, (avg.get(index) ?? 0) + v.values[i] / 2));
  const averaged: Sparse = { indices: [...avg.keys()], values: [...avg.values()].map(Math.fround) };
  const recommended = await client.query('hybrid', { query: { recommend: { positive: [a.id, b.id] } }, using: 'text', limit: 8 });
  sameHits(t, brief(recommended.points), reference(averaged, DOCS.filter((d) => d.id !== a.id && d.id !== b.id), { limit: 8 }), 'recommend average_vector by sparse examples');

  // Updates: a new sparse vector for one point, the sparse vector deleted from another.
  const changed: Sparse = { indices: [17], values: [100] };
  await client.updateVectors('hybrid', { wait: true, points: [{ id: 5, vector: { text: changed } }] });
  await client.deleteVectors('hybrid', { wait: true, points: [6], vector: ['text'] });
  DOCS[4].sparse = changed;
  DOCS[5].sparse = undefined;
  const withSparse = await client.count('hybrid', { filter: { must: [{ has_vector: 'text' }] }, exact: true });
  t.equal(withSparse.count, DOCS.filter((d) => d.sparse).length, 'has_vector counts the points holding the sparse vector');
  const kept = await client.retrieve('hybrid', { ids: [5], with_vector: ['dense'] });
  t.same({ dense: asF32((kept[0].vector as Record<string, number[]>).dense) }, { dense: DOCS[4].dense }, 'updating the sparse vector left the dense one');
  await check('after updates');

  // Qdrant's answers to wrong input.
  const bad = async (body: unknown, status: number, message: string, what: string) => {
    const r = await call(server.url, 'PUT', '/collections/hybrid/points?wait=true', body);
    t.same([r.status, (r.body as { status: { error: string } }).status.error], [status, message], what);
  };
  await bad({ points: [{ id: 1, vector: { text: { indices: [1, 2], values: [1] } } }] }, 422, 'Validation error in JSON body: [points[0].vector.?.values: Validation error: must be the same length as indices [{}]]', 'lengths differ');
  await bad({ points: [{ id: 1, vector: { text: { indices: [3, 3], values: [1, 2] } } }] }, 422, 'Validation error in JSON body: [points[0].vector.?.indices: Validation error: must be unique [{}]]', 'an index twice');
  await bad({ points: [{ id: 1, vector: { text: [1, 2, 3, 4] } }] }, 400, 'Wrong input: Conversion between sparse and regular vectors failed', 'a dense vector under the sparse name');
  await bad({ points: [{ id: 1, vector: { dense: { indices: [1], values: [1] } } }] }, 400, 'Wrong input: Conversion between sparse and regular vectors failed', 'a sparse vector under the dense name');
  await bad({ points: [{ id: 1, vector: { other: { indices: [1], values: [1] } } }] }, 400, 'Wrong input: Not existing vector name error: other', 'an unknown name');
  const wrongUsing = await call(server.url, 'POST', '/collections/hybrid/points/query', { query: QUERIES[0], using: 'dense' });
  t.same([wrongUsing.status, (wrongUsing.body as { status: { error: string } }).status.error], [400, 'Wrong input: Conversion between sparse and regular vectors failed'], 'a sparse query on a dense vector');
  await check('after refused writes');

  await server.stop();
  const again = await startServer({ storage: server.storage });
  t.teardown(() => again.stop());
  client = new QdrantClient({ url: again.url, checkCompatibility: false });
  url = () => again.url;
  await check('after a restart');
});

t.test('the idf modifier weights query values by ln((N - n + 0.5) / (n + 0.5) + 1), with each shard\'s statistics', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  const docs = DOCS.filter((d) => d.sparse);
  for (const shards of [1, 3]) {
    const name = `idf${shards}`;
    await client.createCollection(name, { sparse_vectors: { words: { modifier: 'idf' } }, shard_number: shards });
    await client.upsert(name, { wait: true, points: docs.map((d) => ({ id: d.id, vector: { words: d.sparse! } })) });
    // Each shard weighs the query with its own N (non-empty vectors) and n (non-zero values at the index), as Qdrant does.
    const perShard = Array.from({ length: shards }, (_, s) => docs.filter((d) => shardOf(d.id, shards) === s));
    const expected = (query: Sparse, inCorpus: (d: Doc) => boolean) => perShard.flatMap((own) => {
      const indexed = own.filter((d) => inCorpus(d) && d.sparse!.indices.length > 0);
      const df = (index: number) => indexed.filter((d) => (d.sparse!.values[d.sparse!.indices.indexOf(index)] ?? 0) !== 0).length;
      return reference(query, own, { limit: 10, weight: (index) => Math.log((indexed.length - df(index) + 0.5) / (df(index) + 0.5) + 1) });
    }).sort((a, b) => b.score - a.score || a.id - b.id).slice(0, 10);
    const corpus = docs.filter((d) => d.id <= 60).map((d) => d.id);
    for (const [i, query] of QUERIES.entries()) {
      const found = await client.query(name, { query, using: 'words', limit: 10 });
      sameHits(t, brief(found.points), expected(query, () => true), `${shards} shard(s), query ${i}`);
      const global = await client.query(name, { query, using: 'words', limit: 10, params: { idf: 'global' } as never });
      sameHits(t, brief(global.points), expected(query, () => true), `${shards} shard(s), query ${i}, params.idf "global"`);
      const narrowed = await client.query(name, { query, using: 'words', limit: 10, params: { idf: { corpus: { must: [{ has_id: corpus }] } } } as never });
      sameHits(t, brief(narrowed.points), expected(query, (d) => d.id <= 60), `${shards} shard(s), query ${i}, params.idf corpus: the statistics of the corpus points only`);
    }
  }
});

t.test('BM25 documents: texts embedded on upsert and in queries by the qdrant/bm25 model, scored with IDF', async (t) => {
  const server = await startServer();
  t.teardown(() => server.stop());
  const client = new QdrantClient({ url: server.url, checkCompatibility: false });
  await client.createCollection('texts', { sparse_vectors: { bm25: { modifier: 'idf' } }, shard_number: 1 });
  const texts = [
    'The quick brown fox jumps over the lazy dog',
    'Foxes are running through the forest',
    'A lazy afternoon with a good book',
    'Dogs and foxes: a history of running',
    'Nothing to see here',
  ];
  const options = { language: 'english' };
  await client.upsert('texts', { wait: true, points: texts.map((text, i) => ({ id: i + 1, vector: { bm25: { text, model: 'qdrant/bm25', options } } })) });
  const stored = await client.retrieve('texts', { ids: [2], with_vector: true });
  const model = Bm25.fromOptions(options);
  const doc2 = model.document(texts[1]);
  t.same(sparseAsF32((stored[0].vector as Record<string, Sparse>).bm25), { indices: doc2.indices, values: doc2.values }, 'the stored vector is the text\'s BM25 document vector');

  const docs: Doc[] = texts.map((text, i) => ({ id: i + 1, dense: [], group: 0, sparse: (({ indices, values }) => ({ indices, values }))(model.document(text)) }));
  const n = docs.filter((d) => d.sparse!.indices.length > 0).length;
  const df = (index: number) => docs.filter((d) => d.sparse!.indices.includes(index)).length;
  for (const text of ['running fox', 'lazy dogs', 'the']) {
    const query = model.query(text);
    const found = await client.query('texts', { query: { text, model: 'qdrant/bm25', options } as never, using: 'bm25', limit: 5 });
    const expected = reference({ indices: query.indices, values: query.values }, docs, { limit: 5, weight: (index) => Math.log((n - df(index) + 0.5) / (df(index) + 0.5) + 1) });
    sameHits(t, brief(found.points), expected, `query "${text}"`);
  }
  const unknown = await call(server.url, 'POST', '/collections/texts/points/query', { query: { text: 'fox', model: 'openai/text-embedding-3-small' }, using: 'bm25' });
  t.same([unknown.status, (unknown.body as { status: { error: string } }).status.error], [500, 'Service internal error: InferenceService URL not configured - please provide valid address in config'], 'another model needs an inference service Quiver does not have');
});
