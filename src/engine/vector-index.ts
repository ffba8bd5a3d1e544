// One HNSW vector index over dense offsets 0..n-1, backed by its own engine instance.
// Runs unchanged in Node and in browsers: it is given a compiled module, never a file path.

import { Bitset } from './bitset.js';
import { NO_PAGES, instantiateWithHost, refusePointCheck, type EngineExports, type EngineHost, type PageStore } from './exports.js';
import { IMAGE_PART_BYTES, joinParts, loadImage, saveImage } from './image-parts.js';
import { MemoryViews } from './memory.js';
import { sampledAbove, uniformInts } from './sample-cardinality.js';
import { DISTANCES, type Distance, metricCode, toScore } from './metric.js';
import { DATATYPES, type Datatype, componentBytes, datatypeCode, float16Overflow } from './datatype.js';
import { PRODUCT_METHOD, type ProductQuantization, bucketOf, compressionOf } from './product-quantization.js';
import { TURBO_METHOD, type TurboQuantization, turboBitsOf, turboHalfBits, turboRescoresByDefault } from './turbo-quantization.js';

export interface ScalarQuantization {
  method?: 'int8';
  /** Share of sampled values the int8 range covers, in [0.5, 1]; omitted = the whole range. */
  quantile?: number;
}

/** Qdrant's binary encodings: bits per dimension 1, 2 or 1.5 (see assembly/binary-codes.ts). */
export type BinaryEncoding = 'one_bit' | 'two_bits' | 'one_and_half_bits';

/** Qdrant's asymmetric query encodings: the query quantized to 4 or 8 bits per value. */
export type BinaryQueryEncoding = 'scalar4bits' | 'scalar8bits';

/**
 * Qdrant's binary quantization: one_bit sets one bit per dimension iff the value is > 0;
 * two_bits / one_and_half_bits add thresholds at 2/3 of each dimension's stddev around its mean.
 * Scored dim - 2 * xor (xor = popcount(query XOR stored), or for a scalar query its
 * plane-weighted form) and rescored by default.
 */
export interface BinaryQuantization {
  method: 'binary';
  /** Omitted = one_bit. */
  encoding?: BinaryEncoding;
  /** Omitted = the query binarised as the stored vectors are. */
  queryEncoding?: BinaryQueryEncoding;
}

export type Quantization = ScalarQuantization | BinaryQuantization | ProductQuantization | TurboQuantization;

/** Engine code of each quantization method (assembly/layout.ts QM_*); binary encodings in Qdrant's order. */
const QUANTIZATION_METHODS = ['int8', 'one_bit', 'two_bits', 'one_and_half_bits'] as const;

/** Bits per value of the query codes of each query encoding (assembly/layout.ts queryBits). */
const QUERY_BITS: Record<BinaryQueryEncoding, number> = { scalar4bits: 4, scalar8bits: 8 };

/** The engine's enableQuantization arguments: int8's quantile or binary's query bits, and the method code. */
function quantizationArgs(q: ScalarQuantization | BinaryQuantization): [number, number] {
  if (q.method !== 'binary') return [q.quantile ?? 1, 0];
  return [q.queryEncoding ? QUERY_BITS[q.queryEncoding] : 1, QUANTIZATION_METHODS.indexOf(q.encoding ?? 'one_bit')];
}

/**
 * Qdrant's multivector_config: each point holds a list of vectors of `dim`, scored against a
 * query list by MaxSim (the sum over query vectors of the best similarity to any stored vector).
 */
export interface MultivectorConfig {
  comparator: 'max_sim';
}

/**
 * Regions of an index read on demand (Qdrant's `cold` placement): the stored vectors (a
 * multivector index's lists), their codes and/or the graph's level-0 links live in `store` and in
 * linear memory only while used, at most `budgetBytes` of them between calls (assembly/pages.ts).
 * Answers are the same as with every row in memory.
 */
export interface Paging {
  vectors: boolean;
  codes: boolean;
  graph: boolean;
  budgetBytes: number;
  store: PageStore;
}

