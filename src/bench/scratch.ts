// A temporary directory for files a benchmark writes only to measure or reopen an index, removed
// when the work is done whatever its outcome.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function scratchDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'quiver-bench-'));
}

export async function withScratchDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await scratchDir();
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
