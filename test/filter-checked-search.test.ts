// Filtered search with conditions checked as the search reaches points (planFilter + the engine's
// checked search, as src/shard/search.ts composes them), against a brute-force reference over a
// plain filter evaluator: random payloads, deleted points, points without the searched vector,
// filters on an unindexed key from 0.1% to 100% selectivity, random filters (must_not, should,
// min_should, nested, ids, vectors), with and without payload indexes, the checked keys read from
// payloads or from payload columns. Exact plans must give the exact answer; graph plans the same
// answer as a search over the fully evaluated filter (the engine's decisions depend only on which
// points are allowed), with fewer points checked.

import t, { type Test } from 'tap';
import { toFilter, type WireFilter } from '../src/api/filter.js';
import { VectorIndex } from '../src/engine/index.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { allOf, planFilter, selectMatching } from '../src/shard/filter/index.js';
import { clustered, rng, row } from './helpers/data.js';
import { ArraySource, filter as randomFilter, randomPoints } from './helpers/filter-data.js';
import { refMatches, type RefPoint } from './helpers/filter-reference.js';
import { bruteForce, recall } from './helpers/reference.js';
import { PayloadColumns, type PayloadColumn } from '../src/shard/payload-columns.js';

const N = 3000;
const DIM = 16;
const QUERIES = 12;
const K = 10;
const VECTOR = 'image';
const data = clustered(N + QUERIES, DIM, 20, 77);
const queries = Array.from({ length: QUERIES }, (_, q) => row(data, DIM, N + q));

/** Random points with an unindexed-by-default key `sel` (0..999, spread over the clusters); every 11th deleted. */
function dataset(): ArraySource {
  const next = rng(5);
  const points: (RefPoint | undefined)[] = randomPoints(next, N).map((p, i) => ({ ...p, payload: { ...p.payload, sel: (i * 7919) % 1000 } }));
  for (let i = 0; i < N; i += 11) points[i] = undefined;
  return new ArraySource(points);
}

/**
 * The index of VECTOR over the live points holding it; deleted points were stored and deleted
 * (tombstones that route). `fullScanThreshold` in KiB: 1 KiB is 16 of these vectors.
 */
async function vectorIndex(source: ArraySource, fullScanThreshold: number): Promise<VectorIndex> {
  const index = await VectorIndex.create(await engineModule(), { dim: DIM, distance: 'Euclid', fullScanThreshold });
  for (let i = 0; i < N; i++) {
    const p = source.points[i];
    if (!p || p.vectors.includes(VECTOR)) index.upsert(i, row(data, DIM, i));
    if (!p) index.delete(i);
  }
  return index;
}

interface Outcome {
  offsets: number[];
  checked: number;
}

/** The search as a shard runs it: the plan's candidates, the rest checked by the engine's plan. */
function checkedSearch(index: VectorIndex, source: ArraySource, wire: object, query: Float32Array, exact: boolean): Outcome {
  const plan = planFilter(toFilter(wire as WireFilter), source);
  const rest = plan.rest;
  const found = index.search(query, { limit: K, ef: 64, exact, filter: plan.candidates, check: rest ? plan.check.matcher(rest) : undefined });
  return { offsets: Array.from(found.offsets), checked: plan.check.checked };
}

/** The search over the whole filter evaluated first (the plan before checks as reached). */
function bitsetSearch(index: VectorIndex, source: ArraySource, wire: object, query: Float32Array): number[] {
  return Array.from(index.search(query, { limit: K, ef: 64, filter: selectMatching(toFilter(wire as WireFilter), source) }).offsets);
}

function reference(source: ArraySource, wire: object, query: Float32Array, texts: Set<string>): number[] {
  const allowed = (i: number) => {
    const p = source.points[i];
    return p !== undefined && p.vectors.includes(VECTOR) && refMatches(wire, p, { textKeys: texts });
  };
  return bruteForce('Euclid', data.subarray(0, N * DIM), DIM, query, K, allowed);
}

const SHARES = [0.001, 0.01, 0.1, 0.5, 1];
const selective = (share: number) => ({ must: [{ key: 'sel', range: { lt: share * 1000 } }] });

/** Random filters, alone and under the unindexed `sel` condition at 50%. */
function randomFilters(source: ArraySource, count: number): object[] {
  const next = rng(909);
  const ids = source.points.flatMap((p) => (p ? [p.id] : []));
  return Array.from({ length: count }, (_, i) => {
    const f = randomFilter(next, 2, false, ids);
    return i % 2 === 0 ? f : { must: [{ key: 'sel', range: { gte: 500 } }], should: [f, { is_empty: { key: 'sel' } }] };
  });
}