/** Hands `paging` to a fresh instance, before anything is reserved. */
function startPaging(wasm: EngineExports, host: EngineHost, paging: Paging | null | undefined): void {
  if (!paging || (!paging.vectors && !paging.codes && !paging.graph)) return;
  host.pages = paging.store;
  wasm.setPaging(paging.vectors ? 1 : 0, paging.codes ? 1 : 0, paging.graph ? 1 : 0, Math.max(0, Math.floor(paging.budgetBytes)));
}

export interface IndexConfig {
  dim: number;
  distance: Distance;
  /** Qdrant's hnsw_config.m (default 16); level 0 keeps 2m links. */
  m?: number;
  /** Qdrant's hnsw_config.ef_construct (default 100). */
  efConstruct?: number;
  /** Qdrant's hnsw_config.full_scan_threshold in KiB of vectors (default 10000). */
  fullScanThreshold?: number;
  quantization?: Quantization | null;
  /** Lists of vectors per point compared by MaxSim; null or omitted = one vector per point. */
  multivector?: MultivectorConfig | null;
  /**
   * Qdrant's datatype: the element type vectors are stored in (default float32). float16 rounds
   * to nearest even; uint8 truncates toward zero and saturates at 0 and 255 (Rust's `as u8`).
   * Queries are converted the same way before they are scored, as in Qdrant.
   */
  datatype?: Datatype;
  /** Seed of the level generator, so a rebuild gives the same graph. */
  seed?: number;
  /** Regions read on demand; dense indexes only. Omitted = every row in linear memory. */
  paging?: Paging | null;
}

export interface QuantizationSearchParams {
  ignore?: boolean;
  /** Score the candidates again with the stored vectors; unset = Qdrant's default per method (int8 no, binary yes). */
  rescore?: boolean;
  oversampling?: number;
}

export interface SearchOptions {
  limit: number;
  /** Beam width of the graph search (Qdrant's hnsw_ef); defaults to ef_construct. */
  ef?: number;
  exact?: boolean;
  /** Only offsets in this set may be returned. */
  filter?: Bitset;
  /**
   * With `filter`: a condition its members must also meet (a filter condition no payload index
   * answers), asked of the members a cardinality sample draws and then, by the plan checkPlan
   * makes, of every member or only of those the graph search reaches.
   */
  check?: (offset: number) => boolean;
  quantization?: QuantizationSearchParams;
}

export interface SearchResult {
  offsets: Uint32Array;
  /**
   * Qdrant scores: dot product for Cosine/Dot, L2 for Euclid, L1 for Manhattan. Multivectors:
   * the sum of the per-query-vector best dot products (Cosine/Dot), the sum of the smallest L1
   * distances (Manhattan), and for Euclid the square root of the sum of the smallest squared L2
   * distances, which is what Qdrant reports (its issue #6294, kept as is).
   */
  scores: Float32Array;
  /**
   * Qdrant's `cpu` hardware measure of the search: bytes of vector data compared (dim * 4 per
   * f32 comparison, dim per int8 one; for multivectors per pair of rows).
   */
  cost: number;
}

const DEFAULTS = { m: 16, efConstruct: 100, fullScanThreshold: 10000, seed: 0x5eed, datatype: 'float32' as Datatype };

// Counts cross into the engine as i32: a larger number would wrap (2^32 + 5 arrives as 5, 1e12
// as a negative count), so every size is bounded here, whatever layer it came from.
const I32_MAX = 0x7fffffff;

/**
 * The largest m the engine lays out: each node reserves room for 2m level-0 links up front, so
 * a larger m would cost memory for links no graph of a few million points needs (Qdrant accepts
 * any m; past this bound Quiver links as if given this one).
 */
const MAX_ENGINE_M = 1024;

/** Draws of a random offset a cardinality sample makes before it finds the index too sparse to sample. */
const SAMPLE_ATTEMPTS = 64;

/** A count the engine can take: an integer from `min` to `max`. */
function bounded(value: number, min: number, max: number): number {
  return Math.min(Math.max(Math.floor(value), min), max);
}

/**
 * Whether a search that leaves `rescore` unset rescores, as Qdrant's default_rescoring decides
 * per method: for binary codes and TurboQuant below 4 bits, not for scalar int8, product or
 * TurboQuant bits4.
 */
function defaultRescoring(q: Quantization | null): boolean {
  if (q?.method === 'turbo') return turboRescoresByDefault(q.bits);
  return q?.method === 'binary';
}

