// Builds the demo's data file from Debian's Fashion-MNIST: the first `count` training images.

import { writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { loadFashionMnist } from '../bench/fashion-mnist.js';
import { encodeSubset } from './subset-format.js';

export const SUBSET_FILE = 'fashion-mnist-subset.bin';
export const SUBSET_COUNT = 5000;

export async function buildSubset(outFile: string, datasetDir: string, count = SUBSET_COUNT): Promise<void> {
  const data = await loadFashionMnist(datasetDir);
  const size = data.rows * data.cols;
  const bytes = encodeSubset({ count, rows: data.rows, cols: data.cols, labels: data.baseLabels.subarray(0, count), pixels: data.basePixels.subarray(0, count * size) });
  await writeFile(outFile, gzipSync(bytes, { level: 9 }));
}
