// `quiver bench multivector --int8 --cold`: each index loaded again with its lists read from a page
// file answers as the same index in memory (so its recall equals it at every ef).

import t from 'tap';
import { multivectorMode } from '../src/bench/multivector-mode.js';
import type { Progress } from '../src/bench/progress.js';

t.test('cold series: the same recall as in memory at every ef, exact recall 1', async (t) => {
  const quiet: Progress = { start: () => ({ tick: () => {}, done: () => {} }), note: () => {} };
  const { series } = await multivectorMode({
    points: 1500, dim: 32, minK: 2, maxK: 6, queries: 20, queryK: 3, topics: 12, seed: 3, distance: 'Cosine', k: 10,
    m: 12, efConstruct: 48, efs: [16, 64], repeats: 1, exactQueries: 5, int8: true, oversampling: 2, cold: true,
  }, quiet);
  const byName = new Map(series.map((s) => [s.engine, s]));
  t.same([...byName.keys()].sort(), ['quiver multivector', 'quiver multivector cold', 'quiver multivector exact', 'quiver multivector int8', 'quiver multivector int8 cold']);
  for (const name of ['quiver multivector', 'quiver multivector int8']) {
    const warm = byName.get(name)!;
    const cold = byName.get(`${name} cold`)!;
    t.same(cold.points.map((p) => [p.ef, p.recall]), warm.points.map((p) => [p.ef, p.recall]), `${name}: cold lists, the same recall at each ef`);
    // Less memory shows only past the 8 MiB page budget (the README's 20000-point runs); here both are reported.
    t.ok(cold.memoryBytes! > 0 && warm.memoryBytes! > 0, `${name}: linear memory reported for both`);
  }
  t.equal(byName.get('quiver multivector exact')!.points[0].recall, 1, 'the exact scan is its own ground truth');
  t.ok(byName.get('quiver multivector')!.points.at(-1)!.recall > 0.8, 'the graph at ef 64 finds most of the exact top 10');
});
