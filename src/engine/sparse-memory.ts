// The typed surface of build/quiver-sparse.wasm (assembly/sparse/index.ts), its instantiation,
// and the host's handle on the instance's memory: block allocation plus typed views that are
// re-made after memory growth. Every sparse index has its own instance. Views taken before an
// allocation may be stale after it: code reads `mem.u32` etc. again after anything that allocates.

import { EngineAbort } from './exports.js';
import { MemoryViews } from './memory.js';

export interface SparseExports {
  readonly memory: WebAssembly.Memory;
  alloc(bytes: number): number;
  realloc(ptr: number, bytes: number): number;
  free(ptr: number): void;
  bestScore(): number;
  resetBest(): void;
  accumulate(offs: number, vals: number, n: number, weight: number, acc: number, stamp: number, cand: number, nc: number, epoch: number, allow: number): number;
  addToStamped(offs: number, vals: number, n: number, weight: number, acc: number, stamp: number, epoch: number): void;
  score(qi: number, qw: number, qn: number, di: number, dv: number, from: number, to: number): number;
  scan(qi: number, qw: number, qn: number, di: number, dv: number, starts: number, lengths: number, count: number, allow: number, outIds: number, outScores: number): number;
}

export class SparseMemory extends MemoryViews {
  constructor(readonly wasm: SparseExports) {
    super(wasm.memory);
  }

  /** A fresh instance of a compiled quiver-sparse.wasm module. */
  static async instantiate(module: WebAssembly.Module): Promise<SparseMemory> {
    const imports = {
      env: {
        abort(_message: number, _file: number, line: number, column: number): never {
          throw new EngineAbort(`sparse engine abort at ${line}:${column}`);
        },
      },
    };
    const instance = await WebAssembly.instantiate(module, imports);
    return new SparseMemory(instance.exports as unknown as SparseExports);
  }

  /** A block of `bytes` (contents undefined), 8-byte aligned. */
  alloc(bytes: number): number {
    return this.wasm.alloc(Math.max(8, bytes));
  }

  /** `ptr` grown or shrunk to `bytes`, contents kept up to the smaller size (ptr 0: a new block). */
  realloc(ptr: number, bytes: number): number {
    return ptr === 0 ? this.alloc(bytes) : this.wasm.realloc(ptr, Math.max(8, bytes));
  }

  free(ptr: number): void {
    if (ptr !== 0) this.wasm.free(ptr);
  }

  /** Bytes of the instance's linear memory. */
  get byteLength(): number {
    return this.wasm.memory.buffer.byteLength;
  }
}
