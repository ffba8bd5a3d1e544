// Random payloads and random filters (every condition kind, nested up to two levels): the set
// selectMatching finds must equal a plain reference evaluator's (test/helpers/filter-reference.ts)
// without indexes, with two different sets of payload indexes, and after points change under
// those indexes; matchesPayload must agree point by point.

import t, { type Test } from 'tap';
import { toFilter, type WireFilter } from '../src/api/filter.js';
import type { Bitset } from '../src/engine/bitset.js';
import { indexSemantics, matchesPayload, selectMatching } from '../src/shard/filter/index.js';
import type { IndexSchema } from '../src/shard/payload-index/index.js';
import { rng } from './helpers/data.js';
import { ArraySource, condition, filter, randomPayload, randomPoints, type Rng } from './helpers/filter-data.js';
import { refMatches, type RefPoint } from './helpers/filter-reference.js';

const N = 300;
const FILTERS = 700;

/** Index sets: each kind on its natural key, then kinds on keys holding other types. */
const CONFIGS: Record<string, Record<string, IndexSchema>> = {
  typed: {
    int: 'integer', float: 'float', str: 'keyword', bool: 'bool', uuid: 'uuid', dt: 'datetime', geo: 'geo', text: 'text',
    'obj.a': 'integer', 'obj.b': 'keyword', 'objs[].x': 'integer', 'objs[].y': 'text', arr: 'keyword', nul: 'keyword', mixed: { type: 'integer', lookup: true, range: true },
  },
  crossed: {
    mixed: { type: 'keyword', is_tenant: true }, int: 'float', float: 'integer', str: { type: 'text', tokenizer: 'word' }, dt: 'keyword', 'obj.c.d': 'float',
    'objs[].x': 'float', bool: 'keyword', text: 'keyword', uuid: 'keyword', 'objs[].tags': 'keyword', geo: 'keyword', obj: 'keyword',
  },
};

function textKeys(source: ArraySource, keys: string[]): Set<string> {
  return new Set(keys.filter((k) => source.index(k)?.params.type === 'text'));
}

function members(bits: Bitset): number[] {
  return [...bits];
}

/** Whole random filters, or filters of one random condition (which select less trivially). */
type Shape = 'filters' | 'conditions';

function compare(t: Test, name: string, source: ArraySource, next: Rng, count: number, texts: Set<string>, shape: Shape = 'filters'): void {
  const ids = source.points.flatMap((p) => (p ? [p.id] : [])).concat([999999, 'ffffffff-ffff-ffff-ffff-ffffffffffff']);
  let mismatches = 0;
  let nonTrivial = 0;
  for (let i = 0; i < count; i++) {
    const wire = shape === 'filters' ? filter(next, 2, false, ids) : { must: [condition(next, 1, false, ids)] };
    const internal = toFilter(wire as WireFilter);
    const expected = source.points.flatMap((p, o) => (p && refMatches(wire, p, { textKeys: texts }) ? [o] : []));
    const got = members(selectMatching(internal, source));
    const single = source.points.flatMap((p, o) => (p && matchesPayload(internal, { id: p.id, payload: p.payload, vectors: new Set(p.vectors) }, indexSemantics(source)) ? [o] : []));
    if (expected.length > 0 && expected.length < source.points.length / 2) nonTrivial++;
    if (JSON.stringify(got) !== JSON.stringify(expected) || JSON.stringify(single) !== JSON.stringify(expected)) {
      if (mismatches++ < 3) t.fail(`${name}: filter ${JSON.stringify(wire)}: expected ${expected.length} offsets, selectMatching ${got.length}, matchesPayload ${single.length}; first diff at ${expected.find((o) => !got.includes(o)) ?? got.find((o) => !expected.includes(o))}`);
    }
  }
  t.equal(mismatches, 0, `${name}: ${count} random ${shape} agree with the reference`);
  t.ok(nonTrivial > count / (shape === 'filters' ? 10 : 3), `${name}: ${nonTrivial} of them select a proper, non-empty subset`);
}

function dataset(seed: number): ArraySource {
  const next = rng(seed);
  const points: (RefPoint | undefined)[] = randomPoints(next, N);
  for (let i = 0; i < N; i += 7) points[i] = undefined;
  return new ArraySource(points);
}

t.test('without indexes', async (t) => {
  compare(t, 'no index', dataset(1), rng(101), FILTERS, new Set());
  compare(t, 'no index', dataset(1), rng(102), FILTERS, new Set(), 'conditions');
});

for (const [name, config] of Object.entries(CONFIGS)) {
  t.test(`with ${name} indexes`, async (t) => {
    const source = dataset(2);
    for (const [key, schema] of Object.entries(config)) source.addIndex(key, schema);
    compare(t, name, source, rng(202), FILTERS, textKeys(source, Object.keys(config)));
    compare(t, name, source, rng(203), FILTERS, textKeys(source, Object.keys(config)), 'conditions');
    t.ok(source.answered > FILTERS / 2, `indexes answered ${source.answered} conditions`);

    // Change points under the indexes: new payloads, deletions, revivals.
    const next = rng(303);
    for (let k = 0; k < N; k++) {
      const offset = Math.floor(next() * N);
      const r = next();
      if (r < 0.3) source.put(offset, undefined);
      else source.put(offset, { id: 100000 + k, payload: randomPayload(next), vectors: r < 0.6 ? [''] : [] });
    }
    compare(t, `${name} after updates`, source, rng(404), FILTERS / 2, textKeys(source, Object.keys(config)));
  });
}
