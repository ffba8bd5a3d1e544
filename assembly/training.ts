// When codebooks are trained. int8 ranges and the binary two_bits / one_and_half_bits statistics
// take one linear pass, and follow the doubling rule right after a vector is stored (afterStore).
// Product k-means and TurboQuant's calibration, with the dimension order their codes depend on,
// are trained off the insert path, as Qdrant trains them when its optimizer builds a segment: the
// shard optimizer calls trainStep() between requests before it links pending vectors, and
// insert() (store and link at once, with no optimizer) trains to completion first. Until a fit is
// installed, stores are encoded with the codebook in use, so every code of the index comes from
// one codebook and a search between steps is scored consistently (pending vectors: originals for
// product, codes for TurboQuant, see hnsw.ts onCodes).

import { quantized, qMethod, QM_PRODUCT, QM_TURBO } from "./layout";
import { fitCodebook, maybeRefit, refitDue } from "./quantize";
import { applyOrder, chooseOrder, maybeFitPermutation, orderDue } from "./permute";
import { beginProductFit, installProductFit, productFitStep, productFitting, productStored } from "./product-quant";

/** Whether the method is trained by trainStep rather than on the insert path. */
@inline function trainedOffInsert(): bool {
  return quantized && (qMethod == QM_PRODUCT || qMethod == QM_TURBO);
}

/**
 * Called after offset `id` is stored: the dimension order and the one-pass codebooks follow the
 * stored count; a product fit in progress codes the vector with its centroids too, if it must.
 */
export function afterStore(id: i32): void {
  if (trainedOffInsert()) {
    if (qMethod == QM_PRODUCT) productStored(id);
    return;
  }
  // The dimension order is fitted first, so a codebook refitted at the same store sees it.
  maybeFitPermutation();
  maybeRefit();
}

/**
 * One bounded step of training (product: one k-means round of one chunk, or coding a batch of
 * offsets, at most; TurboQuant: the whole calibration and re-encode, one linear pass).
 * True while steps remain; false once nothing is due.
 */
export function trainStep(): bool {
  if (!trainedOffInsert()) return false;
  if (qMethod == QM_TURBO) {
    maybeFitPermutation();
    if (refitDue()) fitCodebook();
    return false;
  }
  if (!productFitting()) {
    const reorder = orderDue();
    if (!reorder && !refitDue()) return false;
    if (beginProductFit(reorder ? chooseOrder() : 0)) return true;
    applyOrder(); // nothing stored to fit
    return false;
  }
  if (productFitStep()) return true;
  applyOrder();
  installProductFit();
  return false;
}

/** Trains until nothing is due (before linking without an optimizer). */
export function trainFully(): void {
  while (trainStep()) {}
}
