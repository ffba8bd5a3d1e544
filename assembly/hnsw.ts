// HNSW graph: insert, re-insert, delete and filtered top-k search over the regions of layout.ts.
// Distances are "smaller is closer" (see distance.ts). A search reads the query from the
// `query` region (or its int8 codes) and leaves its answer in outIds/outDist, closest first.
// An offset can be stored without being linked (pending): the graph never returns it, and every
// search scans the pending offsets exactly into the same result heap, so answers stay complete
// while the optimizer links them a few at a time.
// In multivector mode (layout.ts) every distance below is MaxSim between lists of vectors, the
// list being measured from acting as the query (so a point-to-point distance is asymmetric, as
// in Qdrant's graph over multivectors). The graph code is shared: it is generic over the storage
// kind K (Dense or Lists), and each exported entry point picks the instantiation once, so the
// dense instantiation compiles to the same loops as before multivectors existed.

import {
  EMPTY, MAX_LEVEL, METRIC_COSINE, M, M0, capacity, count, dim, stride, metric, efConstruct,
  levelMult, entryPoint, maxLevel, deletedCount, levels, upper, visited, visitTag, quantized,
  codeCorr, query, outIds, outDist, vecPtr, vecPtrW, codePtr, codePtrW, linksAt, linksAtW, isDeleted, bitSet, setDeletedBit,
  setCount, setEntry, setDeletedCount, setVisitTag, reserve, ensureOut, nextUnit,
  pending, pendingCount, isPending, setBit, setPendingCount,
  multi, multiPtr, multiCount, mvStart, mvCount, queryCount, arenaUsed, listStart, compactArena,
  qMethod, QM_INT8, QM_TURBO, binaryCodes, reserveArena, setArenaUsed, multiStart, codePtrW, codeStride,
  dtype, elemShift, vecBytes, DT_F16, DT_U8, queryBytes,
} from "./layout";
import { distF32, distF32Bounded, distT, distBoundedT, distU8Bounded, dotF32, maxSimBounded, maxSimF32 } from "./distance";
import { encodeElements, roundElements } from "./element";
import { Heap } from "./heap";
import { permuteQuery } from "./permute";
import { codeDistQuery, codeDistQueryBounded, codeDistRows4, codeMaxSimQuery, codeScoreQuery, codeSource, codesInRows4, encode, encodeQuery, encodeQueryList, restatesScores } from "./quantize";
import { distRows4 } from "./rows4";
import { abandonTraining, afterStore, trainFully } from "./training";
import { allowedBy } from "./filter-check";
import { safePoint, pagedVecs, dropPage, freshPage, REGION_VECS } from "./pages";
import {
  turbo4, turbo4Dist, turbo4DistRows4, turbo4Holds, turbo4HoldsList, turbo4InRows4, turbo4ListPair, turbo4MaxSim, turbo4Pair, turbo4PrepareQuery,
  turbo4Store, turbo4StoreList, turbo4Target, turbo4TargetList,
} from "./turbo4";

// Storage kinds, as compile-time markers: only their size is read (by isLists), which the
// compiler folds, so the branch on it disappears from each instantiation.
type Dense = u8;
type Lists = u16;
@inline function isLists<K>(): bool { return sizeof<K>() == 2; }

const candidates = new Heap(); // frontier, min-heap by distance
const results = new Heap();    // best found, max-heap (negated keys)
const ordered = new Heap();    // neighbour selection input, min-heap by distance

// Per-search settings, set once before a traversal.
let target: usize = 0;       // vector the distances are measured from: f32, or bytes (uint8)
let targetHalf: bool = false; // float16: target is a stored vector (halves), not the f32 query
let targetCount: i32 = 1;    // vectors at `target` (multivector mode)
let useCodes: bool = false;  // measure with int8 codes (query codes) instead of f32
let allow: usize = 0;        // allow-bitset over offsets, 0 = every offset
let filtering: bool = false; // some offsets must be kept out of results (filter or deletions)
let excluded: i32 = -1;      // offset never returned (the node being re-linked)

// Qdrant's `cpu` hardware measure of the current search: bytes of vector data compared, one
// stored vector (or, for lists, each pair of query and stored rows) at a time: dim times the
// element size (4, 2 or 1 bytes by datatype; a turbo4 vector's record), dim for int8 codes, codeStride for bit, product and TurboQuant codes. Reset by search(); read by the
// host through searchCost().
let cost: f64 = 0;

@inline function charge<K>(id: i32, codes: bool): void {
  const pairs = isLists<K>() ? <f64>targetCount * <f64>multiCount(id) : 1.0;
  cost += pairs * <f64>(codes ? (qMethod == QM_INT8 ? dim : codeStride) : turbo4() ? <i32>vecBytes : dim << elemShift);
}

