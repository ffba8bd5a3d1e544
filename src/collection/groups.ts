// Grouped queries (Qdrant's search/recommend/query "groups"): the request's whole query tree runs
// (prefetches, order_by and sample queries included) with points lacking the group_by key kept
// out, and its hits, in the order the query ranks them, each join the group of every value their
// group_by field holds, until `limit` groups hold `groupSize` hits each or the candidates run
// out. Candidates are fetched in growing rounds, since how many are needed depends on how the
// values are spread.

import { BadInput } from '../errors.js';
import type { PointId } from '../model.js';
import { allOf, canonicalUuid, flatten, parseJsonPath, valuesAt, type Filter, type JsonPath } from '../shard/filter/index.js';
import type { ScoredView } from '../shard/search.js';
import { selectPayload, type PointView, type ReadShape } from '../shard/selectors.js';
import { runQueries, type QueryScope } from './query-planner.js';
import type { QueryNode, QueryRequest } from './query-tree.js';

/** A string or an integer (past 2^53 a bigint, exact as Qdrant's u64/i64 group ids). */
export type GroupId = string | number | bigint;

export interface PointGroup {
  id: GroupId;
  hits: ScoredView[];
  /** The point the group id names in the `with_lookup` collection, when asked and found. */
  lookup?: PointView;
}

/** Where each group's own record is read (`with_lookup`): a collection, and what of its points. */
export interface GroupLookup {
  collection: string;
  shape: ReadShape;
}

export interface GroupSpec {
  groupBy: string;
  groupSize: number;
  limit: number;
  lookup: GroupLookup | null;
}

const MAX_CANDIDATES = 1 << 20;

/** Group ids are strings and integers; other values (floats, bools, objects) never form a group. */
function groupIds(hit: ScoredView, path: JsonPath): GroupId[] {
  const values = flatten(valuesAt(path, hit.payload ?? {}));
  return [...new Set(values.filter((v): v is GroupId => typeof v === 'string' || typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))))];
}

/** Qdrant widens every prefetch by the number of groups asked, so that enough candidates reach the grouping. */
function widened(node: QueryNode, groups: number): QueryNode {
  return { ...node, limit: Math.min(node.limit * groups, MAX_CANDIDATES), prefetches: node.prefetches.map((p) => widened(p, groups)) };
}

/** Hits into groups, in hit order; a hit listed again (order_by lists a point once per value) joins a group once. */
function fill(hits: ScoredView[], path: JsonPath, spec: GroupSpec): { groups: Map<GroupId, ScoredView[]>; full: number } {
  const groups = new Map<GroupId, ScoredView[]>();
  let full = 0;
  for (const hit of hits) {
    for (const id of groupIds(hit, path)) {
      let members = groups.get(id);
      if (!members) {
        if (groups.size >= spec.limit) continue;
        members = [];
        groups.set(id, members);
      }
      if (members.length < spec.groupSize && !members.some((m) => m.id === hit.id)) {
        members.push(hit);
        if (members.length === spec.groupSize) full++;
      }
    }
    if (full === spec.limit) break;
  }
  return { groups, full };
}

async function searchGroups(scope: QueryScope, request: QueryRequest, spec: GroupSpec): Promise<PointGroup[]> {
  const path = parseJsonPath(spec.groupBy);
  if (!path) throw new BadInput(`Invalid group_by key: ${spec.groupBy}`);
  // Only points holding the key can join a group, so others are kept out of the candidates.
  const hasKey: Filter = { must: [{ kind: 'field', key: spec.groupBy, path, isEmpty: false }] };
  const root: QueryNode = { ...request.root, filter: allOf(request.root.filter, hasKey), offset: 0, prefetches: request.root.prefetches.map((p) => widened(p, spec.limit)) };
  // The whole payload is read to find each hit's groups; what the request asked is kept at the end.
  const shape: ReadShape = { withPayload: { all: true }, withVector: request.shape.withVector };
  let top = Math.min(spec.limit * spec.groupSize * 2, MAX_CANDIDATES);
  for (;;) {
    const [hits] = await runQueries(scope, [{ ...request, root: { ...root, limit: top }, shape }]);
    const { groups, full } = fill(hits, path, spec);
    if (full === spec.limit || hits.length < top || top >= MAX_CANDIDATES) {
      return [...groups].map(([id, members]) => ({
        id,
        hits: members.map((h) => {
          const out: ScoredView = { ...h };
          const payload = selectPayload(h.payload ?? {}, request.shape.withPayload);
          if (payload) out.payload = payload;
          else delete out.payload;
          return out;
        }),
      }));
    }
    top = Math.min(top * 4, MAX_CANDIDATES);
  }
}

/** The point id a group id names in a lookup collection, if it is one (a UUID or a non-negative integer). */
function lookupId(id: GroupId): PointId | undefined {
  if (typeof id === 'number') return Number.isSafeInteger(id) && id >= 0 ? id : undefined;
  // A bigint group id is past 2^53, the form a point id takes there too.
  if (typeof id === 'bigint') return id >= 0n ? id : undefined;
  return canonicalUuid(id);
}

/** The groups of a request's search, each with its record from the `with_lookup` collection if asked. */
export async function queryGroups(scope: QueryScope, request: QueryRequest, spec: GroupSpec): Promise<PointGroup[]> {
  const groups = await searchGroups(scope, request, spec);
  if (!spec.lookup) return groups;
  const ids = groups.flatMap((g) => lookupId(g.id) ?? []);
  const records = await scope.lookup(spec.lookup.collection, null).retrieve(ids, spec.lookup.shape);
  const found = new Map(records.map((r) => [r.id, r]));
  for (const group of groups) {
    const id = lookupId(group.id);
    const record = id === undefined ? undefined : found.get(id);
    if (record) group.lookup = record;
  }
  return groups;
}
