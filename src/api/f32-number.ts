// Qdrant keeps scores and vector components as f32 and prints each with the fewest digits that
// read back as the same f32 (`0.15`), where printing the f32's exact value as a JavaScript number
// gives 17 digits (`0.15000000596046448`) that clients read as a different number. Responses carry
// instead the double nearest to that short decimal, which JSON.stringify prints in the same short
// form (a shorter form would also read back as the f32 and contradict the search).

/** Integers up to 2^24 are exact f32 values whose neighbours are at least 1 apart: every digit counts. */
const EXACT_INTEGERS = 2 ** 24;

/** The number printed as the shortest decimal that reads back as the f32 `x` (`x` an f32 value). */
export function shortF32(x: number): number {
  if (!Number.isFinite(x) || (Number.isInteger(x) && Math.abs(x) <= EXACT_INTEGERS)) return x;
  // An f32 needs at most 9 significant digits; if p digits read back, so do p + 1.
  let lo = 1;
  let hi = 9;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (Math.fround(Number(x.toPrecision(mid))) === x) hi = mid;
    else lo = mid + 1;
  }
  return Number(x.toPrecision(lo));
}

/** Each f32 of `values` as shortF32 gives it, as a plain array for JSON. */
export function shortF32s(values: ArrayLike<number>): number[] {
  return Array.from(values, shortF32);
}