// Distances by the index's datatype (a runtime choice, one predictable branch per distance):
// float32 and float16 compare f32 lanes (halves widened on the fly), uint8 integer sums.
// The target is f32 except for uint8 (the query's bytes, or a stored vector's) and while a
// float16 vector is linked (its stored halves).

/** Distance from the target to the stored vector at `p`; `bounded` lets L2/L1 stop past `bound`. */
@inline function vecDist(p: usize, bound: f32, bounded: bool): f32 {
  if (dtype == DT_U8) return distU8Bounded(metric, target, p, stride, bound);
  if (dtype == DT_F16) {
    if (targetHalf) return bounded ? distBoundedT<u16, u16>(metric, target, p, stride, bound) : distT<u16, u16>(metric, target, p, stride);
    return bounded ? distBoundedT<f32, u16>(metric, target, p, stride, bound) : distT<f32, u16>(metric, target, p, stride);
  }
  return bounded ? distF32Bounded(metric, target, p, stride, bound) : distF32(metric, target, p, stride);
}

/** MaxSim distance from the target list to the stored list of `pn` vectors at `p`. */
@inline function listDist(p: usize, pn: i32, bound: f32): f32 {
  if (dtype == DT_U8) return maxSimBounded<u8, u8>(metric, target, targetCount, p, pn, stride, bound);
  if (dtype == DT_F16) {
    if (targetHalf) return maxSimBounded<u16, u16>(metric, target, targetCount, p, pn, stride, bound);
    return maxSimBounded<f32, u16>(metric, target, targetCount, p, pn, stride, bound);
  }
  return maxSimBounded<f32, f32>(metric, target, targetCount, p, pn, stride, bound);
}

/** Distance from the target to stored offset `id` over the stored vectors (no codes; a turbo4 vector's record). */
@inline function exactDist<K>(id: i32): f32 {
  if (turbo4()) return isLists<K>() ? turbo4MaxSim(id) : turbo4Dist(id);
  if (isLists<K>()) return listDist(multiPtr(id), multiCount(id), Infinity);
  return vecDist(vecPtr(id), Infinity, false);
}

@inline function targetDist<K>(id: i32): f32 {
  charge<K>(id, useCodes);
  if (useCodes) return isLists<K>() ? codeMaxSimQuery(id) : codeDistQuery(id);
  return exactDist<K>(id);
}

/** targetDist where any value above `bound` may be returned once the distance exceeds it. */
@inline function targetDistBounded<K>(id: i32, bound: f32): f32 {
  charge<K>(id, useCodes);
  if (useCodes) return isLists<K>() ? codeMaxSimQuery(id) : codeDistQueryBounded(id, bound);
  if (turbo4()) return exactDist<K>(id);
  if (isLists<K>()) return listDist(multiPtr(id), multiCount(id), bound);
  return vecDist(vecPtr(id), bound, true);
}

/** Distance from stored offset `a` (as the query) to stored offset `b`. */
@inline function pairDist<K>(a: i32, b: i32): f32 {
  if (isLists<K>() && turbo4()) return turbo4ListPair(a, b);
  if (isLists<K>()) {
    const pa = multiPtr(a), na = multiCount(a), pb = multiPtr(b), nb = multiCount(b);
    if (dtype == DT_U8) return maxSimBounded<u8, u8>(metric, pa, na, pb, nb, stride, Infinity);
    if (dtype == DT_F16) return maxSimBounded<u16, u16>(metric, pa, na, pb, nb, stride, Infinity);
    return maxSimF32(metric, pa, na, pb, nb, stride);
  }
  if (turbo4()) return turbo4Pair(a, b);
  if (dtype == DT_U8) return distU8Bounded(metric, vecPtr(a), vecPtr(b), stride, Infinity);
  if (dtype == DT_F16) return distT<u16, u16>(metric, vecPtr(a), vecPtr(b), stride);
  return distF32(metric, vecPtr(a), vecPtr(b), stride);
}

/** Whether the graph may return `id`: not being linked, live, linked and allowed. */
@inline function accepted(id: i32): bool {
  if (id == excluded) return false;
  if (!filtering) return true;
  return !isDeleted(id) && !isPending(id) && (allow == 0 || allowedBy(allow, id));
}

/** Whether an exact scan may return stored offset `id`: live and allowed, linked or not. */
@inline function scannable(id: i32): bool {
  return !isDeleted(id) && (allow == 0 || allowedBy(allow, id));
}

function newVisit(): void {
  let tag = visitTag + 1;
  if (tag > 0xff) {
    memory.fill(visited, 0, <usize>capacity);
    tag = 1;
  }
  setVisitTag(tag);
}

/** Marks `id` visited; false if it already was. */
@inline function visit(id: i32): bool {
  const p = visited + <usize>id;
  if (<u32>load<u8>(p) == visitTag) return false;
  store<u8>(p, <u8>visitTag);
  return true;
}

