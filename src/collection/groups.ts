// Grouped search (Qdrant's search/recommend/query "groups"): hits best first, each placed in the
// group of every value its group_by field holds, until `limit` groups hold `groupSize` hits each
// or the candidates run out. Candidates are fetched in growing rounds, since how many are needed
// depends on how the values are spread.

import { BadInput } from '../errors.js';
import type { PointId } from '../model.js';
import { canonicalUuid, flatten, parseJsonPath, valuesAt, type Filter } from '../shard/filter/index.js';
import type { ScoredView } from '../shard/search.js';
import { selectPayload, type PayloadSelection, type PointView, type ReadShape } from '../shard/selectors.js';
import type { ShardReader } from './shard-reader.js';
import type { PagedSearch } from '../shard/query-plan.js';
import { planGroupedSearch, type QueryScope } from './query-planner.js';
import type { QueryRequest } from './query-tree.js';

export type GroupId = string | number;

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
function groupIds(hit: ScoredView, path: NonNullable<ReturnType<typeof parseJsonPath>>): GroupId[] {
  const values = flatten(valuesAt(path, hit.payload ?? {}));
  return [...new Set(values.filter((v): v is GroupId => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))))];
}

async function searchGroups(collection: ShardReader, planned: PagedSearch, spec: GroupSpec): Promise<PointGroup[]> {
  const path = parseJsonPath(spec.groupBy);
  if (!path) throw new BadInput(`Invalid group_by key: ${spec.groupBy}`);
  const wanted: PayloadSelection = planned.spec.withPayload;
  // Only points holding the key can join a group, so others are kept out of the candidates.
  const hasKey: Filter = { must: [{ kind: 'field', key: spec.groupBy, path, isEmpty: false }] };
  const filter: Filter = planned.spec.filter ? { must: [{ kind: 'filter', filter: planned.spec.filter }, ...hasKey.must!] } : hasKey;
  let top = Math.min(spec.limit * spec.groupSize * 2, MAX_CANDIDATES);
  for (;;) {
    const [hits] = await collection.search([{ spec: { ...planned.spec, filter, withPayload: { all: true } }, limit: top, offset: 0 }]);
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
        if (members.length < spec.groupSize) {
          members.push(hit);
          if (members.length === spec.groupSize) full++;
        }
      }
      if (full === spec.limit) break;
    }
    if (full === spec.limit || hits.length < top || top >= MAX_CANDIDATES) {
      return [...groups].map(([id, members]) => ({
        id,
        hits: members.map((h) => {
          const out: ScoredView = { ...h };
          const payload = selectPayload(h.payload ?? {}, wanted);
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
  return canonicalUuid(id);
}

/** The groups of a request's search, each with its record from the `with_lookup` collection if asked. */
export async function queryGroups(scope: QueryScope, request: QueryRequest, spec: GroupSpec): Promise<PointGroup[]> {
  const reader = scope.reader(request.shardKey);
  const groups = await searchGroups(reader, await planGroupedSearch(scope, reader, request), spec);
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
