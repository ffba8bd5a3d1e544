// Vector element types (Qdrant's `datatype`): float32, float16 and uint8. Stored vectors keep
// the collection's datatype; kernels convert lanes to f32 on the fly (float16) or stay in
// integers (uint8). Conversions are Qdrant's (lib/segment/src/data_types/primitive.rs):
//   float16: half::f16::from_f32, round to nearest, ties to even; past the largest finite half
//            (65504; from 65520 on) it becomes an infinity, which the host refuses beforehand.
//   uint8:   Rust's `x as u8`: truncation toward zero, saturating at 0 and 255, NaN to 0.
// Reading back is exact: every half and every byte is an f32.

import { DT_F16, DT_F32, DT_U8, dtype } from "./layout";

// 2^112: rescales a half's exponent (bias 15) once its bits sit in an f32 (bias 127).
const HALF_SCALE: f32 = 5.192296858534828e33;

/** f32 -> f16 bits, round to nearest even (as half::f16::from_f32). */
export function f32ToHalf(x: f32): u16 {
  const b = reinterpret<u32>(x);
  const sign = (b >> 16) & 0x8000;
  const a = b & 0x7fffffff;
  if (a > 0x7f800000) return <u16>(sign | 0x7e00); // NaN
  if (a >= 0x477ff000) return <u16>(sign | 0x7c00); // rounds past 65504: infinity
  if (a < 0x38800000) {
    // Below the smallest normal half (2^-14): a subnormal half counts units of 2^-24. Scaling by
    // 2^24 is exact and f32.nearest rounds ties to even, as the bit rounding below does.
    return <u16>(sign | <u32>nearest<f32>(reinterpret<f32>(a) * 16777216.0));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits; a carry
  // out of the mantissa correctly moves into the exponent.
  let h = (a - 0x38000000) >> 13;
  const rest = a & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1) != 0)) h++;
  return <u16>(sign | h);
}

/** f16 bits -> f32, exact for normals and subnormals (the bits shifted into place, then rescaled), infinities and NaN. */
@inline export function halfToF32(h: u32): f32 {
  if ((h & 0x7c00) == 0x7c00) return reinterpret<f32>(((h & 0x8000) << 16) | 0x7f800000 | ((h & 0x3ff) << 13));
  const f = reinterpret<f32>((h & 0x7fff) << 13) * HALF_SCALE;
  return reinterpret<f32>(reinterpret<u32>(f) | ((h & 0x8000) << 16));
}

/**
 * Four finite halves (stored halves are: the host refuses values that would round to an
 * infinity), sign-extended to i32 lanes (v128.load16x4_s), -> f32x4 in three operations: the
 * shift puts the 15 magnitude bits in an f32's place and a copy of the sign at bit 31 (the
 * sign-extension's upper bits), the mask keeps just those, and the multiply rescales the exponent
 * (the sign rides along).
 */
@inline export function halfLanes(h: v128): v128 {
  return f32x4.mul(v128.and(i32x4.shl(h, 13), i32x4.splat(0x8fffe000)), f32x4.splat(HALF_SCALE));
}

/** Rust's `x as u8` for an f32. */
@inline export function f32ToByte(x: f32): u8 {
  if (x >= 255) return 255;
  return x > 0 ? <u8><i32>x : 0; // NaN and negatives compare false: 0
}

/** Writes the `n` f32 values at `src` into storage form at `dst` (the index's datatype). */
export function encodeElements(src: usize, dst: usize, n: i32): void {
  if (dtype == DT_F16) {
    for (let i = 0; i < n; i++) store<u16>(dst + (<usize>i << 1), f32ToHalf(load<f32>(src + (<usize>i << 2))));
  } else if (dtype == DT_U8) {
    for (let i = 0; i < n; i++) store<u8>(dst + <usize>i, f32ToByte(load<f32>(src + (<usize>i << 2))));
  } else {
    memory.copy(dst, src, <usize>n << 2);
  }
}

/** Element `j` of the stored vector at `p`, as f32. */
@inline export function elementAt(p: usize, j: i32): f32 {
  if (dtype == DT_F16) return halfToF32(load<u16>(p + (<usize>j << 1)));
  if (dtype == DT_U8) return <f32>load<u8>(p + <usize>j);
  return load<f32>(p + (<usize>j << 2));
}

/** Writes the `n` stored elements at `src` as f32 at `dst`. */
export function decodeElements(src: usize, dst: usize, n: i32): void {
  if (dtype == DT_F32) {
    memory.copy(dst, src, <usize>n << 2);
    return;
  }
  for (let i = 0; i < n; i++) store<f32>(dst + (<usize>i << 2), elementAt(src, i));
}

/** Rounds the `n` f32 values at `p` in place to what the datatype stores (the query's form). */
export function roundElements(p: usize, n: i32): void {
  if (dtype == DT_F16) {
    for (let i = 0; i < n; i++) {
      const q = p + (<usize>i << 2);
      store<f32>(q, halfToF32(f32ToHalf(load<f32>(q))));
    }
  } else if (dtype == DT_U8) {
    for (let i = 0; i < n; i++) {
      const q = p + (<usize>i << 2);
      store<f32>(q, <f32>f32ToByte(load<f32>(q)));
    }
  }
}
