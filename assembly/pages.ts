// Rows read on demand: Qdrant's `cold` placement of the stored vectors, of their codes, or of the
// HNSW graph's level-0 links.
//
// A paged region keeps its chunk table (layout.ts `chunks`, `codeChunks` or `linkPages`) but its chunks are
// small pages (about PAGE_TARGET bytes of whole rows) that are resident only while used: a table
// entry of 0 means "not in linear memory", and the row accessors (vecPtr, codePtr, linksAt) call pageIn,
// which takes a block from the heap and asks the host to fill it from its page file (a read
// straight into linear memory; pages never written read as zeros). The host's file holds every
// page that left memory, so linear memory holds at most the budget between calls.
//
// Multivector lists are paged a list at a time instead: MaxSim kernels read a list as one run of
// rows, and a list may be longer than any page. Their table (layout.ts `listTable`) has one entry
// per offset, a list's page is its rows, and its place in the host's file is its arena position
// (mvStart). Their codes are indexed by arena row and paged as dense codes are.
//
// Pages leave only at safe points, never in the middle of a kernel: trimPages() between engine
// calls (the host calls it), and safePoint() between the rows of top-level loops that hold no row
// pointer (exact scans, linkPending's links, the fits and re-encodings, save and load streams).
// So a row pointer stays valid until the next safe point, and the budget can be passed between
// two safe points by what the work between them touches.
// Eviction is first in, first out; a page written since it was read (markDirty) is written back
// to the host before its block is freed.

import { chunks, chunkShift, codeChunks, codeShift, vecBytes, codeStride, multi, listTable, mvStart, mvCount, linkPages, linkShift, linkRowBytes } from "./layout";

export const REGION_VECS: i32 = 0;
export const REGION_CODES: i32 = 1;
export const REGION_LINKS: i32 = 2;
const REGIONS = 3;

/** Bytes of whole rows a page aims at: the size of one read from the host's file. */
const PAGE_TARGET: usize = 4096;

// `at` is a byte position in the region's file (an f64: files pass 4 GiB).
@external("env", "readPage")
declare function hostRead(region: i32, at: f64, dst: usize, bytes: usize): void;

@external("env", "writePage")
declare function hostWrite(region: i32, at: f64, src: usize, bytes: usize): void;

export let pagedVecs: bool = false;
export let pagedCodes: bool = false;
export let pagedLinks: bool = false;
let budget: usize = 0;
let resident: usize = 0;

// Resident pages in the order they came in: region in the top two bits, page number (a list's offset) below.
let ring: usize = 0;
let ringCap: i32 = 0;
let ringHead: i32 = 0;
let ringTail: i32 = 0;

// Pages written since they were read, per region: a bitset over page numbers (its pointer at
// dirty + region * 4) and its size in bytes (at dirtyBytes + region * 4).
const dirty = memory.data(REGIONS * 4);
const dirtyBytes = memory.data(REGIONS * 4);

@inline function dirtyBits(region: i32): usize {
  return <usize>load<u32>(dirty + (<usize>region << 2));
}

/** Chooses which regions are paged and the bytes of pages kept between calls; before any reserve. */
export function setPaging(vecs: bool, codes: bool, links: bool, budgetBytes: f64): void {
  pagedVecs = vecs;
  pagedCodes = codes;
  pagedLinks = links;
  budget = <usize>budgetBytes;
}

/** Bytes of paged rows in linear memory now. */
export function residentPageBytes(): f64 { return <f64>resident; }

/** Rows per page, as a shift: as many whole rows of `rowBytes` as fit PAGE_TARGET, at least one. */
export function pageShiftFor(rowBytes: usize): i32 {
  let shift = 0;
  while (shift < 14 && (rowBytes << (shift + 1)) <= PAGE_TARGET) shift++;
  return shift;
}

/** Whether `region`'s pages are multivector lists (keyed by offset) rather than runs of rows. */
@inline function byList(region: i32): bool {
  return multi && region == REGION_VECS;
}

/** Bytes of page `key` of `region` (a list's: its rows now, so a list's count changes only while it is out). */
@inline function pageBytes(region: i32, key: i32): usize {
  if (byList(region)) return <usize>load<u32>(mvCount + (<usize>key << 2)) * vecBytes;
  if (region == REGION_LINKS) return linkRowBytes() << linkShift;
  return region == REGION_VECS ? vecBytes << chunkShift : <usize>codeStride << codeShift;
}

/** Where page `key` of `region` lies in the host's file. */
@inline function filePosition(region: i32, key: i32): f64 {
  if (byList(region)) return <f64>load<u32>(mvStart + (<usize>key << 2)) * <f64>vecBytes;
  return <f64>key * <f64>pageBytes(region, key);
}

@inline function tableOf(region: i32): usize {
  if (region == REGION_LINKS) return linkPages;
  return byList(region) ? listTable : region == REGION_VECS ? chunks : codeChunks;
}

