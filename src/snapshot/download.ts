// Downloading a snapshot to recover from an http(s) URL, to a file, within bounds: the connection
// must open within `connect_timeout_sec`, the response headers arrive within
// `response_timeout_sec`, and the body may send nothing for at most `read_timeout_sec` at a time
// (Qdrant's stream read timeout, 60 s). A server that accepts and never answers, or stalls
// mid-body, costs at most that long. Failures are worded as Qdrant words them.

import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { DownloadLimits } from '../config/config.js';
import { BadInput, ServiceError } from '../errors.js';


/** The undici error code of a failure, looking through the TypeError fetch wraps it in. */
function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof e.code === 'string' ? e.code : e.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

function reasonOf(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string } };
  return e.cause?.message ?? e.message ?? String(err);
}

/** Qdrant's answer when the request fails before a response (reqwest's error, as a service error). */
function requestFailed(url: URL, err: unknown, limits: DownloadLimits): ServiceError {
  const code = codeOf(err);
  const reason = code === 'UND_ERR_CONNECT_TIMEOUT' ? `connection not established within ${limits.connect_timeout_sec} s`
    : code === 'UND_ERR_HEADERS_TIMEOUT' ? `no response within ${limits.response_timeout_sec} s`
      : reasonOf(err);
  return new ServiceError(`Http request error: error sending request for url (${url.href}): ${reason}`);
}

/** Qdrant's answer when the body stops or breaks (its download unpacks as it reads). */
function bodyFailed(err: unknown): ServiceError {
  const reason = codeOf(err) === 'UND_ERR_BODY_TIMEOUT' ? 'stream read timeout: no data received within timeout period' : reasonOf(err);
  return new ServiceError(`Failed to unpack tar archive: ${reason}`);
}

/** Downloads `url` to the new file `target` (removed again on failure), with the `api-key` header when a key is given. */
export async function downloadTo(url: URL, apiKey: string | null, target: string, limits: DownloadLimits): Promise<void> {
  // Loaded on the first download: undici is a large package that a server start need not load.
  const { Agent, fetch } = await import('undici');
  const agent = new Agent({
    connectTimeout: limits.connect_timeout_sec * 1000,
    headersTimeout: limits.response_timeout_sec * 1000,
    bodyTimeout: limits.read_timeout_sec * 1000,
  });
  try {
    let response;
    try {
      response = await fetch(url, { dispatcher: agent, headers: apiKey === null ? {} : { 'api-key': apiKey } });
    } catch (err) {
      throw requestFailed(url, err, limits);
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new BadInput(`Failed to download tar from ${url.href}: status - ${response.status} ${STATUS_CODES[response.status] ?? ''}`.trimEnd());
    }
    try {
      await pipeline(Readable.fromWeb(response.body as WebReadableStream), createWriteStream(target, { flags: 'wx' }));
    } catch (err) {
      await rm(target, { force: true });
      throw bodyFailed(err);
    }
  } finally {
    await agent.destroy();
  }
}