/** The quantization an image was written with. */
function loadedQuantization(wasm: EngineExports): Quantization {
  if (wasm.quantizationMethod() === TURBO_METHOD) return { method: 'turbo', bits: turboBitsOf(wasm.turboBits()) };
  if (wasm.quantizationMethod() === PRODUCT_METHOD) return { method: 'product', compression: compressionOf(wasm.productBucket()) };
  const method = QUANTIZATION_METHODS[wasm.quantizationMethod()];
  if (method === 'int8') return { quantile: wasm.indexQuantile() };
  const bits = wasm.queryCodeBits();
  const queryEncoding = (Object.keys(QUERY_BITS) as BinaryQueryEncoding[]).find((e) => QUERY_BITS[e] === bits);
  return { method: 'binary', ...(method !== 'one_bit' ? { encoding: method } : {}), ...(queryEncoding ? { queryEncoding } : {}) };
}

export class VectorIndex {
  private readonly views: MemoryViews;
  private readonly paged: boolean;
  private bitsPtr = 0;
  private bitsWords = 0;
  private confirmedPtr = 0;
  private confirmedWords = 0;

  private constructor(
    private readonly wasm: EngineExports,
    private readonly host: EngineHost,
    readonly config: Readonly<Required<Omit<IndexConfig, 'quantization' | 'multivector' | 'paging'>>> & {
      quantization: Quantization | null;
      multivector: MultivectorConfig | null;
    },
  ) {
    this.views = new MemoryViews(wasm.memory);
    this.paged = host.pages !== NO_PAGES;
    this.settle(); // a load may end with more pages in memory than the budget
  }

  /**
   * Lets paged rows go down to the budget (assembly/pages.ts) after a call that may have read
   * many: between calls nothing holds a row. Returns `result`, so a call can end with it.
   */
  private settle(): void;
  private settle<T>(result: T): T;
  private settle<T>(result?: T): T | undefined {
    if (this.paged) this.wasm.trimPages();
    return result;
  }

  static async create(module: WebAssembly.Module, config: IndexConfig): Promise<VectorIndex> {
    if (!Number.isInteger(config.dim) || config.dim < 1) throw new RangeError(`dimension must be a positive integer, got ${config.dim}`);
    const { paging, ...rest } = config;
    const full = {
      ...DEFAULTS,
      ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
      quantization: config.quantization ?? null,
      multivector: config.multivector ?? null,
    } as VectorIndex['config'];
    const { exports: wasm, host } = await instantiateWithHost(module);
    startPaging(wasm, host, paging);
    wasm.init(full.dim, metricCode(full.distance), bounded(full.m, 0, MAX_ENGINE_M), bounded(full.efConstruct, 1, I32_MAX), full.seed >>> 0, 0, datatypeCode(full.datatype));
    if (full.multivector) wasm.enableMultivector();
    const q = full.quantization;
    // turbo4 storage is set up by init (its records are the stored vectors): any quantization goes on top.
    if (q?.method === 'product') wasm.enableProductQuantization(bucketOf(q.compression));
    else if (q?.method === 'turbo') {
      wasm.setTurboBits(turboHalfBits(q.bits));
      wasm.enableQuantization(1, TURBO_METHOD);
    } else if (q) wasm.enableQuantization(...quantizationArgs(q));
    return new VectorIndex(wasm, host, full);
  }

  /** Restores an index written by serialize() or serializeParts() (the parts in order); search results are identical to the original's. */
  static async load(
    module: WebAssembly.Module,
    image: Uint8Array | readonly Uint8Array[],
    options: { fullScanThreshold?: number; paging?: Paging | null } = {},
  ): Promise<VectorIndex> {
    const { exports: wasm, host } = await instantiateWithHost(module);
    startPaging(wasm, host, options.paging);
    if (!loadImage(wasm, image instanceof Uint8Array ? [image] : image)) throw new Error('not a serialised Quiver index');
    return new VectorIndex(wasm, host, {
      dim: wasm.dimension(),
      distance: DISTANCES[wasm.indexMetric()],
      m: wasm.indexM(),
      efConstruct: wasm.indexEfConstruct(),
      fullScanThreshold: options.fullScanThreshold ?? DEFAULTS.fullScanThreshold,
      quantization: wasm.isQuantized() ? loadedQuantization(wasm) : null,
      multivector: wasm.isMultivector() ? { comparator: 'max_sim' } : null,
      datatype: DATATYPES[wasm.indexDatatype()],
      seed: DEFAULTS.seed,
    });
  }

