// What the answers of several replicas to one read resolve to (Qdrant's `Resolve` impls,
// lib/collection/src/shards/resolve.rs). An item (a point, a scored point, a facet value) is
// kept when at least k answers hold it identically, k = all answers (`All`) or a majority
// (`Majority`); the kept items come out in the replicas' own order, merged head by head. A
// single answer is the read's answer as is.

import type { ReplicaResult, ReplicaTask } from './replica.js';
import type { ResolveCondition } from './read-consistency.js';
import type { PointView } from '../shard/selectors.js';
import type { ScoredView } from '../shard/search.js';
import type { RankedList } from '../shard/fusion.js';
import type { FacetValue } from '../shard/payload-index/types.js';

/**
 * The reads whose answers resolve, as in Qdrant: retrieve and scroll (records), count, search
 * (a batch, each entry resolved alone), query (each query's list), formula (Qdrant rescores by
 * formula inside the shard's query, whose answer resolves as a scored list) and facet. The other
 * read tasks take one replica's answer: `sample` (Qdrant would intersect independent random
 * draws; one replica's draw is still uniform, and its `matching` must agree with its points),
 * `mmr` (it computes over candidates the task carries, not over the replica's data), and tasks
 * that are not reads of points (a dry run, stats, optimizations, snapshots).
 */
export type ResolvedRead = Extract<ReplicaTask, { type: 'retrieve' | 'scroll' | 'count' | 'search' | 'query' | 'formula' | 'facet' }>;

const RESOLVED: ReadonlySet<ReplicaTask['type']> = new Set(['retrieve', 'scroll', 'count', 'search', 'query', 'formula', 'facet']);

export function resolves(task: ReplicaTask): task is ResolvedRead {
  return RESOLVED.has(task.type);
}

/** The answers of one or more replicas to `task`, resolved into one (the first, for a task that does not resolve). */
export function resolveAnswers<T extends ReplicaTask>(task: T, answers: ReplicaResult<T>[], condition: ResolveCondition): ReplicaResult<T> {
  if (answers.length === 1 || !resolves(task)) return answers[0];
  return resolveByKind(task.type, answers, condition) as ReplicaResult<T>;
}

function resolveByKind(type: ResolvedRead['type'], answers: unknown[], condition: ResolveCondition): unknown {
  switch (type) {
    case 'retrieve':
    case 'scroll':
      return resolveRecords(answers as PointView[][], condition);
    case 'count':
      return resolveCount(answers as number[], condition);
    case 'search':
      return transpose(answers as ScoredView[][][]).map((entry) => resolveScored(entry, condition));
    case 'query':
      return transpose(answers as RankedList[][]).map((lists) => ({ hits: resolveScored(lists.map((l) => l.hits), condition), largerBetter: lists[0].largerBetter }));
    case 'formula':
      return resolveScored(answers as ScoredView[][], condition);
    case 'facet':
      return resolveFacet(answers as [FacetValue, number][][], condition);
  }
}

/** How many answers must hold an item for it to be kept. */
export function resolutionCount(condition: ResolveCondition, answers: number): number {
  return condition === 'All' ? answers : Math.floor(answers / 2) + 1;
}

/** A count: the smallest (`All`), or the middle of the sorted counts (`Majority`). */
export function resolveCount(counts: readonly number[], condition: ResolveCondition): number {
  if (counts.length === 0) return 0;
  if (condition === 'All') return Math.min(...counts);
  return [...counts].sort((a, b) => a - b)[Math.floor(counts.length / 2)];
}

/** Records: the same id, order value, vectors and payload. */
export function resolveRecords(answers: readonly PointView[][], condition: ResolveCondition): PointView[] {
  return resolveItems(answers, condition, (p) => p.id, sameRecord);
}

/** Scored points: as records, and the same score. */
export function resolveScored(answers: readonly ScoredView[][], condition: ResolveCondition): ScoredView[] {
  return resolveItems(answers, condition, (p) => p.id, (a, b) => a.score === b.score && sameRecord(a, b));
}

/**
 * Facet hits: values held by enough answers, each count resolved as a count (so the values
 * agree, the counts may differ), in the answers' order.
 */
