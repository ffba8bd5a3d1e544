// One sparse vector index over dense offsets 0..n-1 (the shard's internal point numbers, as for
// VectorIndex): an inverted index, one posting list per vector index (term), plus the stored
// vectors by offset. Exact top-k by dot product over shared indices, as Qdrant's sparse search:
//
// - a document sharing no index with the query is not a match and is never returned; a shared
//   index counts even when the product is 0 (a stored or query value of 0), as on Qdrant's plain
//   path (its indexed path also drops scores of exactly 0, qdrant-client issue #1454; here both
//   paths follow the one rule, so they always agree);
// - results: score descending, ties by offset ascending;
// - an empty query, or a limit below 1, returns nothing; an empty stored vector matches nothing;
// - a filter letting fewer than `fullScanThreshold` points through (Qdrant's sparse
//   full_scan_threshold, counted in points, default 5000: "prefer a full scan search up to
//   (excluding) this number of vectors") scores those points directly; otherwise the posting
//   lists are searched with pruning. Both give the same offsets and scores.
//
// Posting lists and stored vectors live in the memory of the index's own instance of the sparse
// engine (build/quiver-sparse.wasm, assembly/sparse/index.ts), whose loops score in place; this
// class keeps the term map and the bookkeeping. Like VectorIndex it is given a compiled module,
// never a file path, so it runs unchanged in browsers.

import type { Bitset } from './bitset.js';
import { PostingList } from './posting-list.js';
import { idf, type IdfStatistics } from './sparse-idf.js';
import { SparseMemory } from './sparse-memory.js';
import type { SparseDatatype } from './sparse-datatype.js';
import { readImage, writeImage } from './sparse-persist.js';
import { plainScan, prunedSearch, SearchScratch, type PreparedQuery, type SearchResultArrays } from './sparse-search.js';
import { ABSENT, SparseStore } from './sparse-store.js';
import { InvalidSparseVector } from './sparse-errors.js';
import { normalizeSparse, type SortedSparse, type SparseVector } from './sparse-vector.js';

export interface SparseIndexConfig {
  /** Qdrant's sparse index full_scan_threshold, in points (default 5000, Qdrant's). */
  fullScanThreshold?: number;
  /** How posting values are stored (Qdrant's sparse index datatype, sparse-datatype.ts); default float32. */
  datatype?: SparseDatatype;
}

export interface SparseSearchOptions {
  limit: number;
  /** Only offsets in this set may be returned. */
  filter?: Bitset;
  /** Score every allowed document from the stored vectors, whatever the filter's size (Qdrant's params.exact). */
  exact?: boolean;
  /** Qdrant's `modifier: idf`: query values are multiplied by idf(N, n) from these statistics. */
  idf?: IdfStatistics;
}

export type SparseSearchResult = SearchResultArrays;

/** Qdrant's default sparse full_scan_threshold (points). */
export const DEFAULT_SPARSE_FULL_SCAN_THRESHOLD = 5000;

/** Offsets keep the posting lists' DEAD bit free. */
const MAX_OFFSET = 0x7ffffffe;

export class SparseIndex {
  readonly fullScanThreshold: number;
  readonly datatype: SparseDatatype;
  private readonly lists = new Map<number, PostingList>();
  private readonly store: SparseStore;
  private readonly scratch: SearchScratch;
  /** Stored vectors with at least one index. */
  private indexed = 0;

  private constructor(private readonly mem: SparseMemory, config: SparseIndexConfig) {
    this.fullScanThreshold = config.fullScanThreshold ?? DEFAULT_SPARSE_FULL_SCAN_THRESHOLD;
    this.datatype = config.datatype ?? 'float32';
    this.store = new SparseStore(mem);
    this.scratch = new SearchScratch(mem);
  }

  /** An empty index on a fresh instance of the compiled sparse engine (build/quiver-sparse.wasm). */
  static async create(module: WebAssembly.Module, config: SparseIndexConfig = {}): Promise<SparseIndex> {
    return new SparseIndex(await SparseMemory.instantiate(module), config);
  }

  /** Restores an index written by serialize() (with the same datatype); searches give identical results. */
  static async load(module: WebAssembly.Module, bytes: Uint8Array, config: SparseIndexConfig = {}): Promise<SparseIndex> {
    const image = readImage(bytes, config.datatype ?? 'float32');
    const index = await SparseIndex.create(module, config);
    index.store.restore(image.lengths, image.pairs, image.documents);
    for (const { term, offsets, values, stats } of image.lists) index.lists.set(term, PostingList.restore(index.mem, term, index.datatype, offsets, values, stats));
    for (let o = 0; o < image.count; o++) if (image.lengths[o] !== ABSENT && image.lengths[o] > 0) index.indexed++;
    return index;
  }