  get dim(): number {
    return this.config.dim;
  }

  /** One past the highest offset ever inserted. */
  get offsetCount(): number {
    return this.wasm.offsetCount();
  }

  get size(): number {
    return this.wasm.liveCount();
  }

  /** Live vectors stored but not linked into the graph yet (searched exactly). */
  get pendingCount(): number {
    return this.wasm.pendingOffsets();
  }

  /** Live vectors linked into the graph. */
  get linkedCount(): number {
    return this.size - this.pendingCount;
  }

  /** Deleted vectors still in the graph as tombstones (routing only). */
  get deletedCount(): number {
    return this.wasm.deletedOffsets();
  }

  /** Whether a graph exists (at least one vector is linked). */
  get hasGraph(): boolean {
    return this.wasm.entry() >= 0;
  }

  /** Bytes of one vector's dim components in the datatype (Qdrant's measure of vector storage). */
  get componentBytes(): number {
    return componentBytes(this.config.datatype, this.config.dim);
  }

  /** Bytes one stored vector takes (its padded stride in the datatype's elements). */
  get vectorBytes(): number {
    return this.wasm.vectorBytes();
  }

  /** Bytes of the index's data (vectors, codes, graph, as serialize() writes them): its memory without the allocator's slack. */
  get imageBytes(): number {
    return this.wasm.serializedSize() >>> 0;
  }

  /** Bytes of paged rows (vectors, codes) in linear memory now; 0 without paged regions. */
  get residentPageBytes(): number {
    return this.wasm.residentPageBytes();
  }

  /** Bytes of the engine instance's linear memory (vectors, graph, codes, scratch). */
  get memoryBytes(): number {
    return this.wasm.memory.buffer.byteLength;
  }

  /** Whether search can use codes: a quantization (on any datatype, turbo4 included). */
  get quantized(): boolean {
    return this.wasm.isQuantized() !== 0;
  }

  /**
   * Offset `offset`'s quantization codes as stored (int8 codes, binary bit words, TurboQuant records or product
   * centroid bytes, dimensions in stored order; two_bits / one_and_half_bits in original order,
   * as Qdrant's); dense indexes only.
   */
  codes(offset: number): Uint8Array {
    if (!this.quantized || this.multivector) throw new RangeError('codes are read from a quantized dense index');
    const at = this.wasm.codesPtr(offset) >>> 0;
    return this.settle(this.views.u8.slice(at, at + this.wasm.codeBytes()));
  }

  /** Offset `offset`'s stored vector as its bytes (the datatype's elements in stored order, or its turbo4 record); dense indexes only. */
  storedBytes(offset: number): Uint8Array {
    if (this.multivector) throw new RangeError('stored bytes are read from a dense index');
    const at = this.wasm.storedPtr(offset) >>> 0;
    return this.settle(this.views.u8.slice(at, at + this.wasm.vectorBytes()));
  }

  /**
   * Product quantization's centroids: 256 per chunk, dimension-major (value of stored dimension j
   * in centroid k at j * 256 + k; stored order is the original one unless Euclid or Manhattan
   * reordered it, see assembly/permute.ts).
   */
  productCodebook(): Float32Array {
    if (this.config.quantization?.method !== 'product') throw new RangeError('the codebook is read from a product-quantized index');
    const at = this.wasm.codebookPtr() >>> 2;
    return this.views.f32.slice(at, at + this.config.dim * 256);
  }

  get multivector(): boolean {
    return this.config.multivector !== null;
  }

  /** Live vectors in all: one per live point for a dense index, the rows of every live list for multivectors. */
  get storedVectorCount(): number {
    if (!this.multivector) return this.size;
    let total = 0;
    for (let offset = 0; offset < this.offsetCount; offset++) total += this.vectorCount(offset);
    return total;
  }

  /** Vectors stored at `offset`: 1 for a dense index, the list length for multivectors (0 if none or deleted). */
  vectorCount(offset: number): number {
    if (!this.has(offset)) return 0;
    return this.multivector ? this.wasm.vectorCount(offset) : 1;
  }