// Rows measured together (see measureRows): the ids of one expansion's neighbours to measure and
// their distances, one slot per possible neighbour (a link list holds at most M0 ids).
let rowIds: usize = 0;
let rowDist: usize = 0;
let rowCap: i32 = 0;

function ensureRows(n: i32): void {
  if (n <= rowCap) return;
  if (rowCap > 0) { heap.free(rowIds); heap.free(rowDist); }
  rowIds = heap.alloc(<usize>n << 2);
  rowDist = heap.alloc(<usize>n << 2);
  rowCap = n;
}

@inline function rowId(j: i32): i32 { return <i32>load<u32>(rowIds + (<usize>j << 2)); }
@inline function rowDistAt(j: i32): f32 { return load<f32>(rowDist + (<usize>j << 2)); }

/** Whether the rows of the current search have a four-row kernel (rows4.ts). */
@inline function rowsInFours<K>(): bool {
  if (isLists<K>()) return false;
  return useCodes ? codesInRows4() : dtype != DT_U8 && (!turbo4() || turbo4InRows4());
}

/** The four-row form of targetDist (bounded = false) or targetDistBounded for offsets a..d, to out[0..3]. */
function targetDistRows4(a: i32, b: i32, c: i32, d: i32, bounded: bool, bound: f32, out: usize): void {
  if (useCodes) {
    codeDistRows4(a, b, c, d, bounded, bound, out);
    return;
  }
  if (turbo4()) {
    turbo4DistRows4(a, b, c, d, out);
    return;
  }
  const pa = vecPtr(a), pb = vecPtr(b), pc = vecPtr(c), pd = vecPtr(d);
  if (dtype == DT_F16) {
    if (targetHalf) distRows4<u16, u16>(metric, target, pa, pb, pc, pd, stride, bound, bounded, out);
    else distRows4<f32, u16>(metric, target, pa, pb, pc, pd, stride, bound, bounded, out);
  } else {
    distRows4<f32, f32>(metric, target, pa, pb, pc, pd, stride, bound, bounded, out);
  }
}

// WebAssembly has no prefetch: reading one word of each cache line of the code rows about to be
// measured, all rows first, lets their misses overlap (the loads are independent; the CPU keeps
// many in flight), where the four-row kernels overlap only four rows' at a time. The words are
// folded into `touched` so the loads are not dropped.
let touched: u32 = 0;

/** Reads one word per 64-byte line of the code rows of rowIds from .. to-1. */
function touchCodes(from: i32, to: i32): void {
  let sum: u32 = 0;
  for (let j = from; j < to; j++) {
    const p = codePtr(rowId(j));
    for (let at = 0; at < codeStride; at += 64) sum ^= load<u32>(p + <usize>at);
  }
  touched ^= sum;
}

/**
 * Distances to rows from .. to-1 of rowIds into rowDist: targetDist, or with `bounded`
 * targetDistBounded against `bound`. Four rows at a time where a kernel exists (their cache
 * misses overlap), the rest one by one.
 */
function measureRows<K>(from: i32, to: i32, bounded: bool, bound: f32): void {
  let j = from;
  if (rowsInFours<K>()) {
    if (useCodes) touchCodes(from, to);
    for (; j + 4 <= to; j += 4) {
      const a = rowId(j), b = rowId(j + 1), c = rowId(j + 2), d = rowId(j + 3);
      charge<K>(a, useCodes); charge<K>(b, useCodes); charge<K>(c, useCodes); charge<K>(d, useCodes);
      targetDistRows4(a, b, c, d, bounded, bound, rowDist + (<usize>j << 2));
    }
  }
  for (; j < to; j++) {
    const id = rowId(j);
    store<f32>(rowDist + (<usize>j << 2), bounded ? targetDistBounded<K>(id, bound) : targetDist<K>(id));
  }
}

// Measuring a batch of rows against the bound as it stood at the batch's start, then taking the
// decisions in order against the bound as it moves, decides exactly as measuring each row against
// the moving bound: bounds only shrink, so the start bound is at least the current one. A row
// whose distance is below the current bound is below the start bound too, so no kernel stops on
// it and both measures give its exact value. A row a kernel stops on has a partial sum above the
// start bound, hence above the current one, and its exact distance is larger still (sums of
// non-negative terms only grow, rounding included): rejected either way.

let greedyDist: f32 = 0;

