// The k-NN implementations a benchmark compares, behind one interface: build on a base set,
// then answer k-NN queries at a given ef. Inputs are converted to each library's preferred
// form before timing starts, so timings measure the index, not the conversion.

import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { VectorIndex, type BinaryQuantization, type Compression, type Datatype, type Distance, type Quantization, type TurboBits } from '../engine/index.js';
import { engineModule } from '../runtime/wasm-module.js';
import { CommandError } from '../errors.js';
import { bruteForce } from './exact.js';
import type { ProgressTask } from './progress.js';
import { withScratchDir } from './scratch.js';
import { UsearchRunner } from './usearch-runner.js';
import type { PageFiles } from '../shard/page-files.js';
import { loadCold } from './cold-index.js';

export interface AnnRunner {
  readonly name: string;
  /** False for exact methods: they have no ef to sweep. */
  readonly tunable: boolean;
  /** Converts one vector to the runner's input form (outside the timed loops). */
  prepare(vector: Float32Array): unknown;
  /** Indexes `points` (prepared), ticking `task` once per point indexed. */
  build(points: unknown[], dim: number, task: ProgressTask): Promise<void>;
  /**
   * Readies searches at `ef` before a timed pass over the queries, for a library whose ef is
   * fixed when its index is opened (usearch): the reopening stays out of the timings.
   */
  useEf?(ef: number): Promise<void>;
  search(prepared: unknown, k: number, ef: number): ArrayLike<number>;
  /** Bytes the built index holds, or null when the library cannot tell (the caller measures RSS growth). */
  memoryBytes(): number | null;
  /** The index's data as its library accounts for it (vectors, codes, graph), see IndexBytes. */
  indexBytes(): Promise<IndexBytes>;
  /** Releases what the runner keeps outside the JavaScript heap (files). */
  close?(): Promise<void>;
  /** The element type vectors are stored in, for Quiver's engines. */
  readonly datatype?: Datatype;
}

/**
 * An index's size as its library accounts for it: Quiver's engine image (vectors, codes, graph),
 * hnswlib's and usearch's saved index. `vectors` is the share of `total` that is the stored
 * full-precision vectors, so `total - vectors` is what a quantized index keeps besides them
 * (codes and graph) and what an unquantized one adds to them (graph).
 */
export interface IndexBytes {
  total: number;
  vectors: number;
}

export interface GraphParams {
  m: number;
  efConstruct: number;
  distance: Distance;
}

/** What each engine of the registry is made from. */
export interface RunnerParams {
  graph: GraphParams;
  /** Quantized engines: candidates per result rescored with the stored vectors. */
  oversampling: number;
  /** Quiver's engines: the element type vectors are stored in. */
  datatype: Datatype;
  /** quiver-pq: product quantization's ratio (Qdrant's x4 .. x64). */
  compression: Compression;
  /** quiver-turbo: TurboQuant's bit width. */
  turboBits: TurboBits;
  /** Quiver's engines: where the stored vectors are, in memory or `cold` (read on demand). */
  originals: Originals;
}

/**
 * Where Quiver's engines keep the stored vectors: in linear memory, or `cold` as a collection
 * with `on_disk: true` originals and `always_ram: true` codes keeps them (read on demand from a
 * page file, at most the server's 8 MiB of pages between searches; assembly/pages.ts), or
 * `cold+graph`: the graph's level-0 links too, as with `hnsw_config: {on_disk: true}`. A cold
 * engine is built in memory and loaded cold from its image: its build time includes the save
 * and the load.
 */
export const ORIGINALS = ['memory', 'cold', 'cold+graph'] as const;
export type Originals = (typeof ORIGINALS)[number];

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

interface EngineEntry {
  make(params: RunnerParams): AnnRunner;
  /** Stores vectors in Quiver's engine, so a run repeats it per --datatype. */
  storesVectors: boolean;
  /** Exact search: no graph parameters, measured once per run. */
  exact: boolean;
}

/**
 * A Quiver engine whose name and quantization follow from the run's parameters (quiver-pq's
 * compression); another datatype than float32 is added to the name.
 */
function quiverEngineOf(config: (params: RunnerParams) => { label: string; quantization: Quantization | null }, exact = false): EngineEntry {
  return {
    storesVectors: true,
    exact,
    make: (params) => {
      const { label, quantization } = config(params);
      const { graph, oversampling, datatype, originals } = params;
      const name = `${label}${originals === 'memory' ? '' : ` ${originals}`}`;
      return new QuiverRunner(datatype === 'float32' ? name : `${name} [${datatype}]`, graph, quantization, quantization ? oversampling : 1, exact, datatype, originals);
    },
  };
}

/** A Quiver engine: `label` names it ("quiver f32"), `quantization` is its config as the engine takes it. */
function quiverEngine(label: string, quantization: Quantization | null, exact = false): EngineEntry {
  return quiverEngineOf(() => ({ label, quantization }), exact);
}

const BINARY_ENGINES = Object.fromEntries((Object.keys(BINARY_VARIANTS) as BinaryVariant[])
  .map((name) => [name, quiverEngine(`quiver ${name.slice('quiver-'.length)}`, { method: 'binary', ...BINARY_VARIANTS[name] })])) as Record<BinaryVariant, EngineEntry>;

/**
 * Every engine `--engines` can name, one entry each: a quantization method of Quiver is one
 * `quiverEngine` line (its quantization config, as the engine takes it).
 */
