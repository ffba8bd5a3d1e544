// Throwaway AssemblyScript microbenchmark for docs/research/engine-profile.md (not part of the
// engine): squared L2 over f32 and over u8 codes 0..127, one vector at a time (as the engine's
// kernels do) or four interleaved (four independent memory streams), over rows named by `ids`.
// Build: npx asc docs/research/profile/kernels.ts -O3 --enable simd --runtime stub -o /tmp/ep/kernels.wasm

@inline function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) + f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3);
}
@inline function hsumi(v: v128): i32 {
  return i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1) + i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3);
}
@inline function sq(x: v128, y: v128): v128 { const d = f32x4.sub(x, y); return f32x4.mul(d, d); }

/** As diffT<f32,f32>: four accumulators, 16 lanes a step (n a multiple of 16). */
@inline function l2(q: usize, p: usize, n: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    s0 = f32x4.add(s0, sq(v128.load(q), v128.load(p)));
    s1 = f32x4.add(s1, sq(v128.load(q, 16), v128.load(p, 16)));
    s2 = f32x4.add(s2, sq(v128.load(q, 32), v128.load(p, 32)));
    s3 = f32x4.add(s3, sq(v128.load(q, 48), v128.load(p, 48)));
    q += 64; p += 64;
  }
  return hsum(f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)));
}

/** Four rows against one query, interleaved: one query load serves four rows. */
@inline function l2x4(q: usize, a: usize, b: usize, c: usize, d: usize, n: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0), s3 = f32x4.splat(0);
  for (let i = 0; i < n; i += 4) {
    const x = v128.load(q);
    s0 = f32x4.add(s0, sq(x, v128.load(a)));
    s1 = f32x4.add(s1, sq(x, v128.load(b)));
    s2 = f32x4.add(s2, sq(x, v128.load(c)));
    s3 = f32x4.add(s3, sq(x, v128.load(d)));
    q += 16; a += 16; b += 16; c += 16; d += 16;
  }
  return hsum(s0) + hsum(s1) + hsum(s2) + hsum(s3);
}

/** Engine's int8 L2: sign-extend, subtract, i32x4.dot_i16x8_s (n a multiple of 16). */
@inline function l2i8(q: usize, p: usize, n: i32): i32 {
  let s0 = i32x4.splat(0), s1 = i32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const va = v128.load(q), vb = v128.load(p);
    const lo = i16x8.sub(i16x8.extend_low_i8x16_s(va), i16x8.extend_low_i8x16_s(vb));
    const hi = i16x8.sub(i16x8.extend_high_i8x16_s(va), i16x8.extend_high_i8x16_s(vb));
    s0 = i32x4.add(s0, i32x4.dot_i16x8_s(lo, lo));
    s1 = i32x4.add(s1, i32x4.dot_i16x8_s(hi, hi));
    q += 16; p += 16;
  }
  return hsumi(i32x4.add(s0, s1));
}

@inline function sqi8(a: v128, b: v128): v128 {
  const lo = i16x8.sub(i16x8.extend_low_i8x16_s(a), i16x8.extend_low_i8x16_s(b));
  const hi = i16x8.sub(i16x8.extend_high_i8x16_s(a), i16x8.extend_high_i8x16_s(b));
  return i32x4.add(i32x4.dot_i16x8_s(lo, lo), i32x4.dot_i16x8_s(hi, hi));
}

/** Four code rows against one query code row, interleaved (the engine's l2I8 arithmetic). */
@inline function l2i8x4(q: usize, a: usize, b: usize, c: usize, d: usize, n: i32): i32 {
  let s0 = i32x4.splat(0), s1 = i32x4.splat(0), s2 = i32x4.splat(0), s3 = i32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const x = v128.load(q);
    s0 = i32x4.add(s0, sqi8(x, v128.load(a)));
    s1 = i32x4.add(s1, sqi8(x, v128.load(b)));
    s2 = i32x4.add(s2, sqi8(x, v128.load(c)));
    s3 = i32x4.add(s3, sqi8(x, v128.load(d)));
    q += 16; a += 16; b += 16; c += 16; d += 16;
  }
  return hsumi(s0) + hsumi(s1) + hsumi(s2) + hsumi(s3);
}

/**
 * Codes 0..127 only: dot product by even/odd bytes as i16 lanes (mask and shift, no sign
 * extension), so L2 = |q|^2 + |p|^2 - 2 q.p with the norms stored beside the codes.
 */
@inline function doti8mask(q: usize, p: usize, n: i32): i32 {
  const m = i16x8.splat(0xff);
  let s0 = i32x4.splat(0), s1 = i32x4.splat(0);
  for (let i = 0; i < n; i += 16) {
    const va = v128.load(q), vb = v128.load(p);
    s0 = i32x4.add(s0, i32x4.dot_i16x8_s(v128.and(va, m), v128.and(vb, m)));
    s1 = i32x4.add(s1, i32x4.dot_i16x8_s(i16x8.shr_u(va, 8), i16x8.shr_u(vb, 8)));
    q += 16; p += 16;
  }
  return hsumi(i32x4.add(s0, s1));
}

let sink: u32 = 0;

/** Software "prefetch": one scalar load per 64-byte line of the row at p (results kept alive in `sink`). */
@inline function touch(p: usize, bytes: usize): void {
  let x: u32 = 0;
  for (let o: usize = 0; o < bytes; o += 64) x ^= load<u8>(p + o);
  sink ^= x;
}

/** Sum of distances from q to rows ids[0..count) of `base` (row bytes apart); mode picks the kernel. */
export function run(mode: i32, q: usize, base: usize, row: usize, ids: usize, count: i32, n: i32): f64 {
  let total: f64 = 0;
  if (mode == 0) for (let i = 0; i < count; i++) total += l2(q, base + <usize>load<u32>(ids + (<usize>i << 2)) * row, n);
  else if (mode == 1) {
    for (let i = 0; i + 4 <= count; i += 4) {
      const at = ids + (<usize>i << 2);
      total += l2x4(q, base + <usize>load<u32>(at) * row, base + <usize>load<u32>(at, 4) * row, base + <usize>load<u32>(at, 8) * row, base + <usize>load<u32>(at, 12) * row, n);
    }
  } else if (mode == 5) {
    for (let i = 0; i + 4 <= count; i += 4) {
      const at = ids + (<usize>i << 2);
      total += <f64>l2i8x4(q, base + <usize>load<u32>(at) * row, base + <usize>load<u32>(at, 4) * row, base + <usize>load<u32>(at, 8) * row, base + <usize>load<u32>(at, 12) * row, n);
    }
  } else if (mode == 2) for (let i = 0; i < count; i++) total += <f64>l2i8(q, base + <usize>load<u32>(ids + (<usize>i << 2)) * row, n);
  else for (let i = 0; i < count; i++) total += <f64>doti8mask(q, base + <usize>load<u32>(ids + (<usize>i << 2)) * row, n);
  return total + <f64>(sink & 1);
}

export function alloc(bytes: usize): usize { return heap.alloc(bytes); }