  /**
   * Pre-sizes the regions for offsets below n (inserts grow them by doubling otherwise); a
   * multivector index also makes room for `vectors` vectors in all across its lists.
   */
  reserve(n: number, vectors = 0): void {
    this.wasm.reserve(n);
    if (this.multivector && vectors > 0) this.wasm.reserveVectors(bounded(vectors, 0, I32_MAX));
  }

  /**
   * Inserts the vector at `offset`, or moves an existing offset to a new vector. A multivector
   * index takes `count` vectors of dim, row after row (count defaults to vector.length / dim).
   */
  upsert(offset: number, vector: ArrayLike<number>, count?: number): void {
    this.checkStorable(vector, count);
    this.writeQuery(vector, count);
    this.wasm.insert(offset);
    this.settle();
  }

  /** Stores the vector (or list, as for upsert) at `offset` unlinked: searches scan it exactly until it is linked. */
  stash(offset: number, vector: ArrayLike<number>, count?: number): void {
    this.checkStorable(vector, count);
    this.writeQuery(vector, count);
    this.wasm.stash(offset);
    this.settle();
  }

  /** Links up to `max` unlinked vectors into the graph; returns how many it linked. */
  linkPending(max: number): number {
    return this.settle(this.wasm.linkPending(Math.min(max, 0x7fffffff)));
  }

  /**
   * Fits the int8 codebook again to the live vectors if their number changed since the last fit
   * (Qdrant fits a segment's codebook when the optimizer builds it); binary codes need no fit.
   */
  refitQuantization(): void {
    this.wasm.refitQuantization();
    this.settle();
  }

  /**
   * One bounded step of training the product codebook or the TurboQuant calibration when due (the
   * stored count doubled since the last fit, or the dimension order is to be fitted): gathering
   * the sample, one k-means round of one chunk or calibrating a group of coordinates, or coding a
   * batch of vectors with the new codebook, the last of which swaps it in (assembly/training.ts).
   * Stores never train these (upsert trains before it links); the shard optimizer calls this
   * between requests before linking. True while steps remain.
   */
  trainQuantizationStep(): boolean {
    return this.settle(this.wasm.trainStep()) !== 0;
  }

  /** The size of the last trainQuantizationStep in work units: the vector coordinates it read. */
  get trainingStepWork(): number {
    return this.wasm.trainStepWork();
  }

  /** Vectors (offsets, for product) the quantization codebook was last fitted on; 0 = never. */
  get quantizationTrainedOn(): number {
    return this.wasm.trainedVectors();
  }

  /** Forgets deleted vectors and unlinks every live one, so linking them again rebuilds the graph without tombstones. */
  vacuum(): void {
    this.wasm.vacuum();
    this.settle();
  }

  /** Deletes `offset`: it is never returned again (until re-inserted). */
  delete(offset: number): boolean {
    return this.wasm.remove(offset) !== 0;
  }

  has(offset: number): boolean {
    return this.wasm.contains(offset) !== 0;
  }

  /**
   * The stored vector (normalised for Cosine, as Qdrant stores it, and converted to the datatype:
   * float16 and uint8 values widened back to f32, as Qdrant returns them); for a multivector
   * index the whole list, vectorCount(offset) rows of dim.
   */
  vector(offset: number): Float32Array {
    const start = this.wasm.readVector(offset) >>> 2;
    const dim = this.config.dim;
    // readVector copies into a scratch region: the row's (or list's) page may go at once.
    if (!this.multivector) return this.settle(this.views.f32.slice(start, start + dim));
    const k = this.wasm.vectorCount(offset);
    const stride = this.wasm.vecStride();
    const f32 = this.views.f32;
    const out = new Float32Array(k * dim);
    for (let i = 0; i < k; i++) out.set(f32.subarray(start + i * stride, start + i * stride + dim), i * dim);
    return this.settle(out);
  }

