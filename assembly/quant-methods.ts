// The quantization methods, one row of operations each: the single place that says how a method
// is configured, encodes a stored vector and a query, when its codebook is due a fit and how it
// is fitted (in one go on the insert path, or in bounded steps off it: training.ts). quantize.ts
// and training.ts call the row of the index's method (layout.ts qMethod) instead of testing the
// method themselves, so adding a method is adding a row. The per-candidate code distance is the
// exception (quantize.ts codeDist): it runs in the graph's inner loop, where a direct branch is
// inlined and an indirect call would not be.

import { QM_INT8, QM_BINARY, QM_BINARY2, QM_BINARY15, QM_PRODUCT, QM_TURBO, qMethod } from "./layout";
import {
  binaryQuery, encodeBitsStored, encodeInt8Stored, encodeTwoBitsStored, encodeAll, fitInt8, fitTwoBits, int8FitDue, int8Query,
  doublingDue, setBinaryQueryBits, statsFitDue,
} from "./quantize";
import { abandonProductFit, beginProductFit, installProductFit, productEncode, productEncodeFresh, productFitStep, productPrepareQuery, productRefitDue } from "./product-quant";
import {
  abandonTurboFit, beginTurboFit, installTurboFit, turboConfigure, turboEncode, turboEncodeFresh, turboFitLimit, turboFitStep, turboPrepareQuery,
  useSide, SIDE_QUANT,
} from "./turbo-quant";

export class QuantMethod {
  constructor(
    /** Sets the method up once it is chosen (`q`: enableQuantization's parameter). */
    public configure: (q: f32) => void,
    /** Writes the codes of the f32 code-space vector at `src` to `dst`; returns the correction stored with them. */
    public encode: (src: usize, dst: usize) => f32,
    /** Prepares query vector `i` of `total` (f32 at `src`) for scoring; returns its correction. */
    public prepareQuery: (src: usize, i: i32, total: i32) => f32,
    /** Whether the codebook is due a fit (quantized, stored vectors as datatype elements). */
    public fitDue: () => bool,
    /** Whether fits run in bounded steps off the insert path (training.ts) rather than in one go. */
    public stepped: bool,
    /** One-go methods: fits the codebook and re-encodes every stored vector. */
    public fit: () => void,
    /** Stepped methods: starts a fit (false when nothing is stored), */
    public beginFit: () => bool,
    /** runs one bounded step of it (false once fitted, nothing done), */
    public fitStep: () => bool,
    /** codes a vector (in the fit's order) with the codebook being fitted, */
    public encodeFresh: (src: usize, dst: usize) => void,
    /** makes that codebook the one in use, */
    public installFit: () => void,
    /** or frees the fit's regions when it is given up. */
    public abandonFit: () => void,
  ) {}
}

function nothing(): void {}
function never(): bool { return false; }
function noConfig(q: f32): void {}
function noFresh(src: usize, dst: usize): void {}

/** One-go method: the stepped operations do nothing. */
function oneGo(configure: (q: f32) => void, encode: (src: usize, dst: usize) => f32, prepareQuery: (src: usize, i: i32, total: i32) => f32, fitDue: () => bool, fit: () => void): QuantMethod {
  return new QuantMethod(configure, encode, prepareQuery, fitDue, false, fit, never, never, noFresh, nothing, nothing);
}

function productEncodeStored(src: usize, dst: usize): f32 { productEncode(src, dst); return 0; }
function productQuery(src: usize, i: i32, total: i32): f32 { productPrepareQuery(src, i, total); return 0; }
function turboConfig(q: f32): void { turboConfigure(); }
// The source is read first: a turbo4 vector is decoded on the storage's side (turbo-quant.ts).
function turboEncodeStored(src: usize, dst: usize): f32 { useSide(SIDE_QUANT); turboEncode(src, dst); return 0; }
function turboQuery(src: usize, i: i32, total: i32): f32 { useSide(SIDE_QUANT); turboPrepareQuery(src, i, total); return 0; }
function turboFitDue(): bool { return doublingDue(turboFitLimit()); }

// Indexed by layout.ts QM_* (their values are the row numbers, checked below). Built on first
// use rather than as a global's initializer: the rows hold functions of modules that import this
// one, whose globals the start function may not have initialized yet at this module's turn.
function buildTable(): StaticArray<QuantMethod> {
  assert(QM_INT8 == 0 && QM_BINARY == 1 && QM_BINARY2 == 2 && QM_BINARY15 == 3 && QM_PRODUCT == 4 && QM_TURBO == 5);
  return [
    oneGo(noConfig, encodeInt8Stored, int8Query, int8FitDue, fitInt8),
    // one_bit needs no codebook: a fit is only the encoding of every vector.
    oneGo(setBinaryQueryBits, encodeBitsStored, binaryQuery, never, encodeAll),
    oneGo(setBinaryQueryBits, encodeTwoBitsStored, binaryQuery, statsFitDue, fitTwoBits),
    oneGo(setBinaryQueryBits, encodeTwoBitsStored, binaryQuery, statsFitDue, fitTwoBits),
    new QuantMethod(noConfig, productEncodeStored, productQuery, productRefitDue, true, nothing, beginProductFit, productFitStep, productEncodeFresh, installProductFit, abandonProductFit),
    new QuantMethod(turboConfig, turboEncodeStored, turboQuery, turboFitDue, true, nothing, beginTurboFit, turboFitStep, turboEncodeFresh, installTurboFit, abandonTurboFit),
  ];
}

let table: StaticArray<QuantMethod> = changetype<StaticArray<QuantMethod>>(0);

/** The operations of the index's quantization method. */
@inline export function method(): QuantMethod {
  if (changetype<usize>(table) == 0) table = buildTable();
  return unchecked(table[qMethod]);
}
