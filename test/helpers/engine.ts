// Builds engine indexes for tests from row-major data.

import { VectorIndex, type IndexConfig } from '../../src/engine/index.js';
import { engineModule } from '../../src/runtime/wasm-module.js';

export async function buildIndex(config: IndexConfig, data: Float32Array): Promise<VectorIndex> {
  const index = await VectorIndex.create(await engineModule(), config);
  const n = data.length / config.dim;
  for (let i = 0; i < n; i++) index.upsert(i, data.subarray(i * config.dim, (i + 1) * config.dim));
  return index;
}
