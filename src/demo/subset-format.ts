// The demo's data file: a Fashion-MNIST subset as bytes, gzip-compressed as a whole.
// Layout (little-endian): "QFMN", u32 version (1), u32 count, u16 rows, u16 cols,
// `count` label bytes, then `count * rows * cols` pixel bytes (row-major, 0 = background).
// Browser-safe: decoding takes the already decompressed bytes.

export interface ImageSubset {
  count: number;
  rows: number;
  cols: number;
  labels: Uint8Array;
  pixels: Uint8Array;
}

const MAGIC = 'QFMN';
const VERSION = 1;
const HEADER = 16;

export function encodeSubset(subset: ImageSubset): Uint8Array {
  const pixelsPerImage = subset.rows * subset.cols;
  const out = new Uint8Array(HEADER + subset.count * (1 + pixelsPerImage));
  const view = new DataView(out.buffer);
  for (let i = 0; i < 4; i++) out[i] = MAGIC.charCodeAt(i);
  view.setUint32(4, VERSION, true);
  view.setUint32(8, subset.count, true);
  view.setUint16(12, subset.rows, true);
  view.setUint16(14, subset.cols, true);
  out.set(subset.labels.subarray(0, subset.count), HEADER);
  out.set(subset.pixels.subarray(0, subset.count * pixelsPerImage), HEADER + subset.count);
  return out;
}

export function decodeSubset(bytes: Uint8Array): ImageSubset {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = String.fromCharCode(...bytes.subarray(0, 4));
  if (magic !== MAGIC || view.getUint32(4, true) !== VERSION) throw new Error('not a Quiver Fashion-MNIST subset file (version 1)');
  const count = view.getUint32(8, true);
  const rows = view.getUint16(12, true);
  const cols = view.getUint16(14, true);
  if (bytes.byteLength !== HEADER + count * (1 + rows * cols)) throw new Error(`subset file truncated: ${bytes.byteLength} bytes for ${count} images of ${rows}x${cols}`);
  return {
    count, rows, cols,
    labels: bytes.subarray(HEADER, HEADER + count),
    pixels: bytes.subarray(HEADER + count),
  };
}

/** Image `i` as a float vector, the form the engine indexes. */
export function imageVector(subset: ImageSubset, i: number): Float32Array {
  const size = subset.rows * subset.cols;
  return Float32Array.from(subset.pixels.subarray(i * size, (i + 1) * size));
}