const REGISTRY = {
  'quiver-f32': quiverEngine('quiver f32', null),
  'quiver-int8': quiverEngine('quiver int8', { quantile: 1 }),
  'quiver-binary': quiverEngine('quiver binary', { method: 'binary' }),
  hnswlib: { storesVectors: false, exact: false, make: ({ graph }) => new HnswlibRunner(graph) },
  usearch: { storesVectors: false, exact: false, make: ({ graph }) => new UsearchRunner(graph) },
  'quiver-exact': quiverEngine('quiver exact (SIMD)', null, true),
  flat: { storesVectors: false, exact: true, make: ({ graph }) => new FlatRunner(graph.distance) },
  'quiver-pq': quiverEngineOf(({ compression }) => ({ label: `quiver pq ${compression}`, quantization: { method: 'product', compression } })),
  'quiver-turbo': quiverEngineOf(({ turboBits }) => ({ label: `quiver turbo ${turboBits}`, quantization: { method: 'turbo', bits: turboBits } })),
  ...BINARY_ENGINES,
} satisfies Record<string, EngineEntry>;

export type EngineName = keyof typeof REGISTRY;
export const ENGINES = Object.keys(REGISTRY) as EngineName[];

/** Engines a run compares unless told otherwise (quiver-pq, quiver-turbo and the binary variants are asked for by name). */
export const DEFAULT_ENGINES: readonly EngineName[] = ['quiver-f32', 'quiver-int8', 'quiver-binary', 'hnswlib', 'usearch', 'quiver-exact', 'flat'];

/**
 * The datatypes a run builds `engine` with: every --datatype for engines that store vectors in
 * Quiver's engine (a quantized one over turbo4 storage too), float32 for the others.
 */
export function datatypesOf(engine: EngineName, datatypes: readonly Datatype[]): Datatype[] {
  return storesVectors(engine) ? [...datatypes] : ['float32'];
}

/** Whether `engine` stores vectors in Quiver's engine (its originals may be placed cold). */
export function storesVectors(engine: EngineName): boolean {
  return REGISTRY[engine].storesVectors;
}

/** Exact engines: measured once per run, with no graph parameters. */
export function isExact(engine: EngineName): boolean {
  return REGISTRY[engine].exact;
}

/**
 * `oversampling` applies to quantized engines only: how many candidates per result are rescored with the
 * stored vectors. `datatype` is the element type Quiver's engines store vectors in ("quiver f32"
 * names the unquantized graph; another datatype is added to the name). `compression` is product
 * quantization's ratio (Qdrant's x4 .. x64).
 * `turboBits` is quiver-turbo's bit width.
 */
export function makeRunner(engine: EngineName, graph: GraphParams, oversampling: number, datatype: Datatype = 'float32', compression: Compression = 'x16', turboBits: TurboBits = 'bits4', originals: Originals = 'memory'): AnnRunner {
  return REGISTRY[engine].make({ graph, oversampling, datatype, compression, turboBits, originals });
}

/** Quiver's engine: graph search (over f32 vectors or quantization codes), or with `exact` its SIMD scan of every vector. */
class QuiverRunner implements AnnRunner {
  readonly tunable: boolean;
  private index: VectorIndex | undefined;

  private pages: PageFiles | undefined;

  constructor(
    readonly name: string,
    private readonly params: GraphParams,
    private readonly quantization: Quantization | null,
    private readonly oversampling: number,
    private readonly exact: boolean,
    readonly datatype: Datatype,
    private readonly originals: Originals,
  ) {
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
    // Cold originals: the index built in memory is loaded from its image with them paged, as a
    // shard loads its graph image on a restart (linking straight into paged originals reads a
    // page per neighbour measured: see the README's note on cold builds).
    if (this.originals === 'memory') {
      this.index = index;
    } else {
      ({ index: this.index, pages: this.pages } = await loadCold(index, this.originals === 'cold+graph'));
    }
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

  async indexBytes(): Promise<IndexBytes> {
    const index = this.index!;
    return { total: index.imageBytes, vectors: index.size * index.vectorBytes };
  }

  async close(): Promise<void> {
    this.pages?.close();
  }
}

interface HnswlibIndex {
  initIndex(maxElements: number, m: number, efConstruction: number, randomSeed: number): void;
  addPoint(point: number[], label: number): void;
  setEf(ef: number): void;
  searchKnn(query: number[], k: number): { neighbors: number[]; distances: number[] };
  writeIndex(file: string): Promise<boolean>;
}

const HNSWLIB_SPACE: Record<Distance, string | null> = { Euclid: 'l2', Dot: 'ip', Cosine: 'cosine', Manhattan: null };

class HnswlibRunner implements AnnRunner {
  readonly name = 'hnswlib-node';
  readonly tunable = true;
  private index: HnswlibIndex | undefined;
  private size = 0;
  private dim = 0;

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
    this.size = points.length;
    this.dim = dim;
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

  /** hnswlib-node reports no size: its index written to a file is (vectors, links and labels, no slack). */
  async indexBytes(): Promise<IndexBytes> {
    return withScratchDir(async (dir) => {
      const file = join(dir, 'hnswlib.bin');
      await this.index!.writeIndex(file);
      return { total: (await stat(file)).size, vectors: this.size * this.dim * 4 };
    });
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

  async indexBytes(): Promise<IndexBytes> {
    const bytes = this.memoryBytes();
    return { total: bytes, vectors: bytes };
  }
}
