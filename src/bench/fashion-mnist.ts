// Fashion-MNIST as Debian's dataset-fashion-mnist installs it (IDX files, gzip), split as
// ann-benchmarks does: the 60000 training images are the base, the 10000 test images the queries.

import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';

export const FASHION_MNIST_DIR = '/usr/share/datasets/fashion-mnist';

export class DatasetMissing extends Error {
  constructor(path: string) {
    super(`Fashion-MNIST not found at ${path}. Install it with: sudo apt-get install dataset-fashion-mnist`);
  }
}

export interface Dataset {
  name: string;
  dim: number;
  base: Float32Array;
  queries: Float32Array;
  baseLabels: Uint8Array;
  queryLabels: Uint8Array;
}

async function idx(path: string): Promise<{ dims: number[]; data: Uint8Array }> {
  let raw: Buffer;
  try {
    raw = gunzipSync(await readFile(path));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new DatasetMissing(path);
    throw err;
  }
  // IDX: two zero bytes, a type byte (0x08 = unsigned byte), the rank, then big-endian u32 sizes.
  if (raw[0] !== 0 || raw[1] !== 0 || raw[2] !== 0x08) throw new Error(`${path}: not an unsigned-byte IDX file`);
  const rank = raw[3];
  const dims: number[] = [];
  for (let i = 0; i < rank; i++) dims.push(raw.readUInt32BE(4 + 4 * i));
  return { dims, data: new Uint8Array(raw.buffer, raw.byteOffset + 4 + 4 * rank) };
}

function toFloat(images: { dims: number[]; data: Uint8Array }): Float32Array {
  return Float32Array.from(images.data.subarray(0, images.dims.reduce((a, b) => a * b, 1)));
}

export async function loadFashionMnist(dir = FASHION_MNIST_DIR): Promise<Dataset> {
  const [train, test, trainLabels, testLabels] = await Promise.all([
    idx(join(dir, 'train-images-idx3-ubyte.gz')),
    idx(join(dir, 't10k-images-idx3-ubyte.gz')),
    idx(join(dir, 'train-labels-idx1-ubyte.gz')),
    idx(join(dir, 't10k-labels-idx1-ubyte.gz')),
  ]);
  return {
    name: 'fashion-mnist-784-euclidean',
    dim: train.dims[1] * train.dims[2],
    base: toFloat(train),
    queries: toFloat(test),
    baseLabels: trainLabels.data.slice(0, trainLabels.dims[0]),
    queryLabels: testLabels.data.slice(0, testLabels.dims[0]),
  };
}
