// How a sparse index stores its posting values (Qdrant's sparse index `datatype`), with Qdrant's
// conversions (its lib/sparse `Weight` types), so scores come out as Qdrant's:
//
// - float32: the value as given;
// - float16: IEEE half precision, rounded to nearest, ties to even (the `half` crate's
//   f16::from_f32); read back exactly;
// - uint8: per posting list, min and diff256 = (max - min) / 255 over its values (f32
//   arithmetic); a value is stored as round((v - min) / diff256) clamped to [0, 255] (round half
//   away from zero; NaN, when every value is the same, becomes 0), read back as
//   min + q * diff256 (each step rounded to f32).
//
// The stored vectors (what a retrieve returns) keep the values as given, as Qdrant's vector
// storage does; only the posting lists hold the converted form.

export type SparseDatatype = 'float32' | 'float16' | 'uint8';

/** Bytes per posting value. */
export const VALUE_BYTES: Readonly<Record<SparseDatatype, number>> = { float32: 4, float16: 2, uint8: 1 };

/** The engine's code of each datatype (assembly/sparse/index.ts KIND_*). */
export const KIND: Readonly<Record<SparseDatatype, number>> = { float32: 0, float16: 1, uint8: 2 };

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The half-precision bits nearest to `x` (ties to even); beyond the range, an infinity. */
export function toHalf(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 112; // the half exponent field for a normal result
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // A subnormal half (units of 2^-24) or zero.
    if (e < -10) return sign;
    const full = mant | 0x800000;
    const shift = 14 - e;
    let half = full >>> shift;
    const rest = full & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  // A carry out of the mantissa steps the exponent, up to infinity: still the nearest.
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++;
  return sign | half;
}

/** The value of half-precision bits. */
export function fromHalf(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant === 0 ? sign * Infinity : NaN;
  return sign * (1024 + mant) * 2 ** (exp - 25);
}

/** A posting list's uint8 parameters: Qdrant's min and diff256. */
export interface U8Params {
  min: number;
  diff256: number;
}

/** The parameters Qdrant computes over a list's values (min = max = 0 for none). */
export function u8Params(min: number, max: number): U8Params {
  if (!(min <= max)) return { min: 0, diff256: 0 };
  return { min: Math.fround(min), diff256: Math.fround(Math.fround(max - min) / 255) };
}

export function quantizeU8(v: number, p: U8Params): number {
  const x = Math.fround(Math.fround(v - p.min) / p.diff256);
  if (Number.isNaN(x)) return 0;
  // Rust's f32::round rounds half away from zero: Math.round does so from 0 up, and below 0 the
  // code clamps to 0 either way.
  return Math.min(255, Math.max(0, Math.round(x)));
}

export function dequantizeU8(q: number, p: U8Params): number {
  return Math.fround(p.min + Math.fround(q * p.diff256));
}