/** Descends one upper level greedily from `cur`; `greedyDist` holds cur's distance in and out. */
function greedy<K>(cur: i32, level: i32): i32 {
  let changed = true;
  while (changed) {
    changed = false;
    const l = linksAt(cur, level);
    const n = <i32>load<u32>(l);
    if (!rowsInFours<K>()) {
      // One row at a time, each against the bound as it moves.
      for (let j = 0; j < n; j++) {
        const c = <i32>load<u32>(l + 4 + (<usize>j << 2));
        const d = targetDistBounded<K>(c, greedyDist);
        if (d < greedyDist) { greedyDist = d; cur = c; changed = true; }
      }
      continue;
    }
    ensureRows(n);
    memory.copy(rowIds, l + 4, <usize>n << 2);
    measureRows<K>(0, n, true, greedyDist);
    for (let j = 0; j < n; j++) {
      const d = rowDistAt(j);
      if (d < greedyDist) { greedyDist = d; cur = rowId(j); changed = true; }
    }
  }
  return cur;
}

/**
 * searchLayer's decision on neighbour `nb` at distance `d`: a frontier candidate, and a result
 * if accepted, when `results` is still filling or `d` beats `bound`; returns the new bound.
 */
@inline function take(nb: i32, d: f32, growing: bool, ef: i32, bound: f32): f32 {
  if (growing || d < bound) {
    candidates.push(d, nb);
    if (accepted(nb)) {
      results.push(-d, nb);
      if (results.size > ef) results.pop();
      return -results.topKey();
    }
  }
  return bound;
}

/** Beam search of one level; leaves up to `ef` accepted nodes in `results`. */
function searchLayer<K>(ep: i32, epDist: f32, ef: i32, level: i32): void {
  newVisit();
  candidates.clear();
  results.clear();
  visit(ep);
  candidates.push(epDist, ep);
  if (accepted(ep)) results.push(-epDist, ep);
  let bound: f32 = results.size > 0 ? epDist : Infinity;
  while (candidates.size > 0) {
    const cd = candidates.topKey();
    if (cd > bound && (results.size >= ef || !filtering)) break;
    const c = candidates.topId();
    candidates.pop();
    const l = linksAt(c, level);
    const n = <i32>load<u32>(l);
    if (!rowsInFours<K>()) {
      // One row at a time, each against the bound as it moves.
      for (let j = 0; j < n; j++) {
        const nb = <i32>load<u32>(l + 4 + (<usize>j << 2));
        if (!visit(nb)) continue;
        const growing = results.size < ef;
        bound = take(nb, growing ? targetDist<K>(nb) : targetDistBounded<K>(nb, bound), growing, ef, bound);
      }
      continue;
    }
    // The unvisited neighbours first, then their distances, then the decisions in order.
    ensureRows(n);
    let m = 0;
    for (let j = 0; j < n; j++) {
      const nb = <i32>load<u32>(l + 4 + (<usize>j << 2));
      if (visit(nb)) store<u32>(rowIds + (<usize>(m++) << 2), nb);
    }
    let j = 0;
    while (j < m) {
      // While `results` holds fewer than ef, every row is taken at its full distance, and which
      // rows fill it depends on accepted() alone: that run is known before measuring. The rows
      // after it are measured against the bound it leaves.
      const growing = results.size < ef;
      let end = m;
      if (growing) {
        let size = results.size;
        end = j;
        while (end < m && size < ef) {
          if (accepted(rowId(end))) size++;
          end++;
        }
      }
      measureRows<K>(j, end, !growing, bound);
      for (; j < end; j++) bound = take(rowId(j), rowDistAt(j), growing, ef, bound);
    }
  }
}

let firstId: i32 = -1;
let firstDist: f32 = 0;

/**
 * Neighbour selection heuristic: takes candidates from `ordered` closest first and keeps one
 * only if it is closer to the base than to every node already kept, so links spread out in
 * different directions. Writes at most `maxSel` ids to `out`; returns how many.
 */
function selectNeighbors<K>(out: usize, maxSel: i32): i32 {
  let kept = 0;
  firstId = -1;
  while (ordered.size > 0 && kept < maxSel) {
    const d = ordered.topKey();
    const c = ordered.topId();
    ordered.pop();
    if (firstId < 0) { firstId = c; firstDist = d; }
    let good = true;
    for (let j = 0; j < kept; j++) {
      if (pairDist<K>(c, <i32>load<u32>(out + (<usize>j << 2))) < d) { good = false; break; }
    }
    if (good) store<u32>(out + (<usize>(kept++) << 2), c);
  }
  ordered.clear();
  return kept;
}

/** Adds the edge n -> id at `level`, pruning n's list with the heuristic when it is full. */
function addLink<K>(n: i32, id: i32, level: i32): void {
  const cap = level == 0 ? M0 : M;
  const seen = linksAt(n, level);
  const cnt = <i32>load<u32>(seen);
  for (let j = 0; j < cnt; j++) if (<i32>load<u32>(seen + 4 + (<usize>j << 2)) == id) return;
  // Taken for writing only now: an edge already there leaves a cold graph's page clean.
  const l = linksAtW(n, level);
  if (cnt < cap) {
    store<u32>(l + 4 + (<usize>cnt << 2), id);
    store<u32>(l, cnt + 1);
    return;
  }
  ordered.push(pairDist<K>(n, id), id);
  for (let j = 0; j < cnt; j++) {
    const c = <i32>load<u32>(l + 4 + (<usize>j << 2));
    ordered.push(pairDist<K>(n, c), c);
  }
  store<u32>(l, selectNeighbors<K>(l + 4, cap));
}

