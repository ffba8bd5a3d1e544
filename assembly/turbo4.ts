// Qdrant 1.19's `turbo4` vector datatype (layout.ts DT_T4): the stored vectors are 4-bit
// TurboQuant records (turbo-quant.ts with bits4, Normal mode: no TQ+ calibration, so shift 0 and
// scale 1 throughout; Qdrant's Unpadded rotation, P = dim rounded up to even) and nothing else:
// there are no f32 originals, so every distance is taken on the records. Queries are scored
// asymmetrically, as for `turbo` quantization. Between two stored vectors (graph linking and
// neighbour pruning) one side is decoded and acts as the query: Qdrant's build scores a stored
// turbo4 vector the same way, through the dequantized vector it stands for. A stored vector is
// read back dequantized and rotated to the original coordinates, as Qdrant returns it.

import { DT_T4, EMPTY, dtype, dim, stride, count, levels, query, codePtr } from "./layout";
import { turboDecode, turboDist, turboPrepareRecord } from "./turbo-quant";
import { encode } from "./quantize";

// Prepared query slots (turbo-quant.ts): 0 holds the query of a search or of a linking pass, 1
// the first side of pair distances. Pruning measures one node against many (a candidate against
// each kept neighbour, a node against each of its links), so slot 1 is prepared once per node.
let row: usize = 0;     // f32[stride]: slot 0's vector in original coordinates (Manhattan reads it)
let pairRow: usize = 0; // f32[stride]: slot 1's
let pairOf: i32 = -1;   // offset prepared in slot 1; -1 none

@inline export function turbo4(): bool { return dtype == DT_T4; }

function ensureRows(): void {
  if (row != 0) return;
  row = heap.alloc(<usize>stride << 2);
  memory.fill(row, 0, <usize>stride << 2);
  pairRow = heap.alloc(<usize>stride << 2);
  memory.fill(pairRow, 0, <usize>stride << 2);
}

/** Makes stored offset `id` the prepared query (slot 0) that turboDist measures from. */
export function turbo4Target(id: i32): void {
  ensureRows();
  // Room for both slots from here on: growing the slots later would drop slot 1.
  turboPrepareRecord(codePtr(id), row, 0, 2);
}

/** Distance from stored offset `a` (decoded, as the query) to stored offset `b`. */
export function turbo4Pair(a: i32, b: i32): f32 {
  ensureRows();
  if (pairOf != a) {
    turboPrepareRecord(codePtr(a), pairRow, 1, 2);
    pairOf = a;
  }
  return turboDist(1, codePtr(b));
}

/** Encodes the vector in the query region (normalised already for Cosine) as offset `id`'s record. */
export function turbo4Store(id: i32): void {
  encode(query, codePtr(id));
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
  ensureRows();
  turboDecode(codePtr(id), row);
  for (let j = 0; j < dim; j++) {
    if (load<f32>(row + (<usize>j << 2)) != load<f32>(query + (<usize>j << 2))) return false;
  }
  return true;
}

/** Writes stored offset `id`'s vector (dim values, original coordinates) to `out`. */
export function turbo4Read(id: i32, out: usize): void {
  turboDecode(codePtr(id), out);
}
