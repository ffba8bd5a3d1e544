// Qdrant keeps scores and vector components as f32 and prints each with the fewest digits that
// read back as the same f32 (`0.15`), where printing the f32's exact value as a JavaScript number
// gives 17 digits (`0.15000000596046448`) that clients read as a different number. Responses carry
// instead the double nearest to that short decimal, which JSON.stringify prints in the same short
// form (a shorter form would also read back as the f32 and contradict the search).

/** Integers up to 2^24 are exact f32 values whose neighbours are at least 1 apart: every digit counts. */
const EXACT_INTEGERS = 2 ** 24;

/**
 * The number printed as the shortest decimal that reads back as the f32 `x` (`x` an f32 value).
 * Runs for every score of every answer. An f32 needs at most 9 significant digits, and if p digits
 * read back, so do p + 1; most need 7 or 8 (24 bits are 7.2 decimal digits), so the search starts
 * at 8 and steps down while fewer digits still read back: about two and a half roundings per
 * number, where a binary search over 1-9 takes four and a final one.
 */
export function shortF32(x: number): number {
  if (!Number.isFinite(x) || (Number.isInteger(x) && Math.abs(x) <= EXACT_INTEGERS)) return x;
  let shortest = Number(x.toPrecision(8));
  if (Math.fround(shortest) !== x) return Number(x.toPrecision(9));
  for (let digits = 7; digits >= 1; digits--) {
    const shorter = Number(x.toPrecision(digits));
    if (Math.fround(shorter) !== x) break;
    shortest = shorter;
  }
  return shortest;
}

/** Each f32 of `values` as shortF32 gives it, as a plain array for JSON. */
export function shortF32s(values: ArrayLike<number>): number[] {
  return Array.from(values, shortF32);
}
