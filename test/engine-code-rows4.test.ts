// The four-row kernels of binary and TurboQuant codes (assembly/rows4.ts bitsRows4,
// assembly/turbo-quant.ts turboDistRows4), which the graph traversal scores neighbours with:
// their values must equal the one-row kernels' bit for bit (a search then takes the same
// decisions and reports the same scores) and Qdrant's scores from the plain references
// (helpers/binary-reference.ts exactly, helpers/turbo-reference.ts up to its f64 rotation).

import t from 'tap';
import { instantiate, metricCode, type BinaryEncoding, type BinaryQueryEncoding, type Distance, type TurboBits } from '../src/engine/index.js';
import type { EngineExports } from '../src/engine/exports.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { clustered, rng, row, uniform } from './helpers/data.js';
import { dot } from './helpers/reference.js';
import { queryScorer, vectorStats, QUERY_BITS } from './helpers/binary-reference.js';
import { decodeRecord, fitModel, internalScore, paddedDim } from './helpers/turbo-reference.js';

// Powers of two: the codebook or statistics were last fitted on every stored vector.
const N = 256;
const SEARCH = { k: 10, ef: 32 };

/** popcount of a byte. */
const ones = (x: number): number => {
  let n = 0;
  for (; x; x &= x - 1) n++;
  return n;
};

t.test('bitsRows4: the one-row popcount kernels\' sums and the scalar sums, for four rows', async (t) => {
  const wasm = await instantiate(await engineModule());
  const next = rng(9);
  let runs = 0;
  for (const words of [1, 2, 3, 12, 24, 31, 32, 70]) { // past 31 words the one-bit sums flush their u8 lanes
    for (const bits of [1, 4, 8]) {
      const bytes = words * 16;
      // Row 0 differs from every bit of the query's first word, or of all of it at 31 and 70 words:
      // the largest sums, where narrow lanes would overflow.
      const rows = [0, 1, 2, 3].map((r) => Uint8Array.from({ length: bytes }, () => (r === 0 ? 255 : Math.floor(next() * 256))));
      const zero = words === 31 || words === 70;
      const query = Uint8Array.from({ length: bytes * bits }, (_, i) => (zero || i < 16 * bits ? 0 : Math.floor(next() * 256)));
      const rp = rows.map((r) => wasm.alloc(bytes));
      const qp = wasm.alloc(query.length);
      const ptrs = wasm.alloc(16);
      const out = wasm.alloc(16);
      rows.forEach((r, i) => new Uint8Array(wasm.memory.buffer).set(r, rp[i]));
      new Uint8Array(wasm.memory.buffer).set(query, qp);
      new Uint32Array(wasm.memory.buffer).set(rp, ptrs >>> 2);
      wasm.kernelBitsRows4(bits, qp, ptrs, bytes, out);
      const got = Array.from(new Int32Array(wasm.memory.buffer, out, 4));
      const scalar = rows.map((r) => {
        let sum = 0;
        for (let w = 0; w < words; w++) {
          for (let p = 0; p < bits; p++) for (let i = 0; i < 16; i++) sum += ones(r[w * 16 + i] ^ query[(w * bits + p) * 16 + i]) << p;
        }
        return sum;
      });
      t.same(got, scalar, `${bytes} bytes, ${bits} query bit(s): the scalar sums`);
      t.same(got, rp.map((p) => wasm.kernelBits(bits, p, qp, bytes)), `${bytes} bytes, ${bits} query bit(s): the one-row kernel's sums`);
      runs++;
    }
  }
  t.equal(runs, 24);
});

/** An engine index of `data` (row-major, `dim` wide) with quantization `method` set up by `enable`, searched once on codes for `query`. */
function searched(wasm: EngineExports, dim: number, distance: Distance, data: Float32Array, query: Float32Array, enable: () => void): void {
  wasm.init(dim, metricCode(distance), 16, 100, 1, 0, 0);
  enable();
  const n = data.length / dim;
  for (let i = 0; i < n; i++) {
    new Float32Array(wasm.memory.buffer, wasm.queryPtr(), dim).set(data.subarray(i * dim, (i + 1) * dim));
    wasm.insert(i);
  }
  new Float32Array(wasm.memory.buffer, wasm.queryPtr(), dim).set(query);
  // A search on codes without rescoring leaves the query's codes prepared for the kernels.
  wasm.search(SEARCH.k, SEARCH.ef, 0, 0, 1, 0, SEARCH.k);
}

