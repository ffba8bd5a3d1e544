// The typed surface of build/quiver-sparse.wasm (assembly/sparse/index.ts), its instantiation,
// and the host's handle on the instance's memory: block allocation plus typed views of the whole
// memory. Every sparse index has its own instance, and its memory grows only inside alloc and
// realloc, so the views are re-made there and nowhere else (reading WebAssembly.Memory.buffer on
// every access costs more than the posting updates themselves). A view taken before an
// allocation is stale after it: code reads `mem.u32` etc. again after anything that allocates.

import { EngineAbort } from './exports.js';

export interface SparseExports {
  readonly memory: WebAssembly.Memory;
  alloc(bytes: number): number;
  realloc(ptr: number, bytes: number): number;
  free(ptr: number): void;
  bestScore(): number;
  resetBest(): void;
  accumulate(list: number, vals: number, n: number, kind: number, qmin: number, qscale: number, weight: number, acc: number, stamp: number, cand: number, nc: number, epoch: number, allow: number): number;
  addToStamped(list: number, vals: number, n: number, kind: number, qmin: number, qscale: number, weight: number, acc: number, stamp: number, epoch: number): void;
  setQuery(qi: number, qw: number, qn: number, bits: number): void;
  score(doc: number, n: number): number;
  scan(starts: number, lengths: number, count: number, allow: number, outIds: number, outScores: number): number;
}

export class SparseMemory {
  u8: Uint8Array;
  u32: Uint32Array;
  f32: Float32Array;
  f64: Float64Array;
  private buffer: ArrayBuffer;

  constructor(readonly wasm: SparseExports) {
    this.buffer = wasm.memory.buffer;
    this.u8 = new Uint8Array(this.buffer);
    this.u32 = new Uint32Array(this.buffer);
    this.f32 = new Float32Array(this.buffer);
    this.f64 = new Float64Array(this.buffer);
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
    const ptr = this.wasm.alloc(Math.max(8, bytes));
    this.refresh();
    return ptr;
  }

  /** `ptr` grown or shrunk to `bytes`, contents kept up to the smaller size (ptr 0: a new block). */
  realloc(ptr: number, bytes: number): number {
    if (ptr === 0) return this.alloc(bytes);
    const moved = this.wasm.realloc(ptr, Math.max(8, bytes));
    this.refresh();
    return moved;
  }

  free(ptr: number): void {
    if (ptr !== 0) this.wasm.free(ptr);
  }

  /** Re-makes the views if the memory grew (which detaches the old buffer). */
  private refresh(): void {
    if (this.buffer === this.wasm.memory.buffer) return;
    this.buffer = this.wasm.memory.buffer;
    this.u8 = new Uint8Array(this.buffer);
    this.u32 = new Uint32Array(this.buffer);
    this.f32 = new Float32Array(this.buffer);
    this.f64 = new Float64Array(this.buffer);
  }

  /** Bytes of the instance's linear memory. */
  get byteLength(): number {
    return this.wasm.memory.buffer.byteLength;
  }
}