async function compareAll(t: Test, name: string, source: ArraySource, texts: Set<string>): Promise<void> {
  const exactIndex = await vectorIndex(source, 10000);
  const graphIndex = await vectorIndex(source, 1);
  const filters = [...SHARES.map(selective), ...randomFilters(source, 60)];
  let exactMismatches = 0;
  let defaultMismatches = 0;
  let graphMismatches = 0;
  let recallSum = 0;
  let recallCount = 0;
  for (const [f, wire] of filters.entries()) {
    for (const query of queries.slice(0, f < SHARES.length ? QUERIES : 3)) {
      const truth = reference(source, wire, query, texts);
      if (JSON.stringify(checkedSearch(graphIndex, source, wire, query, true).offsets) !== JSON.stringify(truth) && exactMismatches++ < 3) {
        t.fail(`${name}: params.exact under ${JSON.stringify(wire)} differs from brute force`);
      }
      // The default threshold (10000 KiB: 160000 of these vectors) scans every filtered set exactly.
      if (JSON.stringify(checkedSearch(exactIndex, source, wire, query, false).offsets) !== JSON.stringify(truth) && defaultMismatches++ < 3) {
        t.fail(`${name}: the default threshold's plan under ${JSON.stringify(wire)} differs from brute force`);
      }
      const graph = checkedSearch(graphIndex, source, wire, query, false).offsets;
      if (JSON.stringify(graph) !== JSON.stringify(bitsetSearch(graphIndex, source, wire, query)) && graphMismatches++ < 3) {
        t.fail(`${name}: the graph plan under ${JSON.stringify(wire)} differs from the search over the evaluated filter`);
      }
      if (truth.length > 0) {
        recallSum += recall(graph, truth);
        recallCount++;
      }
    }
  }
  t.equal(exactMismatches, 0, `${name}: params.exact answers equal brute force`);
  t.equal(defaultMismatches, 0, `${name}: exact plans (default full_scan_threshold) equal brute force`);
  t.equal(graphMismatches, 0, `${name}: graph plans equal the search over the evaluated filter`);
  t.ok(recallSum / recallCount >= 0.9, `${name}: graph plans' recall@10 ${(recallSum / recallCount).toFixed(3)} >= 0.9`);

  // Where the filter lets many points through, the graph search checks only what it reaches.
  for (const share of [0.1, 0.5, 1]) {
    const live = source.points.filter((p) => p !== undefined).length;
    let checked = 0;
    for (const query of queries) checked += checkedSearch(graphIndex, source, selective(share), query, false).checked;
    t.ok(checked / QUERIES < live / 2, `${name}: ${share * 100}% selectivity: ${Math.round(checked / QUERIES)} of ${live} points checked per search`);
  }
}

t.test('unindexed and random filters, no payload index', async (t) => {
  await compareAll(t, 'no index', dataset(), new Set());
});

/** The same points with their top-level values also kept in columns, as a shard keeps them: checks read those. */
class ColumnSource extends ArraySource {
  private readonly columns = new PayloadColumns(this.points.map((p) => p?.payload));
  columnsAsked = 0;

  column(key: string): PayloadColumn {
    this.columnsAsked++;
    return this.columns.column(key);
  }
}

t.test('the same, checks reading payload columns', async (t) => {
  const source = new ColumnSource(dataset().points);
  await compareAll(t, 'columns', source, new Set());
  t.ok(source.columnsAsked > 0, `checks read columns (${source.columnsAsked} asked for)`);
});

t.test('the same with payload indexes (the unindexed key stays unindexed)', async (t) => {
  const source = dataset();
  for (const [key, schema] of Object.entries({ int: 'integer', str: 'keyword', text: 'text', 'objs[].x': 'integer', bool: 'bool' } as const)) source.addIndex(key, schema);
  await compareAll(t, 'indexed', source, new Set(['text']));
  t.ok(source.answered > 0, `indexes answered ${source.answered} conditions`);
});

t.test('an index on the filtered key answers it: nothing left to check', async (t) => {
  const source = dataset();
  source.addIndex('sel', 'integer');
  for (const share of SHARES) {
    const plan = planFilter(toFilter(selective(share) as WireFilter), source);
    t.equal(plan.rest, null, `${share * 100}%: the index answered the whole filter`);
    t.same([...plan.candidates], [...selectMatching(toFilter(selective(share) as WireFilter), source)], `${share * 100}%: candidates are the matching points`);
  }
  // Filters combined by allOf (a prefetch's under its parent's) are answered as a flat one.
  const combined = allOf(toFilter(selective(0.5) as WireFilter), toFilter({ must: [{ key: 'sel', range: { gte: 100 } }] } as WireFilter))!;
  const plan = planFilter(combined, source);
  t.equal(plan.rest, null, 'combined filters: the index answered both');
  t.same([...plan.candidates], [...selectMatching(combined, source)], 'combined filters: candidates are the matching points');
});