/** Links offset `id` (vector already stored) into levels min(level, maxLevel) .. 0. */
function connect<K>(id: i32, level: i32): void {
  if (isLists<K>()) {
    target = multiPtr(id);
    targetCount = multiCount(id);
    if (turbo4()) turbo4TargetList(id);
  } else if (!turbo4()) {
    target = vecPtr(id);
  } else {
    turbo4Target(id);
  }
  targetHalf = dtype == DT_F16;
  useCodes = false;
  allow = 0;
  filtering = false;
  excluded = id;
  let cur = entryPoint;
  greedyDist = targetDist<K>(cur);
  for (let l = maxLevel; l > level; l--) cur = greedy<K>(cur, l);
  for (let l = min(level, maxLevel); l >= 0; l--) {
    searchLayer<K>(cur, greedyDist, efConstruct, l);
    while (results.size > 0) {
      ordered.push(-results.topKey(), results.topId());
      results.pop();
    }
    const own = linksAtW(id, l);
    const kept = selectNeighbors<K>(own + 4, M);
    store<u32>(own, kept);
    // The closest candidate enters the next level down; read it before addLink reuses firstId.
    if (firstId >= 0) { cur = firstId; greedyDist = firstDist; }
    for (let j = 0; j < kept; j++) addLink<K>(<i32>load<u32>(own + 4 + (<usize>j << 2)), id, l);
  }
  excluded = -1;
}

/**
 * Whether vectors are normalised before they are stored (and queries before they are measured):
 * Cosine over float32 and float16, normalised in f32 then converted, as Qdrant's preprocess does.
 * uint8 keeps its bytes (normalised values would round to 0 or 1) and computes the whole cosine.
 */
@inline function normalizes(): bool {
  return metric == METRIC_COSINE && dtype != DT_U8;
}

function normalizeInPlace(p: usize): void {
  const norm = Mathf.sqrt(dotF32(p, p, stride));
  if (norm == 0) return;
  const inv = f32x4.splat(1 / norm);
  for (let i = 0; i < stride; i += 4) {
    const q = p + (<usize>i << 2);
    v128.store(q, f32x4.mul(v128.load(q), inv));
  }
}

/** Copies the `queryCount` query vectors to offset `id`'s arena slot (multivector mode). */
function storeList(id: i32): void {
  if (turbo4() && turbo4HoldsList(id)) return; // as turbo4Holds: a list stored again as read back keeps its records
  const k = queryCount;
  const slot = <usize>id << 2;
  // A list no longer than the one it replaces reuses its slot; a longer one is appended and the
  // old slot stays unused until vacuum() compacts the arena.
  // A paged list's old rows are dead: its block goes before the count it was sized by changes.
  if (pagedVecs) dropPage(REGION_VECS, id);
  if (k > multiCount(id)) {
    const start = listStart(arenaUsed, k);
    reserveArena(start + k);
    store<u32>(mvStart + slot, start);
    setArenaUsed(start + k);
  }
  store<u32>(mvCount + slot, k);
  const v = pagedVecs ? freshPage(REGION_VECS, id) : multiPtr(id);
  if (normalizes()) {
    for (let i = 0; i < k; i++) normalizeInPlace(query + ((<usize>i * <usize>stride) << 2));
  }
  if (turbo4()) turbo4StoreList(id);
  else encodeElements(query, v, k * stride);
  if (quantized) {
    const first = multiStart(id);
    for (let i = 0; i < k; i++) {
      const row = v + <usize>i * vecBytes;
      store<f32>(codeCorr + (<usize>(first + i) << 2), encode(codeSource(row), codePtrW(first + i)));
    }
  }
}

/**
 * Stores the vector in the query region at offset `id` without linking it: it becomes pending
 * (searched exactly) until link(). A linked offset stored again keeps routing with its new vector.
 */
