// Throwaway A/B for docs/research/engine-profile.md ("Binary and TurboQuant codes on the 1536-d
// set"), not part of the engine: several builds of build/quiver.wasm searched on ONE index image
// (built once with the first build, cached in /tmp/codes-ab), in one process, in turns: CPU time
// per query (best of 3 passes) and recall@10 against the exact f32 answer, rescored and not.
// Needs the 50500-row embeddings cache file (`npx quiver bench engine --dataset embeddings
// --size 50000 --queries 500` writes it). From the repository root:
//   node --import tsx docs/research/profile/codes-ab.ts binary|turbo|hot OLD.wasm NEW.wasm ...
// `hot` repeats three queries (their rows stay cached) on the binary image of the first build.
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { VectorIndex, type IndexConfig } from '../../../src/engine/index.js';

const [, , mode, ...wasmFiles] = process.argv;
const N = 50000, NQ = 300, DIM = 1536, DIR = '/tmp/codes-ab';
const all = new Float32Array((await readFile('.cache/quiver/embeddings-v1-50500x1536-c256-s7.f32')).buffer);
const base = all.subarray(0, N * DIM);
const query = (j: number) => all.subarray((N + j) * DIM, (N + j + 1) * DIM);
const modules = await Promise.all(wasmFiles.map(async (f) => WebAssembly.compile(await readFile(f))));
const kind = mode === 'turbo' ? 'turbo' : 'binary';
const config: IndexConfig = { dim: DIM, distance: 'Cosine', m: 16, efConstruct: 100, quantization: kind === 'turbo' ? { method: 'turbo', bits: 'bits2' } : { method: 'binary' } };
await mkdir(DIR, { recursive: true });

async function cached<T>(file: string, make: () => Promise<T>, encode: (x: T) => Uint8Array | string, decode: (b: Buffer) => T): Promise<T> {
  try {
    await access(file);
    return decode(await readFile(file));
  } catch {
    const x = await make();
    await writeFile(file, encode(x));
    return x;
  }
}

const image = await cached(`${DIR}/image-${kind}.bin`, async () => {
  const index = await VectorIndex.create(modules[0], config);
  for (let i = 0; i < N; i++) index.upsert(i, base.subarray(i * DIM, (i + 1) * DIM));
  return index.serialize();
}, (x) => x, (b) => new Uint8Array(b));
const truth: number[][] = await cached(`${DIR}/truth.json`, async () => {
  const index = await VectorIndex.load(modules[0], image);
  return Array.from({ length: NQ }, (_, j) => Array.from(index.search(query(j), { limit: 10, exact: true, quantization: { ignore: true } }).offsets));
}, (x) => JSON.stringify(x), (b) => JSON.parse(b.toString('utf8')));
const indexes = await Promise.all(modules.map((m) => VectorIndex.load(m, image)));
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

for (const ef of [80, 160, 320]) {
  for (const rescore of [true, false]) {
    const best = indexes.map(() => Infinity);
    const hits = indexes.map(() => 0);
    for (let pass = 0; pass < 3; pass++) {
      indexes.forEach((index, k) => {
        const t0 = cpu();
        let hit = 0;
        for (let j = 0; j < NQ; j++) {
          const q = mode === 'hot' ? j % 3 : j;
          const got = index.search(query(q), { limit: 10, ef, quantization: { rescore, oversampling: 4 } }).offsets;
          const want = new Set(truth[q]);
          for (const o of got) if (want.has(o)) hit++;
        }
        best[k] = Math.min(best[k], cpu() - t0);
        hits[k] = hit;
      });
    }
    console.log(`${mode} ef ${ef} rescore ${rescore}: ` + wasmFiles.map((f, k) => `${f} ${((1e6 * best[k]) / NQ).toFixed(0)} us/query, recall ${(hits[k] / (NQ * 10)).toFixed(4)}`).join(' | '));
  }
}
