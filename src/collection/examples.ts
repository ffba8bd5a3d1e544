// Examples given as stored points, read on the main thread where the shards that run a query
// cannot read them: from a `lookup_from` collection, and for grouped searches. One read per place
// (collection and vector name) for all the nodes asked, not one per node.

import type { PointId } from '../model.js';
import type { QueryVector } from '../shard/search.js';
import { exampleVector, storedIds, type Example, type StoredVectors } from '../shard/query-objective.js';
import { isVectorPlan, type QueryNode } from './query-tree.js';
import type { ShardKeySelector } from './shard-keys.js';
import type { ShardReader } from './shard-reader.js';

interface Source {
  reader: ShardReader;
  vector: string;
  ids: Set<PointId>;
  found: StoredVectors;
}

/** The stored vectors of the examples of some nodes. */
export class ExampleVectors {
  private constructor(private readonly byNode: Map<QueryNode, { vector: string; found: StoredVectors }>) {}

  /**
   * Reads the examples of `nodes` (those with a vector query): from `reader`, or from the
   * collection `lookup` gives for a node's `lookupFrom`.
   */
  static async read(nodes: QueryNode[], reader: ShardReader, lookup: (collection: string, shardKey: ShardKeySelector | null) => ShardReader): Promise<ExampleVectors> {
    const sources = new Map<string, Source>();
    const byNode = new Map<QueryNode, { vector: string; found: StoredVectors }>();
    for (const node of nodes) {
      if (!isVectorPlan(node.plan)) continue;
      const from = node.lookupFrom;
      const vector = from?.vector ?? node.using;
      const key = JSON.stringify(from ? [from.collection, from.shardKey, vector] : [null, null, vector]);
      let source = sources.get(key);
      if (!source) {
        source = { reader: from ? lookup(from.collection, from.shardKey) : reader, vector, ids: new Set(), found: new Map() };
        sources.set(key, source);
      }
      for (const id of storedIds(node.plan)) source.ids.add(id);
      byNode.set(node, { vector, found: source.found });
    }
    await Promise.all([...sources.values()].filter((s) => s.ids.size).map(async (s) => {
      const points = await s.reader.retrieve([...s.ids], { withPayload: { all: false }, withVector: [s.vector] });
      for (const p of points) s.found.set(p.id, p.vectors?.[s.vector]);
    }));
    return new ExampleVectors(byNode);
  }

  /** An example of `node` as a vector (null: its stored point has no vector of the name read). */
  vectorOf(node: QueryNode, example: Example): QueryVector | null {
    return exampleVector(example, this.byNode.get(node)!.found);
  }

  /** The vector name `node`'s examples are read by. */
  vectorName(node: QueryNode): string {
    return this.byNode.get(node)!.vector;
  }
}
