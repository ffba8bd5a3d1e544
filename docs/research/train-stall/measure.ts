// Ad-hoc measurement (not part of the suite): how long one store, a search right after it, and each
// training step take while a product x16 (or TurboQuant) index of 784-d Fashion-MNIST vectors crosses 16384 points.
// From a checkout: ROOT=$PWD node --import tsx docs/research/train-stall/measure.ts (ROOT: the checkout whose
// engine is measured; its wasm must be built). Needs Debian's dataset-fashion-mnist.
const root = process.env.ROOT ?? process.cwd();
const { VectorIndex } = await import(`${root}/src/engine/index.ts`);
const { engineModule } = await import(`${root}/src/runtime/wasm-module.ts`);
const { loadFashionMnist } = await import(`${root}/src/bench/fashion-mnist.ts`);
const data = await loadFashionMnist('/usr/share/datasets/fashion-mnist');
const dim = 784;
const N = Number(process.env.N ?? 16384);
// METHOD=turbo measures TurboQuant bits4 instead of product x16.
const quantization = process.env.METHOD === 'turbo' ? { method: 'turbo', bits: 'bits4' } : { method: 'product', compression: 'x16' };
const index = await VectorIndex.create(await engineModule(), { dim, distance: 'Euclid', quantization });
const row = (i: number) => data.base.subarray(i * dim, (i + 1) * dim);
let slowest = 0, slowestAt = -1, total = 0, last = 0;
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  index.stash(i, row(i));
  const dt = performance.now() - t0;
  total += dt;
  if (dt > slowest) { slowest = dt; slowestAt = i; }
  if (i === N - 1) last = dt;
}
const q = data.queries.subarray(0, dim);
let t0 = performance.now();
index.search(q, { limit: 10 });
const searchMs = performance.now() - t0;
console.log(`stores: ${N}, all ${total.toFixed(0)} ms, the one reaching ${N}: ${last.toFixed(1)} ms, slowest ${slowest.toFixed(1)} ms (store #${slowestAt + 1}); a search right after: ${searchMs.toFixed(1)} ms`);
if (typeof index.trainQuantizationStep === 'function') {
  let steps = 0, longest = 0, sum = 0, lastStep = 0, more = true;
  const times: [number, number][] = [];
  while (more) {
    t0 = performance.now();
    more = index.trainQuantizationStep();
    const dt = performance.now() - t0;
    steps++; sum += dt; times.push([dt, steps]);
    if (more) longest = Math.max(longest, dt); else lastStep = dt;
  }
  console.log(`training: ${steps} steps, ${sum.toFixed(0)} ms in all, longest fitting step ${longest.toFixed(1)} ms, final install + re-encode ${lastStep.toFixed(1)} ms, trained on ${index.quantizationTrainedOn}`);
  times.sort((a, b) => b[0] - a[0]);
  console.log('slowest steps (ms, step #):', times.slice(0, 8).map(([d, i]) => `${d.toFixed(1)}@${i}`).join(' '));
  const sorted = times.map(([d]) => d).sort((a, b) => a - b);
  console.log(`median step ${sorted[sorted.length >> 1].toFixed(1)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)].toFixed(1)} ms`);
  t0 = performance.now();
  index.search(q, { limit: 10 });
  console.log(`a search after training: ${(performance.now() - t0).toFixed(1)} ms`);
}