  /** Stored sparse vectors (an empty one counts). */
  get size(): number {
    return this.store.documents;
  }

  /**
   * Qdrant's N for IDF: the vectors in the inverted index. An empty vector is stored but indexed
   * nowhere, so it does not count (Qdrant counts its sparse index's indexed vectors).
   */
  get documentCount(): number {
    return this.indexed;
  }

  /** Non-zeros (index, value pairs) of the stored vectors. */
  get entryCount(): number {
    return this.store.entries;
  }

  /** One past the highest offset ever stored. */
  get offsetCount(): number {
    return this.store.count;
  }

  /** Distinct indices (terms) with at least one live posting. */
  get termCount(): number {
    let n = 0;
    for (const list of this.lists.values()) if (list.live > 0) n++;
    return n;
  }

  /**
   * Bytes held: the engine instance's linear memory (posting lists, stored vectors, search
   * scratch, allocator slack), plus the host's term map (~100 bytes per term).
   */
  get memoryBytes(): number {
    return this.mem.byteLength + this.lists.size * 100;
  }

  /** Bytes of posting lists and stored vectors by capacity (what the engine memory holds for data). */
  get dataBytes(): number {
    return this.store.byteLength + this.postingBytes;
  }

  /** Bytes of the posting lists by capacity (4 per offset and the datatype's width per value). */
  get postingBytes(): number {
    let bytes = 0;
    for (const list of this.lists.values()) bytes += list.byteLength;
    return bytes;
  }

  has(offset: number): boolean {
    return this.store.has(offset);
  }

  /** Pre-sizes the per-offset arrays for offsets below n. */
  reserve(n: number): void {
    this.store.reserve(n);
  }

  /** Stores `vector` at `offset`, replacing what was there. Indices in any order, no duplicates. */
  upsert(offset: number, vector: SparseVector): void {
    checkOffset(offset);
    this.insert(offset, normalizeSparse(vector));
  }

  /** Deletes the vector at `offset`: never returned again. False if there was none. */
  delete(offset: number): boolean {
    const old = this.store.get(offset);
    if (old === null) return false;
    for (let i = 0; i < old.indices.length; i++) this.lists.get(old.indices[i])!.remove(offset, old.values[i]);
    this.store.drop(offset);
    if (old.indices.length > 0) this.indexed--;
    return true;
  }

  /** The stored vector, indices ascending (a copy), or null. */
  vector(offset: number): SortedSparse | null {
    return this.store.get(offset);
  }

  /** Documents with a non-zero value at `index`: Qdrant's n(q_i) for IDF. */
  documentFrequency(index: number): number {
    return this.lists.get(index)?.nonZero ?? 0;
  }

  /** documentFrequency of each of `indices`, in that order (what a shard sends to be summed over shards). */
  documentFrequencies(indices: ArrayLike<number>): Uint32Array {
    return Uint32Array.from({ length: indices.length }, (_, i) => this.documentFrequency(indices[i]));
  }

  /** Whether a search with this filter scores the allowed points directly (Qdrant's small-cardinality plan). */
  usesFullScan(filter: Bitset | undefined): boolean {
    return filter !== undefined && filter.count() < this.fullScanThreshold;
  }

  search(query: SparseVector, options: SparseSearchOptions): SparseSearchResult {
    const prepared = prepare(normalizeSparse(query), query, options.idf);
    const limit = Math.min(Math.floor(options.limit), this.store.documents);
    if (!(limit >= 1) || prepared.indices.length === 0) return { offsets: new Uint32Array(0), scores: new Float32Array(0) };
    const allow = options.filter ? options.filter.words : null;
    // The stored vectors hold the values as given: with another datatype every search scores
    // the posting lists' values, as Qdrant scores its index (the pruned search is exact too).
    if (this.datatype === 'float32' && (options.exact === true || this.usesFullScan(options.filter))) return plainScan(prepared, this.store, this.mem, this.scratch, limit, allow);
    for (const term of prepared.indices) this.refresh(this.lists.get(term));
    return prunedSearch(prepared, this.lists, this.store, this.mem, this.scratch, limit, allow);
  }