export function resolveFacet(answers: readonly [FacetValue, number][][], condition: ResolveCondition): [FacetValue, number][] {
  const k = resolutionCount(condition, answers.length);
  const counts = new Map<FacetValue, number[]>();
  for (const hits of answers) for (const [value, count] of hits) counts.set(value, [...(counts.get(value) ?? []), count]);
  const resolved = new Map<FacetValue, number>();
  for (const [value, seen] of counts) if (seen.length >= k) resolved.set(value, resolveCount(seen, condition));
  const kept = answers.map((hits) => hits.filter(([value]) => resolved.has(value)).map(([value]): [FacetValue, number] => [value, resolved.get(value)!]));
  return mergeInOrder(kept, ([value]) => value);
}

/** Per batch entry, the answers' lists for it (an answer shorter than others drops out of later entries). */
function transpose<T>(answers: readonly T[][]): T[][] {
  const length = answers[0]?.length ?? 0;
  return Array.from({ length }, (_, i) => answers.filter((a) => i < a.length).map((a) => a[i]));
}

/**
 * Items held identically by at least k answers. Every occurrence of a kept variant stays in its
 * answer; the answers then merge head by head. When every item of every answer is kept, the
 * first answer is the result as is.
 */
function resolveItems<I>(answers: readonly I[][], condition: ResolveCondition, keyOf: (item: I) => unknown, same: (a: I, b: I) => boolean): I[] {
  const k = resolutionCount(condition, answers.length);
  const variants = new Map<unknown, { item: I; at: [number, number][] }[]>();
  answers.forEach((items, row) =>
    items.forEach((item, index) => {
      const key = keyOf(item);
      const known = variants.get(key) ?? [];
      const variant = known.find((v) => same(item, v.item));
      if (variant) variant.at.push([row, index]);
      else variants.set(key, [...known, { item, at: [[row, index]] }]);
    }),
  );
  const kept = answers.map(() => new Set<number>());
  let keptCount = 0;
  for (const known of variants.values()) {
    const variant = known.find((v) => v.at.length >= k);
    for (const [row, index] of variant?.at ?? []) kept[row].add(index);
    keptCount += variant?.at.length ?? 0;
  }
  if (keptCount === answers.reduce((n, items) => n + items.length, 0)) return answers[0] ?? [];
  return mergeInOrder(answers.map((items, row) => items.filter((_, index) => kept[row].has(index))), keyOf);
}

/**
 * Merges lists of kept items by taking, at each step, the item at the head of the most lists
 * (ties: the one whose first list comes first), advancing every list it heads. An item comes out
 * once: where answers order kept items differently, an item taken while other lists still hold
 * it further down would come again when they reach it; Qdrant's merge emits it again (and its
 * collection then counts such a facet value twice), which is left out here.
 */
function mergeInOrder<I>(lists: readonly I[][], keyOf: (item: I) => unknown): I[] {
  const heads = lists.map(() => 0);
  const emitted = new Set<unknown>();
  const out: I[] = [];
  for (;;) {
    const rowsByKey = new Map<unknown, number[]>();
    lists.forEach((list, row) => {
      if (heads[row] < list.length) {
        const key = keyOf(list[heads[row]]);
        rowsByKey.set(key, [...(rowsByKey.get(key) ?? []), row]);
      }
    });
    let chosen: [unknown, number[]] | undefined;
    for (const entry of rowsByKey) if (!chosen || entry[1].length > chosen[1].length) chosen = entry;
    if (!chosen) return out;
    const [key, rows] = chosen;
    for (const row of rows) heads[row]++;
    if (emitted.has(key)) continue;
    emitted.add(key);
    // Every chosen head is the same kept variant; Qdrant answers the last of them.
    const last = rows[rows.length - 1];
    out.push(lists[last][heads[last] - 1]);
  }
}

function sameRecord(a: PointView, b: PointView): boolean {
  return a.id === b.id && a.orderValue === b.orderValue && sameValue(a.vectors, b.vectors) && samePayload(a.payload, b.payload);
}

/** Payloads: an absent payload equals an empty one (a replica may leave an empty payload out). */
function samePayload(a: PointView['payload'], b: PointView['payload']): boolean {
  if (a === undefined || b === undefined) return (a ?? b) === undefined || Object.keys((a ?? b)!).length === 0;
  return sameValue(a, b);
}

/** Deep equality of JSON-like values and vectors (typed arrays element by element, object keys in any order). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (ArrayBuffer.isView(a) || Array.isArray(a)) {
    if (!(ArrayBuffer.isView(b) || Array.isArray(b))) return false;
    const x = a as unknown as ArrayLike<unknown>;
    const y = b as unknown as ArrayLike<unknown>;
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameValue(x[i], y[i])) return false;
    return true;
  }
  if (ArrayBuffer.isView(b) || Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((key) => Object.hasOwn(b, key) && sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}
