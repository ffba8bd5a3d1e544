// UUID index: UUID strings -> points, compared as UUIDs (as Qdrant's uuid index stores them as
// 128-bit numbers): "550E8400-E29B-..." and "550e8400e29b..." are the same value. Serves match
// value/any with UUID strings, and facets (values in canonical form).

import type { Bitset } from '../../engine/bitset.js';
import type { JsonValue } from '../../model.js';
import { flatten } from '../filter/json-path.js';
import type { Match } from '../filter/types.js';
import { canonicalUuid } from '../filter/uuid.js';
import { BaseIndex, type SoleTest } from './base.js';
import { Postings } from './postings.js';
import type { UuidIndexParams } from './schema.js';
import type { FacetIndex, FacetValue, SemanticIndex } from './types.js';

export class UuidIndex extends BaseIndex implements FacetIndex, SemanticIndex {
  private readonly uuids = new Postings<string>();

  constructor(key: string, params: UuidIndexParams) {
    super(key, params);
  }

  indexedPoints(): number {
    return this.uuids.points;
  }

  facet(allowed: Bitset | null): Map<FacetValue, number> {
    return this.uuids.facet(allowed);
  }

  protected insert(offset: number, elements: JsonValue[]): void {
    const uuids: string[] = [];
    for (const e of elements) {
      const uuid = typeof e === 'string' ? canonicalUuid(e) : undefined;
      if (uuid) uuids.push(uuid);
    }
    this.uuids.set(offset, uuids);
  }

  protected erase(offset: number): void {
    this.uuids.delete(offset);
  }

  protected selectValues(test: SoleTest, size: number): Bitset | undefined {
    const wanted = 'match' in test ? wantedUuids(test.match) : undefined;
    return wanted && this.uuids.select(wanted, size);
  }

  matchValues(values: readonly JsonValue[], match: Match): boolean | undefined {
    const wanted = wantedUuids(match);
    if (!wanted) return undefined;
    return flatten(values).some((e) => typeof e === 'string' && wanted.has(canonicalUuid(e) ?? ''));
  }
}

/**
 * The canonical UUIDs a match value/any asks for; undefined (left to plain string comparison)
 * unless every listed string is a UUID.
 */
function wantedUuids(match: Match): Set<string> | undefined {
  let texts: Iterable<string>;
  if (match.kind === 'value' && typeof match.value === 'string') texts = [match.value];
  else if (match.kind === 'any' && match.list.type === 'strings') texts = match.list.values;
  else return undefined;
  const uuids = new Set<string>();
  for (const text of texts) {
    const uuid = canonicalUuid(text);
    if (!uuid) return undefined;
    uuids.add(uuid);
  }
  return uuids;
}
