// Fashion-MNIST as Debian's dataset-fashion-mnist installs it (IDX files, gzip), split as
// ann-benchmarks does: the 60000 training images are the base, the 10000 test images the queries.

import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { CommandError } from '../errors.js';
import type { Dataset } from './dataset.js';

export const FASHION_MNIST_DIR = '/usr/share/datasets/fashion-mnist';

/** Where the data set is read from unless told: QUIVER_FASHION_MNIST_DIR when set, else Debian's path. */
export function defaultFashionMnistDir(): string {
  return process.env.QUIVER_FASHION_MNIST_DIR || FASHION_MNIST_DIR;
}

export interface FashionMnist extends Dataset {
  baseLabels: Uint8Array;
  queryLabels: Uint8Array;
  rows: number;
  cols: number;
  /** The base images as pixels, row-major, one byte each. */
  basePixels: Uint8Array;
}

interface Idx {
  dims: number[];
  data: Uint8Array;
}

async function idx(path: string): Promise<Idx> {
  let raw: Buffer;
  try {
    raw = gunzipSync(await readFile(path));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new CommandError(`Fashion-MNIST not found: ${path} does not exist. Install it with: sudo apt-get install dataset-fashion-mnist`);
    }
    throw err;
  }
  // IDX: two zero bytes, a type byte (0x08 = unsigned byte), the rank, then big-endian u32 sizes.
  if (raw[0] !== 0 || raw[1] !== 0 || raw[2] !== 0x08) throw new CommandError(`${path}: not an unsigned-byte IDX file`);
  const rank = raw[3];
  const dims: number[] = [];
  for (let i = 0; i < rank; i++) dims.push(raw.readUInt32BE(4 + 4 * i));
  const count = dims.reduce((a, b) => a * b, 1);
  return { dims, data: new Uint8Array(raw.buffer, raw.byteOffset + 4 + 4 * rank, count) };
}

export async function loadFashionMnist(dir: string): Promise<FashionMnist> {
  const [train, test, trainLabels, testLabels] = await Promise.all([
    idx(join(dir, 'train-images-idx3-ubyte.gz')),
    idx(join(dir, 't10k-images-idx3-ubyte.gz')),
    idx(join(dir, 'train-labels-idx1-ubyte.gz')),
    idx(join(dir, 't10k-labels-idx1-ubyte.gz')),
  ]);
  return {
    name: 'fashion-mnist-784-euclidean',
    dim: train.dims[1] * train.dims[2],
    distance: 'Euclid',
    base: Float32Array.from(train.data),
    queries: Float32Array.from(test.data),
    baseLabels: trainLabels.data.slice(),
    queryLabels: testLabels.data.slice(),
    rows: train.dims[1],
    cols: train.dims[2],
    basePixels: train.data.slice(),
  };
}
