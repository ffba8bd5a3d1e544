// Loads the compiled engines from build/ once per thread (Node only; browsers fetch them instead).

import { readFile } from 'node:fs/promises';

let compiled: Promise<WebAssembly.Module> | undefined;

export function engineModule(): Promise<WebAssembly.Module> {
  compiled ??= readFile(new URL('../../build/quiver.wasm', import.meta.url)).then((bytes) => WebAssembly.compile(bytes));
  return compiled;
}

let compiledSparse: Promise<WebAssembly.Module> | undefined;

/** The compiled sparse engine (build/quiver-sparse.wasm, assembly/sparse/), once per thread. */
export function sparseModule(): Promise<WebAssembly.Module> {
  compiledSparse ??= readFile(new URL('../../build/quiver-sparse.wasm', import.meta.url)).then((bytes) => WebAssembly.compile(bytes));
  return compiledSparse;
}