  /** Top `limit` offsets for the query: one vector, or for multivectors a list of `count` (default length / dim). */
  search(query: ArrayLike<number>, options: SearchOptions, count?: number): SearchResult {
    this.writeQuery(query, count);
    // No search can return, keep as candidates or visit more than every offset, so limit, pool
    // and beam are capped there: a request may ask for any number (Qdrant serves a huge limit
    // with every match) without the engine allocating by it.
    const all = this.offsetCount;
    const limit = Math.min(Math.floor(options.limit), all);
    if (!(limit >= 1)) return { offsets: new Uint32Array(0), scores: new Float32Array(0), cost: 0 };
    const bits = options.filter ? this.copyBits(options.filter) : 0;
    const quant = options.quantization ?? {};
    // Qdrant searches the original vectors for params.exact, whatever the quantization params say.
    const useCodes = this.quantized && !quant.ignore && options.exact !== true;
    const rescore = quant.rescore ?? defaultRescoring(this.config.quantization);
    // Qdrant fetches floor(oversampling × limit) candidates.
    const pool = bounded(Math.floor(limit * Math.max(quant.oversampling ?? 1, 1)), limit, all);
    const plan = options.filter && options.check ? this.checkPlan(bits, options.filter, options.check, options.exact === true) : null;
    const exact = options.exact === true || (plan ? !plan.graph : bits !== 0 && this.wasm.allowedCount(bits) <= this.fullScanCardinality());
    const ef = bounded(Math.max(options.ef ?? this.config.efConstruct, limit), limit, all);
    const run = () => this.wasm.search(limit, ef, bits, exact ? 1 : 0, useCodes ? 1 : 0, rescore ? 1 : 0, pool);
    const n = plan?.graph ? this.checkingAsReached(options.check!, run) : run();
    const ids = this.views.u32;
    const dist = this.views.f32;
    const idsAt = this.wasm.outIdsPtr() >>> 2;
    const distAt = this.wasm.outDistPtr() >>> 2;
    const offsets = ids.slice(idsAt, idsAt + n);
    const scores = new Float32Array(n);
    for (let i = 0; i < n; i++) scores[i] = toScore(this.config.distance, dist[distAt + i]);
    this.settle();
    return { offsets, scores, cost: this.wasm.searchCost() };
  }

  /** The image as one buffer (small indexes, tests); serializeParts() for any size. */
  serialize(): Uint8Array {
    return joinParts(this.serializeParts());
  }

  /** The image in parts of at most `partBytes` bytes, written without a block of its size in linear memory. */
  serializeParts(partBytes: number = IMAGE_PART_BYTES): Uint8Array[] {
    return saveImage(this.wasm, partBytes);
  }

  /**
   * Number of points below which a filtered search scans the allowed set exactly: Qdrant divides
   * the threshold's bytes by a vector's size in its datatype (1 KiB = one 256-d float32 vector,
   * or one 512-d float16 / 1024-d uint8 vector).
   */
  fullScanCardinality(): number {
    return Math.floor((this.config.fullScanThreshold * 1024) / this.componentBytes);
  }

  /**
   * Qdrant's plan for a filter with a condition left to check point by point (a condition no
   * payload index answers): when its candidates (the allow-bitset at `bits`, a copy of `filter`)
   * are no more than the full-scan cardinality, or a sample of the stored points estimates the
   * matches below it (sample_check_cardinality), every candidate is checked now and the matches
   * are scanned exactly (graph false); otherwise the graph is searched and `check` is asked only
   * of the candidates it reaches (graph true).
   */
  private checkPlan(bits: number, filter: Bitset, check: (offset: number) => boolean, exact: boolean): { graph: boolean } {
    const threshold = this.fullScanCardinality();
    const graph = !exact && this.wasm.allowedCount(bits) > threshold
      && sampledAbove(this.storedSample(), (offset) => filter.has(offset) && check(offset), threshold, this.size);
    if (graph) return { graph };
    const u32 = this.views.u32;
    const at = bits >>> 2;
    const words = filter.words;
    for (let w = 0; w < words.length; w++) {
      let word = words[w];
      while (word !== 0) {
        const low = word & -word;
        const offset = (w << 5) + 31 - Math.clz32(low);
        if (!check(offset)) u32[at + w] &= ~low;
        word ^= low;
      }
    }
    return { graph };
  }

  /** Random stored offsets (drawn with replacement, the same sequence every time); -1 when none is found. */
  private storedSample(): () => number {
    const all = this.offsetCount;
    const next = uniformInts(this.config.seed, all);
    // Draws past this many misses give up: an index of mostly deleted offsets has too few to sample.
    const attempts = SAMPLE_ATTEMPTS;
    return () => {
      for (let i = 0; i < attempts; i++) {
        const offset = next();
        if (this.has(offset)) return offset;
      }
      return -1;
    };
  }

