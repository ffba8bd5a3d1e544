// The k-NN implementations a benchmark compares, behind one interface: build on a base set,
// then answer k-NN queries at a given ef. Inputs are converted to each library's preferred
// form before timing starts, so timings measure the index, not the conversion.

import { VectorIndex, type BinaryQuantization, type Compression, type Datatype, type Distance, type Quantization, type TurboBits } from '../engine/index.js';
import { engineModule } from '../runtime/wasm-module.js';
import { CommandError } from '../errors.js';
import { bruteForce } from './exact.js';
import type { ProgressTask } from './progress.js';

export interface AnnRunner {
  readonly name: string;
  /** False for exact methods: they have no ef to sweep. */
  readonly tunable: boolean;
  /** Converts one vector to the runner's input form (outside the timed loops). */
  prepare(vector: Float32Array): unknown;
  /** Indexes `points` (prepared), ticking `task` once per point indexed. */
  build(points: unknown[], dim: number, task: ProgressTask): Promise<void>;
  search(prepared: unknown, k: number, ef: number): ArrayLike<number>;
  /** Bytes the built index holds, or null when the library cannot tell (the caller measures RSS growth). */
  memoryBytes(): number | null;
  /** The element type vectors are stored in, for Quiver's engines. */
  readonly datatype?: Datatype;
}

export interface GraphParams {
  m: number;
  efConstruct: number;
  distance: Distance;
}

/**
 * Binary quantization engines beyond one_bit: Qdrant's two_bits / one_and_half_bits encodings,
 * and ".s4" / ".s8" for its scalar4bits / scalar8bits query encodings.
 */
const BINARY_VARIANTS = {
  'quiver-binary2': { encoding: 'two_bits' },
  'quiver-binary1.5': { encoding: 'one_and_half_bits' },
  'quiver-binary.s4': { queryEncoding: 'scalar4bits' },
  'quiver-binary.s8': { queryEncoding: 'scalar8bits' },
  'quiver-binary2.s8': { encoding: 'two_bits', queryEncoding: 'scalar8bits' },
  'quiver-binary1.5.s8': { encoding: 'one_and_half_bits', queryEncoding: 'scalar8bits' },
} as const satisfies Record<string, Omit<BinaryQuantization, 'method'>>;
type BinaryVariant = keyof typeof BINARY_VARIANTS;

/** Engines a run compares unless told otherwise (quiver-pq, quiver-turbo and the binary variants are asked for by name). */
export const DEFAULT_ENGINES = ['quiver-f32', 'quiver-int8', 'quiver-binary', 'hnswlib', 'quiver-exact', 'flat'] as const;
export const ENGINES = [...DEFAULT_ENGINES, 'quiver-pq', 'quiver-turbo', ...(Object.keys(BINARY_VARIANTS) as BinaryVariant[])] as const;
export type EngineName = (typeof ENGINES)[number];

/** Engines that store vectors in Quiver's engine, so a run repeats them per --datatype. */
export function storesVectors(engine: EngineName): boolean {
  return engine.startsWith('quiver');
}

/**
 * `oversampling` applies to int8, binary, product and turbo only: how many candidates per result are rescored with the
 * stored vectors. `datatype` is the element type Quiver's engines store vectors in ("quiver f32"
 * names the unquantized graph; another datatype is added to the name). `compression` is product
 * quantization's ratio (Qdrant's x4 .. x64).
 * `turboBits` is quiver-turbo's bit width.
 */
export function makeRunner(engine: EngineName, params: GraphParams, oversampling: number, datatype: Datatype = 'float32', compression: Compression = 'x16', turboBits: TurboBits = 'bits4'): AnnRunner {
  const stored = datatype === 'float32' ? '' : ` [${datatype}]`;
  switch (engine) {
    case 'quiver-f32':
      return new QuiverRunner(`quiver f32${stored}`, params, null, 1, false, datatype);
    case 'quiver-int8':
      return new QuiverRunner(`quiver int8${stored}`, params, { quantile: 1 }, oversampling, false, datatype);
    case 'quiver-binary':
      return new QuiverRunner(`quiver binary${stored}`, params, { method: 'binary' }, oversampling, false, datatype);
    case 'quiver-pq':
      return new QuiverRunner(`quiver pq ${compression}${stored}`, params, { method: 'product', compression }, oversampling, false, datatype);
    case 'quiver-turbo':
      return new QuiverRunner(`quiver turbo ${turboBits}${stored}`, params, { method: 'turbo', bits: turboBits }, oversampling, false, datatype);
    case 'quiver-exact':
      return new QuiverRunner(`quiver exact (SIMD)${stored}`, params, null, 1, true, datatype);
    case 'quiver-binary2':
    case 'quiver-binary1.5':
    case 'quiver-binary.s4':
    case 'quiver-binary.s8':
    case 'quiver-binary2.s8':
    case 'quiver-binary1.5.s8':
      return new QuiverRunner(`quiver ${engine.slice('quiver-'.length)}${stored}`, params, { method: 'binary', ...BINARY_VARIANTS[engine] }, oversampling, false, datatype);
    case 'hnswlib':
      return new HnswlibRunner(params);
    case 'flat':
      return new FlatRunner(params.distance);
  }
}

