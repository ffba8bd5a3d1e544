// Vector search through the real server against an exact brute-force reference computed here:
// /points/search (+ batch, v1.18) and the query API's nearest queries (the 1.19 client's way).

import t, { type Test } from 'tap';
import { QdrantClient } from '@qdrant/js-client-rest';
import type { Distance } from '../src/engine/index.js';
import { clustered, rng } from './helpers/data.js';
import { better, score } from './helpers/reference.js';
import { startServer } from './helpers/server.js';
import { everyPoint } from './helpers/full-scan.js';

const N = 1500;
const DIM = 16;
const DISTANCES: Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];
const data = clustered(N + 20, DIM, 8, 99);
const vectorOf = (i: number) => Array.from(data.subarray(i * DIM, (i + 1) * DIM));
const queries = Array.from({ length: 20 }, (_, q) => vectorOf(N + q));
const group = (i: number) => i % 5;

interface Hit { id: number; score: number; payload?: Record<string, unknown> | null; vector?: unknown }

/** Exact top hits with Qdrant's ordering (best score first, ties by id), after filter/threshold/offset. */
function reference(distance: Distance, query: number[], limit: number, opts: { offset?: number; allow?: (i: number) => boolean; threshold?: number } = {}): Hit[] {
  const hits: Hit[] = [];
  for (let i = 0; i < N; i++) {
    if (opts.allow && !opts.allow(i)) continue;
    const s = score(distance, query, vectorOf(i));
    if (opts.threshold !== undefined && better(distance, opts.threshold, s)) continue;
    hits.push({ id: i, score: s });
  }
  hits.sort((a, b) => (better(distance, a.score, b.score) ? -1 : better(distance, b.score, a.score) ? 1 : a.id - b.id));
  return hits.slice(opts.offset ?? 0, (opts.offset ?? 0) + limit);
}

function sameHits(t: Test, got: Hit[], want: Hit[], what: string): void {
  const ids = got.map((h) => h.id).join();
  const maxErr = Math.max(0, ...got.map((h, i) => Math.abs(h.score - (want[i]?.score ?? Infinity)) / Math.max(1, Math.abs(want[i]?.score ?? 1))));
  t.equal(ids, want.map((h) => h.id).join(), `${what}: same ids in the same order`);
  t.ok(maxErr < 1e-5, `${what}: scores within 1e-5 (worst ${maxErr.toExponential(1)})`);
}

/** A server for one subtest (stopped at its end) and a client for it. */
async function serve(t: Test): Promise<{ server: Awaited<ReturnType<typeof startServer>>; client: QdrantClient }> {
  const server = await startServer();
  t.teardown(() => server.stop());
  return { server, client: new QdrantClient({ url: server.url, checkCompatibility: false }) };
}

