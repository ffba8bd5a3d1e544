// Where a snapshot to recover comes from: a file:// URL inside the snapshots directory (Qdrant
// refuses any other local file), or an http(s) URL downloaded to a temporary file, with the
// `api-key` header when a key is given. Messages and codes are Qdrant's.

import { realpath, rm, stat } from 'node:fs/promises';
import { sep } from 'node:path';
import { BadRequest, ChecksumMismatch, Forbidden } from '../errors.js';
import type { DownloadLimits } from '../config/config.js';
import { downloadTo } from './download.js';
import { sha256 } from './files.js';

/** A snapshot file ready to read; `temporary` ones are removed by `release`. */
export interface LocalSnapshot {
  path: string;
  temporary: boolean;
}

export async function release(snapshot: LocalSnapshot): Promise<void> {
  if (snapshot.temporary) await rm(snapshot.path, { force: true });
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}

/** A local file that must lie inside `root` (symlinks resolved). */
export async function localFile(path: string, root: string): Promise<LocalSnapshot> {
  if (!(await exists(path))) throw new BadRequest(`Snapshot file ${JSON.stringify(path)} does not exist`);
  const real = await realpath(path);
  const base = await realpath(root).catch(() => root);
  if (!real.startsWith(base + sep)) throw new Forbidden('Snapshot file path must be inside the snapshots directory');
  return { path: real, temporary: false };
}

/**
 * Makes a snapshot location readable locally. `tempPath` names the file a download goes to; it
 * is on the snapshots file system, so a download never has to be copied again.
 */
export async function fetchSnapshot(url: URL, apiKey: string | null, root: string, tempPath: string, limits: DownloadLimits): Promise<LocalSnapshot> {
  switch (url.protocol) {
    case 'file:':
      if (url.host !== '' && url.host !== 'localhost') throw new BadRequest('Invalid snapshot URI, file path must be absolute or on localhost');
      return localFile(decodeURIComponent(url.pathname), root);
    case 'http:':
    case 'https:':
      await downloadTo(url, apiKey, tempPath, limits);
      return { path: tempPath, temporary: true };
    default:
      // lib/storage/src/content_manager/snapshots/download.rs (older releases said "schema").
      throw new BadRequest(`URL ${url.href} with scheme ${url.protocol.slice(0, -1)} is not supported`);
  }
}

/** Checks a snapshot against the checksum a client gave, before anything else reads it. */
export async function verifyChecksum(path: string, expected: string | null | undefined): Promise<void> {
  if (expected === null || expected === undefined) return;
  const actual = await sha256(path);
  if (actual !== expected) throw new ChecksumMismatch(expected, actual);
}
