// The typed surface of build/quiver.wasm (assembly/index.ts) and its instantiation. Pointers
// are byte offsets into the instance's memory; booleans cross as 0/1.

export interface EngineExports {
  readonly memory: WebAssembly.Memory;
  init(dim: number, metric: number, m: number, efConstruct: number, seedLow: number, seedHigh: number, datatype: number): void;
  reserve(n: number): void;
  alloc(bytes: number): number;
  free(ptr: number): void;
  insert(offset: number): void;
  stash(offset: number): void;
  link(offset: number): number;
  linkPending(max: number): number;
  vacuum(): void;
  pendingOffsets(): number;
  remove(offset: number): number;
  contains(offset: number): number;
  liveCount(): number;
  allowedCount(bits: number): number;
  search(k: number, ef: number, bits: number, exact: number, codes: number, rescore: number, candidates: number): number;
  searchCost(): number;
  distanceBetween(a: number, b: number): number;
  dimension(): number;
  enableQuantization(quantile: number, method: number): void;
  enableProductQuantization(bucket: number): void;
  productBucket(): number;
  codebookPtr(): number;
  refitQuantization(): void;
  trainStep(): number;
  trainStepWork(): number;
  trainedVectors(): number;
  quantizationMethod(): number;
  setTurboBits(halfBits: number): void;
  turboBits(): number;
  turboPadded(): number;
  turboCentroid(i: number): number;
  turboRotate(ptr: number): void;
  turboShiftPtr(): number;
  turboScalePtr(): number;
  codesPtr(offset: number): number;
  storedPtr(offset: number): number;
  serializedSize(): number;
  saveBegin(): number;
  savePart(out: number, len: number): number;
  loadBegin(head: number, len: number, total: number): number;
  loadTail(src: number, len: number): number;
  loadPart(src: number, len: number): number;
  loadEnd(): number;
  queryPtr(): number;
  outIdsPtr(): number;
  outDistPtr(): number;
  readVector(offset: number): number;
  vecStride(): number;
  offsetCount(): number;
  offsetCapacity(): number;
  entry(): number;
  topLevel(): number;
  deletedOffsets(): number;
  isQuantized(): number;
  codeBytes(): number;
  indexMetric(): number;
  indexM(): number;
  indexEfConstruct(): number;
  indexQuantile(): number;
  queryCodeBits(): number;
  kernelF32(metric: number, a: number, b: number, n: number): number;
  kernelI8(kind: number, a: number, b: number, n: number): number;
  kernelBits(bits: number, a: number, b: number, n: number): number;
  kernelF32Rows4(metric: number, q: number, rows: number, n: number, bound: number, bounded: number, out: number): void;
  kernelI8Rows4(kind: number, q: number, rows: number, n: number, bound: number, out: number): void;
  kernelBitsRows4(bits: number, b: number, rows: number, n: number, out: number): void;
  codeDistance(id: number): number;
  codeDistancesRows4(ids: number, out: number): number;
  indexDatatype(): number;
  vectorBytes(): number;
  enableMultivector(): void;
  reserveVectors(total: number): void;
  isMultivector(): number;
  queryVectors(k: number): number;
  vectorCount(offset: number): number;
  storedVectors(): number;
  arenaCapacity(): number;
  checkAsReached(confirmedBits: number): void;
  setPaging(vectors: number, codes: number, links: number, budgetBytes: number): void;
  trimPages(): void;
  residentPageBytes(): number;
  maxListRows(): number;
}

export class EngineAbort extends Error {}

/**
 * What the engine asks its host during a call: `checkPoint` answers whether offset `id` matches
 * the filter of the running search (assembly/filter-check.ts; asked only while one is set);
 * `pages` holds the pages of paged regions while they are out of linear memory
 * (assembly/pages.ts; asked only once setPaging turned a region on).
 */
export interface EngineHost {
  checkPoint: (id: number) => boolean;
  pages: PageStore;
}

/**
 * Where an index keeps the pages of its paged regions (Qdrant's `cold` vectors, codes or graph)
 * while they are out of its linear memory: a file per region (0 = stored vectors, 1 = codes,
 * 2 = the graph's level-0 links), each page at byte `position` of it. A region's pages are all
 * one size, but for multivector lists: a list is a page of its own length at its arena position.
 * Bytes never written read as zeros. Calls are synchronous: the engine asks in the middle of a
 * search.
 */
export interface PageStore {
  read(region: number, position: number, into: Uint8Array): void;
  write(region: number, position: number, from: Uint8Array): void;
}

/** The page store of an index with no paged region: the engine never asks it. */
export const NO_PAGES: PageStore = {
  read() { throw new EngineAbort('the engine read a page of an index without paged regions'); },
  write() { throw new EngineAbort('the engine wrote a page of an index without paged regions'); },
};

/** The point check outside a checked search: the engine never asks then. */
export function refusePointCheck(): boolean {
  throw new EngineAbort('the engine asked for a point check outside a checked search');
}

/** A fresh engine instance (its own linear memory) of a compiled quiver.wasm module. */
export async function instantiate(module: WebAssembly.Module): Promise<EngineExports> {
  return (await instantiateWithHost(module)).exports;
}

/** instantiate, with the hooks the instance calls back into. */
export async function instantiateWithHost(module: WebAssembly.Module): Promise<{ exports: EngineExports; host: EngineHost }> {
  const host: EngineHost = { checkPoint: refusePointCheck, pages: NO_PAGES };
  // Linear memory may have grown since the last call: a view is taken per page.
  const bytesAt = (ptr: number, len: number) => new Uint8Array((instance.exports.memory as WebAssembly.Memory).buffer, ptr >>> 0, len >>> 0);
  const imports = {
    env: {
      abort(_message: number, _file: number, line: number, column: number): never {
        throw new EngineAbort(`engine abort at ${line}:${column}`);
      },
      checkPoint: (id: number): number => (host.checkPoint(id) ? 1 : 0),
      readPage: (region: number, position: number, ptr: number, len: number): void => host.pages.read(region, position, bytesAt(ptr, len)),
      writePage: (region: number, position: number, ptr: number, len: number): void => host.pages.write(region, position, bytesAt(ptr, len)),
    },
  };
  const instance: WebAssembly.Instance = await WebAssembly.instantiate(module, imports);
  return { exports: instance.exports as unknown as EngineExports, host };
}
