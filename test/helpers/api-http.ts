// Raw HTTP access to a running server, for what the official client hides (status codes, error
// bodies, malformed requests), and the checks of Qdrant's error envelope.

import { rm } from 'node:fs/promises';
import type { Test } from 'tap';
import type { RunningServer } from './server.js';

export interface RawResponse {
  status: number;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
}

/** Sends `body` as JSON (a string is sent verbatim, so malformed JSON can be sent too), with more `headers` if given. */
export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  const init: RequestInit = { method, headers: { 'content-type': 'application/json', ...headers } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(base + path, init);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text so the assertion shows it
  }
  return { status: response.status, body: parsed };
}

/** The `result` of a successful Qdrant envelope; fails the test on anything else. */
export function resultOf<T>(t: Test, response: RawResponse): T {
  if (response.status !== 200) t.fail(`HTTP 200 expected, got ${response.status}: ${JSON.stringify(response.body)}`);
  const body = response.body as { status?: unknown; result?: T; time?: unknown };
  t.equal(body.status, 'ok', 'envelope status ok');
  t.type(body.time, 'number', 'envelope time');
  return body.result as T;
}

/** serde_json appends the position of what it rejected; Quiver validates parsed bodies and may not know it. */
const SERDE_POSITION = '( at line \\d+ column \\d+)?';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Qdrant's 400 for a body serde cannot read: the prefix, serde's description, an optional position. */
export function formatErrorMessage(description: string): RegExp {
  return new RegExp(`^${escapeRegExp(`Format error in JSON body: ${description}`)}${SERDE_POSITION}$`);
}

/**
 * Checks a Qdrant error response: the status code, the body shape
 * `{"status":{"error":<message>},"time":<number>}` with nothing else, and the message (exact
 * string, or a pattern where Qdrant's text has a variable part).
 */
export function assertError(t: Test, response: RawResponse, status: number, message: string | RegExp, what = ''): void {
  const label = what ? `${what}: ` : '';
  t.equal(response.status, status, `${label}HTTP ${status}`);
  const body = response.body as { status?: { error?: unknown }; time?: unknown };
  t.ok(typeof body === 'object' && body !== null, `${label}JSON error body`);
  t.same(Object.keys(body ?? {}).sort(), ['status', 'time'], `${label}body has only status and time`);
  t.same(Object.keys(body?.status ?? {}), ['error'], `${label}status holds only error`);
  t.type(body?.time, 'number', `${label}time is a number`);
  const error = body?.status?.error;
  if (typeof message === 'string') t.equal(error, message, `${label}message`);
  else t.match(error, message, `${label}message`);
}

/** Stops the server when the test file ends and removes its temporary storage. */
export function stopAtEnd(t: Test, server: RunningServer): void {
  t.teardown(async () => {
    await server.stop();
    await rm(server.storage, { recursive: true, force: true });
  });
}