  /** Runs `search` with the engine asking `check` of each candidate the first time it reaches it. */
  private checkingAsReached(check: (offset: number) => boolean, search: () => number): number {
    const confirmed = this.confirmedBits();
    this.host.checkPoint = check;
    this.wasm.checkAsReached(confirmed);
    try {
      return search();
    } finally {
      this.wasm.checkAsReached(0);
      this.host.checkPoint = refusePointCheck;
    }
  }

  /** A zeroed bitset as large as the allow-bitset (copyBits ran first), for the engine's confirmed candidates. */
  private confirmedBits(): number {
    if (this.confirmedWords !== this.bitsWords) {
      if (this.confirmedPtr) this.wasm.free(this.confirmedPtr);
      this.confirmedPtr = this.wasm.alloc(this.bitsWords * 4);
      this.confirmedWords = this.bitsWords;
    }
    const at = this.confirmedPtr >>> 2;
    this.views.u32.fill(0, at, at + this.confirmedWords);
    return this.confirmedPtr;
  }

  /** A float16 index stores no infinity (its kernels widen finite halves only). */
  private checkStorable(vector: ArrayLike<number>, count?: number): void {
    // A stored list sits in one chunk of the arena (assembly/layout.ts listStart): 16384 rows up to
    // 4096-d, fewer for wider rows (1024 at 65536-d), far past what a request can carry.
    const rows = this.multivector ? (count ?? vector.length / this.config.dim) : 1;
    if (rows > this.wasm.maxListRows()) throw new RangeError(`a stored multivector holds at most ${this.wasm.maxListRows()} vectors of dim ${this.config.dim}, got ${rows}`);
    if (this.config.datatype !== 'float16') return;
    const at = float16Overflow(vector);
    if (at >= 0) throw new RangeError(`float16 overflow: value ${vector[at]} at index ${at} would round to an infinity`);
  }

  private writeQuery(vector: ArrayLike<number>, count?: number): void {
    const dim = this.config.dim;
    if (this.multivector) {
      this.writeList(vector, count ?? vector.length / dim);
      return;
    }
    if (vector.length !== dim) {
      throw new RangeError(`vector dimension error: expected dim: ${dim}, got ${vector.length}`);
    }
    this.views.f32.set(vector, this.wasm.queryPtr() >>> 2);
  }

  /** Writes `count` vectors into the engine's query region, each at its padded stride. */
  private writeList(vectors: ArrayLike<number>, count: number): void {
    const dim = this.config.dim;
    if (!Number.isInteger(count) || count < 1 || count > I32_MAX / dim || vectors.length !== count * dim) {
      throw new RangeError(`multivector dimension error: expected ${Number.isInteger(count) && count >= 1 ? count : 'k >= 1'} vectors of dim ${dim}, got ${vectors.length} numbers`);
    }
    const at = this.wasm.queryVectors(count) >>> 2;
    const stride = this.wasm.vecStride();
    const f32 = this.views.f32;
    if (stride === dim) {
      f32.set(vectors, at);
      return;
    }
    const rows = vectors instanceof Float32Array ? vectors : Float32Array.from(vectors);
    // Padding lanes stay zero (the engine zero-fills the region), so kernels may read them.
    for (let i = 0; i < count; i++) f32.set(rows.subarray(i * dim, (i + 1) * dim), at + i * stride);
  }

  private copyBits(filter: Bitset): number {
    const words = (this.wasm.offsetCapacity() + 31) >>> 5;
    if (words > this.bitsWords) {
      if (this.bitsPtr) this.wasm.free(this.bitsPtr);
      this.bitsPtr = this.wasm.alloc(words * 4);
      this.bitsWords = words;
    }
    const u32 = this.views.u32;
    const at = this.bitsPtr >>> 2;
    const n = Math.min(words, filter.words.length);
    u32.set(n === filter.words.length ? filter.words : filter.words.subarray(0, n), at);
    u32.fill(0, at + n, at + this.bitsWords);
    return this.bitsPtr;
  }
}