export function stash(id: i32): void {
  if (id >= capacity) reserve(max(id + 1, max(capacity * 2, 1024)));
  if (multi) {
    storeList(id);
  } else {
    permuteQuery();
    const v = vecPtrW(id);
    if (turbo4()) {
      if (!turbo4Holds(id)) {
        if (normalizes()) normalizeInPlace(query);
        turbo4Store(id);
      }
    } else {
      if (normalizes()) normalizeInPlace(query);
      encodeElements(query, v, stride);
    }
    if (quantized) store<f32>(codeCorr + (<usize>id << 2), encode(codeSource(v), codePtrW(id)));
  }
  if (isDeleted(id)) {
    setDeletedBit(id, false);
    setDeletedCount(deletedCount - 1);
  }
  if (id >= count) setCount(id + 1);
  if (load<u8>(levels + <usize>id) == EMPTY) {
    const level = min(<i32>Math.floor(-Math.log(nextUnit()) * levelMult), MAX_LEVEL);
    store<u8>(levels + <usize>id, <u8>level);
    store<u32>(linksAtW(id, 0), 0);
    if (level > 0) {
      const bytes = <usize>level * <usize>(M + 1) * 4;
      const block = heap.alloc(bytes);
      memory.fill(block, 0, bytes);
      store<u32>(upper + (<usize>id << 2), block);
    }
  }
  if (!isPending(id)) {
    setBit(pending, id, true);
    setPendingCount(pendingCount + 1);
  }
  afterStore(id);
}

/** Links pending offset `id` into the graph; false if it is not pending. */
export function link(id: i32): bool {
  safePoint(); // linkPending links many in one call; between two nothing holds a row
  if (id >= count || !isPending(id)) return false;
  setBit(pending, id, false);
  setPendingCount(pendingCount - 1);
  const level = <i32>load<u8>(levels + <usize>id);
  if (entryPoint < 0) {
    setEntry(id, level);
    return true;
  }
  if (multi) connect<Lists>(id, level);
  else connect<Dense>(id, level);
  if (level > maxLevel) setEntry(id, level);
  return true;
}

/** Links up to `max` pending offsets, lowest first; returns how many it linked. */
export function linkPending(max: i32): i32 {
  let done = 0;
  const words = (count + 31) >> 5;
  for (let w = 0; w < words && done < max; w++) {
    let bits = load<u32>(pending + (<usize>w << 2));
    while (bits != 0 && done < max) {
      const id = (w << 5) + <i32>ctz(bits);
      bits &= bits - 1;
      link(id);
      done++;
    }
  }
  return done;
}

/**
 * Inserts (or re-inserts) the vector in the query region at offset `id`, linked at once; with no
 * optimizer to train the codebook first (training.ts), it is trained here when due.
 */
export function insert(id: i32): void {
  stash(id);
  trainFully();
  link(id);
}

/**
 * Drops deleted offsets for good (their slots become empty) and unlinks every live offset, which
 * becomes pending: the graph is then rebuilt by linking them again, without the tombstones.
 */
export function vacuum(): void {
  for (let id = 0; id < count; id++) {
    const level = <i32>load<u8>(levels + <usize>id);
    if (level == <i32>EMPTY) continue;
    if (isDeleted(id)) {
      if (level > 0) heap.free(<usize>load<u32>(upper + (<usize>id << 2)));
      store<u32>(upper + (<usize>id << 2), 0);
      store<u8>(levels + <usize>id, EMPTY);
      if (multi) {
        if (pagedVecs) dropPage(REGION_VECS, id);
        store<u32>(mvCount + (<usize>id << 2), 0);
      }
      setDeletedBit(id, false);
      continue;
    }
    for (let l = 0; l <= level; l++) store<u32>(linksAtW(id, l), 0);
    if (!isPending(id)) {
      setBit(pending, id, true);
      setPendingCount(pendingCount + 1);
    }
  }
  setDeletedCount(0);
  setEntry(-1, -1);
  if (!multi) return;
  // A fit in progress codes by arena slot, which compaction moves: it begins again (still due).
  abandonTraining();
  compactArena();
}

/** Total vectors in the lists of the stored offsets. */
export function storedVectors(): i32 {
  let total = 0;
  for (let id = 0; id < count; id++) total += multiCount(id);
  return total;
}

export function pendingOffsets(): i32 { return pendingCount; }

/** Marks `id` deleted: it keeps routing searches but is never returned. */
export function remove(id: i32): bool {
  if (id >= count || load<u8>(levels + <usize>id) == EMPTY || isDeleted(id)) return false;
  if (isPending(id)) {
    setBit(pending, id, false);
    setPendingCount(pendingCount - 1);
  }
  setDeletedBit(id, true);
  setDeletedCount(deletedCount + 1);
  return true;
}

export function contains(id: i32): bool {
  return id < count && load<u8>(levels + <usize>id) != EMPTY && !isDeleted(id);
}

export function liveCount(): i32 {
  let n = 0;
  for (let id = 0; id < count; id++) if (load<u8>(levels + <usize>id) != EMPTY) n++;
  return n - deletedCount;
}

/** Number of offsets set in `bits` that are live (the allowed set's cardinality). */
export function allowedCount(bits: usize): i32 {
  let n = 0;
  for (let id = 0; id < count; id++) {
    if (bitSet(bits, id) && load<u8>(levels + <usize>id) != EMPTY && !isDeleted(id)) n++;
  }
  return n;
}

