// The ANN implementations a benchmark compares, behind one interface: build on a base set,
// then answer k-NN queries at a given ef. Inputs are converted to each library's preferred
// form before timing starts, so timings measure the index, not the conversion.

import { VectorIndex, type Distance } from '../engine/index.js';
import { engineModule } from '../runtime/wasm-module.js';

export interface AnnRunner {
  readonly name: string;
  /** Converts one vector to the runner's input form (outside the timed loops). */
  prepare(vector: Float32Array): unknown;
  build(points: unknown[], dim: number): Promise<void>;
  search(prepared: unknown, k: number, ef: number): ArrayLike<number>;
}

export interface GraphParams {
  m: number;
  efConstruct: number;
  distance: Distance;
}

export class QuiverRunner implements AnnRunner {
  private index: VectorIndex | undefined;

  /** `oversampling` applies to int8 only: how many candidates per result are rescored with f32. */
  constructor(readonly name: string, private readonly params: GraphParams, private readonly int8: boolean, private readonly oversampling = 1) {}

  async build(points: unknown[], dim: number): Promise<void> {
    const index = await VectorIndex.create(await engineModule(), {
      dim,
      distance: this.params.distance,
      m: this.params.m,
      efConstruct: this.params.efConstruct,
      quantization: this.int8 ? { quantile: 1 } : null,
    });
    index.reserve(points.length);
    for (let i = 0; i < points.length; i++) index.upsert(i, points[i] as Float32Array);
    this.index = index;
  }

  prepare(query: Float32Array): unknown {
    return query;
  }

  search(prepared: unknown, k: number, ef: number): ArrayLike<number> {
    return this.index!.search(prepared as Float32Array, { limit: k, ef, quantization: { oversampling: this.oversampling } }).offsets;
  }

  /** Brute-force scan speed over the built index: bytes of f32 vectors compared per second. */
  exactScanGBs(queries: Float32Array[], k: number): number {
    const index = this.index!;
    const started = performance.now();
    for (const q of queries) index.search(q, { limit: k, exact: true });
    const seconds = (performance.now() - started) / 1000;
    return (index.size * index.dim * 4 * queries.length) / seconds / 1e9;
  }
}

interface HnswlibIndex {
  initIndex(maxElements: number, m: number, efConstruction: number, randomSeed: number): void;
  addPoint(point: number[], label: number): void;
  setEf(ef: number): void;
  searchKnn(query: number[], k: number): { neighbors: number[]; distances: number[] };
}

const HNSWLIB_SPACE: Record<Distance, string | null> = { Euclid: 'l2', Dot: 'ip', Cosine: 'cosine', Manhattan: null };

export class HnswlibRunner implements AnnRunner {
  readonly name = 'hnswlib-node';
  private index: HnswlibIndex | undefined;

  constructor(private readonly params: GraphParams) {}

  async build(points: unknown[], dim: number): Promise<void> {
    const space = HNSWLIB_SPACE[this.params.distance];
    if (!space) throw new Error(`hnswlib-node has no ${this.params.distance} space`);
    const { default: hnswlib } = (await import('hnswlib-node')) as unknown as { default: { HierarchicalNSW: new (space: string, dim: number) => HnswlibIndex } };
    const index = new hnswlib.HierarchicalNSW(space, dim);
    index.initIndex(points.length, this.params.m, this.params.efConstruct, 100);
    for (let i = 0; i < points.length; i++) index.addPoint(points[i] as number[], i);
    this.index = index;
  }

  prepare(query: Float32Array): unknown {
    return Array.from(query);
  }

  search(prepared: unknown, k: number, ef: number): ArrayLike<number> {
    this.index!.setEf(ef);
    return this.index!.searchKnn(prepared as number[], k).neighbors;
  }
}
