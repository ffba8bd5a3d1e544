// When codebooks are trained. int8 ranges and the binary two_bits / one_and_half_bits statistics
// take one linear pass, and follow the doubling rule right after a vector is stored (afterStore).
// Product k-means and TurboQuant's calibration, with the dimension order their codes depend on,
// are trained off the insert path, as Qdrant trains them when its optimizer builds a segment: the
// shard optimizer calls trainStep() between requests before it links pending vectors, and
// insert() (store and link at once, with no optimizer) trains to completion first.
//
// A stepped fit (the method's row in quant-methods.ts says which) runs in bounded steps: the
// method fits its codebook into a region of its own, then every vector is coded with it into the
// second code region (fresh-codes.ts), and the last step applies the dimension order the fit
// chose and swaps codebook and codes in. Until then the codebook and codes in use are untouched
// (stores are encoded with them, and coded into the second region too once the cursor has passed
// them), so a search between steps is scored consistently (pending vectors: originals for
// product, codes for TurboQuant, see hnsw.ts onCodes) and an image written meanwhile holds the
// codebook in use (the fit starts again after a load).

import { quantized } from "./layout";
import { maybeRefit, refitDue } from "./quantize";
import { applyOrder, chooseOrder, forgetChosenOrder, maybeFitPermutation, orderDue } from "./permute";
import { method } from "./quant-methods";
import {
  abandonFreshCodes, beginFreshCodes, freshCodesStep, installFreshCodes, resetWork, setFitOrder, storedDuringFit, writingFreshCodes,
} from "./fresh-codes";

let fitting: bool = false; // a stepped fit begun and not installed

/** Whether the index's method is trained by trainStep rather than on the insert path. */
@inline function trainedOffInsert(): bool {
  return quantized && method().stepped;
}

/**
 * Called after offset `id` is stored: the dimension order and the one-pass codebooks follow the
 * stored count; a stepped fit coding the vectors codes it with its codebook too, if it must.
 */
export function afterStore(id: i32): void {
  if (trainedOffInsert()) {
    storedDuringFit(id);
    return;
  }
  // The dimension order is fitted first, so a codebook refitted at the same store sees it.
  maybeFitPermutation();
  maybeRefit();
}

/**
 * One bounded step of training: a step of the method's fit (product: gathering the sample or one
 * k-means round of one chunk; TurboQuant: gathering up to fresh-codes.ts CODE_ROWS sample vectors
 * or calibrating a group of coordinates), or coding a batch of vectors with the fitted codebook,
 * the last of which installs it. True while steps remain; false once nothing is due.
 */
export function trainStep(): bool {
  resetWork();
  if (!trainedOffInsert()) return false;
  const m = method();
  if (!fitting) {
    const reorder = orderDue();
    if (!reorder && !refitDue()) return false;
    setFitOrder(reorder ? chooseOrder() : 0);
    if (m.beginFit()) {
      fitting = true;
      return true;
    }
    applyOrder(); // nothing stored to fit
    setFitOrder(0);
    return false;
  }
  if (!writingFreshCodes()) {
    if (m.fitStep()) return true;
    beginFreshCodes(m.encodeFresh);
  }
  if (freshCodesStep()) return true;
  applyOrder();
  installFreshCodes();
  m.installFit();
  fitting = false;
  return false;
}

/** Trains until nothing is due (before linking without an optimizer). */
export function trainFully(): void {
  while (trainStep()) {}
}

/**
 * Gives up a stepped fit in progress (the method is about to change): the codebook and codes in
 * use stay, the fit's regions are freed and its unapplied dimension order forgotten.
 */
export function abandonTraining(): void {
  if (!fitting) return;
  method().abandonFit();
  abandonFreshCodes();
  forgetChosenOrder();
  fitting = false;
}
