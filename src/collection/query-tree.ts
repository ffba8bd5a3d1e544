// The query API's request as the collection layer takes it (converted once from the wire): a tree
// of nodes, the request and its prefetches, whose examples may still name stored points.

import type { Filter } from '../shard/filter/index.js';
import type { Formula } from '../shard/formula.js';
import type { VectorQuery } from '../shard/query-objective.js';
import type { SearchParams } from '../shard/search.js';
import type { ReadShape } from '../shard/selectors.js';
import type { OrderByRequest } from '../shard/order-by.js';
import type { ShardKeySelector } from './shard-keys.js';

/** What a node asks, before stored points' vectors are looked up. */
export type QueryPlan =
  | VectorQuery
  | { kind: 'fusion'; method: 'rrf' | 'dbsf'; k: number | null; weights: number[] | null }
  | { kind: 'formula'; formula: Formula }
  | { kind: 'order_by'; orderBy: OrderByRequest }
  | { kind: 'sample' };

/** Plans that read points rather than score them (Qdrant runs them as scrolls). */
export type ReadPlan = Extract<QueryPlan, { kind: 'order_by' | 'sample' }>;

export function isReadPlan(plan: QueryPlan | null): plan is ReadPlan {
  return plan !== null && (plan.kind === 'order_by' || plan.kind === 'sample');
}

export function isVectorPlan(plan: QueryPlan | null): plan is VectorQuery {
  return plan !== null && plan.kind !== 'fusion' && plan.kind !== 'formula' && !isReadPlan(plan);
}

/** Where stored examples are looked up when not in the queried collection. */
export interface LookupSource {
  collection: string;
  /** The vector read from the examples; null: the node's own `using`. */
  vector: string | null;
  shardKey: ShardKeySelector | null;
}

/** The request or one of its prefetches. */
export interface QueryNode {
  /** null: no query, the matching points are read in id order (Qdrant refuses it with prefetches). */
  plan: QueryPlan | null;
  prefetches: QueryNode[];
  /** The node's own filter; it applies to its prefetches too. */
  filter: Filter | null;
  using: string;
  lookupFrom: LookupSource | null;
  params: SearchParams;
  scoreThreshold: number | null;
  limit: number;
  offset: number;
}

export interface QueryRequest {
  root: QueryNode;
  /** The parts of each hit returned, for every node of the tree. */
  shape: ReadShape;
  shardKey: ShardKeySelector | null;
}
