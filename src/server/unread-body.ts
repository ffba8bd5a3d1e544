// A request refused before its body was read (a body over `max_request_size_mb`) still has the
// rest of that body on its way. Answering and closing at once makes the kernel reset the
// connection over the unread bytes, and a client still writing sees a broken pipe instead of the
// 400. So the rest is read and thrown away first, within bounds: a sender that never stops gets
// the answer after `MAX_BYTES` more bytes or `MAX_MS`, whichever comes first.

import type { IncomingMessage } from 'node:http';

const MAX_BYTES = 256 * 1024 * 1024;
const MAX_MS = 10_000;

/** Resolves once the request's body has ended (or failed), or once the bounds are reached. */
export function discardUnreadBody(raw: IncomingMessage): Promise<void> {
  if (raw.complete || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let received = 0;
    const finish = () => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', finish).off('error', finish).off('close', finish);
      raw.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_BYTES) finish();
    };
    const timer = setTimeout(finish, MAX_MS);
    raw.on('data', onData).on('end', finish).on('error', finish).on('close', finish);
    raw.resume();
  });
}
