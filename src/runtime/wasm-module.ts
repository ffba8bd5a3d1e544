// Loads the compiled engine from build/ once per thread (Node only; browsers fetch it instead).

import { readFile } from 'node:fs/promises';

let compiled: Promise<WebAssembly.Module> | undefined;

export function engineModule(): Promise<WebAssembly.Module> {
  compiled ??= readFile(new URL('../../build/quiver.wasm', import.meta.url)).then((bytes) => WebAssembly.compile(bytes));
  return compiled;
}
