// Seeded uniform randomness (mulberry32): the engine's sampled query plans and the benchmarks'
// synthetic data both need streams that repeat exactly for a seed, so a run reproduces.

/** A deterministic stream of uniform numbers in [0, 1) for `seed`. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
