// TurboQuant as the engine takes it (assembly/turbo-quant.ts): Qdrant's `turbo` quantization
// with its bit widths, their engine codes and Qdrant's rescoring default for each.

export const TURBO_BITS = ['bits4', 'bits2', 'bits1_5', 'bits1'] as const;
export type TurboBits = (typeof TURBO_BITS)[number];

/**
 * Qdrant's TurboQuant: a deterministic Hadamard rotation, TQ+ per-coordinate calibration and
 * Lloyd-Max codes at `bits` per coordinate (default bits4), scored asymmetrically against the
 * rotated query.
 */
export interface TurboQuantization {
  method: 'turbo';
  bits?: TurboBits;
}

/** Engine method code (assembly/layout.ts QM_TURBO). */
export const TURBO_METHOD = 5;

// Engine bit widths are counted in half bits, so bits1_5 is an integer.
const HALF_BITS: Record<TurboBits, number> = { bits1: 2, bits1_5: 3, bits2: 4, bits4: 8 };

export function turboHalfBits(bits: TurboBits | undefined): number {
  return HALF_BITS[bits ?? 'bits4'];
}

export function turboBitsOf(halfBits: number): TurboBits {
  const found = (Object.keys(HALF_BITS) as TurboBits[]).find((bits) => HALF_BITS[bits] === halfBits);
  if (!found) throw new RangeError(`no TurboQuant bit width has engine code ${halfBits}`);
  return found;
}

/** Qdrant's default for `rescore` (tq_bits_default_rescoring): off for bits4, on below. */
export function turboRescoresByDefault(bits: TurboBits | undefined): boolean {
  return (bits ?? 'bits4') !== 'bits4';
}
