// The query API planned and run below the HTTP layer: a request's tree becomes a shard query plan
// (examples read as vectors, filters inherited down the tree, order_by checked) and runs over the
// shards it reads; requests of a batch that read the same shards run together.

import { BadRequest } from '../errors.js';
import { validationFailed } from '../messages.js';
import { DEFAULT_VECTOR } from '../model.js';
import { allOf, exceptIds, type Filter } from '../shard/filter/index.js';
import { storedIds, withVectors, type VectorQuery } from '../shard/query-objective.js';
import type { SearchStep, ShardQuery } from '../shard/query-plan.js';
import type { ScoredView } from '../shard/search.js';
import type { ReadShape } from '../shard/selectors.js';
import { ExampleVectors } from './examples.js';
import type { CollectionManager } from './manager.js';
import { isReadPlan, type QueryNode, type QueryRequest } from './query-tree.js';
import type { ShardKeySelector } from './shard-keys.js';
import type { ShardReader } from './shard-reader.js';

/** The shards a query may read. */
export interface QueryScope {
  /** The queried collection's shards of a shard-key selection (all of them for null). */
  reader(shardKey: ShardKeySelector | null): ShardReader;
  /** Another collection's shards: where `lookup_from` and `with_lookup` read. */
  lookup(collection: string, shardKey: ShardKeySelector | null): ShardReader;
}

/** The scope of a query on the collection (or alias) `name`. */
export function collectionScope(collections: CollectionManager, name: string): QueryScope {
  const collection = collections.get(name);
  return {
    reader: (shardKey) => collection.reader(shardKey),
    lookup: (other, shardKey) => collections.get(other).reader(shardKey),
  };
}

function nodesOf(node: QueryNode): QueryNode[] {
  return [node, ...node.prefetches.flatMap(nodesOf)];
}

/** What planning a tree needs besides the tree. */
interface Planning {
  shape: ReadShape;
  /** The examples read here: those of `lookup_from` nodes (the shards read the others). */
  examples: ExampleVectors;
}

/**
 * A vector query's search. Examples that are this collection's points are left out of the
 * results; those of another collection (`lookup_from`) go to the shards as vectors.
 */
function searchStep(node: QueryNode, plan: VectorQuery, filter: Filter | null, { shape, examples }: Planning): SearchStep {
  return {
    kind: 'search',
    query: node.lookupFrom ? withVectors(plan, (e) => examples.vectorOf(node, e), examples.vectorName(node)) : plan,
    spec: {
      using: node.using,
      filter: node.lookupFrom ? filter : exceptIds(filter, storedIds(plan)),
      params: node.params,
      scoreThreshold: node.scoreThreshold,
      ...shape,
    },
  };
}

/** Qdrant's checks of a node's form (CollectionQueryRequest::validation), made before those of its prefetches. */
function checkNode(node: QueryNode): void {
  if (node.plan === null && node.prefetches.length > 0) {
    throw new BadRequest("A query is needed to merge the prefetches. Can't have prefetches without defining a query.");
  }
  if (node.scoreThreshold !== null) {
    if (node.plan === null) throw new BadRequest("A query is needed to use the score_threshold. Can't have score_threshold without defining a query.");
    if (node.plan.kind === 'order_by') throw new BadRequest("Can't use score_threshold with an order_by query.");
  }
  if (node.plan?.kind === 'fusion' && node.using !== DEFAULT_VECTOR) throw new BadRequest("Fusion queries cannot be combined with the 'using' field.");
}

function planNode(node: QueryNode, inherited: Filter | null, planning: Planning, isRoot = true): ShardQuery {
  checkNode(node);
  const filter = allOf(inherited, node.filter);
  const prefetches = node.prefetches.map((p) => planNode(p, filter, planning, false));
  const plan = node.plan;
  // Qdrant ignores the offset of a random sample without prefetches: its order is not stable anyway.
  const offset = isRoot && plan?.kind === 'sample' && prefetches.length === 0 ? 0 : node.offset;
  const paging = { prefetches, limit: node.limit, offset };
  // No query: the matching points in id order, as Qdrant's scroll reads them.
  if (plan === null) return { step: { kind: 'read', order: { kind: 'id' }, filter, shape: planning.shape }, ...paging };
  if (plan.kind === 'fusion') {
    if (prefetches.length === 0) throw validationFailed('cannot apply Fusion without prefetches');
    return { step: { kind: 'fusion', method: plan.method, k: plan.k, weights: plan.weights, scoreThreshold: node.scoreThreshold }, ...paging };
  }
  if (plan.kind === 'formula') {
    if (prefetches.length === 0) throw validationFailed('cannot apply Formula without prefetches');
    return { step: { kind: 'formula', formula: plan.formula, scoreThreshold: node.scoreThreshold, shape: planning.shape }, ...paging };
  }
  if (isReadPlan(plan)) {
    const order = plan.kind === 'sample' ? { kind: 'sample' as const } : { kind: 'order_by' as const, orderBy: plan.orderBy };
    return { step: { kind: 'read', order, filter, shape: planning.shape }, ...paging };
  }
  if (plan.kind === 'mmr' && !isRoot && prefetches.length === 0) {
    // Qdrant reads a prefetch's MMR query without prefetches as the search for its candidates only.
    return { step: searchStep(node, { kind: 'nearest', input: plan.input }, filter, planning), ...paging, limit: plan.candidatesLimit };
  }
  return { step: searchStep(node, plan, filter, planning), ...paging };
}

/** A request's tree as the shards run it. */
async function planQuery(scope: QueryScope, reader: ShardReader, request: QueryRequest): Promise<ShardQuery> {
  const examples = await ExampleVectors.read(nodesOf(request.root).filter((n) => n.lookupFrom), reader, scope.lookup);
  return planNode(request.root, null, { shape: request.shape, examples });
}

/**
 * Runs query requests: those reading the same shards (the same shard-key selection, usually all
 * of them) go to the shards together, each request's tree planned whole.
 */
export async function runQueries(scope: QueryScope, requests: QueryRequest[]): Promise<ScoredView[][]> {
  const out: ScoredView[][] = new Array(requests.length);
  const bySelection = new Map<string, number[]>();
  requests.forEach(({ shardKey }, i) => {
    const selection = JSON.stringify(shardKey);
    bySelection.set(selection, [...(bySelection.get(selection) ?? []), i]);
  });
  await Promise.all([...bySelection.values()].map(async (members) => {
    const reader = scope.reader(requests[members[0]].shardKey);
    const plans = await Promise.all(members.map((i) => planQuery(scope, reader, requests[i])));
    (await reader.query(plans)).forEach((list, j) => (out[members[j]] = list.hits));
  }));
  return out;
}
