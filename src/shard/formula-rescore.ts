// A formula query's rescoring: the points its prefetches found, each scored by the formula from
// its prefetch scores, payload and conditions, where its payload is (Qdrant rescores per shard,
// and the collection merges the shards' best).

import type { Payload, PointId } from '../model.js';
import { pollDeadline } from './deadline.js';
import { onlyIds, type Filter } from './filter/index.js';
import { formulaScore, type Formula } from './formula.js';
import { retrievePoints } from './reads.js';
import type { ScoredView } from './search.js';
import type { ReadShape } from './selectors.js';
import { compareIds, type Shard } from './shard.js';

/** A query tree's formula step: its prefetches' hits, rescored. */
export interface FormulaStep {
  kind: 'formula';
  formula: Formula;
  scoreThreshold: number | null;
  shape: ReadShape;
}

/** What each prefetch found: ids and scores, in the prefetch's order. */
export type PrefetchScores = { id: PointId; score: number }[][];

/** What rescoring reads of the points where it runs. */
export interface FormulaSource {
  /** The point's payload, or undefined when the point is not here. */
  payload(id: PointId): Payload | undefined;
  /** Those of `ids` that match `filter`. */
  matching(filter: Filter, ids: PointId[]): Set<PointId>;
}

export function shardFormulaSource(shard: Shard): FormulaSource {
  return {
    // The payload only: a record would copy the point's vectors too.
    payload: (id) => {
      const offset = shard.offsetOf(id);
      return offset === undefined ? undefined : (shard.payload(offset) ?? {});
    },
    matching: (filter, ids) => new Set(Array.from(shard.matching(onlyIds(filter, ids)), (offset) => shard.pointId(offset))),
  };
}

/**
 * The candidates found here scored by the formula, best first (ties by id), at least
 * `scoreThreshold` when one is set, at most `limit`. A point every prefetch found is scored once.
 */
export function rescoreByFormula(step: FormulaStep, prefetches: PrefetchScores, source: FormulaSource, limit: number): { id: PointId; score: number }[] {
  const { formula, scoreThreshold } = step;
  const candidates = [...new Set(prefetches.flatMap((list) => list.map((h) => h.id)))];
  const scores = prefetches.map((list) => new Map(list.map((h) => [h.id, h.score])));
  const matches = formula.conditions.map((condition) => source.matching(condition, candidates));
  const scored: { id: PointId; score: number }[] = [];
  for (const id of candidates) {
    const payload = source.payload(id);
    if (payload === undefined) continue;
    pollDeadline();
    const score = formulaScore(formula, { payload, scores: scores.map((m) => m.get(id)), matches: matches.map((m) => m.has(id)) });
    if (scoreThreshold === null || score >= scoreThreshold) scored.push({ id, score });
  }
  return scored.sort((a, b) => b.score - a.score || compareIds(a.id, b.id)).slice(0, limit);
}

/** A shard's best `limit` candidates by the formula, with the parts of each point the step asks. */
export function formulaHits(shard: Shard, step: FormulaStep, prefetches: PrefetchScores, limit: number): ScoredView[] {
  const scored = rescoreByFormula(step, prefetches, shardFormulaSource(shard), limit);
  const views = retrievePoints(shard, scored.map((h) => h.id), step.shape);
  return views.map((view, i) => ({ ...view, score: scored[i].score, version: shard.record(view.id)!.version ?? 0 }));
}
