// A shard part served by another peer (a `snapshot` transfer's source, src/cluster/transfer-parts.ts),
// downloaded by the receiving shard's worker into a file beside the shard, so that the restore
// reads it as it reads a part of a local snapshot. The download is bounded: the connection and
// every pause in the body, as Qdrant bounds a snapshot download, and the size announced.

import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import { v4 as randomUUID } from 'uuid';
import { ServiceError } from '../errors.js';
import type { FileSlice } from '../storage/tar.js';

/** A shard part another peer serves (a `snapshot` transfer's source): the worker downloads it beside the shard first. */
export interface RemotePart {
  url: string;
  /** Sent with the download (the source's API key). */
  headers: Record<string, string>;
  size: number;
}

/** Longest wait for the answer, and for each piece of the body after it (Qdrant's snapshot download read timeout). */
const IDLE_MS = 60_000;

export function isRemotePart(part: FileSlice | RemotePart): part is RemotePart {
  return 'url' in part;
}

/** Downloads `part` beside the shard at `shardPath`; answers the file, which the caller removes (`discard`). */
export async function downloadPart(part: RemotePart, shardPath: string): Promise<FileSlice> {
  const path = join(dirname(shardPath), `.transfer-${randomUUID()}`);
  const aborter = new AbortController();
  let timer = setTimeout(() => aborter.abort(), IDLE_MS);
  const idle = () => {
    clearTimeout(timer);
    timer = setTimeout(() => aborter.abort(), IDLE_MS);
  };
  try {
    const response = await fetch(part.url, { headers: part.headers, signal: aborter.signal });
    if (!response.ok || response.body === null) throw new ServiceError(`downloading the shard part ${part.url}: HTTP ${response.status}`);
    let size = 0;
    const body = Readable.fromWeb(response.body as ReadableStream<Uint8Array>);
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      idle();
    });
    await pipeline(body, createWriteStream(path, { flags: 'wx' }));
    if (size !== part.size) throw new ServiceError(`downloading the shard part ${part.url}: ${size} bytes instead of ${part.size}`);
    return { path, offset: 0, size };
  } catch (err) {
    await discard(path);
    if (aborter.signal.aborted) throw new ServiceError(`downloading the shard part ${part.url}: nothing came for ${IDLE_MS / 1000} s`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

export function discard(path: string): Promise<void> {
  return rm(path, { force: true });
}