/** Makes the dirty bitset of `region` cover `pages` pages (the table grew). */
export function coverPages(region: i32, pages: usize): void {
  const bytes = ((pages + 31) >> 5) << 2;
  const had = <usize>load<u32>(dirtyBytes + (<usize>region << 2));
  if (bytes <= had) return;
  store<u32>(dirty + (<usize>region << 2), <u32>regrow(dirtyBits(region), had, bytes));
  store<u32>(dirtyBytes + (<usize>region << 2), <u32>bytes);
}

function regrow(ptr: usize, old: usize, bytes: usize): usize {
  const p = ptr == 0 ? heap.alloc(bytes) : heap.realloc(ptr, bytes);
  memory.fill(p + old, 0, bytes - old);
  return p;
}

/** Brings page `page` of `region` into linear memory; returns its block. */
export function pageIn(region: i32, page: i32): usize {
  const p = takeBlock(region, page);
  hostRead(region, filePosition(region, page), p, pageBytes(region, page));
  return p;
}

/** A block for page `page` of `region` whose every row is about to be written: nothing is read. */
export function freshPage(region: i32, page: i32): usize {
  const p = takeBlock(region, page);
  markDirty(region, page);
  return p;
}

function takeBlock(region: i32, page: i32): usize {
  const bytes = pageBytes(region, page);
  const p = heap.alloc(bytes);
  store<u32>(tableOf(region) + (<usize>page << 2), <u32>p);
  enqueue((<u32>region << 30) | <u32>page);
  resident += bytes;
  return p;
}

/**
 * Lets page `page` of `region` go without writing it back: its rows are dead (a list about to be
 * stored again or dropped; code rows past a compacted arena). Its ring entry stays and is
 * skipped when it comes up (evict finds no block).
 */
export function dropPage(region: i32, page: i32): void {
  const slot = tableOf(region) + (<usize>page << 2);
  const p = <usize>load<u32>(slot);
  if (p == 0) return;
  heap.free(p);
  store<u32>(slot, 0);
  resident -= pageBytes(region, page);
  clearDirty(region, page);
}

/** Notes that a row of page `page` of `region` was written (it goes back to the host when it leaves). */
@inline export function markDirty(region: i32, page: i32): void {
  const at = dirtyBits(region) + ((<usize>page >> 5) << 2);
  store<u32>(at, load<u32>(at) | (1 << (page & 31)));
}

/** Clears page `page`'s dirty bit; returns whether it was set. */
function clearDirty(region: i32, page: i32): bool {
  const at = dirtyBits(region) + ((<usize>page >> 5) << 2);
  const mask: u32 = 1 << (page & 31);
  const was = (load<u32>(at) & mask) != 0;
  store<u32>(at, load<u32>(at) & ~mask);
  return was;
}

function enqueue(entry: u32): void {
  if (ringTail == ringCap) {
    if (ringHead > 0) {
      memory.copy(ring, ring + (<usize>ringHead << 2), <usize>(ringTail - ringHead) << 2);
      ringTail -= ringHead;
      ringHead = 0;
    } else {
      ringCap = ringCap == 0 ? 1024 : ringCap << 1;
      ring = ring == 0 ? heap.alloc(<usize>ringCap << 2) : heap.realloc(ring, <usize>ringCap << 2);
    }
  }
  store<u32>(ring + (<usize>ringTail << 2), entry);
  ringTail++;
}

// The page a save or load stream's current span lies in (persist.ts): streams run over several
// engine calls, with trims between them, so that page stays until the stream moves on.
const NO_PAGE: u32 = 0xffffffff;
let pinned: u32 = NO_PAGE;

/** Keeps page `page` of `region` resident until another is pinned or unpinPage(). */
export function pinPage(region: i32, page: i32): void {
  pinned = (<u32>region << 30) | <u32>page;
}

export function unpinPage(): void {
  pinned = NO_PAGE;
}

/** Evicts the oldest pages until at most the budget is resident. Only where no row pointer is held. */
export function trimPages(): void {
  while (resident > budget && ringHead < ringTail) {
    const entry = load<u32>(ring + (<usize>ringHead << 2));
    ringHead++;
    if (entry == pinned) {
      enqueue(entry);
      if (ringTail - ringHead == 1) return; // the pinned page alone is left
      continue;
    }
    evict(<i32>(entry >> 30), <i32>(entry & 0x3fffffff));
  }
}

/** trimPages for the loops that call it between rows: one compare while under the budget. */
@inline export function safePoint(): void {
  if (resident > budget) trimPages();
}

function evict(region: i32, page: i32): void {
  const slot = tableOf(region) + (<usize>page << 2);
  const p = <usize>load<u32>(slot);
  if (p == 0) return; // dropped already (dropPage)
  const bytes = pageBytes(region, page);
  if (clearDirty(region, page)) hostWrite(region, filePosition(region, page), p, bytes);
  heap.free(p);
  store<u32>(slot, 0);
  resident -= bytes;
}
