// Qdrant's product quantization as the engine takes it (assembly/product-quant.ts): the
// compression ratio of f32 vectors names how many dimensions share one code byte.

/** Qdrant's CompressionRatio. */
export const COMPRESSIONS = ['x4', 'x8', 'x16', 'x32', 'x64'] as const;
export type Compression = (typeof COMPRESSIONS)[number];

/**
 * Product quantization: each chunk of dimensions is coded as one of 256 centroids fitted by
 * k-means, and queries are scored through a per-query lookup table; not rescored by default
 * (Qdrant's default_rescoring for product).
 */
export interface ProductQuantization {
  method: 'product';
  compression: Compression;
}

/** Engine code of the method (assembly/layout.ts QM_PRODUCT). */
export const PRODUCT_METHOD = 4;

// Dimensions per chunk for each ratio: 4 bytes of f32 per dimension become 1 byte per chunk.
const BUCKETS: Record<Compression, number> = { x4: 1, x8: 2, x16: 4, x32: 8, x64: 16 };

export function bucketOf(compression: Compression): number {
  return BUCKETS[compression];
}

export function compressionOf(bucket: number): Compression {
  const found = (Object.keys(BUCKETS) as Compression[]).find((c) => BUCKETS[c] === bucket);
  if (found === undefined) throw new RangeError(`no compression ratio has ${bucket} dimensions per chunk`);
  return found;
}
