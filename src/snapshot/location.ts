// Where a snapshot to recover comes from: a file:// URL inside the snapshots directory (Qdrant
// refuses any other local file), or an http(s) URL downloaded to a temporary file, with the
// `api-key` header when a key is given. Messages and codes are Qdrant's.

import { createWriteStream } from 'node:fs';
import { realpath, rm, stat } from 'node:fs/promises';
import { sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { BadRequest, ChecksumMismatch, Forbidden } from '../errors.js';
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

async function download(url: URL, apiKey: string | null, target: string): Promise<LocalSnapshot> {
  let response: Response;
  try {
    response = await fetch(url, { headers: apiKey === null ? {} : { 'api-key': apiKey } });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    throw new BadRequest(`Failed to download snapshot from ${url.href}: ${cause}`);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new BadRequest(`Failed to download snapshot from ${url.href}: status ${response.status}`);
  }
  try {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream), createWriteStream(target, { flags: 'wx' }));
  } catch (err) {
    await rm(target, { force: true });
    throw new BadRequest(`Failed to download snapshot from ${url.href}: ${(err as Error).message}`);
  }
  return { path: target, temporary: true };
}

/**
 * Makes a snapshot location readable locally. `tempPath` names the file a download goes to; it
 * is on the snapshots file system, so a download never has to be copied again.
 */
export async function fetchSnapshot(url: URL, apiKey: string | null, root: string, tempPath: string): Promise<LocalSnapshot> {
  switch (url.protocol) {
    case 'file:':
      if (url.host !== '' && url.host !== 'localhost') throw new BadRequest('Invalid snapshot URI, file path must be absolute or on localhost');
      return localFile(decodeURIComponent(url.pathname), root);
    case 'http:':
    case 'https:':
      return download(url, apiKey, tempPath);
    default:
      throw new BadRequest(`URL ${url.href} with schema ${url.protocol.slice(0, -1)} is not supported`);
  }
}

/** Checks a snapshot against the checksum a client gave, before anything else reads it. */
export async function verifyChecksum(path: string, expected: string | null | undefined): Promise<void> {
  if (expected === null || expected === undefined) return;
  const actual = await sha256(path);
  if (actual !== expected) throw new ChecksumMismatch(expected, actual);
}
