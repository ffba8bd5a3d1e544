// Building a payload index from payloads by offset, and asking it conditions written as wire JSON.

import { toFilter, type WireCondition } from '../../src/api/filter.js';
import type { Payload } from '../../src/model.js';
import { createPayloadIndex, type IndexableCondition, type IndexSchema, type PayloadIndex } from '../../src/shard/payload-index/index.js';

export function indexOf(key: string, schema: IndexSchema, payloads: (Payload | undefined)[]): PayloadIndex {
  const index = createPayloadIndex(key, schema);
  payloads.forEach((p, offset) => p && index.add(offset, p));
  return index;
}

export function conditionOf(wire: WireCondition): IndexableCondition {
  return toFilter({ must: [wire] }).must![0] as IndexableCondition;
}

/** The index's answer as a sorted list of offsets, or undefined when it cannot answer. */
export function answer(index: PayloadIndex, wire: WireCondition, size = 1000): number[] | undefined {
  const bits = index.select(conditionOf(wire), size);
  return bits && [...bits];
}