/** Raw POST to /collections/{collection}/points/{path}, for the endpoints the 1.19 client lacks. */
function poster<B>(url: string, collection: string): (path: string, body: unknown) => Promise<{ status: number; body: B }> {
  return async (path, body) => {
    const res = await fetch(`${url}/collections/${collection}/points/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as B };
  };
}

t.test('search and query against brute force', async (t) => {
  const { server, client } = await serve(t);
  const vectors = Object.fromEntries(DISTANCES.map((d) => [d.toLowerCase(), { size: DIM, distance: d }]));
  await client.createCollection('s', { vectors, shard_number: 3 });
  for (let start = 0; start < N; start += 500) {
    const points = Array.from({ length: 500 }, (_, j) => start + j).map((i) => ({
      id: i,
      vector: Object.fromEntries(DISTANCES.map((d) => [d.toLowerCase(), vectorOf(i)])),
      payload: { group: group(i), i },
    }));
    await client.upsert('s', { wait: true, points });
  }
  const post = poster<{ result: unknown; status: unknown }>(server.url, 's');

  for (const distance of DISTANCES) {
    const using = distance.toLowerCase();
    const q = queries[0];
    const exact = await post('search', { vector: { name: using, vector: q }, limit: 10, params: { exact: true } });
    t.equal(exact.status, 200);
    sameHits(t, exact.body.result as Hit[], reference(distance, q, 10), `${distance} exact search`);

    const filtered = await post('search', { vector: { name: using, vector: q }, limit: 7, offset: 3, params: { exact: true }, filter: { must: [{ key: 'group', match: { value: 2 } }] }, with_payload: true });
    const want = reference(distance, q, 7, { offset: 3, allow: (i) => group(i) === 2 });
    sameHits(t, filtered.body.result as Hit[], want, `${distance} filtered search with offset`);
    t.same((filtered.body.result as Hit[]).map((h) => h.payload), want.map((h) => ({ group: 2, i: h.id })), 'payloads attached');

    // The threshold is the 13th best score as the server computes it (f32), as a user would pick it.
    const top20 = (await post('search', { vector: { name: using, vector: q }, limit: 20, params: { exact: true } })).body.result as Hit[];
    const threshold = top20[12].score;
    const thresholded = await post('search', { vector: { name: using, vector: q }, limit: 20, params: { exact: true }, score_threshold: threshold });
    sameHits(t, thresholded.body.result as Hit[], reference(distance, q, 13), `${distance} score_threshold (inclusive)`);
    t.equal((thresholded.body.result as Hit[]).length, 13, 'the point at the threshold is included');

    // Graph search: recall against the exact answer over all queries.
    let found = 0;
    for (const query of queries) {
      const res = await client.query('s', { query, using, limit: 10, params: { hnsw_ef: 64 } });
      const truth = new Set(reference(distance, query, 10).map((h) => h.id));
      found += res.points.filter((p) => truth.has(p.id as number)).length;
    }
    t.ok(found / (queries.length * 10) >= 0.95, `${distance} query recall@10 ${(found / (queries.length * 10)).toFixed(3)}`);
  }

  const batch = await post('search/batch', { searches: queries.slice(0, 3).map((q) => ({ vector: { name: 'euclid', vector: q }, limit: 5, params: { exact: true } })) });
  (batch.body.result as Hit[][]).forEach((hits, i) => sameHits(t, hits, reference('Euclid', queries[i], 5), `batch search ${i}`));

  const byId = await client.query('s', { query: 42, using: 'cosine', limit: 5, params: { exact: true }, with_vector: ['cosine'] });
  sameHits(t, byId.points as Hit[], reference('Cosine', vectorOf(42), 5, { allow: (i) => i !== 42 }), 'query by point id leaves the point out');
  t.ok(byId.points.every((p) => Array.isArray((p.vector as Record<string, number[]>).cosine)), 'with_vector names returned');

  const qb = await client.queryBatch('s', { searches: queries.slice(0, 2).map((q) => ({ query: { nearest: q }, using: 'dot', limit: 4, params: { exact: true } })) });
  qb.forEach((r, i) => sameHits(t, r.points as Hit[], reference('Dot', queries[i], 4), `query batch ${i}`));

  const wrongSize = await post('search', { vector: { name: 'dot', vector: [1, 2] }, limit: 3 });
  t.equal(wrongSize.status, 400);
  t.same(wrongSize.body.status, { error: `Wrong input: Vector dimension error: expected dim: ${DIM}, got 2` });
  const wrongName = await post('search', { vector: { name: 'nope', vector: q0() }, limit: 3 });
  t.equal(wrongName.status, 400);
  t.same(wrongName.body.status, { error: 'Wrong input: Not existing vector name error: nope' });
  const noLimit = await post('search', { vector: q0() });
  t.equal(noLimit.status, 400, 'missing limit is a format error');
});

function q0(): number[] {
  return queries[0];
}

/** Qdrant's raw similarity used by recommend objectives. */
function rawSimilarity(distance: Distance, a: number[], b: number[]): number {
  const s = score(distance, a, b);
  if (distance === 'Euclid') return -(s * s);
  if (distance === 'Manhattan') return -s;
  return s;
}

const sigmoid = (x: number) => 0.5 * (x / (1 + Math.abs(x)) + 1);

function recommendReference(distance: Distance, positives: number[][], negatives: number[][], strategy: 'best_score' | 'sum_scores', exclude: Set<number>, limit: number): Hit[] {
  const hits: Hit[] = [];
  for (let i = 0; i < N; i++) {
    if (exclude.has(i)) continue;
    const pos = positives.map((p) => rawSimilarity(distance, p, vectorOf(i)));
    const neg = negatives.map((n) => rawSimilarity(distance, n, vectorOf(i)));
    let s: number;
    if (strategy === 'sum_scores') s = pos.reduce((a, b) => a + b, 0) - neg.reduce((a, b) => a + b, 0);
    else {
      const maxPos = Math.max(-Infinity, ...pos);
      const maxNeg = Math.max(-Infinity, ...neg);
      s = maxPos > maxNeg ? sigmoid(maxPos) : -sigmoid(maxNeg);
    }
    hits.push({ id: i, score: s });
  }
  return hits.sort((a, b) => b.score - a.score || a.id - b.id).slice(0, limit);
}

t.test('recommend: strategies reimplemented here, by id and by vector, v1.18 endpoint and query API', async (t) => {
  const { server, client } = await serve(t);
  await client.createCollection('r', { vectors: { cos: { size: DIM, distance: 'Cosine' }, dot: { size: DIM, distance: 'Dot' }, l2: { size: DIM, distance: 'Euclid' } }, shard_number: 2 });
  await client.upsert('r', { wait: true, points: Array.from({ length: N }, (_, i) => ({ id: i, vector: { cos: vectorOf(i), dot: vectorOf(i), l2: vectorOf(i) }, payload: { group: group(i) } })) });
  const post = poster<{ result: unknown; status: unknown }>(server.url, 'r');

  // average_vector: avg(p) + avg(p) - avg(n), then an ordinary search without the example points.
  const avgP = vectorOf(10).map((x, j) => (x + vectorOf(20)[j]) / 2);
  const avg = avgP.map((x, j) => x + x - vectorOf(30)[j]);
  const byAverage = await post('recommend', { positive: [10, 20], negative: [30], using: 'l2', limit: 8, params: { exact: true } });
  t.equal(byAverage.status, 200);
  sameHits(t, byAverage.body.result as Hit[], reference('Euclid', avg, 8, { allow: (i) => ![10, 20, 30].includes(i) }), 'average_vector (v1.18 endpoint, default strategy)');

  const bestScore = await client.query('r', { query: { recommend: { positive: [5, queries[1]], negative: [7], strategy: 'best_score' } }, using: 'cos', limit: 10 });
  sameHits(t, bestScore.points as Hit[], recommendReference('Cosine', [vectorOf(5), queries[1]], [vectorOf(7)], 'best_score', new Set([5, 7]), 10), 'best_score (query API, id and vector examples)');

  const negativeOnly = await client.query('r', { query: { recommend: { negative: [queries[2]], strategy: 'best_score' } }, using: 'cos', limit: 5 });
  sameHits(t, negativeOnly.points as Hit[], recommendReference('Cosine', [], [queries[2]], 'best_score', new Set(), 5), 'best_score with negatives only');

  const sumScores = await post('recommend', { positive: [3, 4], negative: [queries[3]], strategy: 'sum_scores', using: 'dot', limit: 6, with_payload: true, filter: { must: [{ key: 'group', match: { value: 1 } }] } });
  const wantSum = recommendReference('Dot', [vectorOf(3), vectorOf(4)], [queries[3]], 'sum_scores', new Set([3, 4, ...Array.from({ length: N }, (_, i) => i).filter((i) => group(i) !== 1)]), 6);
  sameHits(t, sumScores.body.result as Hit[], wantSum, 'sum_scores with a filter');
  t.ok((sumScores.body.result as Hit[]).every((h) => (h.payload as { group: number }).group === 1), 'filter respected');

  const batch = await post('recommend/batch', { searches: [{ positive: [1], using: 'l2', limit: 3, params: { exact: true } }, { positive: [2], negative: [3], strategy: 'sum_scores', using: 'dot', limit: 3 }] });
  const [first, second] = batch.body.result as Hit[][];
  sameHits(t, first, reference('Euclid', vectorOf(1), 3, { allow: (i) => i !== 1 }), 'recommend batch: average');
  sameHits(t, second, recommendReference('Dot', [vectorOf(2)], [vectorOf(3)], 'sum_scores', new Set([2, 3]), 3), 'recommend batch: sum_scores');

  const missing = await post('recommend', { positive: [999999], using: 'l2', limit: 3 });
  t.equal(missing.status, 404, 'an example id that does not exist');
  const empty = await post('recommend', { positive: [], using: 'l2', limit: 3 });
  t.equal(empty.status, 400);
  t.same(empty.body.status, { error: 'Wrong input: Validation failed: Positive vectors should not be empty with `average` strategy' });
  const badStrategy = await post('recommend', { positive: [1], strategy: 'median', using: 'l2', limit: 3 });
  t.equal(badStrategy.status, 400, 'an unknown strategy is a format error');
});

t.test('PATCH of quantization_config and hnsw_config rebuilds the graphs with the data kept', async (t) => {
  const { server, client } = await serve(t);
  // Indexed at once: Qdrant keeps scalar codes off segments the optimizer has not built.
  await client.createCollection('p', { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 2, optimizers_config: { indexing_threshold: 1 } });
  await client.upsert('p', { wait: true, points: Array.from({ length: N }, (_, i) => ({ id: i, vector: vectorOf(i) })) });
  const q = queries[4];
  const exactScores = (await client.query('p', { query: q, limit: 5, params: { exact: true } })).points.map((p) => p.score);
  // A filter matching every point is scanned in full, on the codes when there are codes.
  const raw = async () => (await client.query('p', { query: q, limit: 5, filter: everyPoint(N), params: { quantization: { rescore: false } } })).points.map((p) => p.score);
  t.same(await raw(), exactScores, 'without quantization the "no rescore" scores are the f32 scores');

  await client.updateCollection('p', { quantization_config: { scalar: { type: 'int8', quantile: 0.99 } }, hnsw_config: { m: 8, ef_construct: 64 } });
  let info = await client.getCollection('p');
  t.equal(info.points_count, N, 'no point lost in the rebuild');
  t.same(info.config.quantization_config, { scalar: { type: 'int8', quantile: 0.99 } });
  t.equal(info.config.hnsw_config.m, 8);
  for (let waited = 0; waited < 60_000 && !(info.status === 'green' && (info.indexed_vectors_count ?? 0) >= N); waited += 200) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    info = await client.getCollection('p');
  }
  t.equal(info.indexed_vectors_count, N, 'the graphs are built again');
  const exactRaw = (await client.query('p', { query: q, limit: 5, params: { exact: true, quantization: { rescore: false } } })).points.map((p) => p.score);
  t.same(exactRaw, exactScores, 'exact search reads the original vectors, whatever rescore says');
  const quantized = await raw();
  t.notSame(quantized, exactScores, 'now int8 codes answer when rescoring is off');
  t.ok(quantized.every((s, i) => Math.abs(s - exactScores[i]) / exactScores[i] < 0.05), 'and approximate the f32 scores');
  const rescored = (await client.query('p', { query: q, limit: 5, params: { quantization: { rescore: true, oversampling: 3 } } })).points;
  t.same(rescored.map((p) => +p.score.toFixed(4)), exactScores.map((s) => +s.toFixed(4)), 'rescoring gives back the exact f32 scores');
});

/** Reference grouping: hits best first, each joins the group of every value it holds. */
function groupReference(hits: Hit[], values: (id: number) => (string | number)[], size: number, limit: number): { id: string | number; hits: number[] }[] {
  const groups = new Map<string | number, number[]>();
  for (const h of hits) {
    for (const v of new Set(values(h.id))) {
      const members = groups.get(v) ?? (groups.size < limit ? [] : undefined);
      if (!members) continue;
      groups.set(v, members);
      if (members.length < size) members.push(h.id);
    }
    if (groups.size === limit && [...groups.values()].every((m) => m.length === size)) break;
  }
  return [...groups].map(([id, members]) => ({ id, hits: members }));
}

t.test('groups: search, recommend and query groups with lookups, against a reference grouping', async (t) => {
  const { server, client } = await serve(t);
  const team = (i: number) => (i % 11 === 0 ? undefined : `t${i % 7}`);
  const tags = (i: number) => [i % 3, i % 5];
  await client.createCollection('g', { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 3 });
  const payloadOf = (i: number) => ({ ...(team(i) ? { team: team(i) } : {}), tags: tags(i), owner: i % 6, i });
  await client.upsert('g', { wait: true, points: Array.from({ length: N }, (_, i) => ({ id: i, vector: vectorOf(i), payload: payloadOf(i) })) });
  await client.createCollection('owners', { vectors: { size: 2, distance: 'Dot' } });
  await client.upsert('owners', { wait: true, points: Array.from({ length: 6 }, (_, i) => ({ id: i, vector: [1, i], payload: { name: `owner ${i}` } })) });
  const post = poster<{ result: { groups: { id: string | number; hits: Hit[]; lookup?: { id: number; payload: unknown } }[] }; status: unknown }>(server.url, 'g');
  const q = queries[5];
  const ranked = reference('Euclid', q, N);
  const shape = (groups: { id: string | number; hits: Hit[] }[]) => groups.map((g) => ({ id: g.id, hits: g.hits.map((h) => h.id) }));

  const byTeam = await post('search/groups', { vector: q, group_by: 'team', group_size: 3, limit: 4, params: { exact: true }, with_payload: ['i'] });
  t.equal(byTeam.status, 200);
  t.same(shape(byTeam.body.result.groups), groupReference(ranked.filter((h) => team(h.id)), (id) => [team(id)!], 3, 4), 'string groups, points without the key left out');
  t.same(byTeam.body.result.groups[0].hits[0].payload, { i: byTeam.body.result.groups[0].hits[0].id }, 'payload selection applies to hits');

  const byTags = await post('search/groups', { vector: q, group_by: 'tags', group_size: 2, limit: 5, params: { exact: true } });
  t.same(shape(byTags.body.result.groups), groupReference(ranked, tags, 2, 5), 'array values put a point in several groups');

  const looked = await post('search/groups', { vector: q, group_by: 'owner', group_size: 1, limit: 3, params: { exact: true }, with_lookup: 'owners' });
  t.same(shape(looked.body.result.groups), groupReference(ranked, (id) => [id % 6], 1, 3));
  t.same(looked.body.result.groups.map((g) => g.lookup?.payload), looked.body.result.groups.map((g) => ({ name: `owner ${g.id}` })), 'with_lookup attaches the record named by the group id');

  const reco = await post('recommend/groups', { positive: [17], group_by: 'owner', group_size: 2, limit: 2, params: { exact: true } });
  t.same(shape(reco.body.result.groups), groupReference(reference('Euclid', vectorOf(17), N, { allow: (i) => i !== 17 }), (id) => [id % 6], 2, 2), 'recommend groups');

  const viaClient = await client.queryGroups('g', { query: q, group_by: 'owner', params: { exact: true }, with_lookup: { collection: 'owners', with_payload: false, with_vectors: true } });
  t.same(shape(viaClient.groups as { id: number; hits: Hit[] }[]), groupReference(ranked, (id) => [id % 6], 3, 10), 'query groups: defaults 3 per group, 10 groups (6 exist)');
  t.ok(viaClient.groups.every((g) => g.lookup && !('payload' in g.lookup) && Array.isArray(g.lookup.vector)), 'lookup payload and vector selection');
});

/** RRF and DBSF reimplemented from Qdrant's definitions, over exact reference lists. */
function rrfReference(lists: Hit[][], k = 2): Hit[] {
  const scores = new Map<number, number>();
  for (const list of lists) list.forEach((h, pos) => scores.set(h.id, (scores.get(h.id) ?? 0) + 1 / (pos + k)));
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id);
}

function dbsfReference(lists: { hits: Hit[]; larger: boolean }[]): Hit[] {
  const scores = new Map<number, number>();
  for (const { hits, larger } of lists) {
    const mean = hits.reduce((a, h) => a + h.score, 0) / hits.length;
    const sd = Math.sqrt(hits.reduce((a, h) => a + (h.score - mean) ** 2, 0) / (hits.length - 1));
    const [lo, hi] = [mean - 3 * sd, mean + 3 * sd];
    for (const h of hits) scores.set(h.id, (scores.get(h.id) ?? 0) + (larger ? (h.score - lo) / (hi - lo) : (hi - h.score) / (hi - lo)));
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id);
}

t.test('query API: prefetch with rrf and dbsf fusion, and rescoring of prefetched candidates', async (t) => {
  const { server, client } = await serve(t);
  await client.createCollection('h', { vectors: { a: { size: DIM, distance: 'Cosine' }, b: { size: DIM, distance: 'Euclid' } }, shard_number: 2 });
  // Vector b is a different view of the point (reversed coordinates), so the two rankings differ.
  const other = (i: number) => [...vectorOf(i)].reverse();
  await client.upsert('h', { wait: true, points: Array.from({ length: N }, (_, i) => ({ id: i, vector: { a: vectorOf(i), b: other(i) }, payload: { group: group(i) } })) });
  const qa = queries[6];
  const qb = queries[7];
  const exact = { exact: true };
  const refB = (limit: number, allow?: (i: number) => boolean) => {
    const hits: Hit[] = [];
    for (let i = 0; i < N; i++) if (!allow || allow(i)) hits.push({ id: i, score: score('Euclid', qb, other(i)) });
    return hits.sort((x, y) => x.score - y.score || x.id - y.id).slice(0, limit);
  };
  const listA = reference('Cosine', qa, 20);
  const listB = refB(30);

  const fusedRrf = await client.query('h', { prefetch: [{ query: qa, using: 'a', limit: 20, params: exact }, { query: qb, using: 'b', limit: 30, params: exact }], query: { fusion: 'rrf' }, limit: 10 });
  const wantRrf = rrfReference([listA, listB]).slice(0, 10);
  t.same(fusedRrf.points.map((p) => p.id), wantRrf.map((h) => h.id), 'rrf order');
  t.ok(fusedRrf.points.every((p, i) => Math.abs(p.score - wantRrf[i].score) < 1e-6), 'rrf scores are 1/(rank + 2) sums');

  const fusedK = await client.query('h', { prefetch: [{ query: qa, using: 'a', limit: 20, params: exact }, { query: qb, using: 'b', limit: 30, params: exact }], query: { rrf: { k: 60 } }, limit: 5 });
  t.same(fusedK.points.map((p) => p.id), rrfReference([listA, listB], 60).slice(0, 5).map((h) => h.id), 'rrf with k = 60');

  const fusedDbsf = await client.query('h', { prefetch: [{ query: qa, using: 'a', limit: 20, params: exact }, { query: qb, using: 'b', limit: 30, params: exact }], query: { fusion: 'dbsf' }, limit: 10, with_payload: true });
  const wantDbsf = dbsfReference([{ hits: listA, larger: true }, { hits: listB, larger: false }]).slice(0, 10);
  t.same(fusedDbsf.points.map((p) => p.id), wantDbsf.map((h) => h.id), 'dbsf order (Euclid list normalised with smaller better)');
  t.ok(fusedDbsf.points.every((p, i) => Math.abs(p.score - wantDbsf[i].score) < 1e-4), 'dbsf scores');
  t.ok(fusedDbsf.points.every((p) => p.payload && typeof (p.payload as { group: number }).group === 'number'), 'payload of fused hits');

  // Rescoring: candidates from a filtered prefetch on b, ranked by the main query on a.
  const rescored = await client.query('h', { prefetch: { query: qb, using: 'b', limit: 50, params: exact }, query: qa, using: 'a', limit: 5, filter: { must: [{ key: 'group', match: { value: 3 } }] } });
  const candidates = new Set(refB(50, (i) => group(i) === 3).map((h) => h.id));
  const wantRescored = reference('Cosine', qa, 5, { allow: (i) => candidates.has(i) });
  sameHits(t, rescored.points as Hit[], wantRescored, 'rescoring prefetched candidates (the filter reaches the prefetch)');

  const nested = await client.query('h', {
    prefetch: { prefetch: [{ query: qa, using: 'a', limit: 20, params: exact }, { query: qb, using: 'b', limit: 30, params: exact }], query: { fusion: 'rrf' }, limit: 15 },
    query: qa, using: 'a', limit: 3,
  });
  const fusedIds = new Set(rrfReference([listA, listB]).slice(0, 15).map((h) => h.id));
  sameHits(t, nested.points as Hit[], reference('Cosine', qa, 3, { allow: (i) => fusedIds.has(i) }), 'nested prefetch: fusion, then rescoring');

  const refused = await poster<unknown>(server.url, 'h')('query', { query: { fusion: 'rrf' } });
  t.equal(refused.status, 400, 'fusion without prefetches is refused');
});

t.test('discover and context: Qdrant\'s scoring reimplemented here', async (t) => {
  const { server, client } = await serve(t);
  await client.createCollection('d', { vectors: { size: DIM, distance: 'Dot' }, shard_number: 2 });
  await client.upsert('d', { wait: true, points: Array.from({ length: N }, (_, i) => ({ id: i, vector: vectorOf(i) })) });
  const dot = (a: number[], b: number[]) => a.reduce((s, x, j) => s + x * b[j], 0);
  const fast = (x: number) => x / (1 + Math.abs(x));
  const ranked = (scoreOf: (v: number[]) => number, exclude: number[], limit: number): Hit[] =>
    Array.from({ length: N }, (_, i) => i).filter((i) => !exclude.includes(i))
      .map((i) => ({ id: i, score: scoreOf(vectorOf(i)) }))
      .sort((a, b) => b.score - a.score || a.id - b.id).slice(0, limit);
  const pairs: [number, number][] = [[1, 2], [3, 4]];

  const discoverRef = ranked((v) => pairs.reduce((r, [p, n]) => r + (dot(vectorOf(p), v) > dot(vectorOf(n), v) ? 1 : -1), 0) + 0.5 * (fast(dot(queries[8], v)) + 1), [1, 2, 3, 4], 10);
  const discovered = await client.query('d', { query: { discover: { target: queries[8], context: pairs.map(([positive, negative]) => ({ positive, negative })) } }, limit: 10 });
  t.same(discovered.points.map((p) => p.id), discoverRef.map((h) => h.id), 'discover: context rank plus sigmoid of the target similarity');
  t.ok(discovered.points.every((p, i) => Math.abs(p.score - discoverRef[i].score) < 1e-4), 'discover scores');

  const contextRef = ranked((v) => pairs.reduce((loss, [p, n]) => loss + fast(Math.min(dot(vectorOf(p), v) - dot(vectorOf(n), v) - 1.1920929e-7, 0)), 0), [1, 2, 3, 4], 10);
  const contexted = await client.query('d', { query: { context: pairs.map(([positive, negative]) => ({ positive, negative })) }, limit: 10 });
  t.same(contexted.points.map((p) => +p.score.toFixed(5)), contextRef.map((h) => +h.score.toFixed(5)), 'context: summed losses, best (0) first');

  const post = poster<{ result: Hit[][] | Hit[] }>(server.url, 'd');
  const v118 = await post('discover', { target: queries[8], context: pairs.map(([positive, negative]) => ({ positive, negative })), limit: 10 });
  t.same((v118.body.result as Hit[]).map((h) => h.id), discoverRef.map((h) => h.id), 'v1.18 /points/discover');
  const batch = await post('discover/batch', { searches: [{ target: 7, limit: 3 }, { context: [{ positive: 1, negative: 2 }], limit: 3 }] });
  const [first, second] = batch.body.result as Hit[][];
  t.same(first.map((h) => h.id), ranked((v) => 0.5 * (fast(dot(vectorOf(7), v)) + 1), [7], 3).map((h) => h.id), 'discover batch: target only');
  t.equal(second.length, 3, 'discover batch: context only');
  t.equal((await post('discover', { limit: 3 })).status, 400, 'neither target nor context');
});

t.test('distance matrix: pairs and offsets are exact neighbours within the sample', async (t) => {
  const { server, client } = await serve(t);
  await client.createCollection('m', { vectors: { size: DIM, distance: 'Euclid' }, shard_number: 3 });
  await client.upsert('m', { wait: true, points: Array.from({ length: 300 }, (_, i) => ({ id: i, vector: vectorOf(i), payload: { group: group(i) } })) });
  const filter = { must: [{ key: 'group', match: { any: [1, 2] } }] };

  const pairs = await client.searchMatrixPairs('m', { sample: 25, limit: 4, filter });
  const sampled = [...new Set(pairs.pairs.map((p) => p.a as number))];
  t.equal(sampled.length, 25, 'the sample has the asked size');
  t.ok(sampled.every((id) => [1, 2].includes(group(id))), 'only points matching the filter are sampled');
  let exact = 0;
  for (const a of sampled) {
    const mine = pairs.pairs.filter((p) => p.a === a);
    const want = sampled.filter((b) => b !== a).map((b) => ({ b, s: score('Euclid', vectorOf(a), vectorOf(b)) })).sort((x, y) => x.s - y.s || x.b - y.b).slice(0, 4);
    if (mine.map((p) => p.b).join() === want.map((w) => w.b).join() && mine.every((p, i) => Math.abs(p.score - want[i].s) < 1e-4)) exact++;
  }
  t.equal(exact, 25, 'each row: the 4 nearest other sampled points, closest first, with L2 scores');

  const offsets = await client.searchMatrixOffsets('m', { sample: 10, limit: 2 });
  t.equal(offsets.ids.length, 10);
  t.equal(offsets.offsets_row.length, 20);
  t.same(offsets.offsets_row, Array.from({ length: 10 }, (_, i) => [i, i]).flat(), 'rows in sample order, limit each');
  t.ok(offsets.offsets_col.every((c, k) => c !== offsets.offsets_row[k] && c < 10), 'columns index other sampled points');
  t.ok(offsets.scores.every((s, k) => Math.abs(s - score('Euclid', vectorOf(offsets.ids[offsets.offsets_row[k]] as number), vectorOf(offsets.ids[offsets.offsets_col[k]] as number))) < 1e-4), 'scores are the pair distances');
});
