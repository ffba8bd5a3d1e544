// Full scans on the quantized codes. `params.exact` searches the original vectors (as Qdrant's
// does), so a test that wants every point scored on its codes allows every point instead: an
// allowed set under full_scan_threshold is scanned in full, on the codes when there are codes.

import { Bitset, type VectorIndex } from '../../src/engine/index.js';

/** Every offset of the index, as an allow-bitset. */
export function everyOffset(index: VectorIndex): Bitset {
  return Bitset.of(index.offsetCount, Array.from({ length: index.offsetCount }, (_, i) => i));
}

/** A Qdrant filter every point matches (no point has id `absentId`). */
export function everyPoint(absentId: number): { must_not: { has_id: number[] }[] } {
  return { must_not: [{ has_id: [absentId] }] };
}