/** Quiver's engine: graph search (f32, int8, binary or product codes), or with `exact` its SIMD scan of every vector. */
class QuiverRunner implements AnnRunner {
  readonly tunable: boolean;
  private index: VectorIndex | undefined;

  constructor(readonly name: string, private readonly params: GraphParams, private readonly quantization: Quantization | null, private readonly oversampling: number, private readonly exact: boolean, readonly datatype: Datatype) {
    this.tunable = !exact;
  }

  async build(points: unknown[], dim: number, task: ProgressTask): Promise<void> {
    const index = await VectorIndex.create(await engineModule(), {
      dim,
      distance: this.params.distance,
      m: this.params.m,
      efConstruct: this.params.efConstruct,
      quantization: this.quantization,
      datatype: this.datatype,
    });
    index.reserve(points.length);
    // The exact scan reads every stored vector and never the graph, so it gets none.
    for (let i = 0; i < points.length; i++) {
      if (this.exact) index.stash(i, points[i] as Float32Array);
      else index.upsert(i, points[i] as Float32Array);
      task.tick();
    }
    this.index = index;
  }

  prepare(query: Float32Array): unknown {
    return query;
  }

  search(prepared: unknown, k: number, ef: number): ArrayLike<number> {
    // Rescored, whatever the method's default (scalar's and product's is not to rescore), so every
    // quantized engine is measured with the candidates its oversampling fetches scored again.
    return this.index!.search(prepared as Float32Array, { limit: k, ef, exact: this.exact, quantization: { rescore: true, oversampling: this.oversampling } }).offsets;
  }

  memoryBytes(): number {
    return this.index!.memoryBytes;
  }
}

interface HnswlibIndex {
  initIndex(maxElements: number, m: number, efConstruction: number, randomSeed: number): void;
  addPoint(point: number[], label: number): void;
  setEf(ef: number): void;
  searchKnn(query: number[], k: number): { neighbors: number[]; distances: number[] };
}

const HNSWLIB_SPACE: Record<Distance, string | null> = { Euclid: 'l2', Dot: 'ip', Cosine: 'cosine', Manhattan: null };

class HnswlibRunner implements AnnRunner {
  readonly name = 'hnswlib-node';
  readonly tunable = true;
  private index: HnswlibIndex | undefined;

  constructor(private readonly params: GraphParams) {
    if (!HNSWLIB_SPACE[params.distance]) throw new CommandError(`hnswlib-node has no ${params.distance} space; leave it out with --engines`);
  }

  async build(points: unknown[], dim: number, task: ProgressTask): Promise<void> {
    let hnswlib: { HierarchicalNSW: new (space: string, dim: number) => HnswlibIndex };
    try {
      hnswlib = ((await import('hnswlib-node')) as unknown as { default: typeof hnswlib }).default;
    } catch {
      throw new CommandError('hnswlib-node is not installed (npm install hnswlib-node), or leave it out with --engines');
    }
    const index = new hnswlib.HierarchicalNSW(HNSWLIB_SPACE[this.params.distance]!, dim);
    index.initIndex(points.length, this.params.m, this.params.efConstruct, 100);
    for (let i = 0; i < points.length; i++) {
      index.addPoint(points[i] as number[], i);
      task.tick();
    }
    this.index = index;
  }

  prepare(query: Float32Array): unknown {
    return Array.from(query);
  }

  search(prepared: unknown, k: number, ef: number): ArrayLike<number> {
    this.index!.setEf(ef);
    return this.index!.searchKnn(prepared as number[], k).neighbors;
  }

  memoryBytes(): null {
    return null;
  }
}

/** Brute force over every vector in plain JavaScript: exact by construction, the floor to beat. */
class FlatRunner implements AnnRunner {
  readonly name = 'flat (exact, JS)';
  readonly tunable = false;
  private base: Float32Array[] = [];

  constructor(private readonly distance: Distance) {}

  async build(points: unknown[], _dim: number, task: ProgressTask): Promise<void> {
    this.base = points as Float32Array[];
    task.tick(points.length);
  }

  prepare(vector: Float32Array): unknown {
    return vector;
  }

  search(prepared: unknown, k: number): ArrayLike<number> {
    return bruteForce(this.distance, this.base, prepared as Float32Array, k).offsets;
  }

  memoryBytes(): number {
    return this.base.reduce((sum, v) => sum + v.byteLength, 0);
  }
}
