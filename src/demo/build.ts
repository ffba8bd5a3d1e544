// Builds the static demo into build/demo: the page, its script and worker bundled for browsers
// by esbuild, the engine (build/quiver.wasm) and the image subset from Debian's Fashion-MNIST.
// The whole folder works from any static host. `npm run build:demo` runs this.

import { copyFile, mkdir, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { defaultFashionMnistDir } from '../bench/fashion-mnist.js';
import { CommandError } from '../errors.js';
import { buildSubset, SUBSET_FILE } from './build-subset.js';

const SOURCE = new URL('./', import.meta.url);
export const DEMO_DIR = fileURLToPath(new URL('../../build/demo/', import.meta.url));
const ENGINE = fileURLToPath(new URL('../../build/quiver.wasm', import.meta.url));

export interface DemoBuild {
  dir: string;
  /** False when the data set is missing: the page loads but has no images. */
  hasImages: boolean;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

export async function buildDemo(datasetDir = defaultFashionMnistDir()): Promise<DemoBuild> {
  if (!(await exists(ENGINE))) throw new CommandError(`${ENGINE} is missing: run npm run build first`);
  await mkdir(DEMO_DIR, { recursive: true });
  await build({
    entryPoints: { app: fileURLToPath(new URL('app.ts', SOURCE)), worker: fileURLToPath(new URL('worker.ts', SOURCE)) },
    outdir: DEMO_DIR,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: true,
    logLevel: 'warning',
  });
  await Promise.all(['index.html', 'style.css'].map((f) => copyFile(new URL(f, SOURCE), `${DEMO_DIR}${f}`)));
  await copyFile(ENGINE, `${DEMO_DIR}quiver.wasm`);
  try {
    await buildSubset(`${DEMO_DIR}${SUBSET_FILE}`, datasetDir);
    return { dir: DEMO_DIR, hasImages: true };
  } catch (err) {
    if (err instanceof CommandError) return { dir: DEMO_DIR, hasImages: await exists(`${DEMO_DIR}${SUBSET_FILE}`) };
    throw err;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await buildDemo();
  console.log(`demo built in ${result.dir}${result.hasImages ? '' : ` without images: Fashion-MNIST is missing (sudo apt-get install dataset-fashion-mnist), then npm run build:demo`}`);
}
