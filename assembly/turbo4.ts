// Qdrant 1.19's `turbo4` vector datatype (layout.ts DT_T4): the stored vectors are 4-bit
// TurboQuant records (turbo-quant.ts with bits4, Normal mode: no TQ+ calibration, so shift 0 and
// scale 1 throughout; Qdrant's Unpadded rotation, P = dim rounded up to even), kept where other
// datatypes keep their elements (vecPtr, the arena's rows), and nothing else: there are no f32
// originals, so every exact distance is taken on the records. The records use turbo-quant.ts's
// storage side, so a quantization on top (any method, TurboQuant at other bits included) has
// the codes region and the quantization side to itself: its codes are built from the records
// decoded (quantize.ts codeSource), its traversal runs on them and rescoring on the records,
// as Qdrant serves a quantization over turbo4 storage. Queries are scored
// asymmetrically, as for `turbo` quantization. Between two stored vectors (graph linking and
// neighbour pruning) one side is decoded and acts as the query: Qdrant's build scores a stored
// turbo4 vector the same way, through the dequantized vector it stands for. A stored vector is
// read back dequantized and rotated to the original coordinates, as Qdrant returns it.
//
// Multivectors (Qdrant 1.19 stores turbo4 lists too: its multi_turbo storage) keep one record per
// row, as the arena's rows (layout.ts), and no elements. MaxSim runs on the
// records as for `turbo` quantization of lists; between two stored lists every row of the first is
// decoded and prepared as a query, as a dense pair's first side is.

import {
  DT_T4, EMPTY, dtype, dim, stride, count, levels, query, multi, vecPtr, vecPtrW, vecBytes, multiPtr, multiCount, queryCount,
} from "./layout";
import {
  SIDE_STORAGE, turboConfigureStorage, turboDecode, turboDist, turboDistRows4, turboEncode, turboInRows4, turboPrepareQuery, turboPrepareRecord, useSide,
} from "./turbo-quant";

// Prepared query slots (turbo-quant.ts): 0 holds the query of a search or of a linking pass, 1
// the first side of pair distances. Pruning measures one node against many (a candidate against
// each kept neighbour, a node against each of its links), so slot 1 is prepared once per node.
let row: usize = 0;     // f32[stride]: slot 0's vector in original coordinates (Manhattan reads it)
let pairRow: usize = 0; // f32[stride]: slot 1's
let pairOf: i32 = -1;   // offset prepared in slot 1; -1 none

@inline export function turbo4(): bool { return dtype == DT_T4; }

/** Sets up the records' configuration and size; call right after layout.ts setParams, before anything is reserved. */
export function turbo4Setup(): void {
  if (turbo4()) turboConfigureStorage();
}

/** Stored row `i` of the list at `first` (its records, vecBytes apart). */
@inline function listRow(first: usize, i: i32): usize { return first + <usize>i * vecBytes; }

function ensureRows(): void {
  if (row != 0) return;
  row = heap.alloc(<usize>stride << 2);
  memory.fill(row, 0, <usize>stride << 2);
  pairRow = heap.alloc(<usize>stride << 2);
  memory.fill(pairRow, 0, <usize>stride << 2);
}

/** Makes stored offset `id` the prepared query (slot 0) that turboDist measures from. */
export function turbo4Target(id: i32): void {
  useSide(SIDE_STORAGE);
  ensureRows();
  // Room for both slots from here on: growing the slots later would drop slot 1.
  turboPrepareRecord(vecPtr(id), row, 0, 2);
}

/** Makes the query region the prepared query (slot 0; every row, slots 0.., for multivectors). */
export function turbo4PrepareQuery(): void {
  useSide(SIDE_STORAGE);
  if (!multi) {
    turboPrepareQuery(query, 0, 2); // room for slot 1 too, as turbo4Target keeps
    return;
  }
  turbo4Forget();
  listRoom(queryCount);
  for (let i = 0; i < queryCount; i++) turboPrepareQuery(query + ((<usize>i * <usize>stride) << 2), i, slotRoom);
  targetRows = queryCount;
}

/** Distance from prepared query 0 to stored offset `id`'s record. */
export function turbo4Dist(id: i32): f32 {
  useSide(SIDE_STORAGE);
  return turboDist(0, vecPtr(id));
}

/** Whether turbo4DistRows4 serves the metric. */
export function turbo4InRows4(): bool { return turboInRows4(); }

/** turbo4Dist for offsets a..d, to f32 out[0..3] (the same values, four records at a time). */
export function turbo4DistRows4(a: i32, b: i32, c: i32, d: i32, out: usize): void {
  useSide(SIDE_STORAGE);
  turboDistRows4(vecPtr(a), vecPtr(b), vecPtr(c), vecPtr(d), out);
}

/** MaxSim distance from the prepared query list (slots 0..targetRows-1) to stored list `id`'s records. */
export function turbo4MaxSim(id: i32): f32 {
  useSide(SIDE_STORAGE);
  const first = multiPtr(id);
  const n = multiCount(id);
  let total: f32 = 0;
  for (let i = 0; i < targetRows; i++) {
    let best: f32 = Infinity;
    for (let j = 0; j < n; j++) best = min(best, turboDist(i, listRow(first, j)));
    total += best;
  }
  return total;
}

/** Distance from stored offset `a` (decoded, as the query) to stored offset `b`. */
export function turbo4Pair(a: i32, b: i32): f32 {
  useSide(SIDE_STORAGE);
  ensureRows();
  if (pairOf != a) {
    turboPrepareRecord(vecPtr(a), pairRow, 1, 2);
    pairOf = a;
  }
  return turboDist(1, vecPtr(b));
}