  /** Compacts every posting list and the stored vectors (drops what deletes and replacements left). */
  compact(): void {
    for (const [term, list] of this.lists) {
      if (list.live === 0) {
        list.release();
        this.lists.delete(term);
      } else if (list.dead > 0) list.compact();
    }
    this.store.compact();
  }

  serialize(): Uint8Array {
    this.refreshAll();
    return writeImage(this.store, this.lists, this.mem, this.datatype);
  }

  /**
   * uint8: brings every stale list up to date in one pass over the stored vectors (in offset
   * order, which is each list's posting order), instead of a search per posting.
   */
  private refreshAll(): void {
    const stale = new Map<number, { list: PostingList; values: Float32Array; at: number }>();
    for (const [term, list] of this.lists) {
      if (!list.stale) continue;
      if (list.dead > 0) list.compact();
      stale.set(term, { list, values: new Float32Array(list.length), at: 0 });
    }
    if (stale.size === 0) return;
    this.store.forEachPair((term, value) => {
      const entry = stale.get(term);
      if (entry !== undefined) entry.values[entry.at++] = value;
    });
    for (const { list, values } of stale.values()) list.requantize(values);
  }

  /** uint8: brings a stale list's codes up to date from the stored vectors' values. */
  private refresh(list: PostingList | undefined): void {
    if (list?.stale) list.refresh((offset) => this.store.valueOf(offset, list.term));
  }

  private insert(offset: number, doc: SortedSparse): void {
    const old = this.store.get(offset);
    this.indexed += (doc.indices.length > 0 ? 1 : 0) - (old !== null && old.indices.length > 0 ? 1 : 0);
    if (old !== null) this.retire(offset, old, doc);
    for (let i = 0; i < doc.indices.length; i++) {
      const term = doc.indices[i];
      let list = this.lists.get(term);
      if (list === undefined) {
        list = new PostingList(this.mem, term, this.datatype);
        this.lists.set(term, list);
      }
      // A new offset only appends; a replaced one may already have a posting in this list.
      if (old === null || !list.update(offset, doc.values[i], oldValue(old, term))) list.add(offset, doc.values[i]);
    }
    this.store.put(offset, doc);
  }

  /** Removes the postings of `old` at `offset` whose terms the new document does not have (both sorted). */
  private retire(offset: number, old: SortedSparse, doc: SortedSparse): void {
    let j = 0;
    for (let i = 0; i < old.indices.length; i++) {
      const term = old.indices[i];
      while (j < doc.indices.length && doc.indices[j] < term) j++;
      if (j < doc.indices.length && doc.indices[j] === term) continue;
      this.lists.get(term)!.remove(offset, old.values[i]);
    }
  }
}

/** The value of `old` (indices ascending) at `term`, 0 when it has none (then no posting is updated). */
function oldValue(old: SortedSparse, term: number): number {
  let lo = 0;
  let hi = old.indices.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (old.indices[mid] < term) lo = mid + 1;
    else hi = mid;
  }
  return lo < old.indices.length && old.indices[lo] === term ? old.values[lo] : 0;
}

function checkOffset(offset: number): void {
  if (!Number.isInteger(offset) || offset < 0 || offset > MAX_OFFSET) throw new RangeError(`sparse index offset must be an integer from 0 to ${MAX_OFFSET}, got ${offset}`);
}

/** The query's weights in f64, multiplied by Qdrant's IDF when statistics are given. */
function prepare(sorted: SortedSparse, original: SparseVector, stats: IdfStatistics | undefined): PreparedQuery {
  const weights = Float64Array.from(sorted.values);
  if (stats !== undefined) {
    if (stats.documentFrequencies.length !== original.indices.length) {
      throw new InvalidSparseVector(`IDF statistics give ${stats.documentFrequencies.length} document frequencies for a query of ${original.indices.length} indices`);
    }
    if (!(stats.documentCount >= 0 && Number.isFinite(stats.documentCount))) throw new InvalidSparseVector(`IDF statistics: document count ${stats.documentCount} is not a finite number >= 0`);
    const df = new Map<number, number>();
    for (let i = 0; i < original.indices.length; i++) {
      const n = stats.documentFrequencies[i];
      if (!(n >= 0 && Number.isFinite(n))) throw new InvalidSparseVector(`IDF statistics: document frequency ${n} of index ${original.indices[i]} is not a finite number >= 0`);
      df.set(original.indices[i], n);
    }
    for (let i = 0; i < weights.length; i++) weights[i] *= idf(stats.documentCount, df.get(sorted.indices[i]) ?? 0);
  }
  return { indices: sorted.indices, weights };
}
