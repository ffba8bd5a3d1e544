// The query API's remaining forms through the real server, on a one-shard collection (the tree
// runs in the shard's worker) and a three-shard one (steps fan out and merge on the main thread):
// queries without a query (points in id order, score 1, like a scroll), formula rescoring
// (score boosting) against a reference evaluated here from Qdrant's documented formulas, nearest
// with MMR against a reference MMR selection, relevance feedback (naive strategy) against its
// documented score, and Qdrant's errors for each.

import t from 'tap';
import { startServer } from './helpers/server.js';
import { assertError, call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { brief, sameHits, type Hit } from './helpers/hits.js';
import { rng } from './helpers/data.js';

interface Doc {
  id: number;
  vector: number[];
  payload: { group: string; price?: number; tags: number[]; loc: { lon: number; lat: number }; created: string };
}

const next = rng(1419);
const f32 = Math.fround;
const DOCS: Doc[] = Array.from({ length: 60 }, (_, i) => {
  const id = i + 1;
  return {
    id,
    vector: Array.from({ length: 4 }, () => f32(next() * 2 - 1)),
    payload: {
      group: id % 3 === 0 ? 'a' : 'b',
      // Every tenth point has no price: formulas reading it need a default.
      ...(id % 10 === 0 ? {} : { price: Math.round(next() * 1000) / 10 }),
      tags: [id, id + 1],
      loc: { lon: -10 + next() * 20, lat: 40 + next() * 10 },
      created: new Date(Date.UTC(2025, 0, 1) + id * 3_600_000).toISOString(),
    },
  };
});
const BY_ID = new Map(DOCS.map((d) => [d.id, d]));

function dot(a: number[], b: number[]): number {
  return a.reduce((s, x, i) => s + x * b[i], 0);
}

/** Exact nearest by dot product, ties by id. */
function nearest(query: number[], docs: Doc[], limit: number): Hit[] {
  return docs.map((d) => ({ id: d.id, score: f32(dot(query, d.vector)) })).sort((a, b) => b.score - a.score || a.id - b.id).slice(0, limit);
}

const EARTH_RADIUS = 6371008.8;
function haversine(a: { lon: number; lat: number }, b: { lon: number; lat: number }): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((b.lat - a.lat) * rad) / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(((b.lon - a.lon) * rad) / 2) ** 2;
  return 2 * Math.asin(Math.sqrt(h)) * EARTH_RADIUS;
}

const Q1 = [0.4, -0.2, 0.7, 0.1];
const Q2 = [-0.3, 0.8, 0.1, -0.5];