/** Quantized distances to offsets 0..n-1: the four-row kernel over ids in fours (with repeats), and the one-row kernel. */
function bothKernels(wasm: EngineExports, n: number): { fours: number[]; single: number[] } {
  const ids = wasm.alloc(16);
  const out = wasm.alloc(16);
  const fours: number[] = [];
  for (let i = 0; i < n; i += 4) {
    // The last group repeats offsets when n is not a multiple of four.
    new Int32Array(wasm.memory.buffer, ids, 4).set([0, 1, 2, 3].map((j) => Math.min(i + j, n - 1)));
    if (!wasm.codeDistancesRows4(ids, out)) throw new Error('no four-row kernel for this method');
    fours.push(...new Float32Array(wasm.memory.buffer, out, 4).slice(0, Math.min(4, n - i)));
  }
  return { fours, single: Array.from({ length: n }, (_, i) => wasm.codeDistance(i)) };
}

const stored = (wasm: EngineExports, dim: number, i: number): Float32Array => new Float32Array(wasm.memory.buffer, wasm.readVector(i), dim).slice();

const ENCODINGS: BinaryEncoding[] = ['one_bit', 'two_bits', 'one_and_half_bits'];
const QUERY_ENCODINGS: (BinaryQueryEncoding | undefined)[] = [undefined, 'scalar4bits', 'scalar8bits'];

for (const dim of [130, 1536]) {
  t.test(`binary ${dim}-d: four-row distances are the one-row kernel's and Qdrant's scores, every encoding`, async (t) => {
    const data = uniform(N * dim, 23);
    const query = uniform(dim, 24);
    for (const encoding of ENCODINGS) {
      for (const queryEncoding of QUERY_ENCODINGS) {
        const wasm = await instantiate(await engineModule());
        // Dot: the binary score does not depend on the metric, and Dot keeps the query as given.
        searched(wasm, dim, 'Dot', data, query, () => wasm.enableQuantization(queryEncoding ? QUERY_BITS[queryEncoding] : 1, ENCODINGS.indexOf(encoding) + 1));
        const vectors = Array.from({ length: N }, (_, i) => stored(wasm, dim, i));
        const scorer = queryScorer(encoding, queryEncoding, dim, encoding === 'one_bit' ? null : vectorStats(vectors, dim), query);
        const { fours, single } = bothKernels(wasm, N);
        const at = `${encoding}/${queryEncoding ?? 'binary'}`;
        t.same(fours, single, `${at}: bit for bit the one-row kernel's`);
        const codes = Array.from({ length: N }, (_, i) => new Uint8Array(wasm.memory.buffer, wasm.codesPtr(i), wasm.codeBytes()).slice());
        t.same(fours, codes.map((c) => -scorer(c)), `${at}: Qdrant's scores (negated)`);
      }
    }
  });
}

const TURBO: [TurboBits, number][] = [['bits4', 8], ['bits2', 4], ['bits1_5', 3], ['bits1', 2]];

for (const dim of [100, 1536]) {
  for (const distance of ['Cosine', 'Dot', 'Euclid'] as Distance[]) {
    t.test(`TurboQuant ${dim}-d ${distance}: four-row distances are the one-row kernel's and Qdrant's estimator, every width`, async (t) => {
      const data = clustered(N + 1, dim, 8, 5, 12, 0.2);
      const raw = row(data, dim, N);
      const query = distance === 'Cosine' ? raw.map((x) => x / Math.sqrt(dot(raw, raw))) : raw;
      for (const [bits, half] of TURBO) {
        const wasm = await instantiate(await engineModule());
        searched(wasm, dim, distance, data.subarray(0, N * dim), raw, () => {
          wasm.setTurboBits(half);
          wasm.enableQuantization(1, 5);
        });
        const { fours, single } = bothKernels(wasm, N);
        t.same(fours, single, `${bits}: bit for bit the one-row kernel's`);
        const vectors = Array.from({ length: N }, (_, i) => stored(wasm, dim, i));
        // The calibration reads at most 2^18 rotated values: the first floor(2^18 / P) vectors.
        const model = fitModel(distance, bits, dim, vectors.slice(0, Math.floor(2 ** 18 / paddedDim(dim, bits))));
        // Internal scores are bigger-is-closer, the engine's distances their negations.
        const want = vectors.map((_, i) => -internalScore(model, query, decodeRecord(model, new Uint8Array(wasm.memory.buffer, wasm.codesPtr(i), wasm.codeBytes()).slice())));
        const reach = Math.sqrt(dot(query, query)) * Math.max(...vectors.map((v) => Math.sqrt(dot(v, v))));
        let worst = 0;
        fours.forEach((d, i) => { worst = Math.max(worst, Math.abs(d - want[i])); });
        t.ok(worst <= 1e-5 * Math.max(1, reach), `${bits}: Qdrant's estimator on the stored codes (worst error ${worst.toExponential(2)})`);
      }
    });
  }
}
