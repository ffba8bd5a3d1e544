// Small fixtures for hand-written filter cases: wire filters in, matching point ids out, checked
// both by selectMatching (with and without the given indexes) and point by point.

import { toFilter, type WireFilter } from '../../src/api/filter.js';
import type { Payload, PointId } from '../../src/model.js';
import { indexSemantics, matchesPayload, selectMatching } from '../../src/shard/filter/index.js';
import type { IndexSchema } from '../../src/shard/payload-index/index.js';
import { ArraySource } from './filter-data.js';

export interface CasePoint {
  id: PointId;
  payload?: Payload;
  vectors?: string[];
}

export function sourceOf(points: CasePoint[], indexes: Record<string, IndexSchema> = {}): ArraySource {
  const source = new ArraySource(points.map((p) => ({ id: p.id, payload: p.payload ?? {}, vectors: p.vectors ?? [''] })));
  for (const [key, schema] of Object.entries(indexes)) source.addIndex(key, schema);
  return source;
}

/** Ids matching `wire` by selectMatching; throws if the point-by-point check disagrees. */
export function matchingIds(source: ArraySource, wire: WireFilter): PointId[] {
  const filter = toFilter(wire);
  const selected = [...selectMatching(filter, source)].map((o) => source.points[o]!.id);
  const semantics = indexSemantics(source);
  const single = source.points.flatMap((p) => (p && matchesPayload(filter, { id: p.id, payload: p.payload, vectors: new Set(p.vectors) }, semantics) ? [p.id] : []));
  if (JSON.stringify(single) !== JSON.stringify(selected)) {
    throw new Error(`selectMatching ${JSON.stringify(selected)} != matchesPayload ${JSON.stringify(single)}`);
  }
  return selected;
}
