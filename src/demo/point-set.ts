// The demo's in-browser collection: points with payloads, one engine index per distance, and
// search with Qdrant's filter language. Filters go through the server's own code (the wire
// filter's conversion in src/api/filter.ts, bitset selection in src/shard/filter), and the
// allow-bitset goes to the same VectorIndex the shards use, so results match the server's.

import { toFilter, type WireFilter } from '../api/filter.js';
import { Bitset, VectorIndex, type Distance } from '../engine/index.js';
import { DEFAULT_VECTOR, type Payload, type PointId } from '../model.js';
import { selectMatching, type FilterSource } from '../shard/filter/index.js';

export interface PointSearch {
  limit: number;
  filter?: WireFilter;
  /** Qdrant's params.exact: scan every allowed point instead of the graph. */
  exact?: boolean;
  /** Qdrant's params.hnsw_ef (default ef_construct). */
  hnswEf?: number;
}

export interface PointHits {
  ids: number[];
  scores: number[];
  /** Points the filter allows (all points without a filter). */
  allowed: number;
  filterMs: number;
  searchMs: number;
}

export class PointSet implements FilterSource {
  /** Ids are offsets 0..size-1. */
  constructor(readonly dim: number, private readonly vectors: readonly Float32Array[], private readonly payloads: readonly Payload[]) {}

  get size(): number {
    return this.vectors.length;
  }

  vector(id: number): Float32Array {
    return this.vectors[id];
  }

  liveOffsets(): Bitset {
    return new Bitset(this.size).invert();
  }

  payload(offset: number): Payload {
    return this.payloads[offset];
  }

  pointId(offset: number): PointId {
    return offset;
  }

  hasVector(_offset: number, name: string): boolean {
    return name === DEFAULT_VECTOR;
  }

  offsetOf(id: PointId): number | undefined {
    return typeof id === 'number' && id < this.size ? id : undefined;
  }

  /** No payload indexes: every condition is checked on payloads, as a shard does without one. */
  index(): undefined {
    return undefined;
  }

  /** Indexes every point under `distance`; `onProgress(done)` is called every `every` points. */
  async buildIndex(module: WebAssembly.Module, distance: Distance, onProgress: (done: number) => void, every = 250): Promise<VectorIndex> {
    const index = await VectorIndex.create(module, { dim: this.dim, distance });
    index.reserve(this.size);
    for (let i = 0; i < this.size; i++) {
      index.upsert(i, this.vectors[i]);
      if ((i + 1) % every === 0 || i + 1 === this.size) onProgress(i + 1);
    }
    return index;
  }

  search(index: VectorIndex, query: Float32Array, request: PointSearch): PointHits {
    const t0 = performance.now();
    const allowed = request.filter ? selectMatching(toFilter(request.filter), this) : undefined;
    const t1 = performance.now();
    const { offsets, scores } = index.search(query, { limit: request.limit, exact: request.exact, ef: request.hnswEf, filter: allowed });
    const t2 = performance.now();
    return { ids: Array.from(offsets), scores: Array.from(scores), allowed: allowed ? allowed.count() : this.size, filterMs: t1 - t0, searchMs: t2 - t1 };
  }
}
