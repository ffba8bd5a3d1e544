// Types of the `siphash` package (jedisct1/siphash-js), which ships none. A key is four 32-bit
// words (little-endian halves of the two 64-bit key words); a hash comes back as its high and
// low 32-bit halves.
declare module 'siphash' {
  interface Hash64 {
    h: number;
    l: number;
  }
  const siphash: {
    hash(key: ArrayLike<number>, message: Uint8Array | string): Hash64;
    hash_hex(key: ArrayLike<number>, message: Uint8Array | string): string;
  };
  export default siphash;
}
