// Distance names as Qdrant spells them, the engine's numeric codes for them, and the
// conversion from the engine's internal "smaller is closer" distance to Qdrant's score.

export type Distance = 'Cosine' | 'Dot' | 'Euclid' | 'Manhattan';

export const DISTANCES: readonly Distance[] = ['Cosine', 'Dot', 'Euclid', 'Manhattan'];

/** Engine code of each distance (assembly/layout.ts METRIC_*). */
export function metricCode(distance: Distance): number {
  return DISTANCES.indexOf(distance);
}

/** True when a larger score means closer (Qdrant orders these descending). */
export function largerIsCloser(distance: Distance): boolean {
  return distance === 'Cosine' || distance === 'Dot';
}

/**
 * Qdrant's score from the engine's distance: the dot product, the L2 distance or the L1 distance.
 * Qdrant's postprocessing takes the absolute value (sqrt(|s|), |s|), which only matters for a
 * binary-quantized distance (2 * xor - dim, negative when most bits agree).
 */
export function toScore(distance: Distance, internal: number): number {
  switch (distance) {
    case 'Cosine':
    case 'Dot':
      return -internal;
    case 'Euclid':
      return Math.sqrt(Math.abs(internal));
    case 'Manhattan':
      return Math.abs(internal);
  }
}
