// The demo's Web Worker: holds the points and one engine index per distance, builds indexes
// with progress reports, and answers searches, so the page never blocks.

import type { Distance, VectorIndex } from '../engine/index.js';
import { FASHION_MNIST_LABELS } from './labels.js';
import { PointSet } from './point-set.js';
import type { FromWorker, ToWorker } from './protocol.js';

// Typed by hand: the project compiles against the DOM library, not the WebWorker one.
const scope = self as unknown as { postMessage(message: FromWorker): void; onmessage: ((event: MessageEvent<ToWorker>) => void) | null };
const post = (message: FromWorker) => scope.postMessage(message);

const engine = fetch(new URL('./quiver.wasm', import.meta.url)).then(async (res) => {
  if (!res.ok) throw new Error(`quiver.wasm: HTTP ${res.status}`);
  return WebAssembly.compile(await res.arrayBuffer());
});
let points: PointSet | undefined;
const indexes = new Map<Distance, Promise<{ index: VectorIndex; ms: number }>>();

/** The index for `distance`, built on first use (with progress reports) and kept. */
function indexFor(distance: Distance): Promise<{ index: VectorIndex; ms: number }> {
  let built = indexes.get(distance);
  if (!built) {
    const set = points!;
    const started = performance.now();
    built = engine
      .then((module) => set.buildIndex(module, distance, (done) => post({ type: 'progress', distance, done, total: set.size })))
      .then((index) => ({ index, ms: performance.now() - started }));
    indexes.set(distance, built);
  }
  return built;
}

async function handle(message: ToWorker): Promise<void> {
  switch (message.type) {
    case 'load': {
      const size = message.rows * message.cols;
      const vectors = Array.from(message.labels, (_, i) => Float32Array.from(message.pixels.subarray(i * size, (i + 1) * size)));
      points = new PointSet(size, vectors, Array.from(message.labels, (label) => ({ label, name: FASHION_MNIST_LABELS[label] })));
      return;
    }
    case 'build':
      post({ type: 'built', distance: message.distance, ms: (await indexFor(message.distance)).ms });
      return;
    case 'search': {
      const { index } = await indexFor(message.distance);
      post({ type: 'hits', seq: message.seq, id: message.id, hits: points!.search(index, points!.vector(message.id), message.request) });
      return;
    }
  }
}

scope.onmessage = (event: MessageEvent<ToWorker>) => {
  handle(event.data).catch((err: unknown) => post({ type: 'error', message: err instanceof Error ? err.message : String(err) }));
};