/**
 * Puts the query region in the form distances read: stored dimension order, normalised (Cosine,
 * as for stored vectors), then converted to the datatype as Qdrant converts queries
 * (MetricQueryScorer: preprocess, then slice_from_float_cow): float16 rounds each value in place,
 * uint8 writes the bytes to `queryBytes`. The f32 region then holds what the codes are fitted to:
 * the converted values, normalised for uint8 Cosine (see quantize.ts codeSource).
 */
function prepareQuery(codes: bool, bits: usize): void {
  const k = multi ? queryCount : 1;
  if (!multi) permuteQuery();
  for (let i = 0; i < k; i++) {
    const row = query + ((<usize>i * <usize>stride) << 2);
    if (normalizes()) normalizeInPlace(row);
    roundElements(row, stride);
  }
  if (dtype == DT_U8) {
    encodeElements(query, queryBytes, k * stride);
    if (metric == METRIC_COSINE) {
      for (let i = 0; i < k; i++) normalizeInPlace(query + ((<usize>i * <usize>stride) << 2));
    }
  }
  targetCount = k;
  target = dtype == DT_U8 ? queryBytes : query;
  targetHalf = false;
  // A turbo4 index measures its records with the query prepared as TurboQuant prepares queries.
  if (turbo4()) turbo4PrepareQuery();
  useCodes = codes && quantized;
  if (useCodes) {
    if (multi) encodeQueryList(query);
    else encodeQuery(query);
  }
  allow = bits;
  filtering = bits != 0 || deletedCount > 0 || pendingCount > 0;
  excluded = -1;
}

/**
 * Keeps the `keep` best of `results` by exact f32 distance (rescoring of quantized candidates),
 * or with `codes` by the quantized distance in the form Qdrant reports (see codeScoreQuery).
 */
function rescore<K>(keep: i32, codes: bool): void {
  if (codes) {
    while (results.size > 0) {
      const id = results.topId();
      const d = onCodes(id) ? codeScoreQuery(id) : exactDist<K>(id);
      ordered.push(-d, id);
      results.pop();
    }
  } else {
    // The exact distances of the candidates four rows at a time (measureRows, off the codes).
    const n = results.size;
    ensureRows(n);
    for (let j = 0; j < n; j++) {
      store<u32>(rowIds + (<usize>j << 2), results.topId());
      results.pop();
    }
    const onCodesBefore = useCodes;
    useCodes = false;
    measureRows<K>(0, n, false, Infinity);
    useCodes = onCodesBefore;
    for (let j = 0; j < n; j++) ordered.push(-rowDistAt(j), rowId(j));
  }
  while (ordered.size > 0) {
    results.push(ordered.topKey(), ordered.topId());
    if (results.size > keep) results.pop();
    ordered.pop();
  }
}

/** Moves `results` to outIds/outDist, closest first; returns the count. */
function emit(k: i32): i32 {
  while (results.size > k) results.pop();
  const n = results.size;
  ensureOut(max(n, 1));
  for (let i = n - 1; i >= 0; i--) {
    store<u32>(outIds + (<usize>i << 2), results.topId());
    store<f32>(outDist + (<usize>i << 2), -results.topKey());
    results.pop();
  }
  return n;
}

/** Keeps `id` among the `pool` best results if it is closer than the worst of them. */
@inline function offer<K>(id: i32, pool: i32): void {
  if (results.size < pool) {
    results.push(-targetDist<K>(id), id);
    return;
  }
  const d = targetDistBounded<K>(id, -results.topKey());
  if (d < -results.topKey()) { results.pop(); results.push(-d, id); }
}

/**
 * Whether stored offset `id` is measured on its codes. Qdrant keeps scalar and product codes off
 * its appendable segments, whose points are scored on the originals: an unlinked (pending) vector
 * of such an index is too. Binary and TurboQuant codes exist for appendable segments as well
 * (Qdrant 1.16+).
 */
@inline function onCodes(id: i32): bool {
  return useCodes && (binaryCodes() || qMethod == QM_TURBO || !isPending(id));
}

/** offer<K> for an offset reached by a scan rather than the graph: it may be pending (see onCodes). */
@inline function offerScanned<K>(id: i32, pool: i32): void {
  if (onCodes(id) || !useCodes) {
    offer<K>(id, pool);
    return;
  }
  useCodes = false;
  offer<K>(id, pool);
  useCodes = true;
}

// A filtered scan queues the offsets it may return and measures them SCAN_BATCH at a time, four rows at a
// time (their cache misses overlap), then offers them in order. (Touching each row's cache lines
// first, as touchCodes does for code rows, made a 10%-filtered scan of 128-d float32 rows slower:
// 158 -> 200 us.) Rows measured against the
// bound at the batch's start decide as if each were measured against the moving bound (see the
// note above greedy()). Rows of an index whose rows have no four-row kernel, or offsets measured
// off the codes of a quantized search (pending ones, see onCodes), are offered one by one.
const SCAN_BATCH: i32 = 64;
let scanQueued: i32 = 0;

