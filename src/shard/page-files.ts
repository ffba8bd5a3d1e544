// The files behind a shard's paged vector regions (Qdrant's `cold` vectors or codes): one per
// region of each paged vector name, in the shard's store directory. They hold the pages the
// engine let go of (src/engine/exports.ts PageStore), so they are a working copy, not a record:
// the point records and the graph images stay the truth, and a restart fills fresh files from
// them. Each file is unlinked as soon as it is open, so a crash (kill -9 included) leaves nothing
// behind and no restart can mistake an old file for current pages.

import { closeSync, mkdtempSync, openSync, readSync, readdirSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PageStore } from '../engine/index.js';

const PREFIX = 'quiver-pages-';

/**
 * Bytes of paged rows an index keeps in its memory between requests unless configured. Small on
 * purpose: the page files are read through the OS page cache, which keeps what memory allows as
 * it does for Qdrant's memory-mapped files; this only has to hold what one request reads.
 */
export const DEFAULT_PAGE_BUDGET_BYTES = 8 << 20;

/** Removes page files a crash left between their creation and their unlinking (a moment's window). */
export function removeStalePageFiles(dir: string): void {
  for (const name of readdirSync(dir)) if (name.startsWith(PREFIX)) rmSync(join(dir, name), { force: true });
}

export class PageFiles implements PageStore {
  private readonly fds = new Map<number, number>();

  /** Page files of no shard (benchmarks): made in a folder of their own, removed at once (the files are unlinked already). */
  static anonymous(regions: readonly number[]): PageFiles {
    const dir = mkdtempSync(join(tmpdir(), 'quiver-pages-'));
    try {
      return new PageFiles(dir, 0, regions);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Files for the regions of `regions` (0 vectors, 1 codes, 2 graph links) of the vector numbered `vector` in the shard. */
  constructor(dir: string, vector: number, regions: readonly number[]) {
    for (const region of regions) {
      const path = join(dir, `${PREFIX}${vector}-${region}`);
      const fd = openSync(path, 'w+');
      unlinkSync(path);
      this.fds.set(region, fd);
    }
  }

  read(region: number, position: number, into: Uint8Array): void {
    const fd = this.fd(region);
    let done = 0;
    while (done < into.length) {
      const n = readSync(fd, into, done, into.length - done, position + done);
      if (n === 0) break; // past the end: a page never written
      done += n;
    }
    into.fill(0, done);
  }

  write(region: number, position: number, from: Uint8Array): void {
    const fd = this.fd(region);
    let done = 0;
    while (done < from.length) done += writeSync(fd, from, done, from.length - done, position + done);
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }

  private fd(region: number): number {
    const fd = this.fds.get(region);
    if (fd === undefined) throw new RangeError(`no page file for region ${region}`);
    return fd;
  }
}
