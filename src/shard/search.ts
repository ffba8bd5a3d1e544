// Vector search inside one shard: the filter becomes an allow-bitset, the engine finds the top
// offsets (graph or exact scan), ids and the requested payload and vectors are attached.

import { largerIsCloser, type QuantizationSearchParams } from '../engine/index.js';
import { BadInput } from '../errors.js';
import type { PointId } from '../model.js';
import type { Filter } from './filter/index.js';
import { selectPayload, selectVectors, type PayloadSelection, type PointView, type VectorSelection } from './selectors.js';
import type { Shard } from './shard.js';

export interface SearchParams {
  hnswEf: number | null;
  exact: boolean;
  quantization: QuantizationSearchParams | null;
  indexedOnly: boolean;
}

export interface SearchSpec {
  using: string;
  vector: number[];
  filter: Filter | null;
  /** How many hits this shard returns: the request's offset + limit. */
  top: number;
  params: SearchParams;
  scoreThreshold: number | null;
  withPayload: PayloadSelection;
  withVector: VectorSelection;
}

export interface ScoredView extends PointView {
  score: number;
  version: number;
}

export function searchShard(shard: Shard, spec: SearchSpec): ScoredView[] {
  const index = shard.vectorIndex(spec.using);
  if (!index) throw new BadInput(`Not existing vector name error: ${spec.using}`);
  if (spec.vector.length !== index.dim) throw new BadInput(`Vector dimension error: expected dim: ${index.dim}, got ${spec.vector.length}`);
  const allowed = spec.filter ? shard.matching(spec.filter) : undefined;
  const found = index.search(spec.vector, {
    limit: spec.top,
    ef: spec.params.hnswEf ?? undefined,
    exact: spec.params.exact,
    filter: allowed,
    quantization: spec.params.quantization ?? undefined,
  });
  const larger = largerIsCloser(index.config.distance);
  const hits: ScoredView[] = [];
  for (let i = 0; i < found.offsets.length; i++) {
    const score = found.scores[i];
    // score_threshold is inclusive, on the side of "closer" for the distance.
    if (spec.scoreThreshold !== null && (larger ? score < spec.scoreThreshold : score > spec.scoreThreshold)) break;
    const id: PointId = shard.pointId(found.offsets[i]);
    const record = shard.record(id)!;
    const hit: ScoredView = { id, score, version: record.version ?? 0 };
    const payload = selectPayload(record.payload ?? {}, spec.withPayload);
    if (payload) hit.payload = payload;
    const vectors = selectVectors(record.vectors, spec.withVector);
    if (vectors) hit.vectors = vectors;
    hits.push(hit);
  }
  return hits;
}
