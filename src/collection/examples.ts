// Examples given as stored points: their vectors are read before a query tree is planned, with
// one read per place they are read from (this collection or a `lookup_from` one, and a vector name)
// for the whole tree, not one per node.

import { BadInput } from '../errors.js';
import { pointNotFound } from '../messages.js';
import type { PointId } from '../model.js';
import type { ExamplePair, SearchQuery } from '../shard/search.js';
import type { ShardReader } from './shard-reader.js';
import type { ShardKeySelector } from './shard-keys.js';
import { isVectorPlan, type Example, type QueryNode, type VectorPlan } from './query-tree.js';

/** Where a node's stored examples are read: a collection's shards and a vector name. */
interface ExampleSource {
  reader: ShardReader;
  vector: string;
}

/** Every example a plan names, in any role. */
function examplesOf(plan: VectorPlan): Example[] {
  switch (plan.kind) {
    case 'nearest':
      return [plan.input];
    case 'recommend':
      return [...plan.positives, ...plan.negatives];
    case 'discover':
      return [plan.target, ...plan.pairs.flat()];
    case 'context':
      return plan.pairs.flat();
  }
}

/** The ids of the stored points a plan names. */
export function storedIds(plan: VectorPlan): PointId[] {
  return examplesOf(plan).flatMap((e) => ('pointId' in e ? [e.pointId] : []));
}

/** Qdrant's average_vector query: avg(positives), or avg(p) + (avg(p) - avg(negatives)). */
export function averageVector(positives: number[][], negatives: number[][]): number[] {
  if (positives.length === 0) throw new BadInput('Positive vectors should not be empty with `average` strategy');
  const avg = (list: number[][]) => list[0].map((_, j) => list.reduce((sum, v) => sum + v[j], 0) / list.length);
  const pos = avg(positives);
  if (negatives.length === 0) return pos;
  const neg = avg(negatives);
  return pos.map((p, j) => p + p - neg[j]);
}

/** The search a vector plan makes once its examples are vectors. */
export function searchQueryOf(plan: VectorPlan, vectorOf: (e: Example) => number[]): SearchQuery {
  const pairs = (list: [Example, Example][]): ExamplePair[] => list.map(([p, n]) => [vectorOf(p), vectorOf(n)]);
  switch (plan.kind) {
    case 'nearest':
      return { kind: 'nearest', vector: vectorOf(plan.input) };
    case 'recommend': {
      const positives = plan.positives.map(vectorOf);
      const negatives = plan.negatives.map(vectorOf);
      return plan.strategy === 'average_vector'
        ? { kind: 'nearest', vector: averageVector(positives, negatives) }
        : { kind: 'custom', objective: { type: plan.strategy, positives, negatives } };
    }
    case 'discover':
      return { kind: 'custom', objective: { type: 'discover', target: vectorOf(plan.target), pairs: pairs(plan.pairs) } };
    case 'context':
      return { kind: 'custom', objective: { type: 'context', pairs: pairs(plan.pairs) } };
  }
}

/** The stored vectors of the examples of some nodes, read once per source. */
export class ExampleVectors {
  private constructor(private readonly byNode: Map<QueryNode, { vector: string; found: Map<PointId, number[] | undefined> }>) {}

  /**
   * Reads the examples of `nodes` (those with a vector plan): from `reader`, or from the
   * collection `lookup` gives for a node's `lookupFrom`.
   */
  static async read(nodes: QueryNode[], reader: ShardReader, lookup: (collection: string, shardKey: ShardKeySelector | null) => ShardReader): Promise<ExampleVectors> {
    const sources = new Map<string, ExampleSource & { ids: Set<PointId>; found: Map<PointId, number[] | undefined> }>();
    const byNode = new Map<QueryNode, { vector: string; found: Map<PointId, number[] | undefined> }>();
    for (const node of nodes) {
      if (!isVectorPlan(node.plan)) continue;
      const ids = storedIds(node.plan);
      const from = node.lookupFrom;
      const vector = from?.vector ?? node.using;
      const key = JSON.stringify(from ? [from.collection, from.shardKey, vector] : [null, null, vector]);
      let source = sources.get(key);
      if (!source) {
        source = { reader: from ? lookup(from.collection, from.shardKey) : reader, vector, ids: new Set(), found: new Map() };
        sources.set(key, source);
      }
      for (const id of ids) source.ids.add(id);
      byNode.set(node, { vector, found: source.found });
    }
    await Promise.all([...sources.values()].filter((s) => s.ids.size).map(async (s) => {
      const points = await s.reader.retrieve([...s.ids], { withPayload: { all: false }, withVector: [s.vector] });
      for (const p of points) s.found.set(p.id, p.vectors?.[s.vector]);
    }));
    return new ExampleVectors(byNode);
  }

  /** An example of `node` as a vector. */
  vectorOf(node: QueryNode, example: Example): number[] {
    if ('vector' in example) return example.vector;
    const { vector, found } = this.byNode.get(node)!;
    if (!found.has(example.pointId)) throw pointNotFound(example.pointId);
    const v = found.get(example.pointId);
    if (!v) throw new BadInput(`Vector \`${vector}\` of point ${example.pointId} not found`);
    return v;
  }
}
