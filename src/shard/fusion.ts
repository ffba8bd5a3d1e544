// Fusion of several ranked result lists (the query API's prefetch + fusion), as Qdrant defines
// it: reciprocal rank fusion, where only positions count, and distribution-based score fusion,
// where each list's scores are normalised between mean -/+ 3 standard deviations and summed.

import type { PointId } from '../model.js';
import type { ScoredView } from './search.js';
import { compareIds } from './shard.js';

export interface RankedList {
  hits: ScoredView[];
  /** Whether larger scores are better in this list (false for Euclid and Manhattan searches). */
  largerBetter: boolean;
}

export const DEFAULT_RRF_K = 2;

function accumulate(lists: RankedList[], score: (list: RankedList, position: number, listIndex: number) => number): ScoredView[] {
  const byId = new Map<PointId, ScoredView>();
  lists.forEach((list, li) => {
    list.hits.forEach((hit, position) => {
      const s = score(list, position, li);
      const seen = byId.get(hit.id);
      if (seen) seen.score += s;
      else byId.set(hit.id, { ...hit, score: s });
    });
  });
  return [...byId.values()].sort((a, b) => b.score - a.score || compareIds(a.id, b.id));
}

/** 1 / ((position + 1) / weight + k - 1), summed over lists; with weight 1 that is 1 / (position + k). */
export function rrf(lists: RankedList[], k = DEFAULT_RRF_K, weights: number[] | null = null): ScoredView[] {
  return accumulate(lists, (_, position, li) => {
    const weight = weights?.[li] ?? 1;
    return weight <= 0 ? 0 : 1 / ((position + 1) / weight + k - 1);
  });
}

/** Mean and sample variance (Welford), in f32 steps as Qdrant computes them. */
function meanVariance(scores: number[]): [number, number] {
  let mean = 0;
  let aggregate = 0;
  scores.forEach((s, i) => {
    const oldDelta = Math.fround(s - mean);
    mean = Math.fround(mean + oldDelta / (i + 1));
    aggregate = Math.fround(aggregate + oldDelta * Math.fround(s - mean));
  });
  return [mean, Math.fround(aggregate / (scores.length - 1))];
}

function normalised(list: RankedList): Map<ScoredView, number> {
  const out = new Map<ScoredView, number>();
  if (list.hits.length < 2) {
    for (const h of list.hits) out.set(h, 0.5);
    return out;
  }
  const [mean, variance] = meanVariance(list.hits.map((h) => h.score));
  const sd = Math.sqrt(variance);
  const min = mean - 3 * sd;
  const max = mean + 3 * sd;
  for (const h of list.hits) {
    if (min === max) out.set(h, 0.5);
    else out.set(h, list.largerBetter ? (h.score - min) / (max - min) : (max - h.score) / (max - min));
  }
  return out;
}

export function dbsf(lists: RankedList[]): ScoredView[] {
  const norms = lists.map(normalised);
  return accumulate(lists, (list, position, li) => norms[li].get(list.hits[position])!);
}