// Prepared lists (multivectors): slots [0, targetRows) hold the list being linked or the query
// list of a search (turbo4MaxSim reads them), slots [targetRows, targetRows + multiCount(listPairOf)) the first
// side of pair distances. Every slot has its own decoded row in listRows (Manhattan reads it), so
// slots and rows are sized together (slotRoom) and prepared again whenever that grows.
let listRows: usize = 0;   // f32[slotRoom * stride]
let slotRoom: i32 = 0;
let targetList: i32 = -1;  // offset prepared in slots [0, targetRows); -1 none
let targetRows: i32 = 0;
let listPairOf: i32 = -1;  // offset prepared after the target; -1 none

/** Prepares the rows of stored list `id` as query slots base.. (slotRoom must hold them). */
function prepareList(id: i32, base: i32): void {
  const first = multiPtr(id);
  for (let i = 0; i < multiCount(id); i++) {
    turboPrepareRecord(listRow(first, i), listRows + ((<usize>(base + i) * <usize>stride) << 2), base + i, slotRoom);
  }
}

/** Makes room for `need` prepared rows; growing drops every slot, so the target is prepared again. */
function listRoom(need: i32): void {
  if (need <= slotRoom) return;
  slotRoom = max(need, slotRoom * 2);
  if (listRows != 0) heap.free(listRows);
  const bytes = (<usize>slotRoom * <usize>stride) << 2;
  listRows = heap.alloc(bytes);
  memory.fill(listRows, 0, bytes);
  listPairOf = -1;
  if (targetList >= 0) prepareList(targetList, 0);
}

/** Makes stored list `id` the prepared query list (slots 0..k-1) that codeMaxSimQuery measures from. */
export function turbo4TargetList(id: i32): void {
  useSide(SIDE_STORAGE);
  const k = multiCount(id);
  targetList = -1;
  listPairOf = -1;
  targetRows = k;
  listRoom(k);
  prepareList(id, 0);
  targetList = id;
}

/** MaxSim distance from stored list `a` (decoded, as the query) to stored list `b`, on b's records. */
export function turbo4ListPair(a: i32, b: i32): f32 {
  useSide(SIDE_STORAGE);
  const base = targetRows;
  const na = multiCount(a);
  if (listPairOf != a) {
    listRoom(base + na);
    prepareList(a, base);
    listPairOf = a;
  }
  const first = multiPtr(b);
  const nb = multiCount(b);
  let total: f32 = 0;
  for (let i = 0; i < na; i++) {
    let best: f32 = Infinity;
    for (let j = 0; j < nb; j++) best = min(best, turboDist(base + i, listRow(first, j)));
    total += best;
  }
  return total;
}

/** Forgets the prepared lists: a search prepares its own query in the same slots. */
export function turbo4Forget(): void {
  targetList = -1;
  targetRows = 0;
  listPairOf = -1;
}

/** Encodes the vector in the query region (normalised already for Cosine) as offset `id`'s record. */
export function turbo4Store(id: i32): void {
  useSide(SIDE_STORAGE);
  turboEncode(query, vecPtrW(id));
  if (id == pairOf) pairOf = -1;
}

/**
 * Whether offset `id` holds a record whose vector, as read back, is the one in the query region.
 * Storing that vector again keeps the record: re-encoding a dequantized vector is not the identity
 * (its length comes back scaled by the centroid norm over sqrt(P) for Manhattan, and by rounding
 * elsewhere), and the shard stores a point's vectors again whenever its record changes (a payload
 * update), which must not wear the vector down.
 */
export function turbo4Holds(id: i32): bool {
  if (id >= count || load<u8>(levels + <usize>id) == EMPTY) return false;
  useSide(SIDE_STORAGE);
  ensureRows();
  turboDecode(vecPtr(id), row);
  for (let j = 0; j < dim; j++) {
    if (load<f32>(row + (<usize>j << 2)) != load<f32>(query + (<usize>j << 2))) return false;
  }
  return true;
}

/** Encodes the queryCount rows in the query region (normalised already for Cosine) as list `id`'s records. */
export function turbo4StoreList(id: i32): void {
  useSide(SIDE_STORAGE);
  const first = multiPtr(id);
  for (let i = 0; i < queryCount; i++) turboEncode(query + ((<usize>i * <usize>stride) << 2), listRow(first, i));
  turbo4Forget();
}

/** turbo4Holds for a list: offset `id` holds as many records as the query region has rows, each reading back as its row. */
export function turbo4HoldsList(id: i32): bool {
  if (id >= count || load<u8>(levels + <usize>id) == EMPTY || multiCount(id) != queryCount) return false;
  useSide(SIDE_STORAGE);
  ensureRows();
  const first = multiPtr(id);
  for (let i = 0; i < queryCount; i++) {
    turboDecode(listRow(first, i), row);
    const q = query + ((<usize>i * <usize>stride) << 2);
    for (let j = 0; j < dim; j++) {
      if (load<f32>(row + (<usize>j << 2)) != load<f32>(q + (<usize>j << 2))) return false;
    }
  }
  return true;
}

/** Writes stored list `id` (its rows, stride floats apart, original coordinates) to `out`. */
export function turbo4ReadList(id: i32, out: usize): void {
  useSide(SIDE_STORAGE);
  const first = multiPtr(id);
  for (let i = 0; i < multiCount(id); i++) turboDecode(listRow(first, i), out + ((<usize>i * <usize>stride) << 2));
}

/** Writes stored offset `id`'s vector (dim values, original coordinates) to `out`. */
export function turbo4Read(id: i32, out: usize): void {
  turbo4Decode(vecPtr(id), out);
}

/** Writes the vector (dim values, original coordinates) of the record at `rec` to `out`. */
export function turbo4Decode(rec: usize, out: usize): void {
  useSide(SIDE_STORAGE);
  turboDecode(rec, out);
}