t.test('query forms on one shard and on three', async (t) => {
  const server = await startServer();
  stopAtEnd(t, server);
  const api = (method: string, path: string, body?: unknown) => call(server.url, method, path, body);

  for (const shards of [1, 3]) {
    const name = `forms${shards}`;
    const query = (body: unknown) => api('POST', `/collections/${name}/points/query`, body);
    const points = async (body: unknown) => brief((resultOf<{ points: Hit[] }>(t, await query(body))).points);
    resultOf(t, await api('PUT', `/collections/${name}`, { vectors: { size: 4, distance: 'Dot' }, shard_number: shards }));
    resultOf(t, await api('PUT', `/collections/${name}/points?wait=true`, { points: DOCS.map((d) => ({ id: d.id, vector: d.vector, payload: d.payload })) }));

    await t.test(`${shards} shard(s): no query reads points in id order, like a scroll`, async (t) => {
      const groupA = { must: [{ key: 'group', match: { value: 'a' } }] };
      const result = resultOf<{ points: { id: number; score: number; version: number; payload?: unknown; vector?: unknown }[] }>(t, await query({ filter: groupA, limit: 4, offset: 3, with_payload: ['group'] }));
      const expected = DOCS.filter((d) => d.payload.group === 'a').slice(3, 7);
      t.same(result.points.map((p) => p.id), expected.map((d) => d.id), 'matching ids ascending, offset then limit');
      t.same(result.points.map((p) => [p.score, p.version]), expected.map(() => [1, 0]), 'score 1 and version 0, as Qdrant scrolls');
      t.same(result.points.map((p) => p.payload), expected.map(() => ({ group: 'a' })), 'with_payload applies');
      t.same((resultOf<{ points: Hit[] }>(t, await query({}))).points.map((p) => p.id), DOCS.slice(0, 10).map((d) => d.id), 'an empty body: the first 10 points');

      const batch = resultOf<{ points: Hit[] }[]>(t, await api('POST', `/collections/${name}/points/query/batch`, { searches: [{ limit: 3 }, { query: Q1, limit: 2 }] }));
      t.same(batch.map((r) => brief(r.points).map((h) => h.id)), [[1, 2, 3], nearest(Q1, DOCS, 2).map((h) => h.id)], 'in a batch, beside a nearest query');

      // A prefetch without a query is a scroll too: its first points by id, rescored by the query.
      const rescored = await points({ prefetch: { limit: 12 }, query: Q2, limit: 5 });
      sameHits(t, rescored, nearest(Q2, DOCS.slice(0, 12), 5), 'a prefetch without a query reads the first points by id');

      assertError(t, await query({ prefetch: [{ query: Q1 }, { query: Q2 }], limit: 3 }), 400,
        "Bad request: A query is needed to merge the prefetches. Can't have prefetches without defining a query.", 'prefetches without a query');
      assertError(t, await query({ prefetch: { prefetch: { query: Q1 } }, query: Q2 }), 400,
        "Bad request: A query is needed to merge the prefetches. Can't have prefetches without defining a query.", 'a nested prefetch with prefetches and no query');
      assertError(t, await query({ score_threshold: 0.5 }), 400,
        "Bad request: A query is needed to use the score_threshold. Can't have score_threshold without defining a query.", 'score_threshold without a query');
    });

    await t.test(`${shards} shard(s): groups of the new forms`, async (t) => {
      type Groups = { groups: { id: string; hits: Hit[] }[] };
      const groups = async (body: object) => resultOf<Groups>(t, await api('POST', `/collections/${name}/points/query/groups`, { group_by: 'group', ...body })).groups
        .map((g) => ({ id: g.id, hits: brief(g.hits) }));
      t.same(await groups({ group_size: 2, limit: 2 }), [{ id: 'b', hits: [{ id: 1, score: 1 }, { id: 2, score: 1 }] }, { id: 'a', hits: [{ id: 3, score: 1 }, { id: 6, score: 1 }] }],
        'no query: points by id, each in its group');
      // A formula's score is the price as an f32 (brief reads answers' scores back as f32s).
      const byPrice = DOCS.map((d) => ({ id: d.id, group: d.payload.group, score: Math.fround(d.payload.price ?? 0) })).sort((a, b) => b.score - a.score || a.id - b.id);
      const best = (group: string) => byPrice.find((h) => h.group === group)!;
      const first = byPrice[0].group;
      const expected = [first, first === 'a' ? 'b' : 'a'].map((g) => ({ id: g, hits: [{ id: best(g).id, score: best(g).score }] }));
      t.same(await groups({ prefetch: { query: Q1, limit: 60 }, query: { formula: 'price', defaults: { price: 0 } }, group_size: 1, limit: 2 }), expected, 'a formula: the best price of each group');
    });

    await t.test(`${shards} shard(s): Qdrant's other checks of a query's form`, async (t) => {
      const sampled = await points({ query: { sample: 'random' }, limit: 5, offset: 100 });
      t.equal(new Set(sampled.map((h) => h.id)).size, 5, 'a random sample without prefetches ignores its offset');
      assertError(t, await query({ prefetch: [{ query: Q1 }, { query: Q2 }], query: { fusion: 'rrf' }, using: 'dense' }), 400,
        "Bad request: Fusion queries cannot be combined with the 'using' field.", 'fusion with using');
      assertError(t, await query({ query: { order_by: 'price' }, score_threshold: 1 }), 400, "Bad request: Can't use score_threshold with an order_by query.", 'order_by with score_threshold');
    });

    await t.test(`${shards} shard(s): formula rescoring`, async (t) => {
      const origin = { lon: 2.35, lat: 48.85 };
      const target = Date.UTC(2025, 0, 2) / 1000;
      const body = {
        prefetch: [{ query: Q1, limit: 25, params: { exact: true } }, { query: Q2, limit: 25, params: { exact: true } }],
        query: {
          formula: {
            sum: [
              '$score',
              { mult: [0.25, '$score[1]'] },
              { mult: [0.01, 'price'] },
              { mult: [0.3, { key: 'group', match: { value: 'a' } }] },
              { gauss_decay: { x: { geo_distance: { origin, to: 'loc' } }, scale: 500_000 } },
              { exp_decay: { x: { datetime_key: 'created' }, target: { datetime: '2025-01-02T00:00:00Z' }, scale: 86_400, midpoint: 0.25 } },
              { lin_decay: { x: 'tags[0]', target: 30, scale: 20 } },
            ],
          },
          defaults: { price: 5, '$score[1]': -1 },
        },
        limit: 10,
        offset: 2,
      };
      const p0 = new Map(nearest(Q1, DOCS, 25).map((h) => [h.id, h.score]));
      const p1 = new Map(nearest(Q2, DOCS, 25).map((h) => [h.id, h.score]));
      const candidates = [...new Set([...p0.keys(), ...p1.keys()])];
      const expected = candidates.map((id) => {
        const d = BY_ID.get(id)!;
        const seconds = Date.parse(d.payload.created) / 1000;
        const score = (p0.get(id) ?? 0)
          + 0.25 * (p1.get(id) ?? -1)
          + f32(0.01) * (d.payload.price ?? 5)
          + f32(0.3) * (d.payload.group === 'a' ? 1 : 0)
          + Math.exp((Math.log(0.5) / 500_000 ** 2) * haversine(origin, d.payload.loc) ** 2)
          + Math.exp((Math.log(0.25) / 86_400) * Math.abs(seconds - target))
          + Math.max(1 - (0.5 / 20) * Math.abs(d.id - 30), 0);
        return { id, score: f32(score) };
      }).sort((a, b) => b.score - a.score || a.id - b.id).slice(2, 12);
      sameHits(t, await points(body), expected, 'sum of scores, payload values, a condition, decays of a distance and a datetime');

      const threshold = expected[4].score;
      sameHits(t, await points({ ...body, score_threshold: threshold }), expected.slice(0, 5), 'score_threshold keeps scores at or above it');

      const withDefault = await points({ prefetch: { query: Q1, limit: 60 }, query: { formula: { div: { left: 1, right: { sum: ['price', -10] }, by_zero_default: 7 } }, defaults: { price: 10 } }, limit: 60 });
      const divided = DOCS.map((d) => ({ id: d.id, score: f32((d.payload.price ?? 10) === 10 ? 7 : 1 / ((d.payload.price ?? 10) - 10)) })).sort((a, b) => b.score - a.score || a.id - b.id);
      sameHits(t, withDefault, divided, 'division, with the default for a missing price and by_zero_default for a zero denominator');

      const onFirst = { prefetch: { query: Q1, limit: 60 }, limit: 3 };
      // As in Qdrant, a zero factor or numerator ends the step: what follows is not evaluated, nor can it fail.
      for (const shortcut of [{ mult: [0, { ln: 0 }] }, { div: { left: 0, right: 0 } }]) {
        t.same((await points({ ...onFirst, query: { formula: shortcut } })).map((h) => h.score), [0, 0, 0], `${JSON.stringify(shortcut)} is 0`);
      }
      const formula = (f: unknown, defaults?: unknown) => query({ ...onFirst, query: { formula: f, ...(defaults ? { defaults } : {}) } });
      assertError(t, await formula('price'), 400,
        'Wrong input: Expected number value for price in the payload and/or in the formula defaults. Error: No value found in a payload nor defaults', 'a missing value without default');
      assertError(t, await formula('tags'), 400,
        'Wrong input: Expected number value for tags in the payload and/or in the formula defaults. Error: Value is not a number', 'several values');
      assertError(t, await formula({ geo_distance: { origin, to: 'tags' } }), 400,
        'Wrong input: Expected geo point value for tags in the payload and/or in the formula defaults. Error: invalid type: sequence, expected struct GeoPointShadow', 'several values as a geo point');
      assertError(t, await formula({ geo_distance: { origin, to: 'nowhere' } }, { nowhere: { lon: 200, lat: 10 } }), 400,
        'Wrong input: Expected geo point value for nowhere in the payload and/or in the formula defaults. Error: Wrong format of GeoPoint payload: expected `lat` = 10 within [-90;90] and `lon` = 200 within [-180;180]', 'a default geo point out of range');
      assertError(t, await formula({ sqrt: { neg: 4 } }), 400, 'Wrong input: The expression √-4 = NaN produced a non-finite number', 'sqrt of a negative');
      assertError(t, await formula({ div: { left: 1, right: 0 } }), 400, 'Wrong input: The expression 1/0 = inf produced a non-finite number', 'division by zero without a default');
      assertError(t, await formula({ log10: 0 }), 400, 'Wrong input: The expression log10(0) = -inf produced a non-finite number', 'log10 of 0');
      assertError(t, await formula({ ln: -1 }), 400, 'Wrong input: The expression ln(-1) = NaN produced a non-finite number', 'ln of a negative');
      assertError(t, await formula({ pow: { base: -8, exponent: 0.5 } }), 400, 'Wrong input: The expression -8^0.5 = NaN produced a non-finite number', 'a fractional power of a negative');
      assertError(t, await formula({ mult: [1e30, 1e30] }), 400,
        // f32(1e30)^2 in f64, printed as Rust prints an f64: shortest digits, then zeros.
        'Wrong input: The expression 1000000030094932700000000000000000000000000000000000000000000 as f32 = inf produced a non-finite number', 'a score past the f32 range');
      assertError(t, await formula('$foo'), 400, 'Wrong input: Validation failed: failed to parse variable ID $foo: Invalid reserved word: $foo', 'an unknown reserved word');
      assertError(t, await formula('$score.x'), 400, 'Wrong input: Validation failed: failed to parse variable ID $score.x: Invalid reserved variable: $score.x', 'a score with a path');
      assertError(t, await formula({ exp_decay: { x: 1, midpoint: 1.5 } }), 400, 'Wrong input: Validation failed: Decay midpoint should be in the range (0.0, 1.0), got 1.5.', 'a decay midpoint out of range');
      assertError(t, await formula({ lin_decay: { x: 1, scale: 0 } }), 400, 'Wrong input: Validation failed: Decay scale should be non-zero positive, got 0.', 'a zero decay scale');
      assertError(t, await formula({ datetime: 'yesterday' }), 400, 'Wrong input: Validation failed: failed to parse date-time yesterday: input contains invalid characters', 'an unreadable datetime');
      assertError(t, await query({ query: { formula: '$score' } }), 400, 'Wrong input: Validation failed: cannot apply Formula without prefetches', 'a formula without prefetches');
    });

    await t.test(`${shards} shard(s): nearest with MMR`, async (t) => {
      const lambda = f32(1 - f32(0.6));
      const candidates = nearest(Q1, DOCS, 30);
      const picked: Hit[] = [candidates[0]];
      const left = candidates.slice(1);
      while (picked.length < 9) {
        const scored = left.map((c) => {
          const nearestPicked = Math.max(...picked.map((p) => f32(dot(BY_ID.get(c.id)!.vector, BY_ID.get(p.id)!.vector))));
          return lambda * c.score - (1 - lambda) * nearestPicked;
        });
        const best = scored.indexOf(Math.max(...scored));
        picked.push(left.splice(best, 1)[0]);
      }
      const result = resultOf<{ points: { id: number; score: number; vector?: unknown }[] }>(t, await query({ query: { nearest: Q1, mmr: { diversity: 0.6, candidates_limit: 30 } }, limit: 8, offset: 1 }));
      sameHits(t, brief(result.points), picked.slice(1), 'MMR order over the 30 nearest, with their search scores, offset then limit');
      t.ok(result.points.every((p) => !('vector' in p)), 'the vector MMR compares is not returned unless asked');

      const relevanceOnly = await points({ query: { nearest: Q2, mmr: { diversity: 0 } }, limit: 6 });
      sameHits(t, relevanceOnly, nearest(Q2, DOCS, 6), 'diversity 0: plain nearest order');
      const few = await points({ query: { nearest: Q2, mmr: { candidates_limit: 3 } }, limit: 6 });
      t.equal(few.length, 3, 'no more hits than candidates');

      const rescoring = await points({ prefetch: { query: Q2, limit: 20 }, query: { nearest: Q1, mmr: { diversity: 0 } }, limit: 4 });
      sameHits(t, rescoring, nearest(Q1, DOCS.filter((d) => nearest(Q2, DOCS, 20).some((h) => h.id === d.id)), 4), 'over a prefetch: its candidates only');

      const invalid = await query({ query: { nearest: Q1, mmr: { diversity: 1.5 } } });
      t.equal(invalid.status, 422, 'diversity above 1: 422');
      t.match((invalid.body as { status: { error: string } }).status.error, /diversity: value 1\.5 invalid, must be from 0\.0 to 1\.0/, 'diversity above 1: the validator\'s message');
      const many = await query({ query: { nearest: Q1, mmr: { candidates_limit: 20_000 } } });
      t.match((many.body as { status: { error: string } }).status.error, /candidates_limit: value 20000 invalid, must be 16384 or smaller/, 'candidates_limit above 16384');
    });

    await t.test(`${shards} shard(s): MMR with Cosine, Euclid and Manhattan similarities`, async (t) => {
      const norm = (v: number[]) => {
        const n = Math.sqrt(dot(v, v));
        return v.map((x) => f32(x / n));
      };
      // Qdrant's raw similarity: larger is more similar.
      const raw: Record<string, (a: number[], b: number[]) => number> = {
        Cosine: (a, b) => dot(norm(a), norm(b)),
        Euclid: (a, b) => -a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0),
        Manhattan: (a, b) => -a.reduce((s, x, i) => s + Math.abs(x - b[i]), 0),
      };
      for (const [distance, sim] of Object.entries(raw)) {
        const collection = `${name}-${distance}`;
        resultOf(t, await api('PUT', `/collections/${collection}`, { vectors: { size: 4, distance }, shard_number: shards }));
        resultOf(t, await api('PUT', `/collections/${collection}/points?wait=true`, { points: DOCS.map((d) => ({ id: d.id, vector: d.vector })) }));
        const candidates = DOCS.map((d) => ({ id: d.id, relevance: sim(Q2, d.vector) })).sort((a, b) => b.relevance - a.relevance || a.id - b.id).slice(0, 20);
        const picked = [candidates[0]];
        const left = candidates.slice(1);
        while (picked.length < 7) {
          const scored = left.map((c) => 0.3 * c.relevance - 0.7 * Math.max(...picked.map((p) => sim(BY_ID.get(c.id)!.vector, BY_ID.get(p.id)!.vector))));
          picked.push(left.splice(scored.indexOf(Math.max(...scored)), 1)[0]);
        }
        const result = resultOf<{ points: { id: number; vector: number[] }[] }>(t, await api('POST', `/collections/${collection}/points/query`, {
          query: { nearest: Q2, mmr: { diversity: 0.7, candidates_limit: 20 } }, limit: 7, with_vector: true,
        }));
        t.same(result.points.map((p) => p.id), picked.map((p) => p.id), `${distance}: MMR order`);
        t.ok(result.points.every((p) => Array.isArray(p.vector)), `${distance}: the vector is returned when asked`);
      }
    });

    await t.test(`${shards} shard(s): relevance feedback, naive strategy`, async (t) => {
      const examples = [{ vector: BY_ID.get(5)!.vector, id: 5, score: 0.9 }, { vector: [0.1, 0.1, -0.9, 0.2], score: 0.1 }, { vector: BY_ID.get(7)!.vector, id: 7, score: 0.5 }];
      const [a, b, c] = [0.8, 1.5, 0.5];
      const pairs = examples.flatMap((p) => examples.filter((n) => n !== p && p.score - n.score > 0).map((n) => ({ p, n, w: (p.score - n.score) ** b * c })));
      const expected = DOCS.filter((d) => d.id !== 5 && d.id !== 7).map((d) => ({
        id: d.id,
        score: f32(a * dot(Q1, d.vector) + pairs.reduce((s, { p, n, w }) => s + w * (dot(p.vector, d.vector) - dot(n.vector, d.vector)), 0)),
      })).sort((x, y) => y.score - x.score || x.id - y.id).slice(0, 10);
      const found = await points({
        query: {
          relevance_feedback: {
            target: Q1,
            feedback: examples.map((e) => ({ example: e.id ?? e.vector, score: e.score })),
            strategy: { naive: { a, b, c } },
          },
        },
        limit: 10,
      });
      sameHits(t, found, expected, 'a * sim(target) + sum over ordered pairs of c * confidence^b * (sim(positive) - sim(negative)); example points left out', 1e-4);
      assertError(t, await query({ query: { relevance_feedback: { target: Q1, feedback: [{ example: 999, score: 1 }], strategy: { naive: { a: 1, b: 1, c: 1 } } } } }), 404,
        'Not found: No point with id 999 found', 'a missing example point, even one that forms no pair');
      const negative = await query({ query: { relevance_feedback: { target: Q1, feedback: [], strategy: { naive: { a: 1, b: -1, c: 1 } } } } });
      t.equal(negative.status, 422, 'a negative b: 422');
      t.match((negative.body as { status: { error: string } }).status.error, /b: value -1\.0 invalid, must be 0\.0 or larger/, 'a negative b: the validator\'s message');
    });
  }
});
