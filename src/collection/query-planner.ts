// The query API planned and run below the HTTP layer: a request's tree becomes a shard query plan
// (examples read as vectors, filters inherited down the tree, order_by checked) and runs over the
// shards it reads; requests of a batch that read the same shards run together.

import { BadRequest } from '../errors.js';
import { validationFailed } from '../messages.js';
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
    query: node.lookupFrom ? withVectors(plan, (e) => examples.vectorOf(node, e)) : plan,
    spec: {
      using: node.using,
      filter: node.lookupFrom ? filter : exceptIds(filter, storedIds(plan)),
      params: node.params,
      scoreThreshold: node.scoreThreshold,
      ...shape,
    },
  };
}

function planNode(node: QueryNode, inherited: Filter | null, planning: Planning): ShardQuery {
  const filter = allOf(inherited, node.filter);
  const prefetches = node.prefetches.map((p) => planNode(p, filter, planning));
  const plan = node.plan;
  const paging = { prefetches, limit: node.limit, offset: node.offset };
  if (plan === null) {
    if (prefetches.length === 0) throw new BadRequest('a query without prefetch needs a `query`');
    if (prefetches.length !== 1) throw new BadRequest('several prefetches need a query to combine them, e.g. {"fusion": "rrf"}');
    return { step: { kind: 'pass' }, ...paging };
  }
  if (plan.kind === 'fusion') {
    if (prefetches.length === 0) throw validationFailed('cannot apply Fusion without prefetches');
    return { step: { kind: 'fusion', method: plan.method, k: plan.k, weights: plan.weights, scoreThreshold: node.scoreThreshold }, ...paging };
  }
  if (isReadPlan(plan)) {
    const order = plan.kind === 'sample' ? { kind: 'sample' as const } : { kind: 'order_by' as const, orderBy: plan.orderBy };
    return { step: { kind: 'read', order, filter, shape: planning.shape }, ...paging };
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