@inline function queueScanned<K>(id: i32, pool: i32): void {
  store<u32>(rowIds + (<usize>(scanQueued++) << 2), id);
  if (scanQueued == SCAN_BATCH) flushScanned<K>(pool);
}

function flushScanned<K>(pool: i32): void {
  const m = scanQueued;
  scanQueued = 0;
  let fours = rowsInFours<K>();
  if (fours && useCodes) {
    for (let j = 0; j < m && fours; j++) fours = onCodes(rowId(j));
  }
  if (!fours) {
    for (let j = 0; j < m; j++) offerScanned<K>(rowId(j), pool);
    return;
  }
  const full = results.size >= pool;
  measureRows<K>(0, m, full, full ? -results.topKey() : Infinity);
  for (let j = 0; j < m; j++) {
    const d = rowDistAt(j);
    if (results.size < pool) results.push(-d, rowId(j));
    else if (d < -results.topKey()) { results.pop(); results.push(-d, rowId(j)); }
  }
  safePoint();
}

/** Every stored offset an exact scan may return (live, allowed, linked or not) offered to `results`. */
function scanAll<K>(pool: i32): void {
  if (allow == 0) {
    // Consecutive rows: the hardware prefetcher already overlaps their misses, and measuring them
    // in batches was slower here (25000 x 128-d float32: 1.35 -> 1.6-2.0 ms).
    for (let id = 0; id < count; id++) {
      if (load<u8>(levels + <usize>id) != EMPTY && !isDeleted(id)) offerScanned<K>(id, pool);
      // A search holds no stored row between offsets (its target is the query region).
      safePoint();
    }
    return;
  }
  // Only the allowed offsets, from the words of the allow-bitset (a selective filter leaves most
  // empty), in batches (their rows are far apart: nothing prefetches them).
  ensureRows(SCAN_BATCH);
  scanQueued = 0;
  const words = (count + 31) >> 5;
  for (let w = 0; w < words; w++) {
    let bits = load<u32>(allow + (<usize>w << 2));
    while (bits != 0) {
      const id = (w << 5) + <i32>ctz(bits);
      bits &= bits - 1;
      if (id < count && load<u8>(levels + <usize>id) != EMPTY && scannable(id)) queueScanned<K>(id, pool);
    }
  }
  flushScanned<K>(pool);
}

/** Adds the pending (unlinked) offsets to `results` (by exact distance, or by codes, see onCodes). */
function scanPending<K>(pool: i32): void {
  const words = (count + 31) >> 5;
  for (let w = 0; w < words; w++) {
    let bits = load<u32>(pending + (<usize>w << 2));
    while (bits != 0) {
      const id = (w << 5) + <i32>ctz(bits);
      bits &= bits - 1;
      if (scannable(id)) offerScanned<K>(id, pool);
    }
  }
}

/**
 * Top-k search of the query region. `bits` is an allow-bitset (0 = all); `codes` searches the
 * int8 codes (when quantized), `candidatesK` of them are then rescored with f32 when `rescoreOn`.
 */
export function search(k: i32, ef: i32, bits: usize, exact: bool, codes: bool, rescoreOn: bool, candidatesK: i32): i32 {
  cost = 0;
  prepareQuery(codes, bits);
  if (multi) return searchAs<Lists>(k, ef, exact, rescoreOn, candidatesK);
  return searchAs<Dense>(k, ef, exact, rescoreOn, candidatesK);
}

function searchAs<K>(k: i32, ef: i32, exact: bool, rescoreOn: bool, candidatesK: i32): i32 {
  results.clear();
  const pool = useCodes && rescoreOn ? max(candidatesK, k) : k;
  if (exact) {
    scanAll<K>(pool);
  } else {
    if (entryPoint >= 0) {
      let cur = entryPoint;
      greedyDist = targetDist<K>(cur);
      for (let l = maxLevel; l > 0; l--) cur = greedy<K>(cur, l);
      searchLayer<K>(cur, greedyDist, max(ef, pool), 0);
      while (results.size > pool) results.pop();
    }
    if (pendingCount > 0) scanPending<K>(pool);
  }
  if (useCodes && rescoreOn) rescore<K>(k, false);
  else if (useCodes && restatesScores()) rescore<K>(k, true);
  return emit(k);
}

/** The distance between two stored offsets, over their stored vectors (for tests of the stored form). */
export function distanceBetween(a: i32, b: i32): f32 {
  return multi ? pairDist<Lists>(a, b) : pairDist<Dense>(a, b);
}

export function dimension(): i32 { return dim; }

/** The `cpu` measure of the last search (see `cost`). */
export function searchCost(): f64 { return cost; }
