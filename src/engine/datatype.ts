// Qdrant's vector storage datatypes as the engine takes them. A float16 or uint8 index stores
// its vectors in that form (assembly/element.ts): half or a quarter of float32's bytes. A turbo4
// index stores only 4-bit TurboQuant codes of them (assembly/turbo4.ts): an eighth, plus a
// length or two per vector.

export type Datatype = 'float32' | 'float16' | 'uint8' | 'turbo4';

export const DATATYPES: readonly Datatype[] = ['float32', 'float16', 'uint8', 'turbo4'];

/** Engine code of each datatype (assembly/layout.ts DT_*). */
export function datatypeCode(datatype: Datatype): number {
  return DATATYPES.indexOf(datatype);
}

/** Bytes of a vector's `dim` components in the datatype (turbo4: 4 bits each, over dim rounded up to even, as its codes are). */
export function componentBytes(datatype: Datatype, dim: number): number {
  if (datatype === 'turbo4') return Math.ceil(dim / 2);
  return dim * (datatype === 'float32' ? 4 : datatype === 'float16' ? 2 : 1);
}

/**
 * The smallest magnitude float16 rounds to an infinity: halfway between the largest finite half
 * (65504) and 65536, a tie that rounds to even, which is the infinity.
 */
export const FLOAT16_OVERFLOW = 65520;

/** Index of the first value a float16 vector cannot hold (it would become an infinity), or -1. */
export function float16Overflow(values: ArrayLike<number>): number {
  for (let i = 0; i < values.length; i++) if (Math.abs(values[i]) >= FLOAT16_OVERFLOW) return i;
  return -1;
}
