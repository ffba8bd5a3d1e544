// Snapshot files under the snapshots directory, laid out as Qdrant lays them out: full-storage
// snapshots in the directory itself, a collection's in <collection>/, a shard's in
// <collection>/shards/<id>/, each `<name>.snapshot` next to `<name>.snapshot.checksum` (its
// SHA-256 in hex). A snapshot is built under a temporary name, synced, its checksum file written,
// and only then renamed into place, so a listing never shows a partial snapshot.

import { createHash } from 'node:crypto';
import { v4 as randomUUID } from 'uuid';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { snapshotNotFound } from '../messages.js';
import type { FileSlice } from '../storage/tar.js';

/** Qdrant's SnapshotDescription. */
export interface SnapshotDescription {
  name: string;
  creation_time: string | null;
  size: number;
  checksum: string | null;
}

const EXTENSION = '.snapshot';
const CHECKSUM = '.checksum';

/** SHA-256 (hex) of a file or a slice of one, read as a stream. */
export async function sha256(source: string | FileSlice): Promise<string> {
  const hash = createHash('sha256');
  const stream = typeof source === 'string'
    ? createReadStream(source)
    : createReadStream(source.path, { start: source.offset, end: source.offset + source.size - 1 });
  if (typeof source === 'string' || source.size > 0) for await (const chunk of stream) hash.update(chunk as Buffer);
  else stream.destroy();
  return hash.digest('hex');
}

/**
 * Longest collection part of a snapshot's file name: file systems take 255 bytes per name, and
 * a snapshot's file name adds to it the peer id (up to 20 digits), its date, `.snapshot`, and
 * while it is written `.checksum.tmp-<uuid>` (100 bytes at most).
 */
const MAX_SAFE_NAME = 150;

/**
 * A path component for a collection name (which may hold '.', non-ASCII characters and up to 255
 * of them): every character but [A-Za-z0-9_-] escaped, and past MAX_SAFE_NAME a prefix of that
 * followed by `~` and a digest of the whole name, so two names never share a folder or a file
 * name (an escaped name never holds `~`).
 */
export function safeName(name: string): string {
  const escaped = name.replace(/[^A-Za-z0-9_-]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
  if (escaped.length <= MAX_SAFE_NAME) return escaped;
  return `${escaped.slice(0, MAX_SAFE_NAME - 33)}~${createHash('sha256').update(name).digest('hex').slice(0, 32)}`;
}

/** Qdrant's timestamp in snapshot names: UTC, YYYY-MM-DD-HH-MM-SS. */
export function snapshotTimestamp(date = new Date()): string {
  return date.toISOString().slice(0, 19).replace('T', '-').replaceAll(':', '-');
}

export class SnapshotFiles {
  constructor(readonly root: string) {}

  collectionDir(collection: string): string {
    return join(this.root, safeName(collection));
  }

  shardDir(collection: string, shard: number): string {
    return join(this.collectionDir(collection), 'shards', String(shard));
  }

  /** A fresh path for temporary files, on the snapshots directory's file system so renames are atomic. */
  async tempPath(label: string): Promise<string> {
    const dir = join(this.root, '.tmp');
    await mkdir(dir, { recursive: true });
    return join(dir, `${label}-${randomUUID()}`);
  }

  /**
   * Removes what unfinished snapshots, downloads and uploads left (run before serving): the
   * temporary directory, checksum files still under their temporary name, and checksum files
   * whose snapshot never got its final name (a crash between the two renames of `store`).
   */
  async clearTemp(): Promise<void> {
    await rm(join(this.root, '.tmp'), { recursive: true, force: true });
    // Snapshots live in the root, <collection>/ and <collection>/shards/<id>/.
    await removeStrayChecksums(this.root, 3);
  }

  async list(dir: string): Promise<SnapshotDescription[]> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: SnapshotDescription[] = [];
    for (const name of names.filter((n) => n.endsWith(EXTENSION)).sort()) {
      const described = await this.describe(join(dir, name)).catch(() => null);
      if (described) out.push(described);
    }
    return out;
  }

  private async describe(path: string): Promise<SnapshotDescription | null> {
    const info = await stat(path);
    if (!info.isFile()) return null;
    const checksum = await readFile(path + CHECKSUM, 'utf8').then((t) => t.trim(), () => null);
    return { name: path.slice(path.lastIndexOf('/') + 1), creation_time: info.mtime.toISOString().slice(0, 19), size: info.size, checksum };
  }

  /** The path of snapshot `name` in `dir`; 404 unless it is a snapshot file right inside `dir`. */
  async locate(dir: string, name: string): Promise<string> {
    const missing = snapshotNotFound(name);
    if (!name.endsWith(EXTENSION) || name.includes('/') || name.includes('\\')) throw missing;
    try {
      const path = await realpath(join(dir, name));
      if (path !== join(await realpath(dir), name) || !(await stat(path)).isFile()) throw missing;
      return path;
    } catch {
      throw missing;
    }
  }

  async remove(dir: string, name: string): Promise<void> {
    const path = await this.locate(dir, name);
    await rm(path + CHECKSUM, { force: true });
    await rm(path);
  }

  /**
   * Moves a finished archive (a temporary file) into `dir` as `name`: its checksum file first, then
   * the synced archive by rename, so it appears whole and already described.
   */
  async store(dir: string, name: string, archive: string): Promise<SnapshotDescription> {
    await mkdir(dir, { recursive: true });
    const target = join(dir, name);
    const checksum = await sha256(archive);
    const checksumTemp = `${target}${CHECKSUM}.tmp-${randomUUID()}`;
    const file = await open(checksumTemp, 'wx');
    try {
      await file.writeFile(checksum);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(checksumTemp, target + CHECKSUM);
    await rename(archive, target);
    await syncDir(dir);
    return (await this.describe(target))!;
  }
}

/** Removes, in `dir` and its subdirectories down to `depth` levels, the checksum files no finished snapshot owns. */
async function removeStrayChecksums(dir: string, depth: number): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const names = new Set(entries.map((e) => e.name));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (depth > 0) await removeStrayChecksums(path, depth - 1);
    } else if (entry.name.includes(`${CHECKSUM}.tmp-`) || (entry.name.endsWith(EXTENSION + CHECKSUM) && !names.has(entry.name.slice(0, -CHECKSUM.length)))) {
      await rm(path, { force: true });
    }
  }
}

/** Makes renames in a directory durable. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
